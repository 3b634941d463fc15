"""Hue and saturation: ``rgb_to_hsv``, ``hsv_to_rgb``, ``adjust_saturation``, ``adjust_hue`` and random versions.

Images are RGB (last axis 3). Integer images go through float32 in 0..1 and back with saturation, as
tf.image. The adjustments are computed without a full HSV round trip, by closed forms that equal
tf.image's kernels up to float rounding (uint8 and float32 images run as compiled loops in
``kernels.py``; ``saturation_reference`` and ``hue_reference`` are the same arithmetic in numpy):

- saturation: scaling HSV's S by ``k`` (clipped to 1) moves every channel toward the pixel's maximum,
  ``out = v - min(k, v / (v - min)) * (v - x)``;
- hue: tf's kernel keeps each pixel's minimum and maximum and moves the hue along the colour
  hexagon; this module does the same, vectorised over the whole batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable
from ._checks import as_image, batch_size_of, check_number, per_image, require_channels, resolve_rng
from ._compiled import as_batch, kernels, per_image_column
from .color import _check_bounds, _finite
from .convert import from_float, to_float


def _float_rgb(images: Any, fn: str) -> np.ndarray:
    array = as_image(images, fn)
    require_channels(array, fn, 3, " (RGB)")
    if array.dtype.kind != "f":
        raise InvalidArgumentError(
            f"{fn}: image has dtype {array.dtype}; expected a float dtype with values in 0..1 "
            "(use convert_image_dtype(image, np.float32) first)"
        )
    return array


def rgb_to_hsv(images: Any) -> np.ndarray:
    """Float RGB in 0..1 to HSV, every component in 0..1 (hue 0 for grey pixels).

    >>> rgb_to_hsv(np.array([[[0.0, 0.5, 1.0]]]))[0, 0].round(6).tolist()
    [0.583333, 1.0, 1.0]
    """
    array = _float_rgb(images, "rgb_to_hsv")
    r, g, b = array[..., 0], array[..., 1], array[..., 2]
    value = np.maximum(np.maximum(r, g), b)
    spread = value - np.minimum(np.minimum(r, g), b)
    with np.errstate(divide="ignore", invalid="ignore"):
        saturation = np.where(value > 0, spread / value, 0).astype(array.dtype, copy=False)
        norm = array.dtype.type(1) / (array.dtype.type(6) * spread)
        hue = np.where(
            r == value,
            norm * (g - b),
            np.where(
                g == value, norm * (b - r) + array.dtype.type(2 / 6), norm * (r - g) + array.dtype.type(4 / 6)
            ),
        )
    hue = np.where(spread > 0, hue, 0)
    hue = np.where(hue < 0, hue + 1, hue).astype(array.dtype, copy=False)
    return np.stack([hue, saturation, value], axis=-1)


def hsv_to_rgb(images: Any) -> np.ndarray:
    """Float HSV (every component in 0..1) to RGB in 0..1.

    >>> hsv_to_rgb(np.array([[[7 / 12, 1.0, 1.0]]]))[0, 0].round(6).tolist()
    [0.0, 0.5, 1.0]
    """
    array = as_image(images, "hsv_to_rgb")
    require_channels(array, "hsv_to_rgb", 3, " (HSV)")
    if array.dtype.kind != "f":
        raise InvalidArgumentError(f"hsv_to_rgb: image has dtype {array.dtype}; expected a float dtype")
    one, two = array.dtype.type(1), array.dtype.type(2)
    hue6 = array[..., 0] * array.dtype.type(6)
    saturation, value = array[..., 1], array[..., 2]
    red = np.clip(np.abs(hue6 - array.dtype.type(3)) - one, 0, 1)
    green = np.clip(two - np.abs(hue6 - two), 0, 1)
    blue = np.clip(two - np.abs(hue6 - array.dtype.type(4)), 0, 1)
    keep = one - saturation
    return np.stack([(keep + saturation * c) * value for c in (red, green, blue)], axis=-1)


@traceable("image.adjust_saturation")
def adjust_saturation(image: Any, saturation_factor: Any) -> np.ndarray:
    """Multiply HSV saturation by ``saturation_factor`` (clipped to 0..1); 0 gives grey at each pixel's max.

    >>> adjust_saturation(np.array([[[0.2, 0.4, 0.8]]]), 0.5)[0, 0].round(6).tolist()
    [0.5, 0.6, 0.8]
    """
    fn = "adjust_saturation"
    array = as_image(image, fn)
    require_channels(array, fn, 3, " (RGB)")
    work = array.dtype if array.dtype.kind == "f" else np.dtype(np.float32)
    factor = per_image(saturation_factor, array, fn, "saturation_factor", work)
    if array.dtype in (np.uint8, np.float32):
        return _compiled_pixels("saturation", array, factor)
    return from_float(saturation_reference(to_float(array), factor), array.dtype)


def saturation_reference(flt: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """Numpy form of the saturation kernel (float in, float out), for other dtypes and for tests."""
    value = flt.max(axis=-1, keepdims=True)
    spread = value - flt.min(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        # New S / old S: the factor, capped where S would pass 1; grey pixels (spread 0) stay as they are.
        ratio = np.where(spread > 0, np.clip(factor, 0, value / spread), 1).astype(flt.dtype, copy=False)
    return value - ratio * (value - flt)


def _compiled_pixels(kernel: str, array: np.ndarray, per_image_value: np.ndarray) -> np.ndarray:
    batch = as_batch(array)
    out = np.empty(batch.shape, dtype=array.dtype)
    values = per_image_column(per_image_value, batch.shape[0])
    getattr(kernels(), kernel)(batch, values, out, array.dtype == np.uint8)
    return out if array.ndim == 4 else out[0]


@traceable("image.adjust_hue")
def adjust_hue(image: Any, delta: Any) -> np.ndarray:
    """Rotate the hue by ``delta`` turns (in [-1, 1]); keeps each pixel's minimum and maximum channel.

    >>> adjust_hue(np.array([[[1.0, 0.0, 0.0]]], np.float32), 1 / 3)[0, 0].tolist()
    [0.0, 1.0, 0.0]
    """
    fn = "adjust_hue"
    array = as_image(image, fn)
    require_channels(array, fn, 3, " (RGB)")
    work = array.dtype if array.dtype.kind == "f" else np.dtype(np.float32)
    shift = per_image(delta, array, fn, "delta", work)
    if (abs(float(shift)) > 1) if shift.ndim == 0 else np.any(np.abs(shift) > 1):
        raise InvalidArgumentError(f"{fn}: delta={delta!r} is not allowed: in [-1, 1]")
    if array.dtype in (np.uint8, np.float32):
        return _compiled_pixels("hue", array, shift)
    return from_float(hue_reference(to_float(array), shift), array.dtype)


def hue_reference(flt: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Numpy form of the hue kernel (float in, float out), for other dtypes and for tests."""
    shift = shift[..., 0] if np.ndim(shift) else shift
    r, g, b = flt[..., 0], flt[..., 1], flt[..., 2]
    high = np.maximum(np.maximum(r, g), b)
    low = np.minimum(np.minimum(r, g), b)
    mid = np.maximum(np.minimum(r, g), np.minimum(np.maximum(r, g), b))
    # Sector of the colour hexagon (0..5), ties resolved in the order of tf's kernel.
    sector = _tf_sector(r, g, b)
    spread = high - low
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = np.where(spread > 0, (mid - low) / spread, 0).astype(flt.dtype, copy=False)
    odd = (sector & 1).astype(bool)
    hue = sector.astype(flt.dtype) + np.where(odd, 1 - fraction, fraction)
    hue = np.where(spread > 0, hue, 0).astype(flt.dtype, copy=False)
    hue = hue + shift * flt.dtype.type(6)
    hue = np.where(hue < 0, hue + 6, hue)
    hue = np.where(hue < 0, hue + 6, hue)
    hue = np.where(hue >= 6, hue - 6, hue)
    hue = np.where(hue >= 6, hue - 6, hue).astype(flt.dtype, copy=False)
    sector = hue.astype(np.int8)
    fraction = hue - sector
    fraction = np.where((sector & 1).astype(bool), 1 - fraction, fraction)
    mid = low + fraction * spread
    # (max, mid, min) land on (r, g, b) by sector: 0 rgb=(M,m,L) 1 (m,M,L) 2 (L,M,m) 3 (L,m,M) 4 (m,L,M) 5 (M,L,m)
    out = np.empty_like(flt)
    out[..., 0] = np.choose(sector, (high, mid, low, low, mid, high), mode="clip")
    out[..., 1] = np.choose(sector, (mid, high, high, mid, low, low), mode="clip")
    out[..., 2] = np.choose(sector, (low, low, mid, high, high, mid), mode="clip")
    return out


