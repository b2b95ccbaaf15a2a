"""dmlc: compile ONNX models ahead of time, run the packages on NumPy arrays.

    import dmlc, numpy as np
    pkg = dmlc.compile("model.onnx", target="cpu")     # or dmlc.load("model.dmlpkg")
    sess = pkg.session(device="cpu")                   # "vulkan", "vulkan:N", "cuda"
    out = sess.run({"input": np.zeros((1, 784), np.float32)})   # name -> ndarray

The work is done by dmlc's C libraries (the compile driver dml_driver.h and
the runtime dml_rt.h) through the extension ``dmlc._core``; docs/python.md
is the reference. Errors are ``dmlc.Error`` subclasses carrying the status's
code, op, reason and details.
"""

import os
import time

import numpy as np

from . import _core
from ._errors import (DataLossError, Error, FailedPreconditionError, FileError,
                      InternalError, InvalidArgumentError, NotFoundError,
                      OutOfRangeError, ResourceExhaustedError, UnimplementedError)

__version__ = "0.1.0"

__all__ = [
    "compile", "load", "Package", "Session", "TensorInfo", "devices", "check",
    "available_targets", "Error", "InvalidArgumentError", "NotFoundError",
    "UnimplementedError", "OutOfRangeError", "DataLossError",
    "ResourceExhaustedError", "FailedPreconditionError", "InternalError",
    "FileError",
]

try:  # bf16 as ml_dtypes' bfloat16 when that package is installed
    import ml_dtypes as _ml_dtypes
    _BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # else as its bits, uint16
    _BF16 = None

# dmlc dtype name (runtime/base/dml_dtype.c) -> NumPy dtype.
_NP_DTYPES = {
    "f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
    "bf16": _BF16 if _BF16 is not None else np.dtype(np.uint16),
    "f64": np.dtype(np.float64), "i8": np.dtype(np.int8),
    "u8": np.dtype(np.uint8), "i16": np.dtype(np.int16),
    "u16": np.dtype(np.uint16), "i32": np.dtype(np.int32),
    "u32": np.dtype(np.uint32), "i64": np.dtype(np.int64),
    "u64": np.dtype(np.uint64), "bool": np.dtype(np.bool_),
}


class TensorInfo:
    """An input or output of a package's function, as the package declares it.

    Attributes:
        name (str): the name (the ONNX graph's input/output name).
        dtype (str): dmlc's dtype name: "f32", "f16", "bf16", "f64", "i8",
            "u8", "i16", "u16", "i32", "u32", "i64", "u64", "bool".
        np_dtype (numpy.dtype): the NumPy dtype arrays of it have (bf16:
            ml_dtypes.bfloat16 when installed, else uint16 holding the bits).
        shape (tuple): per dim an int (static) or a str, the symbol of a
            symbolic dim ("batch", or "16*batch" for a multiple of one).
        bounds (tuple of int): per dim the largest size it may take (the
            extent of a static dim; the compiled bound of a symbolic one).
        type (str): the IR spelling, e.g. "f32[batch,784]".
    """

    __slots__ = ("name", "dtype", "np_dtype", "shape", "bounds", "type")

    def __init__(self, d):
        self.name = d["name"]
        self.dtype = d["dtype"]
        self.np_dtype = _NP_DTYPES.get(self.dtype)
        self.shape = tuple(d["shape"])
        self.bounds = tuple(d["bounds"])
        self.type = d["type"]

    def __repr__(self):
        return "TensorInfo(%r, %s, bounds=%s)" % (self.name, self.type, list(self.bounds))


def _bad_input(name, reason):
    return InvalidArgumentError("python.run: input '%s': %s" % (name, reason),
                                op="python.run", reason="input '%s': %s" % (name, reason))


