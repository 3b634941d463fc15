"""Resizing: ``resize`` (tf.image.resize's eight methods), ``resize_with_pad`` and ``ResizeMethod``.

Semantics are tf.image.resize's (TF2: half-pixel centres). ``bilinear`` and ``nearest`` use the same
float32 coordinate arithmetic as TensorFlow's kernels, so nearest is exact and bilinear agrees to
float32 rounding. ``bicubic`` is tf's ResizeBicubic (Keys' cubic from a 1024-entry table), ``area``
averages the input pixels each output pixel covers, and ``lanczos3``, ``lanczos5``, ``gaussian`` and
``mitchellcubic`` are tf's scale_and_translate kernels; ``antialias=True`` widens the kernel when
shrinking. These run as one compiled separable pass (``kernels.resample``) over weights computed as
tf computes them (``resize_weights``). The result is float32, except for ``nearest``, which keeps the
input's dtype. The TF1 options ``align_corners`` and ``half_pixel_centers=False`` (the default of
``tf.compat.v1.image.resize_images``, see ``resize_v1``) apply to bilinear, nearest, bicubic and area.
"""

from __future__ import annotations

import enum
import functools
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable
from ._checks import as_image, check_size
from ._compiled import kernels
from .pad import pad_to_bounding_box
from .resize_weights import area_weights, cubic_weights, resize_scale, span_weights


class ResizeMethod(str, enum.Enum):
    """tf.image.ResizeMethod: the names ``resize`` accepts (the plain strings work too)."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_METHODS = tuple(m.value for m in ResizeMethod)
#: tf.compat.v1.image.ResizeMethod's integers, and other spellings.
_ALIASES = {"nearest_neighbor": "nearest", "0": "bilinear", "1": "nearest", "2": "bicubic", "3": "area"}
_TF1_METHODS = ("bilinear", "nearest", "bicubic", "area")
_UINT8, _FLOAT32 = np.dtype(np.uint8), np.dtype(np.float32)


def _method(method: Any, fn: str) -> str:
    if isinstance(method, bool):
        method = str(method)
    key = str(getattr(method, "value", method)).lower()
    key = _ALIASES.get(key, key)
    if key not in _METHODS:
        raise InvalidArgumentError(
            f"{fn}: method={method!r} is not allowed: one of {', '.join(map(repr, _METHODS))} "
            "(or a ResizeMethod)"
        )
    return key


def _size(size: Any, fn: str) -> tuple[int, int]:
    if type(size) in (tuple, list) and len(size) == 2 and all(type(v) is int and v > 0 for v in size):
        return size[0], size[1]  # the common case, without numpy's per-call cost
    values = np.asarray(size)
    if values.shape != (2,) or values.dtype.kind not in "ui" or np.any(values <= 0):
        raise InvalidArgumentError(
            f"{fn}: size={size!r} is not allowed: (new_height, new_width), two ints > 0"
        )
    return int(values[0]), int(values[1])


@functools.lru_cache(maxsize=256)
def _linear_taps(
    in_size: int, out_size: int, align_corners: bool = False, half_pixel_centers: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower and upper source index and the weight of the upper one, for each output position
    (cached: a pipeline resizes between the same few sizes; the arrays are read-only)."""
    scale = resize_scale(in_size, out_size, align_corners)
    if half_pixel_centers:
        position = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
    else:
        position = np.arange(out_size, dtype=np.float32) * scale
    floor = np.floor(position)
    lower = np.maximum(floor.astype(np.intp), 0)
    upper = np.minimum(np.ceil(position).astype(np.intp), in_size - 1)
    taps = lower, upper, (position - floor).astype(np.float32)
    for array in taps:
        array.flags.writeable = False
    return taps


def _nearest_index(in_size: int, out_size: int, align_corners: bool = False, half_pixel_centers: bool = True):
    scale = resize_scale(in_size, out_size, align_corners)
    position = np.arange(out_size, dtype=np.float32)
    position = (position + np.float32(0.5)) * scale if half_pixel_centers else position * scale
    # tf rounds half away from zero with align_corners (roundf), and floors otherwise.
    index = np.floor(position.astype(np.float64) + 0.5) if align_corners else np.floor(position)
    return np.clip(index.astype(np.intp), 0, in_size - 1)