def _tf_sector(r: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    r_below_g = r < g
    sector_if_below = np.where(b < r, 1, np.where(b > g, 3, 2))
    sector_if_above = np.where(b > r, 4, np.where(b < g, 0, 5))
    return np.where(r_below_g, sector_if_below, sector_if_above).astype(np.int8)


@traceable("image.random_saturation")
def random_saturation(
    image: Any,
    lower: float,
    upper: float,
    seed: int | None = None,
    *,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """``adjust_saturation`` by a factor drawn uniformly from ``[lower, upper)``, per image.

    >>> random_saturation(np.zeros((4, 4, 3), np.uint8), 0.5, 1.5, rng=np.random.default_rng(0)).dtype
    dtype('uint8')
    """
    fn = "random_saturation"
    _check_bounds(fn, lower, upper)
    array = as_image(image, fn)
    generator = resolve_rng(rng, seed, fn)
    return adjust_saturation(array, generator.uniform(lower, upper, size=batch_size_of(array)))


@traceable("image.random_hue")
def random_hue(
    image: Any, max_delta: float, seed: int | None = None, *, rng: np.random.Generator | None = None
) -> np.ndarray:
    """``adjust_hue`` by a delta drawn uniformly from ``[-max_delta, max_delta)`` (``max_delta`` <= 0.5).

    >>> random_hue(np.zeros((2, 4, 4, 3), np.float32), 0.1, rng=np.random.default_rng(0)).shape
    (2, 4, 4, 3)
    """
    fn = "random_hue"
    check_number(
        _finite(max_delta) and 0 <= max_delta <= 0.5, fn, "max_delta", max_delta, "a number in [0, 0.5]"
    )
    array = as_image(image, fn)
    generator = resolve_rng(rng, seed, fn)
    return adjust_hue(array, generator.uniform(-max_delta, max_delta, size=batch_size_of(array)))
