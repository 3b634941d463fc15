"""Argument coercion shared by every op's constructor: numpy integers count as ints.

headrace's own elements and ``reduce`` results are numpy scalars, so a pipeline that feeds one back
as an argument (``Dataset.from_tensors(x).repeat(x)``) must work, as it does in tf.data.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def integer(value: Any) -> Any:
    """``value`` as a Python int when it is an integer (Python, numpy, or a 0-d integer array); any
    other value is returned unchanged, for the caller's own check to name and refuse.

    >>> integer(np.int64(3)), integer(np.array(4, np.int32)), integer(5)
    (3, 4, 5)
    >>> integer(True), integer(2.5), integer(None)
    (True, 2.5, None)
    """
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)  # an int subclass (IntEnum) becomes a plain int
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        return int(value)
    return value


def is_int(value: Any, low: int | None = None, high: int | None = None) -> bool:
    """Whether ``value`` is a Python int (not a bool) in ``[low, high)``: the check every count, size
    and index argument makes, after :func:`integer` has turned numpy integers into ints.

    >>> is_int(3, low=1), is_int(True), is_int(0, low=1), is_int(-1), is_int(2**63, high=2**63)
    (True, False, False, True, False)
    """
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and (low is None or value >= low)
        and (high is None or value < high)
    )


def is_seed(value: Any) -> bool:
    """Whether ``value`` is a seed: None or an int in ``[0, 2**63)``.

    >>> is_seed(None), is_seed(7), is_seed(-1), is_seed(2**63)
    (True, True, False, False)
    """
    return value is None or is_int(value, low=0, high=2**63)


def boolean(value: Any) -> Any:
    """``value`` as a Python bool when it is a numpy bool (scalar or 0-d array); else unchanged.

    >>> boolean(np.bool_(True)), boolean(np.array(False)), boolean(1)
    (True, False, 1)
    """
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype == bool:
        return bool(value)
    return value


def integers(value: Any) -> Any:
    """Each integer of a list or tuple (kept a list or tuple) or of a 1-d integer array (becomes a
    list) as a Python int; ``integer(value)`` for anything else.

    >>> integers(np.array([1, 2])), integers((np.int32(3), 4)), integers(7)
    ([1, 2], (3, 4), 7)
    """
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
        return [int(v) for v in value]
    if isinstance(value, (list, tuple)):
        return type(value)(integer(v) for v in value)
    return integer(value)
