"""tf.errors: TensorFlow's error classes and codes. ``OpError``, ``InvalidArgumentError`` and
``DataLossError`` are the ones headrace raises everywhere (``headrace.InvalidArgumentError``), so
``except tf.errors.InvalidArgumentError`` catches headrace's argument errors too."""

from __future__ import annotations

from ..core.errors import DataLossError, InvalidArgumentError, OpError
from ._tensor import UnimplementedError

OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS = range(7)
PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE = range(7, 12)
UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED = range(12, 17)


class CancelledError(OpError):
    error_code = CANCELLED


class UnknownError(OpError):
    error_code = UNKNOWN


class DeadlineExceededError(OpError, TimeoutError):
    error_code = DEADLINE_EXCEEDED


class NotFoundError(OpError, FileNotFoundError):
    error_code = NOT_FOUND


class AlreadyExistsError(OpError, FileExistsError):
    error_code = ALREADY_EXISTS


class PermissionDeniedError(OpError, PermissionError):
    error_code = PERMISSION_DENIED


class ResourceExhaustedError(OpError, MemoryError):
    error_code = RESOURCE_EXHAUSTED


class FailedPreconditionError(OpError):
    error_code = FAILED_PRECONDITION


class AbortedError(OpError):
    error_code = ABORTED


class OutOfRangeError(OpError, IndexError):
    error_code = OUT_OF_RANGE


class InternalError(OpError, RuntimeError):
    error_code = INTERNAL


class UnavailableError(OpError):
    error_code = UNAVAILABLE


class UnauthenticatedError(OpError):
    error_code = UNAUTHENTICATED


__all__ = [
    "ABORTED",
    "ALREADY_EXISTS",
    "CANCELLED",
    "DATA_LOSS",
    "DEADLINE_EXCEEDED",
    "FAILED_PRECONDITION",
    "INTERNAL",
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "OK",
    "OUT_OF_RANGE",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "UNAUTHENTICATED",
    "UNAVAILABLE",
    "UNIMPLEMENTED",
    "UNKNOWN",
    "AbortedError",
    "AlreadyExistsError",
    "CancelledError",
    "DataLossError",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "OpError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "UnknownError",
]
