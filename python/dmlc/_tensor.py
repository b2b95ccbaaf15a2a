"""dmlc.Tensor: tensors on a device, eager ops on them (runtime/dml_tensor.h).

The class itself is the extension's ``_core.Tensor`` (it holds the C
handle and exports CPU tensors' bytes through the buffer protocol); this
module adds the Python surface (shape, dtype, indexing, operators) and the
creation functions ``dmlc.tensor``, ``zeros``, ``ones``, ``full``,
``empty``, ``arange`` and ``random``. docs/python.md "Tensors" is the
reference.
"""

import numbers

import numpy as np

from . import _core
from ._errors import InvalidArgumentError

Tensor = _core.Tensor

_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)


def _np_dtypes():
    from . import _NP_DTYPES  # the one table of dmlc dtype <-> NumPy dtype
    return _NP_DTYPES


def dtype_name(dtype):
    """dmlc's dtype name of `dtype`: a dmlc name ("f32", "bf16", ...), a
    NumPy dtype or anything np.dtype takes ("float32", np.int64, ...)."""
    if isinstance(dtype, str) and dtype in _np_dtypes():
        return dtype
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise InvalidArgumentError("python.tensor: unknown dtype %r" % (dtype,),
                                   op="python.tensor",
                                   reason="unknown dtype %r" % (dtype,)) from None
    for name, nd in _np_dtypes().items():
        if nd == d and not (name == "bf16" and d == np.dtype(np.uint16)):
            return name
    raise InvalidArgumentError("python.tensor: NumPy dtype %s has no dmlc dtype" % d,
                               op="python.tensor",
                               reason="NumPy dtype %s has no dmlc dtype" % d)


def _shape(shape):
    if isinstance(shape, numbers.Integral):
        return [int(shape)]
    return [int(d) for d in shape]


def tensor(data, dtype=None, device="cpu"):
    """A new tensor on `device` ("cpu", "vulkan", "vulkan:N", "cuda",
    "cuda:N") holding a copy of `data` (an array, a nested list or a
    scalar; `dtype` converts it first, bf16 takes ml_dtypes.bfloat16 arrays
    or uint16 bits)."""
    name = dtype_name(dtype) if dtype is not None else ""
    if isinstance(data, Tensor):
        data = data.numpy()
    if name and name != "bf16":
        arr = np.asarray(data, dtype=_np_dtypes()[name])
    else:
        arr = np.asarray(data)
    if arr.dtype.name == "bfloat16":
        arr, name = arr.view(np.uint16), "bf16"
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return _core.tensor_from_array(np.ascontiguousarray(arr), device or "cpu", name)


def _create(kind, shape, dtype, device, a=0.0, b=0.0, seed=0):
    return _core.tensor_create(kind, _shape(shape), dtype_name(dtype), device or "cpu",
                               float(a), float(b), int(seed))


def empty(shape, dtype="f32", device="cpu"):
    """A tensor of `shape` whose elements are not set."""
    return _create("empty", shape, dtype, device)


def zeros(shape, dtype="f32", device="cpu"):
    """A tensor of `shape` of zeros."""
    return _create("zeros", shape, dtype, device)


def ones(shape, dtype="f32", device="cpu"):
    """A tensor of `shape` of ones."""
    return _create("ones", shape, dtype, device)


def full(shape, value, dtype="f32", device="cpu"):
    """A tensor of `shape` of `value` (converted as C converts; f16/bf16
    round to nearest even; bool: value != 0)."""
    return _create("full", shape, dtype, device, value)


def arange(start, limit=None, step=1, dtype=None, device="cpu"):
    """1-D: start, start + step, ... before limit (ONNX Range: max(0,
    ceil((limit - start) / step)) elements); arange(n) is 0 .. n-1.

    The dtype, unless `dtype` names one, is NumPy's: i64 when every
    argument is an integer (Python ints, NumPy integers, bools), else f32
    (NumPy's f64; f32 is dmlc's default float). The values travel as
    doubles (dml_rt_tensor_arange), so integers must be within 2**53."""
    if limit is None:
        start, limit = 0, start
    args = (start, limit, step)
    if dtype is None:
        ints = all(isinstance(a, (numbers.Integral, np.integer, np.bool_)) for a in args)
        dtype = "i64" if ints else "f32"
    for a in args:
        if isinstance(a, (numbers.Integral, np.integer)) and abs(int(a)) > 1 << 53:
            why = "%d is beyond 2**53: arange's values travel as doubles" % int(a)
            raise InvalidArgumentError("python.arange: " + why, op="python.arange",
                                       reason=why)
    return _core.tensor_arange(float(start), float(limit), float(step), dtype_name(dtype),
                               device or "cpu")


