"""Brightness, contrast, gamma and grey conversions, with tf.image's dtype rules.

Integer images are converted to float32 in 0..1, adjusted, and converted back with saturation
(``convert_image_dtype``), exactly as tf.image does; float images are adjusted as they are and not
clipped. Factors are scalars, or one value per image of an ``(N, H, W, C)`` batch, which is how the
random versions adjust a whole batch in one vectorised pass with an independent draw per image.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.trace_hook import traceable
from ._checks import as_image, batch_size_of, check_number, per_image, require_channels, resolve_rng
from ._compiled import as_batch, kernels, map_uint8, per_image_column
from .convert import from_float, to_float


@traceable("image.adjust_brightness")
def adjust_brightness(image: Any, delta: Any) -> np.ndarray:
    """Add ``delta`` (in the 0..1 float scale) to every pixel.

    >>> adjust_brightness(np.array([[[100, 250, 0]]], np.uint8), 0.1)[0, 0].tolist()
    [125, 255, 25]
    """
    fn = "adjust_brightness"
    array = as_image(image, fn)
    work = array.dtype if array.dtype.kind == "f" else np.dtype(np.float32)
    shift = per_image(delta, array, fn, "delta", work)
    if array.dtype == np.uint8:
        shift = shift.reshape(-1, 1, 1) if shift.ndim else shift
        return map_uint8(array, lambda levels: levels + shift)
    return from_float(to_float(array) + shift, array.dtype)


def channel_means(array: np.ndarray) -> np.ndarray:
    """``(N, C)`` float64 mean of each channel of each image, in the 0..1 scale for integer images."""
    batch = as_batch(array)
    if batch.dtype in (np.uint8, np.float32):
        means = np.empty((batch.shape[0], batch.shape[-1]), dtype=np.float64)
        zero = np.int64(0) if batch.dtype == np.uint8 else np.float64(0)  # integer sums are exact
        kernels().channel_means(batch, zero, means)
    else:
        means = batch.mean(axis=(1, 2), dtype=np.float64)
    if batch.dtype.kind in "ui":
        means = means * float(np.float32(1.0 / np.iinfo(batch.dtype).max))
    return means


@traceable("image.adjust_contrast")
def adjust_contrast(images: Any, contrast_factor: Any) -> np.ndarray:
    """Scale each channel's distance from its mean over the image by ``contrast_factor``.

    >>> adjust_contrast(np.array([[[0.2], [0.6]]]), 2.0)[:, :, 0].round(6).tolist()
    [[0.0, 0.8]]
    """
    fn = "adjust_contrast"
    array = as_image(images, fn)
    work = array.dtype if array.dtype.kind == "f" else np.dtype(np.float32)
    factor = per_image(contrast_factor, array, fn, "contrast_factor", work)
    batch = as_batch(array)
    means = channel_means(array).astype(work)  # (N, C)
    if array.dtype == np.uint8:
        scale = factor.reshape(-1, 1, 1) if factor.ndim else factor
        centre = means[:, :, None]
        return map_uint8(array, lambda levels: (levels - centre) * scale + centre)
    if array.dtype == np.float32:
        out = np.empty(batch.shape, dtype=np.float32)
        factors = per_image_column(factor, batch.shape[0])
        kernels().contrast_f32(batch, means, factors, out)
        return out if array.ndim == 4 else out[0]
    centre = means[:, None, None, :] if array.ndim == 4 else means[0]
    return from_float((to_float(array) - centre) * factor + centre, array.dtype)


@traceable("image.adjust_gamma")
def adjust_gamma(image: Any, gamma: float = 1, gain: float = 1) -> np.ndarray:
    """``gain * image ** gamma`` in the 0..1 float scale (``gamma`` >= 0).

    >>> adjust_gamma(np.array([[[0.25]]], np.float32), gamma=0.5).item()
    0.5
    """
    fn = "adjust_gamma"
    array = as_image(image, fn)
    check_number(_finite(gamma) and gamma >= 0, fn, "gamma", gamma, "a finite number >= 0")
    check_number(_finite(gain), fn, "gain", gain, "a finite number")
    work = array.dtype.type if array.dtype.kind == "f" else np.float32
    if array.dtype == np.uint8:
        return map_uint8(array, lambda levels: work(gain) * levels ** work(gamma))
    flt = to_float(array)
    return from_float(work(gain) * flt ** work(gamma), array.dtype)


_GREY_WEIGHTS = np.array([0.2989, 0.5870, 0.1140], dtype=np.float32)


@traceable("image.rgb_to_grayscale")
def rgb_to_grayscale(images: Any) -> np.ndarray:
    """Luma of RGB images, keeping a channel axis of size 1 (tf.image's weights 0.2989, 0.587, 0.114).

    >>> rgb_to_grayscale(np.array([[[255, 0, 0], [255, 255, 255]]], np.uint8))[0, :, 0].tolist()
    [76, 255]
    """
    fn = "rgb_to_grayscale"
    array = as_image(images, fn)
    require_channels(array, fn, 3, " (RGB)")
    flt = to_float(array)
    grey = flt @ _GREY_WEIGHTS.astype(flt.dtype)
    return from_float(grey[..., None], array.dtype)


@traceable("image.grayscale_to_rgb")
def grayscale_to_rgb(images: Any) -> np.ndarray:
    """Repeat a single grey channel three times.

    >>> grayscale_to_rgb(np.array([[[7]]], np.uint8))[0, 0].tolist()
    [7, 7, 7]
    """
    fn = "grayscale_to_rgb"
    array = as_image(images, fn, numeric=False)
    require_channels(array, fn, 1, " (grey)")
    return np.repeat(array, 3, axis=-1)


# --- random versions ----------------------------------------------------------------------------------------


@traceable("image.random_brightness")
def random_brightness(
    image: Any, max_delta: float, seed: int | None = None, *, rng: np.random.Generator | None = None
) -> np.ndarray:
    """``adjust_brightness`` by a delta drawn uniformly from ``[-max_delta, max_delta)``, per image.

    >>> out = random_brightness(np.full((2, 2, 3), 0.5, np.float32), 0.1, rng=np.random.default_rng(0))
    >>> bool(0.4 <= out.min() and out.max() <= 0.6)
    True
    """
    fn = "random_brightness"
    check_number(_finite(max_delta) and max_delta >= 0, fn, "max_delta", max_delta, "a finite number >= 0")
    array = as_image(image, fn)
    generator = resolve_rng(rng, seed, fn)
    return adjust_brightness(array, generator.uniform(-max_delta, max_delta, size=batch_size_of(array)))


@traceable("image.random_contrast")
def random_contrast(
    image: Any,
    lower: float,
    upper: float,
    seed: int | None = None,
    *,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """``adjust_contrast`` by a factor drawn uniformly from ``[lower, upper)``, per image (0 <= lower < upper).

    >>> random_contrast(np.zeros((2, 4, 4, 3), np.uint8), 0.5, 1.5, rng=np.random.default_rng(0)).shape
    (2, 4, 4, 3)
    """
    fn = "random_contrast"
    _check_bounds(fn, lower, upper)
    array = as_image(image, fn)
    generator = resolve_rng(rng, seed, fn)
    return adjust_contrast(array, generator.uniform(lower, upper, size=batch_size_of(array)))


def _finite(value: Any) -> bool:
    if type(value) is float or type(value) is int:  # the common case, without numpy's per-call cost
        return math.isfinite(value)
    return (
        isinstance(value, (int, float, np.number))
        and not isinstance(value, bool)
        and bool(np.isfinite(value))
    )


def _check_bounds(fn: str, lower: Any, upper: Any) -> None:
    check_number(_finite(lower) and lower >= 0, fn, "lower", lower, "a finite number >= 0")
    check_number(_finite(upper) and upper > lower, fn, "upper", upper, f"a finite number > lower ({lower!r})")