def _resample(batch: np.ndarray, rows: tuple, cols: tuple) -> np.ndarray:
    """Separable resampling through ``(starts, weights)`` spans for each axis (see resize_weights)."""
    if batch.dtype not in (np.uint8, np.float32):
        batch = batch.astype(np.float32)
    # Contiguous rows let the compiled loop run over each row as one flat vector (a crop is a view).
    n, height, width, channels = batch.shape
    flat = np.ascontiguousarray(batch).reshape(n, height, width * channels)
    out_height, out_width = len(rows[0]), len(cols[0])
    middle = np.empty((n, out_height, width * channels), dtype=np.float32)
    out = np.empty((n, out_height, out_width, channels), dtype=np.float32)
    kernels().resample(flat, channels, rows[0], rows[1], cols[0], cols[1], middle, out)
    return out


def _bilinear(batch: np.ndarray, out_height: int, out_width: int, align_corners=False, half_pixel=True):
    y_low, y_high, y_lerp = _linear_taps(batch.shape[1], out_height, align_corners, half_pixel)
    x_low, x_high, x_lerp = _linear_taps(batch.shape[2], out_width, align_corners, half_pixel)
    if batch.dtype in (np.uint8, np.float32):
        out = np.empty((batch.shape[0], out_height, out_width, batch.shape[3]), dtype=np.float32)
        kernels().resize_bilinear(batch, y_low, y_high, y_lerp, x_low, x_high, x_lerp, out)
        return out
    return bilinear_reference(batch, y_low, y_high, y_lerp, x_low, x_high, x_lerp)


def bilinear_reference(batch, y_low, y_high, y_lerp, x_low, x_high, x_lerp) -> np.ndarray:
    """Numpy form of the bilinear kernel, for other dtypes and for tests."""
    top_rows = np.take(batch, y_low, axis=1)
    bottom_rows = np.take(batch, y_high, axis=1)
    x_weight = x_lerp[None, None, :, None]
    # TF's order of operations: interpolate along x on both rows, then along y, all in float32.
    top_left = np.take(top_rows, x_low, axis=2).astype(np.float32)
    top = top_left + (np.take(top_rows, x_high, axis=2).astype(np.float32) - top_left) * x_weight
    bottom_left = np.take(bottom_rows, x_low, axis=2).astype(np.float32)
    bottom = bottom_left + (np.take(bottom_rows, x_high, axis=2).astype(np.float32) - bottom_left) * x_weight
    top += (bottom - top) * y_lerp[None, :, None, None]
    return top


