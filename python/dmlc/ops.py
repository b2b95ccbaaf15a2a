"""Eager ops on dmlc.Tensors: one ONNX op at a time on the tensors' device,
with the runtime's kernels (dml_rt_tensor_op in runtime/dml_tensor.h: the
same CPU kernels compiled packages run; docs/tensor.md lists the ops).

    y = dmlc.ops.run("Softmax", [x], axis=-1)       # any op by ONNX name
    z = dmlc.ops.add(x, y)                           # or x + y, x @ w, ...

Inputs that are not Tensors (numbers, arrays) become tensors of the first
Tensor input's dtype on its device. Shapes, broadcasting and numerics are
ONNX's; errors are dmlc.Error (a shape mismatch names the op and the
shapes: InvalidArgumentError "MatMul: shape mismatch", details "lhs [3,4],
rhs [5,6]").
"""

import numpy as np

from . import _core
from ._errors import Error, InvalidArgumentError
from ._tensor import Tensor, tensor

__all__ = ["run", "add", "sub", "mul", "div", "pow", "matmul", "neg", "abs", "exp",
           "log", "sqrt", "relu", "sigmoid", "tanh", "softmax", "sum", "mean", "max",
           "min", "prod", "argmax", "argmin", "cast"]


def run(op, inputs, n_outputs=1, **attrs):
    """Runs ONNX op `op` ("Add", "Conv", "ReduceSum", ...) on `inputs` (a
    list of Tensors; None for an absent optional input) with attributes
    `attrs` (ONNX's names: ints, floats, strs, lists of them, arrays).
    Returns the output Tensor, or a list of `n_outputs` Tensors when
    n_outputs > 1 (MaxPool's indices, TopK, Split)."""
    first = next((k for k, x in enumerate(inputs) if isinstance(x, Tensor)), None)
    like = None
    ins = []
    for k, x in enumerate(inputs):
        if x is None or isinstance(x, Tensor):
            ins.append(x)
            continue
        if first is not None and like is None:
            like = _like(op, inputs[first], first)
        try:
            if first is not None:
                ins.append(tensor(np.asarray(x), dtype=like[0], device=like[1]))
            else:
                ins.append(tensor(x))
        except (TypeError, ValueError) as e:
            why = "input %d: cannot make a tensor of a %s (%s)" % (k, type(x).__name__, e)
            raise InvalidArgumentError("%s: %s" % (op, why), op=op, reason=why) from None
    outs = _core.tensor_op(op, ins, attrs, int(n_outputs))
    return outs[0] if n_outputs == 1 else outs


def _like(op, t, k):
    """(dtype, device) of Tensor `t`, input `k` of op `op`, which the
    inputs that are not Tensors take. A freed `t` raises the error the op
    itself gives (op `op`, reason "use after free", details naming the
    handle and the input), not that of the dtype lookup (tensor.info)."""
    try:
        return t.dtype, t.device
    except Error as e:
        details = (e.details + "\n" if e.details else "") + "input %d" % k
        msg = "%s: %s\n  %s" % (op, e.reason, details.replace("\n", "\n  "))
        raise type(e)(msg, op=op, reason=e.reason, details=details) from None


def _i64(values, like):
    return tensor(np.asarray(values, dtype=np.int64).reshape(-1), device=like.device)


def add(a, b):
    """a + b (ONNX Add, NumPy broadcasting)."""
    return run("Add", [a, b])


def sub(a, b):
    """a - b (ONNX Sub)."""
    return run("Sub", [a, b])


def mul(a, b):
    """a * b (ONNX Mul)."""
    return run("Mul", [a, b])


def div(a, b):
    """a / b (ONNX Div; integers truncate)."""
    return run("Div", [a, b])


def pow(a, b):
    """a ** b (ONNX Pow)."""
    return run("Pow", [a, b])


def matmul(a, b):
    """a @ b (ONNX MatMul: NumPy's matmul, batched, broadcasting leading dims)."""
    return run("MatMul", [a, b])


def _unary(name, doc):
    def f(x):
        return run(name, [x])
    f.__name__ = name.lower()
    f.__doc__ = doc
    return f


neg = _unary("Neg", "-x.")
abs = _unary("Abs", "|x|.")
exp = _unary("Exp", "e**x.")
log = _unary("Log", "The natural logarithm.")
sqrt = _unary("Sqrt", "The square root.")
relu = _unary("Relu", "max(x, 0).")
sigmoid = _unary("Sigmoid", "1 / (1 + e**-x).")
tanh = _unary("Tanh", "The hyperbolic tangent.")


def softmax(x, axis=-1):
    """ONNX Softmax over `axis`."""
    return run("Softmax", [x], axis=int(axis))


def _reduce(name, x, axis, keepdims):
    axes = None if axis is None else _i64([axis] if np.ndim(axis) == 0 else list(axis), x)
    return run(name, [x, axes], keepdims=int(bool(keepdims)))


def sum(x, axis=None, keepdims=False):
    """ReduceSum over `axis` (an int or a sequence; None: all)."""
    return _reduce("ReduceSum", x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    """ReduceMean over `axis` (None: all)."""
    return _reduce("ReduceMean", x, axis, keepdims)


def max(x, axis=None, keepdims=False):
    """ReduceMax over `axis` (None: all)."""
    return _reduce("ReduceMax", x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    """ReduceMin over `axis` (None: all)."""
    return _reduce("ReduceMin", x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    """ReduceProd over `axis` (None: all)."""
    return _reduce("ReduceProd", x, axis, keepdims)


def argmax(x, axis=0, keepdims=False):
    """ArgMax along `axis` (i64)."""
    return run("ArgMax", [x], axis=int(axis), keepdims=int(bool(keepdims)))


def argmin(x, axis=0, keepdims=False):
    """ArgMin along `axis` (i64)."""
    return run("ArgMin", [x], axis=int(axis), keepdims=int(bool(keepdims)))


def cast(x, dtype):
    """The elements converted to `dtype` (ONNX Cast)."""
    from ._tensor import dtype_name
    return run("Cast", [x], to=_core.dtype_onnx_code(dtype_name(dtype)))
