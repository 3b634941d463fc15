"""tf.debugging's assertions, eagerly: each raises InvalidArgumentError naming what failed."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.spec import as_dtype
from ._tensor import DTypeError, as_tensor, infer, is_tensor, match, tf_name


def _tensor(value: Any) -> np.ndarray:
    return as_tensor(value) if is_tensor(value) else infer(value)


def _check(ok: Any, message: Any, default: str) -> None:
    if not np.all(ok):
        raise InvalidArgumentError(str(message) if message is not None else default)


def _compare(op: str, fn: Any, x: Any, y: Any, message: Any) -> None:
    a, b = match(op, [x, y])
    try:
        holds = fn(a, b)
    except ValueError:
        raise InvalidArgumentError(
            f"{op}: Incompatible shapes: {list(a.shape)} vs. {list(b.shape)}"
        ) from None
    _check(holds, message, f"Condition x {op} y did not hold. x = {a}, y = {b}")


def assert_equal(x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _compare("==", np.equal, x, y, message)


def assert_none_equal(x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _compare("!=", np.not_equal, x, y, message)


def assert_less(x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _compare("<", np.less, x, y, message)


def assert_less_equal(x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _compare("<=", np.less_equal, x, y, message)


def assert_greater(x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _compare(">", np.greater, x, y, message)


def assert_greater_equal(
    x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None
) -> None:
    _compare(">=", np.greater_equal, x, y, message)


def assert_non_negative(x: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _check(_tensor(x) >= 0, message, "Condition x >= 0 did not hold element-wise")


def assert_positive(x: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _check(_tensor(x) > 0, message, "Condition x > 0 did not hold element-wise")


def assert_negative(x: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _check(_tensor(x) < 0, message, "Condition x < 0 did not hold element-wise")


def assert_rank(x: Any, rank: Any, message: Any = None, name: Any = None) -> None:
    actual = _tensor(x).ndim
    if actual != int(np.asarray(rank)):
        raise ValueError(
            str(message)
            if message
            else f"Tensor must have rank {int(np.asarray(rank))}. Received rank {actual}"
        )


def assert_type(tensor: Any, tf_type: Any, message: Any = None, name: Any = None) -> None:
    actual = _tensor(tensor).dtype
    if actual != as_dtype(tf_type):
        raise DTypeError(
            str(message)
            if message
            else f"tensor must be of type {tf_name(np.dtype(tf_type))}, got {tf_name(actual)}"
        )


def assert_all_finite(t: Any, msg: Any, name: Any = None, x: Any = None, message: Any = None) -> Any:
    array = _tensor(t if t is not None else x)
    _check(np.isfinite(array), msg or message, "Tensor had NaN or Inf values")
    return t


check_numerics = assert_all_finite