def random(shape, dtype="f32", device="cpu", seed=0, distribution="uniform", low=0.0,
           high=1.0, mean=0.0, scale=1.0):
    """Random f16/bf16/f32/f64 values from the Philox stream of `seed`
    (RandomUniform / RandomNormal's kernels): uniform in [low, high), or
    distribution="normal" with `mean` and `scale` (standard deviation). The
    same seed gives the same values on every device."""
    if distribution == "uniform":
        return _create("uniform", shape, dtype, device, low, high, seed)
    if distribution == "normal":
        return _create("normal", shape, dtype, device, mean, scale, seed)
    raise InvalidArgumentError("python.random: distribution must be 'uniform' or 'normal'",
                               op="python.random",
                               reason="distribution must be 'uniform' or 'normal'")


def device_memory(device="cpu"):
    """The bytes and storages the live tensors of `device` hold now
    (dml_rt_device_bytes): {"bytes", "storages", "name"}."""
    return _core.device_memory(device or "cpu")


# ---- the Python surface of the class ----

def _index_error(msg):
    return IndexError("python.index: " + msg)


def _getitem(self, key):
    """Indexing with ints, slices (any step, negative too), ``...`` and
    ``None``: a view of the same memory (an int drops its dim)."""
    shape = self.shape
    if not isinstance(key, tuple):
        key = (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise _index_error("one ... at most")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > len(shape):
        raise _index_error("%d indices for rank %d" % (n_real, len(shape)))
    axes, starts, ends, steps, out_shape = [], [], [], [], []
    ax = 0
    dropped = False
    for k in key:
        if k is Ellipsis:
            for _ in range(len(shape) - n_real):
                out_shape.append(shape[ax])
                ax += 1
        elif k is None:
            out_shape.append(1)
        elif isinstance(k, slice):
            start, stop, step = k.indices(shape[ax])
            n = len(range(start, stop, step))
            end = start + step * n
            if end < 0:
                end = _INT64_MIN
            axes.append(ax)
            starts.append(start)
            ends.append(end)
            steps.append(step)
            out_shape.append(n)
            ax += 1
        elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
            i = int(k)
            if i < -shape[ax] or i >= shape[ax]:
                raise _index_error("index %d is out of range for dim %d of size %d"
                                   % (i, ax, shape[ax]))
            i %= shape[ax]
            axes.append(ax)
            starts.append(i)
            ends.append(i + 1)
            steps.append(1)
            dropped = True
            ax += 1
        else:
            raise _index_error("a %s is not an index (ints, slices, ..., None)"
                               % type(k).__name__)
    while ax < len(shape):
        out_shape.append(shape[ax])
        ax += 1
    t = self._slice(axes, starts, ends, steps) if axes else self
    if dropped or len(out_shape) != len(t.shape):
        t = t._reshape(out_shape)
    return t


def _reshape(self, *shape):
    """The same elements in `shape` (one -1 inferred): a view where the
    strides allow (NumPy's rule, dml_rt_tensor_reshape), else a contiguous
    copy."""
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
        shape = shape[0]
    return self._reshape(_shape(shape))


def _transpose(self, *perm):
    """The dims permuted (out dim i is dim perm[i]; none: reversed): a view."""
    if len(perm) == 1 and not isinstance(perm[0], numbers.Integral):
        perm = perm[0]
    return self._transpose([int(p) for p in perm])


def _expand(self, *shape):
    """Broadcast to `shape` (numpy rules, stride 0 on broadcast dims): a view."""
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
        shape = shape[0]
    return self._expand(_shape(shape))


_raw_numpy = Tensor.numpy


def _numpy(self):
    """A copy of the elements as a new NumPy array (from any device; bf16
    as ml_dtypes.bfloat16 when installed, else its uint16 bits)."""
    a = _raw_numpy(self)
    if a.dtype == np.uint16 and self.dtype == "bf16":
        from . import _BF16
        if _BF16 is not None:
            a = a.view(_BF16)
    return a


def _array(self, dtype=None, copy=None):
    a = self.numpy()
    return a if dtype is None else a.astype(dtype, copy=False)


def _repr(self):
    try:
        i = self._info()
    except Exception as e:  # a freed tensor
        return "<dmlc.Tensor (%s)>" % getattr(e, "reason", e)
    return "<dmlc.Tensor %s%s on %s%s>" % (i["dtype"], list(i["shape"]), i["device"],
                                           "" if i["contiguous"] else ", strided view")


def _len(self):
    s = self.shape
    if not s:
        raise TypeError("len() of a 0-d tensor")
    return s[0]


def _binary(op, swap=False):
    def f(self, other):
        ins = [other, self] if swap else [self, other]
        if isinstance(other, Tensor):  # the common case, without ops.run's conversions
            return _core.tensor_op(op, ins, {}, 1)[0]
        from . import ops
        return ops.run(op, ins)
    f.__name__ = op
    return f


_equal = _binary("Equal")


def _eq(self, other):
    """Elementwise ``==`` (ONNX Equal): a bool tensor, NumPy broadcasting.
    ``t == None`` is not a comparison of elements: Python's identity
    (NotImplemented)."""
    if other is None:
        return NotImplemented
    return _equal(self, other)


def _ne(self, other):
    """Elementwise ``!=``: Not(Equal), a bool tensor (NaN != NaN is True,
    as in NumPy)."""
    if other is None:
        return NotImplemented
    eq = _equal(self, other)
    return _core.tensor_op("Not", [eq], {}, 1)[0]


def _bool(self):
    """The truth value of a one-element tensor (its element); more or fewer
    elements are ambiguous, as in NumPy and PyTorch."""
    n = self.size
    if n != 1:
        why = ("the truth value of a tensor with %d elements is ambiguous; use "
               "t.numpy().any() or t.numpy().all()" % n)
        raise _AmbiguousTruthError("python.bool: " + why, op="python.bool", reason=why)
    return bool(self.numpy().reshape(-1)[0])


class _AmbiguousTruthError(InvalidArgumentError, ValueError):
    """bool() of a tensor without exactly one element: a dmlc.Error
    (InvalidArgumentError) that is also the ValueError NumPy raises."""


def _unary(op):
    def f(self):
        from . import ops
        return ops.run(op, [self])
    f.__name__ = op
    return f


def _install():
    T = Tensor
    T.shape = property(lambda self: tuple(self._info()["shape"]),
                       doc="The dims, a tuple of ints.")
    T.dtype = property(lambda self: self._info()["dtype"],
                       doc='dmlc\'s dtype name: "f32", "i64", "bool", ...')
    T.strides = property(lambda self: tuple(self._info()["strides"]),
                         doc="Strides in elements (0 on broadcast dims, negative "
                             "on reversed ones).")
    T.device = property(lambda self: self._device, doc='The device as given ("cpu", ...).')
    T.ndim = property(lambda self: len(self.shape))
    T.size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    T.is_contiguous = property(lambda self: self._info()["contiguous"])
    T.T = property(lambda self: self._transpose([]))
    T.__getitem__ = _getitem
    T.reshape = _reshape
    T.transpose = _transpose
    T.expand = _expand
    T.numpy = _numpy
    T.__array__ = _array
    T.__repr__ = _repr
    T.__len__ = _len
    for name, op in (("add", "Add"), ("sub", "Sub"), ("mul", "Mul"),
                     ("truediv", "Div"), ("pow", "Pow"), ("matmul", "MatMul")):
        setattr(T, "__%s__" % name, _binary(op))
        setattr(T, "__r%s__" % name, _binary(op, swap=True))
    for name, op in (("lt", "Less"), ("le", "LessOrEqual"), ("gt", "Greater"),
                     ("ge", "GreaterOrEqual")):
        setattr(T, "__%s__" % name, _binary(op))
    T.__eq__ = _eq
    T.__ne__ = _ne
    T.__hash__ = object.__hash__  # by identity, as torch.Tensor (== is elementwise)
    T.__bool__ = _bool
    T.__neg__ = _unary("Neg")
    T.__abs__ = _unary("Abs")


_install()
