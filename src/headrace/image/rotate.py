"""Rotation: ``rot90`` (exact, a view) and ``rotate``/``random_rotate`` by any angle.

``rotate`` samples like TensorFlow's ``ImageProjectiveTransformV3`` (what tfa.image.rotate and
keras' RandomRotation use): rotation about the image centre, counter-clockwise for positive angles
in radians, ``nearest`` or ``bilinear`` interpolation, and the fill modes ``constant``, ``reflect``,
``wrap`` and ``nearest`` with their exact edge rules. uint8 and float32 batches run as one compiled
loop (``kernels.affine_sample``); ``rotate_reference`` is the same sampler in numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable
from ._checks import as_image, batch_size_of, check_number, resolve_rng
from ._compiled import kernels

_INTERPOLATIONS = ("nearest", "bilinear")
_FILL_MODES = ("constant", "reflect", "wrap", "nearest")


@traceable("image.rot90")
def rot90(image: Any, k: int = 1) -> np.ndarray:
    """Rotate by ``k`` quarter turns counter-clockwise (negative ``k`` turns clockwise); a view.

    >>> rot90(np.arange(4).reshape(2, 2, 1))[:, :, 0].tolist()
    [[1, 3], [0, 2]]
    """
    array = as_image(image, "rot90", numeric=False)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise InvalidArgumentError(f"rot90: k={k!r} is not allowed: an int number of quarter turns")
    return np.rot90(array, int(k) % 4, axes=(array.ndim - 3, array.ndim - 2))


def _map_reflect(coord: np.ndarray, size: int) -> np.ndarray:
    # [abcd] -> [dcba|abcd|dcba], the edge pixel repeated (TF's FILL_REFLECT, after scipy).
    if size <= 1:
        return np.zeros_like(coord)
    period = 2 * size
    low = coord + period * np.trunc(-coord / period)
    low = np.where(low < -size, low + period, -low - 1)
    high = coord - period * np.trunc(coord / period)
    high = np.where(high >= size, period - high - 1, high)
    out = np.where(coord < 0, low, np.where(coord > size - 1, high, coord))
    return np.clip(out, 0, size - 1)


def _map_wrap(coord: np.ndarray, size: int) -> np.ndarray:
    # [abcd] -> [abcd|abcd|abcd], with TF's FILL_WRAP arithmetic (shifts by size, counts by size - 1).
    if size <= 1:
        return np.zeros_like(coord)
    span = size - 1
    low = coord + size * (np.trunc(-coord / span) + 1)
    high = coord - size * np.trunc(coord / span)
    out = np.where(coord < 0, low, np.where(coord > size - 1, high, coord))
    return np.clip(out, 0, size - 1)


def _rotation_transforms(angles: np.ndarray, height: int, width: int) -> np.ndarray:
    """``(N, 6)`` float32 affine maps from output to input pixels: rotation about the centre."""
    cos = np.cos(angles).astype(np.float32)
    sin = np.sin(angles).astype(np.float32)
    # Keras' angles_to_projective_transforms: rotation about ((W - 1) / 2, (H - 1) / 2).
    x_offset = (((width - 1) - (cos * (width - 1) - sin * (height - 1))) / 2.0).astype(np.float32)
    y_offset = (((height - 1) - (sin * (width - 1) + cos * (height - 1))) / 2.0).astype(np.float32)
    return np.ascontiguousarray(np.stack([cos, -sin, x_offset, sin, cos, y_offset], axis=1), dtype=np.float32)


def _rotation_coordinates(
    angles: np.ndarray, height: int, width: int, dtype
) -> tuple[np.ndarray, np.ndarray]:
    """Input coordinates ``(x, y)`` sampled by each output pixel, each of shape ``(N, H, W)``."""
    t = _rotation_transforms(angles, height, width)[:, :, None, None]
    xs = np.arange(width, dtype=np.float32)[None, None, :]
    ys = np.arange(height, dtype=np.float32)[None, :, None]
    # Same operation order as TF's kernel so the float32 coordinates agree bit for bit.
    x_in = t[:, 0] * xs + t[:, 1] * ys + t[:, 2]
    y_in = t[:, 3] * xs + t[:, 4] * ys + t[:, 5]
    return x_in.astype(dtype, copy=False), y_in.astype(dtype, copy=False)


def _sample(
    batch: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    interpolation: str,
    fill_mode: str,
    fill_value: float,
) -> np.ndarray:
    n, height, width, channels = batch.shape
    if fill_mode == "reflect":
        x, y = _map_reflect(x, width), _map_reflect(y, height)
    elif fill_mode == "wrap":
        x, y = _map_wrap(x, width), _map_wrap(y, height)
    elif fill_mode == "nearest":
        x, y = np.clip(x, 0, width - 1), np.clip(y, 0, height - 1)
    fill = np.asarray(fill_value).astype(batch.dtype)
    # Flat pixel table with one extra row holding the fill value: out-of-range reads point at it.
    table = np.concatenate([batch.reshape(n * height * width, channels), np.full((1, channels), fill)])
    sentinel = n * height * width
    base = (np.arange(n) * (height * width))[:, None, None]

    def index(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        ok = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width)
        return np.where(ok, base + rows * width + cols, sentinel)

    if interpolation == "nearest":
        # std::round: halves away from zero (np.round would round them to even).
        rows = np.trunc(y + np.copysign(0.5, y)).astype(np.intp)
        cols = np.trunc(x + np.copysign(0.5, x)).astype(np.intp)
        return np.take(table, index(rows, cols), axis=0)
    work = np.float64 if batch.dtype == np.float64 else np.float32
    y0, x0 = np.floor(y), np.floor(x)
    rows0, cols0 = y0.astype(np.intp), x0.astype(np.intp)
    wx1, wy1 = (x - x0)[..., None], (y - y0)[..., None]
    wx0, wy0 = (x0 + 1 - x)[..., None], (y0 + 1 - y)[..., None]

    def read(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return np.take(table, index(rows, cols), axis=0).astype(work, copy=False)

    top = wx0 * read(rows0, cols0) + wx1 * read(rows0, cols0 + 1)
    bottom = wx0 * read(rows0 + 1, cols0) + wx1 * read(rows0 + 1, cols0 + 1)
    out = wy0 * top + wy1 * bottom
    if batch.dtype.kind in "ui":
        info = np.iinfo(batch.dtype)
        return np.clip(out, info.min, info.max).astype(batch.dtype)  # C++ float->int: truncation
    return out.astype(batch.dtype, copy=False)


def _check_modes(fn: str, interpolation: str, fill_mode: str) -> tuple[str, str]:
    interpolation_key = str(interpolation).lower()
    fill_key = str(fill_mode).lower()
    check_number(
        interpolation_key in _INTERPOLATIONS, fn, "interpolation", interpolation, "'nearest' or 'bilinear'"
    )
    check_number(
        fill_key in _FILL_MODES, fn, "fill_mode", fill_mode, "'constant', 'reflect', 'wrap' or 'nearest'"
    )
    return interpolation_key, fill_key


def rotate(
    images: Any,
    angles: Any,
    interpolation: str = "nearest",
    fill_mode: str = "constant",
    fill_value: float = 0.0,
    name: str | None = None,
) -> np.ndarray:
    """Rotate counter-clockwise by ``angles`` radians (a scalar, or one per image of a batch).

    Pixels sampled from outside the image follow ``fill_mode``: ``constant`` (``fill_value``),
    ``reflect`` (dcba|abcd|dcba), ``wrap`` (abcd|abcd|abcd) or ``nearest`` (aaaa|abcd|dddd).

    >>> image = np.arange(9, dtype=np.uint8).reshape(3, 3, 1)
    >>> rotate(image, np.pi / 2)[:, :, 0].tolist()
    [[2, 5, 8], [1, 4, 7], [0, 3, 6]]
    """
    fn = "rotate"
    array = as_image(images, fn)
    interpolation, fill_mode = _check_modes(fn, interpolation, fill_mode)
    batch = array if array.ndim == 4 else array[None]
    angle_array = np.asarray(angles, dtype=np.float64)
    if angle_array.ndim == 0:
        angle_array = np.full(batch.shape[0], float(angle_array))
    elif angle_array.shape != (batch.shape[0],) or array.ndim == 3:
        expected = f"a scalar or shape ({batch.shape[0]},)" if array.ndim == 4 else "a scalar"
        raise InvalidArgumentError(
            f"{fn}: angles has shape {angle_array.shape} for images of shape {array.shape}; expected {expected}"
        )
    if not np.all(np.isfinite(angle_array)):
        raise InvalidArgumentError(f"{fn}: angles={angles!r} is not allowed: finite radians")
    if batch.shape[0] == 0 or 0 in batch.shape[1:3]:
        return array.copy()
    if batch.dtype in (np.uint8, np.float32):
        out = np.empty(batch.shape, dtype=batch.dtype)
        kernels().affine_sample(
            batch,
            _rotation_transforms(angle_array, batch.shape[1], batch.shape[2]),
            interpolation == "bilinear",
            _FILL_MODES.index(fill_mode),
            np.float32(np.asarray(fill_value).astype(batch.dtype)),
            out,
            batch.dtype == np.uint8,
        )
    else:
        out = rotate_reference(batch, angle_array, interpolation, fill_mode, fill_value)
    return out if array.ndim == 4 else out[0]


def rotate_reference(
    batch: np.ndarray, angles: np.ndarray, interpolation: str, fill_mode: str, fill_value: float
) -> np.ndarray:
    """Numpy form of the rotation kernel, for other dtypes and for tests."""
    coord_dtype = np.float64 if batch.dtype == np.float64 else np.float32
    x, y = _rotation_coordinates(angles, batch.shape[1], batch.shape[2], coord_dtype)
    return _sample(batch, x, y, interpolation, fill_mode, fill_value)


def random_rotate(
    image: Any,
    max_angle: float,
    seed: int | None = None,
    *,
    rng: np.random.Generator | None = None,
    interpolation: str = "bilinear",
    fill_mode: str = "reflect",
    fill_value: float = 0.0,
) -> np.ndarray:
    """Rotate by an angle drawn uniformly from ``[-max_angle, max_angle]`` radians, per image.

    Defaults follow keras' ``RandomRotation`` (bilinear, reflect); ``rotate`` documents the modes.

    >>> out = random_rotate(np.ones((8, 8, 3), np.float32), 0.3, rng=np.random.default_rng(0))
    >>> out.shape, float(out.min())
    ((8, 8, 3), 1.0)
    """
    fn = "random_rotate"
    array = as_image(image, fn)
    check_number(
        isinstance(max_angle, (int, float, np.number)) and np.isfinite(max_angle) and max_angle >= 0,
        fn,
        "max_angle",
        max_angle,
        "a finite number of radians >= 0",
    )
    _check_modes(fn, interpolation, fill_mode)
    generator = resolve_rng(rng, seed, fn)
    angles = generator.uniform(-max_angle, max_angle, size=batch_size_of(array))
    return rotate(array, angles, interpolation=interpolation, fill_mode=fill_mode, fill_value=fill_value)
