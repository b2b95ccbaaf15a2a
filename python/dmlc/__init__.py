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
    "Tensor", "tensor", "empty", "zeros", "ones", "full", "arange", "random",
    "device_memory", "built_devices", "ops",
    "Trainer", "History", "StopTraining", "Server", "TRAIN_DEFAULTS",
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

from ._tensor import (Tensor, arange, device_memory, empty, full, ones,  # noqa: E402
                      random, tensor, zeros)
from . import ops  # noqa: E402


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
    scalars) converted to the input's dtype; non-native byte order swapped;
    dmlc.Tensors as they are (bound by dml_rt_session_set_input_tensor)."""
    if isinstance(value, Tensor):
        return value
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

    A session on a GPU ("vulkan", "vulkan:N", "cuda", "cuda:N") runs on the
    device that dmlc.Tensors of the same device name live on: Tensors on it
    are copied into the session on the device, and run(..., device=True)
    leaves the outputs there as Tensors (docs/tensor.md "Sessions").

    Attributes:
        inputs, outputs (list of TensorInfo): the function's, in order.
        device (str): the device in words, e.g. "cpu" or
            "vulkan:0 (llvmpipe (LLVM 15.0.6, 256 bits), CPU, Vulkan 1.3.255)".
        device_name (str): the device as given ("cpu", "vulkan", ...).
    """

    def __init__(self, package, device="cpu", function=None):
        self.package = package
        self.device_name = device or "cpu"
        self._s = _core.Session(package._model, self.device_name, function or "")
        self.inputs = [TensorInfo(d) for d in self._s.inputs()]
        self.outputs = [TensorInfo(d) for d in self._s.outputs()]
        self._by_name = {i.name: i for i in self.inputs}
        self.device = self._s.device()

    def run(self, inputs, copy=True, device=None):
        """Runs the function on `inputs` and returns its outputs.

        Args:
            inputs (dict): input name -> array. Arrays must have the input's
                dtype exactly (no silent cast: InvalidArgumentError names
                both) and a shape it takes: static dims equal, symbolic dims
                within [1, bound] and agreeing across inputs. C-contiguous
                arrays are read in place (copied once, into the session's
                memory); others are made contiguous first. Lists and scalars
                are converted to the input's dtype. A dmlc.Tensor (any
                device, views too) is bound as it is: its dtype and dims
                checked as an array's (dml_rt_session_set_input_tensor);
                one on the session's device (the same device name) is
                copied on the device, never through the host.
            copy (bool): True (default): each output is a new array the
                caller owns. False: read-only views of the session's
                memory, no copy, overwritten by the session's next run
                (copy them to keep them).
            device (str, True or None): when given ("cpu", "vulkan:0", ...),
                the outputs are new dmlc.Tensors on that device
                (dml_rt_session_get_output_tensor) instead of arrays; True:
                on the session's own device (device_name), copied there on
                the device: the outputs never come to the host.
        Returns:
            dict: output name -> numpy.ndarray (or dmlc.Tensor with
            `device`) with the run's actual dims, in the function's output
            order.
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
        if device is True:
            device = self.device_name
        out = self._s.run(arrays, bool(copy), device or "")
        if _BF16 is not None and not device:
            for o in self.outputs:
                if o.dtype == "bf16":
                    out[o.name] = out[o.name].view(_BF16)
        return out

    def transfer_stats(self):
        """The bytes and copies of inputs and outputs this session moved
        (dml_rt_session_transfer_stats): a dict of "to_device_bytes",
        "to_host_bytes", "on_device_bytes" (host to device, device to host,
        on the device) and their "_count"s; zeros on the CPU."""
        return self._s.transfer_stats()

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
        self.learning_rate = None  # a fit's default rate (compile's learning_rate)

    @property
    def trainable(self):
        """True for a training package (it has train_step and eval_step)."""
        return "train_step" in self.functions and "eval_step" in self.functions

    def trainer(self, device="cpu"):
        """A new Trainer of this training package on `device` (its own copy
        of the parameters, initialized from the package)."""
        return Trainer(self, device)

    def _bytes(self):
        if self._data is not None:
            return self._data
        with open(self.path, "rb") as f:
            return f.read()

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
        data = self._bytes()
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
            cuda_arch=None, allow_tf32=False, precision=None, cpu_fallback=True, output=None,
            loss=None,
            optimizer=None,
            learning_rate=None, loss_output=None, momentum=None, beta1=None, beta2=None,
            epsilon=None, alpha=None, weight_decay=None, clip_norm=None, clip_value=None,
            label_smoothing=None, huber_delta=None, soft_targets=None, train=None,
            qat=False, calibration=None):
    """Compiles an ONNX model into a package (what `dmlc compile` does); with
    a loss or an optimizer (or train=True) a training package (what `dmlc
    train` compiles: forward, train_step, eval_step; docs/training.md).

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
        precision (str): "f32" (default), "f16" or "bf16": the GPU targets'
            elementwise ops, data movement, Gemm/MatMul, Conv, pools and
            BatchNorm/LayerNorm/InstanceNorm on 16-bit values and weights
            (f32 accumulation and statistics), inputs and outputs kept f32
            (`--precision`; needs a GPU target; docs/kernels.md "Reduced
            precision").
        cpu_fallback (bool): nodes a GPU target cannot emit run on the host
            with the CPU kernels (default; docs/kernels.md "CPU fall-back");
            False refuses such models with the target's error, as `dmlc
            compile --no-cpu-fallback` does.
        output (path): also write the package there.
        loss: a loss name ("cross_entropy", "nll", "bce_with_logits", "bce",
            "mse", "mae", "huber") for the first output (or `loss_output`),
            or a dict per trained output {"out1": "cross_entropy", "out2":
            ("mse", 0.5)}: name -> loss or (loss, weight) (`--loss
            out1=cross_entropy,out2=mse:0.5`). Default (train=True without
            a loss): TRAIN_DEFAULTS["loss"], read from the C library.
        optimizer: "sgd", "momentum", "nesterov", "adam", "adamw",
            "rmsprop", "adagrad"; default TRAIN_DEFAULTS["optimizer"].
        learning_rate (float): the default rate of this package's fits
            (not compiled in: the rate is a run-time input); default
            TRAIN_DEFAULTS["learning_rate"].
        momentum, beta1, beta2, epsilon, alpha, weight_decay, clip_norm,
        clip_value, label_smoothing, huber_delta, soft_targets: as
            passes/dml_train.h's dml_train_config_t (None: its default).
        qat (bool): quantization-aware training (`dmlc train --qat`;
            docs/quantize.md): a training package of the model with int8
            fake quantization (FakeQuantize, straight-through gradient) in
            the places `dmlc quantize` puts QDQ pairs, its activation
            ranges calibrated on `calibration` and then trained; implies
            train=True. Train it on the CPU (FakeQuantize has no GPU
            kernels); Trainer.export_qat_onnx writes the int8 QDQ model.
            Models of one input.
        calibration (array): with qat, rows of the model's input (f32 [N,
            ...], each row reshaped to the input; the first 1,000 are
            used), e.g. the training inputs.
    A fit's batch_size must be within batch_bound. A Trainer
    (Package.trainer()) fits training packages.
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
    tcfg = {}
    hyper = dict(momentum=momentum, beta1=beta1, beta2=beta2, epsilon=epsilon, alpha=alpha,
                 weight_decay=weight_decay, clip_norm=clip_norm, clip_value=clip_value,
                 label_smoothing=label_smoothing, huber_delta=huber_delta)
    asked = (loss is not None or optimizer is not None or soft_targets is not None
             or loss_output is not None or learning_rate is not None
             or any(v is not None for v in hyper.values()))
    if qat:
        if train is not None and not train:
            raise InvalidArgumentError(
                "compile: qat=True makes a training package (train=False given)",
                op="compile", reason="qat=True makes a training package (train=False given)")
        if calibration is None:
            raise InvalidArgumentError(
                "compile: qat=True needs calibration= (rows of the model's input, e.g. "
                "the training inputs)", op="compile",
                reason="qat=True needs calibration= (rows of the model's input)")
        train = True
    elif calibration is not None:
        raise InvalidArgumentError(
            "compile: calibration= is for qat=True (dmlc quantize calibrates PTQ)",
            op="compile", reason="calibration= without qat=True")
    if train is None:
        train = asked
    elif not train and asked:
        raise InvalidArgumentError(
            "compile: train=False with training options (loss, optimizer, ...)",
            op="compile", reason="train=False with training options (loss, optimizer, ...)")
    if train:
        if isinstance(loss, dict):
            parts = []
            for name, v in loss.items():
                if isinstance(v, (tuple, list)):
                    if len(v) != 2:
                        raise InvalidArgumentError(
                            "compile: loss of '%s' must be a name or (name, weight)" % name,
                            op="compile",
                            reason="loss of '%s' must be a name or (name, weight)" % name)
                    parts.append("%s=%s:%r" % (name, v[0], float(v[1])))
                else:
                    parts.append("%s=%s" % (name, v))
            tcfg["losses"] = ",".join(parts)
        elif loss is not None:
            tcfg["loss"] = str(loss)
        if optimizer is not None:
            tcfg["optimizer"] = str(optimizer)
        if loss_output is not None:
            tcfg["loss_output"] = str(loss_output)
        if soft_targets is not None:
            tcfg["soft_targets"] = bool(soft_targets)
        for k, v in hyper.items():
            if v is not None:
                tcfg[k] = float(v)
        if "losses" not in tcfg and "loss" not in tcfg:
            tcfg["loss"] = TRAIN_DEFAULTS["loss"]  # non-empty: build the training functions
    qat_info = None
    if qat:
        calib = np.ascontiguousarray(calibration, dtype=np.float32)
        f32_data = data
        with _model_file(source, data) as qpath:
            data, qat_report = _core.qat_model(qpath, calib)
        # the export (Trainer.export_qat_onnx) starts again from the f32
        # model and the same rows, as `dmlc train --qat --export-onnx`
        qat_info = dict(model=f32_data, source=source, calibration=calib,
                        report=dict(qat_report))
    pkg_bytes, report = _core.compile_onnx(
        data, base_dir, source, target or "cpu", int(batch_bound or 0), bounds, shapes,
        int(dynamic_dim_bound or 0), int(dynamic_max_elements or 0), cuda_arch or "",
        bool(allow_tf32), bool(cpu_fallback), tcfg, precision or "")
    pkg = Package(_core.load_bytes(pkg_bytes), data=pkg_bytes)
    pkg.compile_report = report
    if qat_info is not None:
        pkg.compile_report["qat"] = qat_info["report"]
        pkg._qat = qat_info
    if learning_rate is not None:
        pkg.learning_rate = float(learning_rate)
    if output is not None:
        pkg.save(output)
        pkg.path = os.fspath(output)
    return pkg


class _model_file:
    """The ONNX model as a file path (the quantizer reads a path): `source`
    when the model was given as one, else `data` written to a temporary
    file, removed on exit."""

    def __init__(self, source, data):
        self.source, self.data, self.tmp = source, data, None

    def __enter__(self):
        if self.source:
            return self.source
        import tempfile
        fd, self.tmp = tempfile.mkstemp(suffix=".onnx", prefix="dmlc-qat-")
        with os.fdopen(fd, "wb") as f:
            f.write(self.data)
        return self.tmp

    def __exit__(self, *exc):
        if self.tmp:
            os.unlink(self.tmp)


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


def built_devices():
    """The device names this build's runtime takes, e.g. "cpu, vulkan[:N],
    cuda[:N]" (the backends compiled in: CMake's DMLC_WITH_VULKAN and
    DMLC_WITH_CUDA), whether or not such a device is present."""
    return _core.built_devices()


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


TRAIN_DEFAULTS = dict(_core.train_defaults())
"""The defaults of training, read from the C library (dml_train_config_init
and dml_fit_options_init, shared with `dmlc train`): "loss", "optimizer",
"epochs", "batch_size", "learning_rate", "validation_split", "shuffle",
"seed", "restore_best"."""


class StopTraining(Exception):
    """Raised by a fit callback to end training after the current epoch (or
    batch): fit returns the history so far, history.stopped_early True."""


class History:
    """What Trainer.fit returns.

    Attributes:
        epochs (list of dict): one dict per epoch run, keyed as the columns of
            `dmlc train --history`'s CSV: "epoch", "loss", "accuracy",
            "val_loss", "val_accuracy", "lr", "seconds" (plus "epochs",
            "step", "samples_per_second"); a multi-output package's
            "O_loss", "O_accuracy", "val_O_loss", "val_O_accuracy" per
            trained output O; each table metric ("val_f1", "val_O_top5", or
            without "val_" when there is no validation data). Values that do
            not exist (no validation data, a loss without accuracy) are NaN.
        history (dict of list): the same by key, as Keras'
            History.history: {"loss": [...], "val_loss": [...], ...}.
        stopped_early (bool): early stopping or a callback ended the fit.
        best_epoch (int): early stopping's best epoch (1-based), 0 if none.
        restored (bool): the best epoch's parameters were restored.
        validation (str): where the val_ values come from: "split",
            "validation" (validation_data), or "" (none).
    """

    def __init__(self, d):
        self.epochs = list(d["epochs"])
        self.stopped_early = bool(d["stopped_early"])
        self.best_epoch = int(d["best_epoch"])
        self.restored = bool(d["restored"])
        self.validation = d["validation"]
        self.history = {}
        for e in self.epochs:
            for k, v in e.items():
                self.history.setdefault(k, []).append(v)

    def __len__(self):
        return len(self.epochs)

    def __getitem__(self, i):
        return self.epochs[i]

    def __repr__(self):
        return "<dmlc.History: %d epochs, final loss %s>" % (
            len(self.epochs), self.epochs[-1]["loss"] if self.epochs else None)


def _as_data(what, value, infos, key_of, cast_ok=True):
    """`value` (an array for a single input / target, or a dict name ->
    array) as the list in `infos`' order, each array C-contiguous with the
    declared dtype (a safe NumPy cast allowed: uint8 labels to int64;
    anything else is InvalidArgumentError)."""
    op = "python." + what
    if isinstance(value, dict):
        names = [key_of(i) for i in infos]
        unknown = [k for k in value if k not in names]
        if unknown:
            raise NotFoundError("%s: unknown %s %s (the model has %s)"
                                % (op, what, unknown, names), op=op,
                                reason="unknown names %s" % unknown)
        missing = [n for n in names if n not in value]
        if missing:
            raise FailedPreconditionError("%s: %s not given: %s" % (op, what, missing),
                                          op=op, reason="not given: %s" % missing)
        items = [(n, value[n]) for n in names]
    else:
        if len(infos) != 1:
            raise InvalidArgumentError(
                "%s: the model has %d %s %s: give a dict name -> array"
                % (op, len(infos), what, [key_of(i) for i in infos]), op=op,
                reason="give a dict name -> array")
        items = [(key_of(infos[0]), value)]
    out = []
    for (name, v), info in zip(items, infos):
        want = _NP_DTYPES.get(info["dtype"])
        arr = _as_input(name, v, None)
        if want is not None and arr.dtype != want:
            if not (cast_ok and np.can_cast(arr.dtype, want, "safe")):
                raise InvalidArgumentError(
                    "%s: '%s' is %s; the model takes %s (%s)" % (op, name, arr.dtype, want,
                                                                 info["dtype"]),
                    op=op, reason="'%s' is %s, not %s" % (name, arr.dtype, want))
            arr = arr.astype(want)
        out.append(np.ascontiguousarray(arr))
    return out


def _call_all(fns, logs):
    """Calls each callback with `logs`; True to stop (a callback returned
    False or raised StopTraining). Other exceptions propagate (fit raises
    them once the trainer has stopped)."""
    stop = False
    for fn in fns:
        try:
            if fn(logs) is False:
                stop = True
        except StopTraining:
            stop = True
    return stop


class Trainer:
    """Trains a training package (dmlc.compile with a loss, or a package
    `dmlc train` wrote) on one device: fit, evaluate, predict, save (what
    runtime/train/dml_trainer.h does; docs/python.md, "Training").

    The trainer holds its own copy of the parameters and optimizer state,
    initialized from the package; fit updates them and every later call
    (evaluate, predict, save, another fit, which continues up to `epochs`:
    the total, so a fit with nothing left raises "already trained N epochs")
    sees them. One call at a time: calls from several threads are
    serialized (the GIL is released while the C trainer works).

    Attributes:
        inputs (list of TensorInfo): the model's inputs (x's names).
        targets (list of TensorInfo): train_step's targets, one per trained
            output; `target_names` the names y's dict uses (the output's
            name; "target" for a single-loss package, where y is an array).
        outputs (list of TensorInfo): forward's outputs (what predict gives).
        batch_bound (int): the largest batch_size.
    """

    def __init__(self, package, device="cpu"):
        if not package.trainable:
            raise FailedPreconditionError(
                "python.trainer: the package has no train_step/eval_step: compile it with "
                "a loss (dmlc.compile(model, loss=...)) or with `dmlc train`",
                op="python.trainer", reason="the package is not a training package")
        self.package = package
        self.device = device or "cpu"
        self._t = _core.Trainer(package._model, self.device)
        info = self._t.info()
        self._in = list(info["inputs"])
        self._tg = list(info["targets"])
        self.inputs = [TensorInfo(d) for d in self._in]
        self.targets = [TensorInfo(d) for d in self._tg]
        self.target_names = [d["output"] or "target" for d in self._tg]
        self.outputs = package.outputs
        self.batch_bound = int(info["batch_bound"])

    @property
    def epoch(self):
        """Epochs done (by fit, or restored by load_checkpoint)."""
        return int(self._t.info()["epoch"])

    @property
    def step(self):
        """Train steps done."""
        return int(self._t.info()["step"])

    def _xs(self, x, what="inputs"):
        return _as_data(what, x, self._in, lambda i: i["name"])

    def _ys(self, y):
        # a single loss's labels may also be named as its output, as `dmlc
        # train --data` names them (or "target")
        if (isinstance(y, dict) and len(y) == 1 and self._tg[0]["output"] is None
                and len(self._tg) == 1):
            (k, v), = y.items()
            if k == "target" or k in [o.name for o in self.outputs]:
                y = v
        return _as_data("targets", y, self._tg, lambda i: i["output"] or "target")

    def fit(self, x, y, *, epochs=None, batch_size=None, validation_data=None,
            validation_split=None, shuffle=None, seed=None, learning_rate=None,
            lr_schedule=None, callbacks=(), batch_callbacks=(), metrics=(),
            early_stopping=None, checkpoint=None, eval_batch_size=None, verbose=0,
            **hyper):
        """Trains (dml_trainer_fit) and returns a History.

        Args:
            x: an array (a single-input model) or a dict input name -> array,
                N rows each.
            y: an array (a single-loss package: int class indices [N] for
                cross_entropy / nll, else the output's shape; or a dict of
                one entry named as the output) or a dict trained output
                name -> array. Arrays of another dtype are
                cast when NumPy calls it safe (uint8 labels to int64).
            epochs: total epochs of the trainer (a later fit continues to
                its own `epochs`); batch_size: rows per step, at most
                batch_bound; shuffle, seed: the shuffling (and random ops')
                seed. None: TRAIN_DEFAULTS, read from the C library.
            validation_data: (xv, yv), as x and y; else validation_split,
                the fraction of the last rows held out (None: the C
                default TRAIN_DEFAULTS["validation_split"], as `dmlc
                train`; 0: none).
            learning_rate: a constant rate (None: the package's compile
                learning_rate, else TRAIN_DEFAULTS["learning_rate"]);
                lr_schedule: instead, `dmlc train --lr-schedule`'s spelling
                ("cosine:1e-3,1e-5", "step:0.01,5,0.5",
                "plateau:1e-3,0.5,2").
            callbacks: callables called after each epoch with its logs (the
                dict History.epochs holds); returning False or raising
                StopTraining ends the fit after that epoch; any other
                exception ends it and is raised by fit. batch_callbacks:
                the same after each train step, with "epoch", "batch",
                "batches", "step", "rows", "loss", "lr".
            metrics: table metrics ("f1", "top5", "precision", "recall",
                "mae", ...; dml_metrics.h), each a name (on the first output)
                or "OUTPUT=NAME"; computed on the validation data.
            early_stopping: None, patience (int), or a dict with "patience",
                "min_delta", "monitor" ("val_loss", "loss", "val_accuracy",
                "accuracy", "auto"), "restore_best" (default True).
            checkpoint: None, a folder (a checkpoint each epoch), or a dict
                {"dir": path, "every": n}: dir/epoch-NNNN.safetensors.
            eval_batch_size: validation batches (None: the bound).
            verbose: 0 silent (default), 1 one line per epoch on stdout.
            **hyper: momentum, beta1, beta2, epsilon, alpha, weight_decay,
                clip_norm, clip_value set before the first step
                (dml_fit_hyper_t; the package must have them).
        Raises:
            dmlc.Error (InvalidArgumentError for bad options or data, named),
            and whatever a callback raised (other than StopTraining).
        """
        xs, ys = self._xs(x), self._ys(y)
        vxs = vys = None
        if validation_data is not None:
            if not isinstance(validation_data, (tuple, list)) or len(validation_data) != 2:
                raise InvalidArgumentError("python.fit: validation_data must be (x, y)",
                                           op="python.fit",
                                           reason="validation_data must be (x, y)")
            vxs, vys = self._xs(validation_data[0]), self._ys(validation_data[1])
            if validation_split:
                raise InvalidArgumentError(
                    "python.fit: give validation_data or validation_split, not both",
                    op="python.fit", reason="give validation_data or validation_split, not both")
        opts = {"verbose": int(verbose)}
        if epochs is not None:
            opts["epochs"] = int(epochs)
        if batch_size is not None:
            opts["batch_size"] = int(batch_size)
        if eval_batch_size is not None:
            opts["eval_batch_size"] = int(eval_batch_size)
        if shuffle is not None:
            opts["shuffle"] = bool(shuffle)
        if seed is not None:
            opts["seed"] = int(seed)
        if validation_data is not None:
            opts["validation_split"] = 0.0
        elif validation_split is not None:
            opts["validation_split"] = float(validation_split)
        if lr_schedule is not None:
            opts["lr_schedule"] = str(lr_schedule)
        else:
            lr = learning_rate if learning_rate is not None else self.package.learning_rate
            if lr is not None:
                opts["learning_rate"] = float(lr)
        if early_stopping is not None:
            es = early_stopping if isinstance(early_stopping, dict) else {
                "patience": int(early_stopping)}
            for k in ("patience", "min_delta", "monitor", "restore_best"):
                if k in es:
                    opts[k] = es[k]
        if checkpoint is not None:
            ck = checkpoint if isinstance(checkpoint, dict) else {"dir": checkpoint}
            opts["checkpoint_dir"] = os.fspath(ck["dir"])
            opts["checkpoint_every"] = int(ck.get("every", 1))
        for k, v in hyper.items():
            if k not in ("momentum", "beta1", "beta2", "epsilon", "alpha", "weight_decay",
                         "clip_norm", "clip_value"):
                raise TypeError("fit() got an unexpected keyword argument '%s'" % k)
            opts[k] = float(v)
        mlist = []
        for m in ([metrics] if isinstance(metrics, str) else metrics):
            out, _, name = m.rpartition("=")
            mlist.append((out, name))
        ecbs = list(callbacks) if callbacks else []
        bcbs = list(batch_callbacks) if batch_callbacks else []
        ecb = (lambda logs: _call_all(ecbs, logs)) if ecbs else None
        bcb = (lambda logs: _call_all(bcbs, logs)) if bcbs else None
        return History(self._t.fit(xs, ys, vxs, vys, opts, mlist, ecb, bcb))

    def evaluate(self, x, y, batch_size=None):
        """eval_step over every row: {"loss": mean loss weighted by rows,
        "accuracy": (NaN for a loss without one)}, and per trained output O
        of a multi-output package "O_loss" and "O_accuracy"."""
        return self._t.evaluate(self._xs(x), self._ys(y), int(batch_size or 0))

    def predict(self, x, output=None):
        """forward with the trained parameters on every row of `x` (in
        chunks of the batch bound). Returns the output's array for a model
        with one output or when `output` (a name or index) is given, else a
        dict name -> array of every output."""
        xs = self._xs(x)
        names = [o.name for o in self.outputs]
        if output is not None:
            i = names.index(output) if isinstance(output, str) and output in names else output
            if not isinstance(i, int) or not 0 <= i < len(names):
                raise NotFoundError("python.predict: no output %r (the model has %s)"
                                    % (output, names), op="python.predict",
                                    reason="no output %r" % (output,))
            return self._t.predict(xs, i)
        if len(names) == 1:
            return self._t.predict(xs, 0)
        return {n: self._t.predict(xs, i) for i, n in enumerate(names)}

    def save(self, path):
        """Writes the package with the trained parameters (and optimizer
        state) to `path`, atomically (dml_train_save_package); dmlc.load
        gives it back, trainable. Returns the path."""
        path = os.fspath(path)
        self._t.save(self.package._model, self.package._bytes(), path)
        return path

    def export_qat_onnx(self, path):
        """Writes the int8 QDQ ONNX model of a quantization-aware trainer
        (a package of dmlc.compile(..., qat=True)) to `path`: the f32 model
        with the trained weights, quantized with the trained activation
        ranges (what `dmlc train --qat --export-onnx` writes;
        docs/quantize.md). Returns the report: layers, layers_quantized,
        activations, calibration_rows, output, output_sqnr_db (the QDQ
        model's output against the trained f32 weights on the calibration
        rows), trained_initializers, trained_ranges. Raises
        FailedPreconditionError for a package not compiled with qat=True."""
        q = getattr(self.package, "_qat", None)
        if q is None:
            raise FailedPreconditionError(
                "python.export_qat_onnx: the package was not compiled with qat=True",
                op="python.export_qat_onnx", reason="not a QAT package")
        path = os.fspath(path)
        with _model_file(q["source"], q["model"]) as src:
            data, rep = _core.qat_export(self._t, self.package._model, src, path,
                                         q["calibration"])
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return dict(rep)

    def save_checkpoint(self, path, seed=0):
        """Every global and the epoch/step counters as safetensors."""
        self._t.checkpoint(os.fspath(path), True, int(seed))

    def load_checkpoint(self, path):
        """Restores a checkpoint of the same package (a later fit continues
        from its epoch)."""
        self._t.checkpoint(os.fspath(path), False, 0)

    def __repr__(self):
        return "<dmlc.Trainer on %s: inputs %s, targets %s, epoch %d>" % (
            self.device, [i.name for i in self.inputs], self.target_names, self.epoch)


class Server:
    """Batches concurrent requests from many Python threads into runs of one
    or several packages, in this process (runtime/serve/dml_serve.h's
    batcher; no HTTP). Each model has `instances` sessions, each with a
    worker thread; a request's rows are packed with others' into runs of at
    most `batch_size` rows, the oldest waiting at most `batch_timeout_ms`.
    A reply equals the single-request answer bit for bit (docs/serving.md).

        with dmlc.Server(pkg, batch_size=32, batch_timeout_ms=2) as srv:
            out = srv.run({"input": x})          # any thread

    Args:
        packages: a Package, or a dict name -> Package (run's `model`).
        batch_size: most rows per run (None: the package's batch bound).
        batch_timeout_ms: how long the oldest request waits for others
            (None: dml_serve_config_init's default).
        device: "cpu" (default) or a GPU device as Session takes.
        instances: sessions (worker threads) per model (None: 1).
        max_queued_rows: rows queued before run refuses with
            ResourceExhaustedError (None: no limit).
    """

    def __init__(self, packages, batch_size=None, batch_timeout_ms=None, device="cpu",
                 instances=None, max_queued_rows=None):
        if isinstance(packages, Package):
            packages = {"": packages}
        self.packages = dict(packages)
        self._srv = {}
        try:
            for name, pkg in self.packages.items():
                self._srv[name] = _core.Server(
                    pkg._model, -1 if batch_size is None else int(batch_size),
                    -1.0 if batch_timeout_ms is None else float(batch_timeout_ms),
                    device or "", int(instances or 0),
                    -1 if max_queued_rows is None else int(max_queued_rows))
        except BaseException:
            self.close()
            raise

    def run(self, inputs, model=None):
        """One request: `inputs` a dict input name -> array of the same
        leading (batch) rows, at least 1 (no batch bound: a larger request is
        split over runs). Blocks (the GIL released) until its reply: a dict
        output name -> array with this request's rows. `model` names the
        package of a Server over several. Raises dmlc.Error: a bad input
        (named), FailedPreconditionError once closed, the run's error."""
        if model is None:
            if len(self._srv) != 1:
                raise InvalidArgumentError(
                    "python.serve: name the model, one of %s" % sorted(self.packages),
                    op="python.serve", reason="name the model")
            model = next(iter(self.packages))
        if model not in self.packages:
            raise NotFoundError("python.serve: no model '%s' (the server has %s)"
                                % (model, sorted(self.packages)), op="python.serve",
                                reason="no model '%s'" % model)
        srv = self._srv.get(model)
        if srv is None:
            raise FailedPreconditionError("python.serve: the server is closed",
                                          op="python.serve", reason="the server is closed")
        pkg = self.packages[model]
        xs = _as_data("inputs", inputs, [{"name": i.name, "dtype": i.dtype}
                                         for i in pkg.inputs],
                      lambda i: i["name"], cast_ok=False)
        outs = srv.run(xs)
        return {o.name: a for o, a in zip(pkg.outputs, outs)}

    def stats(self, model=None):
        """Counters since the start (dml_serve_stats_t): "requests",
        "requests_failed", "rows", "runs", "run_rows", "mean_rows_per_run",
        "queued_requests", "latency_ms_p50", "latency_ms_p99",
        "queue_ms_p50"."""
        name = model if model is not None else next(iter(self.packages))
        return self._srv[name].stats()

    def close(self):
        """Waits for the requests in progress and queued, then stops the
        workers. Later runs raise FailedPreconditionError."""
        srvs, self._srv = self._srv, {}
        for s in srvs.values():
            s.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
