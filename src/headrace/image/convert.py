"""Changing an image's dtype: ``convert_image_dtype`` (rescales the value range) and ``saturate_cast``.

Integer images span ``0..dtype.max`` (negative values of signed types are kept as negatives); float
images span ``0..1``. The arithmetic follows tf.image's order (cast then scale, or scale then cast) so
results equal TensorFlow's bit for bit.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable

try:  # the clip ufunc itself: np.clip's Python wrapper costs ~5 us a call, too much per image
    # numpy's stubs do not list the ufuncs of its umath modules
    from numpy._core.umath import clip as _clip  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - numpy 1.x
    from numpy.core.umath import clip as _clip  # type: ignore[no-redef]


@functools.cache
def _dtype_of(dtype: Any) -> np.dtype:
    return np.dtype(dtype)


def _dtype(dtype: Any, fn: str) -> np.dtype:
    try:
        out = _dtype_of(dtype)
    except TypeError:  # unhashable or not a dtype
        try:
            out = np.dtype(dtype)
        except TypeError:
            raise InvalidArgumentError(f"{fn}: dtype={dtype!r} is not a numpy dtype") from None
    if out.kind not in "uif":
        raise InvalidArgumentError(f"{fn}: dtype={out} is not allowed: an integer or float dtype")
    return out


def _range_of(dtype: np.dtype) -> tuple[float, float]:
    info = np.iinfo(dtype) if dtype.kind in "ui" else np.finfo(dtype)
    return info.min, info.max


@functools.cache
def _cast_bounds(source: np.dtype, target: np.dtype) -> tuple[Any, Any] | None:
    """``(low, high)`` to clip a ``source`` array to before casting it to ``target``; None if no need."""
    low, high = _range_of(target)
    in_low, in_high = _range_of(source)
    if source.kind == "f" and target.kind in "ui":
        # The largest float of this precision not above the int's max (float32(2**31 - 1) rounds up).
        largest = float(np.finfo(source).max)
        upper = source.type(min(high, largest))
        if int(upper) > high:
            upper = np.nextafter(upper, source.type(0))
        return source.type(max(low, -largest)), upper
    if in_low < low or in_high > high:
        return source.type(max(low, in_low)), source.type(min(high, in_high))
    return None


def saturate_cast(image: Any, dtype: Any) -> np.ndarray:
    """Cast to ``dtype``, clipping to its range first (floats to ints truncate toward zero, as tf).

    >>> saturate_cast(np.array([-3.7, 1.9, 300.0]), np.uint8)
    array([  0,   1, 255], dtype=uint8)
    """
    array = image if isinstance(image, np.ndarray) else np.asarray(image)
    target = _dtype(dtype, "saturate_cast")
    if array.dtype == target:
        return array
    if array.dtype.kind not in "uif":
        raise InvalidArgumentError(f"saturate_cast: image has dtype {array.dtype}; expected a numeric dtype")
    bounds = _cast_bounds(array.dtype, target)
    if bounds is not None:
        array = _clip(array, *bounds)
    return array.astype(target)


@traceable("image.convert_image_dtype")
def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False) -> np.ndarray:
    """Convert between image dtypes, rescaling values: ints span ``0..max``, floats ``0..1``.

    Float to int always saturates (tf leaves out-of-range values undefined unless ``saturate=True``);
    ``saturate`` matters only for int to int conversions.

    >>> convert_image_dtype(np.array([[[0, 128, 255]]], np.uint8), np.float32)
    array([[[0.       , 0.5019608, 1.       ]]], dtype=float32)
    >>> convert_image_dtype(np.array([0.0, 0.5, 1.0], np.float32), np.uint8)
    array([  0, 127, 255], dtype=uint8)
    """
    array = image if isinstance(image, np.ndarray) else np.asarray(image)
    target = _dtype(dtype, "convert_image_dtype")
    if array.dtype.kind not in "uif":
        raise InvalidArgumentError(
            f"convert_image_dtype: image has dtype {array.dtype}; expected an integer or float dtype"
        )
    source = array.dtype
    if source == target:
        return array
    if source.kind == "f" and target.kind == "f":
        return array.astype(target)
    if source.kind in "ui" and target.kind in "ui":
        in_max, out_max = int(np.iinfo(source).max), int(np.iinfo(target).max)
        if in_max > out_max:
            scaled = array // ((in_max + 1) // (out_max + 1))
            return saturate_cast(scaled, target) if saturate else scaled.astype(target)
        cast = saturate_cast(array, target) if saturate else array.astype(target)
        return cast * target.type((out_max + 1) // (in_max + 1))
    if source.kind in "ui":
        if source.itemsize >= target.itemsize:  # e.g. int32 -> float16 overflows to inf, as in tf
            with np.errstate(over="ignore", invalid="ignore"):
                return array.astype(target) * _scale_to_float(source, target)
        return array.astype(target) * _scale_to_float(source, target)
    # float -> int: scale by max + 0.5 so that 1.0 lands inside the top integer's interval.
    scaled = array * _scale_from_float(source, target)
    return saturate_cast(scaled, target)


@functools.cache
def _scale_to_float(source: np.dtype, target: np.dtype) -> Any:
    return target.type(1.0 / np.iinfo(source).max)


@functools.cache
def _scale_from_float(source: np.dtype, target: np.dtype) -> Any:
    return source.type(np.iinfo(target).max + 0.5)


def to_float(image: np.ndarray) -> np.ndarray:
    """The working float image of a colour op: float16/32/64 as they are, ints as float32 in 0..1."""
    if image.dtype.kind == "f":
        return image
    return convert_image_dtype(image, np.float32)


def from_float(result: np.ndarray, original: np.dtype) -> np.ndarray:
    """Back to the input's dtype after a colour op (ints saturate, as tf.image)."""
    if result.dtype == original:
        return result
    return convert_image_dtype(result, original, saturate=True)
