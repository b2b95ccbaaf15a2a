"""dmlc's exceptions: one class per dml_status code (runtime/base/dml_status.h).

Every error dmlc raises is a ``dmlc.Error``; its subclass names the code.
The extension (python/src/dmlc_ext.cpp) builds them through ``_make``.
"""

__all__ = [
    "Error", "InvalidArgumentError", "NotFoundError", "UnimplementedError",
    "OutOfRangeError", "DataLossError", "ResourceExhaustedError",
    "FailedPreconditionError", "InternalError", "FileError",
]


class Error(Exception):
    """An error of dmlc (a dml_status_t that is not OK).

    Attributes:
        code (str): the status code's name (dml_status_code_name), e.g.
            ``"invalid_argument"``.
        op (str): the operation that failed, e.g. ``"rt.load"``, ``"rt.run"``,
            ``"compile"``, ``"python.run"``.
        reason (str): what went wrong, one line.
        details (str): further lines (the node, the input, "while ..."
            context), possibly empty.
    ``str(e)`` is ``"<op>: <reason>"`` followed by the detail lines.
    """

    code = "unknown"

    def __init__(self, message, op="", reason="", details=""):
        super().__init__(message)
        self.op = op
        self.reason = reason or message
        self.details = details


class InvalidArgumentError(Error):
    """INVALID_ARGUMENT: a bad value was passed (dtype, shape, option)."""
    code = "invalid_argument"


class NotFoundError(Error):
    """NOT_FOUND: a file, name, device or symbol is missing."""
    code = "not_found"


class UnimplementedError(Error):
    """UNIMPLEMENTED: an op, attribute, dtype or device this build lacks."""
    code = "unimplemented"


class OutOfRangeError(Error):
    """OUT_OF_RANGE: an index or dim beyond its bound (e.g. batch > bound)."""
    code = "out_of_range"


class DataLossError(Error):
    """DATA_LOSS: corrupt or truncated bytes (not a package, bad ONNX)."""
    code = "data_loss"


class ResourceExhaustedError(Error):
    """RESOURCE_EXHAUSTED: host or device memory, or a size overflow."""
    code = "resource_exhausted"


class FailedPreconditionError(Error):
    """FAILED_PRECONDITION: wrong state (an input not given, no kernels for
    the device's target)."""
    code = "failed_precondition"


class InternalError(Error):
    """INTERNAL: a broken invariant inside dmlc (a bug: please report it)."""
    code = "internal"


class FileError(Error):
    """IO: reading, writing or renaming a file failed."""
    code = "io"


_BY_CODE = {c.code: c for c in (
    InvalidArgumentError, NotFoundError, UnimplementedError, OutOfRangeError,
    DataLossError, ResourceExhaustedError, FailedPreconditionError,
    InternalError, FileError)}


def _make(code, op, reason, details, message):
    cls = _BY_CODE.get(code, Error)
    return cls(message, op=op, reason=reason, details=details)