def _as_input(name, value, info):
    """An input value as the array handed to the runtime: NumPy arrays as
    they are (no cast, no copy when C-contiguous); other values (lists,
    scalars) converted to the input's dtype; non-native byte order swapped."""
    if isinstance(value, np.ndarray):
        arr = value
    elif value is None:
        raise _bad_input(name, "None is not an array")
    else:
        try:
            if hasattr(value, "__array__") or hasattr(value, "__dlpack__"):
                arr = np.asarray(value)
            else:
                arr = np.asarray(value, dtype=info.np_dtype if info is not None else None)
        except (TypeError, ValueError) as e:
            raise _bad_input(name, "cannot convert a %s to an array (%s)"
                             % (type(value).__name__, e)) from None
    if _BF16 is not None and arr.dtype == _BF16:
        arr = arr.view(np.uint16)
    if not arr.dtype.isnative:  # the same values in this machine's byte order
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


class Session:
    """Runs one function of a package on one device (Package.session makes
    it). A session owns its memory (planned at the compiled bounds) and runs
    one call at a time: calls from several threads are serialized; the GIL
    is released while it runs, so sessions in other threads run meanwhile.

    Attributes:
        inputs, outputs (list of TensorInfo): the function's, in order.
        device (str): the device in words, e.g. "cpu" or
            "vulkan:0 (llvmpipe (LLVM 15.0.6, 256 bits), CPU, Vulkan 1.3.255)".
    """

    def __init__(self, package, device="cpu", function=None):
        self.package = package
        self._s = _core.Session(package._model, device or "cpu", function or "")
        self.inputs = [TensorInfo(d) for d in self._s.inputs()]
        self.outputs = [TensorInfo(d) for d in self._s.outputs()]
        self._by_name = {i.name: i for i in self.inputs}
        self.device = self._s.device()

    def run(self, inputs, copy=True):
        """Runs the function on `inputs` and returns its outputs.

        Args:
            inputs (dict): input name -> array. Arrays must have the input's
                dtype exactly (no silent cast: InvalidArgumentError names
                both) and a shape it takes: static dims equal, symbolic dims
                within [1, bound] and agreeing across inputs. C-contiguous
                arrays are read in place (copied once, into the session's
                memory); others are made contiguous first. Lists and scalars
                are converted to the input's dtype.
            copy (bool): True (default): each output is a new array the
                caller owns. False: read-only views of the session's
                memory, no copy, overwritten by the session's next run
                (copy them to keep them).
        Returns:
            dict: output name -> numpy.ndarray with the run's actual dims, in
            the function's output order.
        Raises:
            dmlc.Error: InvalidArgumentError (dtype, rank or dim mismatch,
            an unsupported NumPy dtype), OutOfRangeError (a symbolic dim
            beyond its bound), NotFoundError (an unknown input name, the
            inputs listed), FailedPreconditionError (an input missing, named),
            a kernel's error annotated with its node.
        """
        if not isinstance(inputs, dict):
            raise InvalidArgumentError(
                "python.run: inputs must be a dict name -> array, not %s"
                % type(inputs).__name__, op="python.run",
                reason="inputs must be a dict name -> array")
        arrays = {k: _as_input(k, v, self._by_name.get(k)) for k, v in inputs.items()}
        out = self._s.run(arrays, bool(copy))
        if _BF16 is not None:
            for o in self.outputs:
                if o.dtype == "bf16":
                    out[o.name] = out[o.name].view(_BF16)
        return out

    def set_seed(self, seed, step=0):
        """Sets the random ops' seed and the step of the next run (a new
        session has seed 0, step 0; each run advances the step by one)."""
        self._s.set_seed(int(seed), int(step))

    def benchmark(self, inputs, iterations=100, warmup=10):
        """Times `run(inputs, copy=False)` (wall clock, this thread).

        Returns a dict of milliseconds per run: "min", "median", "mean",
        "max", with "iterations" and "device"."""
        for _ in range(max(0, int(warmup))):
            self.run(inputs, copy=False)
        ts = []
        for _ in range(max(1, int(iterations))):
            t0 = time.perf_counter()
            self.run(inputs, copy=False)
            ts.append((time.perf_counter() - t0) * 1e3)
        ts.sort()
        return {"min": ts[0], "median": ts[len(ts) // 2], "mean": sum(ts) / len(ts),
                "max": ts[-1], "iterations": len(ts), "device": self.device}

    def __repr__(self):
        return "<dmlc.Session on %s: %d inputs, %d outputs>" % (
            self.device, len(self.inputs), len(self.outputs))


class Package:
    """A compiled model (a .dmlpkg), loaded: immutable, shareable by any
    number of sessions and threads. Made by dmlc.compile or dmlc.load.

    Attributes:
        inputs, outputs (list of TensorInfo): the forward function's.
        symbols (dict): symbolic dim name -> its compiled upper bound.
        functions (list of str): the package's functions ("forward", ...).
        meta (str): the package's meta section ("key: value" lines).
        path (str or None): the file it was loaded from.
    """

    def __init__(self, model, data=None, path=None):
        self._model = model
        self._data = data
        self.path = path
        self.inputs = [TensorInfo(d) for d in model.inputs()]
        self.outputs = [TensorInfo(d) for d in model.outputs()]
        s = model.summary()
        self.symbols = dict(s["symbols"])
        self.functions = list(s["functions"])
        self.meta = s["meta"]
        self._summary = s

    def info(self):
        """The package's facts as `dmlc inspect` shows them: a dict with
        "sections" [(tag, bytes)], "arena_bytes", "scratch_bytes",
        "weights_bytes", "param_count", "num_nodes", "file_size",
        "format_version", "symbols", "functions", "meta"."""
        return dict(self._summary)

    def session(self, device="cpu", function=None):
        """A new Session on `device`: "cpu", "vulkan" (the default Vulkan
        device), "vulkan:N", "cuda" or "cuda:N"; `function` None runs
        "forward". Raises dmlc.Error: UnimplementedError for a device this
        build lacks, FailedPreconditionError when the package has no kernels
        for the device's target (compile with target="cpu,vulkan"),
        NotFoundError when no such device (or its driver) exists."""
        return Session(self, device, function)

    def save(self, path):
        """Writes the package to `path` (atomically: a temporary file in the
        same folder, then renamed)."""
        path = os.fspath(path)
        data = self._data
        if data is None:
            with open(self.path, "rb") as f:
                data = f.read()
        tmp = "%s.tmp.%d" % (path, os.getpid())
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def check(self, device="vulkan", iterations=3, seed=0):
        """dmlc.check(self, device, ...): see there."""
        return check(self, device, iterations, seed)

    def __repr__(self):
        return "<dmlc.Package %s: inputs %s, outputs %s>" % (
            self.path or "(in memory)", [i.type for i in self.inputs],
            [o.type for o in self.outputs])


def load(source):
    """Loads a package: a path (str or os.PathLike; memory-mapped, weights
    used in place) or the package's bytes. Every section's CRC and the graph
    are verified. Raises dmlc.Error: NotFoundError / FileError for the file,
    DataLossError for bytes that are not a (whole) package (the section and
    offset named), UnimplementedError for a newer format or an op this build
    lacks."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        return Package(_core.load_bytes(data), data=data)
    path = os.fspath(source)
    return Package(_core.load_file(path), path=path)


def _shape_spec(name, shape):
    if isinstance(shape, str):
        return "%s=%s" % (name, shape)
    parts = []
    for d in shape:
        if isinstance(d, (tuple, list)):
            parts.append("[%s]" % ":".join(str(int(x)) for x in d))
        else:
            parts.append(str(int(d)))
    return "%s=%s" % (name, "x".join(parts))


def compile(model, target="cpu", *, targets=None, batch_bound=None, dim_bounds=None,
            input_shapes=None, dynamic_dim_bound=None, dynamic_max_elements=None,
            cuda_arch=None, allow_tf32=False, output=None):
    """Compiles an ONNX model into a package (what `dmlc compile` does).

    Args:
        model: the ONNX model: a path (str or os.PathLike; external data read
            beside it), its bytes, or an object with SerializeToString()
            (onnx.ModelProto; no external data).
        target (str or list): "cpu" (default), or GPU targets too:
            "cpu,vulkan", ["cpu", "vulkan", "cuda"], "metal". `targets` is
            the same (the name `dmlc compile --target` has).
        batch_bound (int): upper bound of every symbolic dim not otherwise
            bounded (default 64; `--batch-bound`).
        dim_bounds (dict or int): bound per symbol name, {"H": 1280}, or an
            int for every other symbolic dim (`--dim-bound`).
        input_shapes (dict): per input a shape replacing the declared one,
            as `--input-shape` spells it ("1x3x[32:640]x[32:1280:32]") or
            as a sequence of ints (static) and (min, max) or (min, max,
            step) tuples (symbolic with those bounds).
        dynamic_dim_bound, dynamic_max_elements (int): bounds of value-
            dependent dims and of the elements of such values
            (`--dynamic-dim-bound`, `--dynamic-max-elements`).
        cuda_arch (str), allow_tf32 (bool): the cuda target's `--cuda-arch`
            and `--allow-tf32`.
        output (path): also write the package there.
    dmlc's pass pipeline is fixed (there are no optimization levels).

    Returns:
        Package. Raises dmlc.Error: UnimplementedError listing every
        unsupported op (or a target's missing kernels), InvalidArgumentError
        for a bad option (the option's text named), DataLossError for bytes
        that are not ONNX, NotFoundError for a missing file.
    """
    if targets is not None:
        target = targets
    if isinstance(target, (list, tuple)):
        target = ",".join(target)
    base_dir, source = "", ""
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
    elif hasattr(model, "SerializeToString"):
        data = model.SerializeToString()
    else:
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise NotFoundError("compile: cannot open '%s': no such file" % path,
                                op="compile", reason="cannot open '%s': no such file" % path)
        except OSError as e:
            raise FileError("compile: cannot read '%s': %s" % (path, e.strerror),
                            op="compile", reason="cannot read '%s': %s" % (path, e.strerror))
        base_dir = os.path.dirname(os.path.abspath(path))
        source = path
    bounds = []
    if isinstance(dim_bounds, int):
        bounds.append(str(dim_bounds))
    elif dim_bounds:
        bounds.append(",".join("%s=%d" % (k, int(v)) for k, v in dim_bounds.items()))
    shapes = [_shape_spec(k, v) for k, v in (input_shapes or {}).items()]
    pkg_bytes, report = _core.compile_onnx(
        data, base_dir, source, target or "cpu", int(batch_bound or 0), bounds, shapes,
        int(dynamic_dim_bound or 0), int(dynamic_max_elements or 0), cuda_arch or "",
        bool(allow_tf32))
    pkg = Package(_core.load_bytes(pkg_bytes), data=pkg_bytes)
    pkg.compile_report = report
    if output is not None:
        pkg.save(output)
        pkg.path = os.fspath(output)
    return pkg


def available_targets():
    """The targets this build compiles for, in words ("cpu, vulkan, metal,
    cuda")."""
    return _core.available_targets()


def devices():
    """The devices sessions can run on, as `dmlc devices` lists them: a list
    of dicts with "id" (what Package.session takes: "cpu", "vulkan:0",
    "cuda:0"), "name", "kind", "memory_bytes", "api_version" and
    "is_default". GPUs whose driver or device is absent are left out."""
    out = [{"id": "cpu", "name": "cpu", "kind": "CPU", "memory_bytes": 0,
            "api_version": (0, 0, 0), "is_default": True}]
    for kind in ("vulkan", "cuda"):
        try:
            out.extend(_core.gpu_devices(kind))
        except (NotFoundError, UnimplementedError):
            pass
    return out


def check(package, device="vulkan", iterations=3, seed=0):
    """Runs each GPU kernel of `package` on `device` against the CPU
    reference kernels, on random and edge inputs, then the whole function end
    to end (what `dmlc check` does; dml_rt_check in runtime/dml_rt.h states
    the error measure and tolerances).

    Returns a dict: "device", "n_failed" (kernels beyond tolerance: a wrong
    kernel is reported here, not raised), "seed", "iterations" and
    "kernels", one dict per kernel and a last "end-to-end" entry with
    "name", "ops", "tol_class", "tolerance", "checked", "passed", "worst",
    "value", "index", "device_value", "cpu_value", "inputs", "iteration",
    "note". Raises dmlc.Error for "cpu" (InvalidArgumentError) and for a
    device a session cannot be made on."""
    return _core.check(package._model, device, int(seed), int(iterations))
