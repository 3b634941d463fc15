"""Resampling weights of ``resize``: which input pixels each output pixel reads, and with what weight.

Every method except bilinear and nearest resamples separably through the same spans: for each output
row (and column), a start index and a fixed number of weights (``kernels.resample``). The weights are
computed with TensorFlow's float32 arithmetic:

- ``span_weights``: tf's ``scale_and_translate`` (lanczos3/5, gaussian, mitchellcubic, keyscubic and
  triangle with ``antialias``; with antialiasing the kernel widens by the shrink factor);
- ``cubic_weights``: tf's ``ResizeBicubic``, a 1024-entry table of Keys' cubic (a=-0.5 with half-pixel
  centres, out-of-image taps dropped and the rest renormalised; a=-0.75 with clamped taps in v1 mode);
- ``area_weights``: tf's ``ResizeArea``, the fraction of each input pixel an output pixel covers.
"""

from __future__ import annotations

import functools
import math

import numpy as np

_PI = np.float32(3.14159265359879)  # tf's kPI in sampling_kernels.h


def _lanczos(radius: float):
    r = np.float32(radius)

    def kernel(x: np.ndarray) -> np.ndarray:
        x = np.abs(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = r * np.sin(_PI * x) * np.sin(_PI * x / r) / (_PI * _PI * x * x)
        return np.where(x > r, 0, np.where(x <= np.float32(1e-3), 1, value)).astype(np.float32)

    return kernel, radius


def _gaussian(x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    sigma = np.float32(1.5 / 3.0)
    value = np.exp(-x * x / (np.float64(2.0) * sigma * sigma)).astype(np.float32)
    return np.where(x >= np.float32(1.5), 0, value).astype(np.float32)


def _cubic(b_term, c_term):
    """Piecewise cubic ``a3 x^3 + a2 x^2 + a0`` on [0, 1) and ``b3 x^3 + b2 x^2 + b1 x + b0`` on [1, 2)."""

    def kernel(x: np.ndarray) -> np.ndarray:
        x = np.abs(x)
        near = ((np.float32(c_term[0]) * x + np.float32(c_term[1])) * x) * x + np.float32(c_term[2])
        far = (
            (np.float32(b_term[0]) * x + np.float32(b_term[1])) * x + np.float32(b_term[2])
        ) * x + np.float32(b_term[3])
        return np.where(x >= 2, 0, np.where(x >= 1, far, near)).astype(np.float32)

    return kernel


def _triangle(x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    return np.where(x < 1, 1 - x, 0).astype(np.float32)


def _box(x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    return np.where(x < 0.5, 1, np.where(x == 0.5, 0.5, 0)).astype(np.float32)


#: tf's sampling kernels (sampling_kernels.h) and their radii, by resize method name.
KERNELS = {
    "lanczos3": _lanczos(3.0),
    "lanczos5": _lanczos(5.0),
    "gaussian": (_gaussian, 1.5),
    "bicubic": (_cubic((-0.5, 2.5, -4.0, 2.0), (1.5, -2.5, 1.0)), 2.0),  # Keys, a = -0.5
    "mitchellcubic": (
        _cubic((-7.0 / 18.0, 2.0, -10.0 / 3.0, 16.0 / 9.0), (7.0 / 6.0, -2.0, 8.0 / 9.0)),
        2.0,
    ),
    "bilinear": (_triangle, 1.0),
    "box": (_box, 1.0),
}


def _frozen(starts: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    for array in (starts, weights):
        array.flags.writeable = False  # cached and shared between calls
    return starts, weights


@functools.lru_cache(maxsize=256)
def span_weights(method: str, in_size: int, out_size: int, antialias: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, weights)`` of tf's scale_and_translate for one axis: ``(out,)`` int64 and ``(out, span)``."""
    kernel, radius = KERNELS[method]
    scale = np.float32(out_size) / np.float32(in_size)
    inv_scale = np.float32(1.0 / float(scale))
    kernel_scale = max(inv_scale, np.float32(1)) if antialias else np.float32(1)
    span = min(2 * math.ceil(float(np.float32(radius) * kernel_scale)) + 1, in_size)
    reach = np.float32(radius) * kernel_scale
    sample = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * inv_scale
    first = np.clip(np.ceil(sample - reach - np.float32(0.5)), 0, in_size - 1).astype(np.int64)
    last = np.clip(np.floor(sample + reach - np.float32(0.5)), 0, in_size - 1).astype(np.int64) + 1
    # A span that would run past the image shifts left; the taps it gains get weight zero.
    starts = np.minimum(first, in_size - span)
    source = starts[:, None] + np.arange(span)[None, :]
    distance = (source.astype(np.float32) + np.float32(0.5) - sample[:, None]) * (
        np.float32(1) / kernel_scale
    )
    inside = (source >= first[:, None]) & (source < last[:, None]) & (sample <= in_size)[:, None]
    values = np.where(inside, kernel(np.abs(distance)), np.float32(0)).astype(np.float32)
    totals = values.sum(axis=1, dtype=np.float32)
    usable = np.abs(totals) >= 1000 * np.finfo(np.float32).tiny
    inverse = np.float32(1) / np.where(usable, totals, np.float32(1))
    weights = np.where(usable[:, None], values * inverse[:, None], np.float32(0)).astype(np.float32)
    return _frozen(starts, weights)


_TABLE_SIZE = 1024


@functools.lru_cache(maxsize=2)
def _cubic_table(a: float) -> np.ndarray:
    """tf's GetCoeffsTable: ``table[i] = (w(x), w(x + 1))`` for ``x = i / 1024``, Keys' cubic with ``a``."""
    x = np.arange(_TABLE_SIZE + 1, dtype=np.float32) / np.float32(_TABLE_SIZE)
    a = np.float32(a)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + np.float32(1)
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return np.stack([near, far], axis=1).astype(np.float32)


def resize_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """tf's CalculateResizeScale: input pixels per output pixel (corner-to-corner with ``align_corners``)."""
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def _as_spans(dense: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A dense ``(out, in)`` weight matrix as ``(starts, weights)`` spans of one common width."""
    in_size = dense.shape[1]
    used = dense != 0
    any_used = used.any(axis=1)
    first = np.where(any_used, used.argmax(axis=1), 0)
    last = np.where(any_used, in_size - 1 - used[:, ::-1].argmax(axis=1), 0)
    span = max(int((last - first).max()) + 1, 1)
    starts = np.minimum(first, in_size - span).astype(np.int64)
    weights = dense[np.arange(len(starts))[:, None], starts[:, None] + np.arange(span)[None, :]]
    return _frozen(starts, weights.astype(np.float32))


@functools.lru_cache(maxsize=256)
def cubic_weights(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool):
    """Spans of tf's ResizeBicubic for one axis (see the module docstring)."""
    scale = resize_scale(in_size, out_size, align_corners)
    table = _cubic_table(-0.5 if half_pixel_centers else -0.75)
    position = np.arange(out_size, dtype=np.float32)
    position = (
        (position + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel_centers else position * scale
    )
    base = np.floor(position)
    offset = np.rint((position - base) * np.float32(_TABLE_SIZE)).astype(np.int64)
    taps = base.astype(np.int64)[:, None] + np.arange(-1, 3)[None, :]
    values = np.stack(
        [table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0], table[_TABLE_SIZE - offset, 1]],
        axis=1,
    )
    if half_pixel_centers:  # tf drops the taps outside the image and renormalises the rest
        values = np.where((taps >= 0) & (taps < in_size), values, np.float32(0))
        totals = values.sum(axis=1, dtype=np.float32)
        usable = np.abs(totals) >= 1000 * np.finfo(np.float32).tiny
        inverse = np.float32(1) / np.where(usable, totals, np.float32(1))
        values = np.where(usable[:, None], values * inverse[:, None], values)
    dense = np.zeros((out_size, in_size), dtype=np.float32)
    rows = np.repeat(np.arange(out_size), 4)
    np.add.at(dense, (rows, np.clip(taps, 0, in_size - 1).ravel()), values.astype(np.float32).ravel())
    return _as_spans(dense)


@functools.lru_cache(maxsize=256)
def area_weights(in_size: int, out_size: int, align_corners: bool):
    """Spans of tf's ResizeArea for one axis: the covered fraction of each input pixel, summing to 1."""
    scale = resize_scale(in_size, out_size, align_corners)
    starts = np.arange(out_size, dtype=np.float32) * scale
    ends = np.arange(1, out_size + 1, dtype=np.float32) * scale
    # With align_corners the last output reaches past the image: tf reads the last pixel there.
    pixels = np.arange(max(in_size, math.ceil(float(ends[-1]))), dtype=np.float32)
    covered = np.maximum(
        np.minimum(ends[:, None], pixels[None, :] + 1) - np.maximum(starts[:, None], pixels[None, :]), 0
    ).astype(np.float32)
    dense = covered[:, :in_size].copy()
    dense[:, in_size - 1] += covered[:, in_size:].sum(axis=1)
    # Normalised by the row sums rather than by ``scale``: a constant image stays exactly constant.
    dense /= dense.sum(axis=1, keepdims=True)
    return _as_spans(dense)