@traceable("image.resize")
def resize(
    images: Any,
    size: Any,
    method: str = "bilinear",
    preserve_aspect_ratio: bool = False,
    antialias: bool = False,
    name: str | None = None,
    *,
    align_corners: bool = False,
    half_pixel_centers: bool = True,
) -> np.ndarray:
    """Resize to ``size=(new_height, new_width)`` with a ``ResizeMethod`` (or its name), as tf.image.resize.

    ``preserve_aspect_ratio=True`` makes the result fit inside ``size`` with the input's aspect ratio.
    ``antialias=True`` low-passes when shrinking (bilinear, bicubic, lanczos, gaussian, mitchellcubic;
    area always averages). ``align_corners`` / ``half_pixel_centers=False`` select TF1's sampling grid
    (bilinear, nearest, bicubic, area only); ``resize_images`` has TF1's defaults.

    >>> image = np.arange(4, dtype=np.uint8).reshape(2, 2, 1)
    >>> resize(image, (4, 4), method="nearest")[:, :, 0].tolist()
    [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]]
    >>> resize(image, (1, 1), method="area").item()
    1.5
    >>> resize(image, (3, 3), align_corners=True, half_pixel_centers=False)[:, :, 0].tolist()
    [[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0]]
    """
    fn = "resize"
    if (
        method == "bilinear"
        and type(images) is np.ndarray
        and images.ndim == 3
        and (images.dtype is _UINT8 or images.dtype is _FLOAT32)
        and type(size) in (tuple, list)
        and len(size) == 2
        and type(size[0]) is int
        and type(size[1]) is int
        and size[0] > 0
        and size[1] > 0
        and images.shape[0] > 0
        and images.shape[1] > 0
        and not preserve_aspect_ratio
        and not antialias
        and not align_corners
        and half_pixel_centers is True
    ):  # the usual call: one image, tf2's grid, nothing to check or convert (the general path's kernel)
        out = np.empty((1, size[0], size[1], images.shape[2]), dtype=np.float32)
        rows = _linear_taps(images.shape[0], size[0], False, True)
        cols = _linear_taps(images.shape[1], size[1], False, True)
        kernels().resize_bilinear(images[None], *rows, *cols, out)
        return out[0]
    array = as_image(images, fn)
    key = _method(method, fn)
    out_height, out_width = _size(size, fn)
    height, width = array.shape[-3], array.shape[-2]
    if height == 0 or width == 0:
        raise InvalidArgumentError(f"{fn}: image has shape {array.shape}; height and width must be > 0")
    tf1_grid = bool(align_corners) or not half_pixel_centers
    if align_corners and half_pixel_centers:
        raise InvalidArgumentError(
            f"{fn}: align_corners=True needs half_pixel_centers=False (TF1's grid); they are two different grids"
        )
    if tf1_grid and key not in _TF1_METHODS:
        raise InvalidArgumentError(
            f"{fn}: method={key!r} has no align_corners / half_pixel_centers=False form (as in tf); "
            f"use one of {', '.join(_TF1_METHODS)}, or the default half-pixel grid"
        )
    if preserve_aspect_ratio:
        factor = min(np.float32(out_height) / np.float32(height), np.float32(out_width) / np.float32(width))
        # tf.round rounds halves to even, as np.round.
        out_height = max(int(np.round(np.float32(factor) * np.float32(height))), 1)
        out_width = max(int(np.round(np.float32(factor) * np.float32(width))), 1)
    batch = array if array.ndim == 4 else array[None]
    half = bool(half_pixel_centers)
    if key == "nearest":
        rows = _nearest_index(height, out_height, bool(align_corners), half)
        cols = _nearest_index(width, out_width, bool(align_corners), half)
        out = np.take(np.take(batch, rows, axis=1), cols, axis=2)
    elif key == "area":
        corners = bool(align_corners)
        out = _resample(
            batch, area_weights(height, out_height, corners), area_weights(width, out_width, corners)
        )
    elif key == "bilinear" and not (antialias and (out_height < height or out_width < width)):
        out = _bilinear(batch, out_height, out_width, bool(align_corners), half)
    elif key == "bicubic" and not antialias:
        corners = bool(align_corners)
        out = _resample(
            batch,
            cubic_weights(height, out_height, corners, half),
            cubic_weights(width, out_width, corners, half),
        )
    else:  # tf's scale_and_translate: lanczos, gaussian, mitchellcubic, and antialiased bilinear / bicubic
        flag = bool(antialias)
        out = _resample(
            batch, span_weights(key, height, out_height, flag), span_weights(key, width, out_width, flag)
        )
    return out if array.ndim == 4 else out[0]


@traceable("image.resize_with_pad")
def resize_with_pad(
    image: Any, target_height: int, target_width: int, method: str = "bilinear", antialias: bool = False
) -> np.ndarray:
    """Resize keeping the aspect ratio to fit ``target_height x target_width``, then zero-pad the rest.

    >>> resize_with_pad(np.ones((2, 4, 1), np.float32), 4, 4)[:, :, 0].tolist()
    [[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]]
    """
    fn = "resize_with_pad"
    array = as_image(image, fn)
    target_h = check_size(target_height, fn, "target_height", minimum=1)
    target_w = check_size(target_width, fn, "target_width", minimum=1)
    _method(method, fn)
    height, width = np.float32(array.shape[-3]), np.float32(array.shape[-2])
    # tf's float32 arithmetic: shrink by the larger ratio, floor the sizes, centre with floored padding.
    ratio = max(width / np.float32(target_w), height / np.float32(target_h))
    new_height, new_width = height / ratio, width / ratio
    resized = resize(
        array,
        (max(int(np.floor(new_height)), 1), max(int(np.floor(new_width)), 1)),
        method,
        antialias=antialias,
    )
    top = max(int(np.floor((np.float32(target_h) - new_height) / 2)), 0)
    left = max(int(np.floor((np.float32(target_w) - new_width) / 2)), 0)
    return pad_to_bounding_box(resized, top, left, target_h, target_w)
