"""Image quality measures: ``total_variation``, ``psnr`` and ``ssim``, as tf.image computes them.

``psnr`` and ``ssim`` convert both images to float32 in 0..1 (``convert_image_dtype``) and scale
``max_val`` the same way, so a uint8 pair with ``max_val=255`` gives the same value as the float pair
with ``max_val=1``. ``ssim`` uses tf's 11x11 Gaussian window (sigma 1.5, no padding), applied as two
1-D passes, and averages over the window positions and then the channels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ._checks import as_image
from .convert import convert_image_dtype


def total_variation(images: Any, name: str | None = None) -> np.ndarray:
    """Sum of absolute differences between neighbouring pixels, down and across; one value per image.

    Float images keep their dtype. Integer images give int64 (tf subtracts in the image's own integer
    type, where uint8 differences wrap around; here they are exact).

    >>> total_variation(np.array([[[0.0], [1.0]], [[1.0], [3.0]]], np.float32)).item()  # (1 + 2) + (1 + 2)
    6.0
    """
    fn = "total_variation"
    array = as_image(images, fn)
    work = array if array.dtype.kind == "f" else array.astype(np.int64)
    axes = (-3, -2, -1)
    down = np.abs(np.diff(work, axis=-3)).sum(axis=axes, dtype=work.dtype)
    across = np.abs(np.diff(work, axis=-2)).sum(axis=axes, dtype=work.dtype)
    return np.asarray(down + across, dtype=work.dtype)


def _pair(a: Any, b: Any, fn: str) -> tuple[np.ndarray, np.ndarray]:
    first, second = as_image(a, fn), as_image(b, fn)
    if first.shape != second.shape:
        raise InvalidArgumentError(
            f"{fn}: the images have shapes {first.shape} and {second.shape}; expected equal"
        )
    if first.dtype != second.dtype:
        raise InvalidArgumentError(
            f"{fn}: the images have dtypes {first.dtype} and {second.dtype}; expected equal"
        )
    return first, second


def _max_val(max_val: Any, dtype: np.dtype, fn: str) -> np.float32:
    value = np.asarray(max_val)
    if value.ndim != 0 or value.dtype.kind not in "uif" or not np.isfinite(value) or value <= 0:
        raise InvalidArgumentError(
            f"{fn}: max_val={max_val!r} is not allowed: a number > 0 (e.g. 255 or 1.0)"
        )
    # tf casts max_val to the images' dtype and converts it like a pixel.
    return np.float32(convert_image_dtype(value.astype(dtype), np.float32))


def psnr(a: Any, b: Any, max_val: float, name: str | None = None) -> np.ndarray:
    """Peak signal-to-noise ratio in dB, one value per image (inf for identical images).

    >>> a = np.zeros((4, 4, 1), np.float32)
    >>> round(float(psnr(a, a + 0.1, max_val=1.0)), 4)
    20.0
    """
    fn = "psnr"
    first, second = _pair(a, b, fn)
    peak = _max_val(max_val, first.dtype, fn)
    x = convert_image_dtype(first, np.float32)
    y = convert_image_dtype(second, np.float32)
    mse = np.mean(np.square(x - y), axis=(-3, -2, -1), dtype=np.float32)
    with np.errstate(divide="ignore"):
        value = np.float32(20) * np.log(peak) / np.log(np.float32(10)) - np.float32(10 / np.log(10)) * np.log(
            mse
        )
    return np.asarray(value, dtype=np.float32)


def _gaussian_taps(size: int, sigma: float) -> np.ndarray:
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / np.float32(2)
    g = np.square(coords) * (np.float32(-0.5) / np.square(np.float32(sigma)))
    taps = np.exp(g - g.max())
    return (taps / taps.sum()).astype(np.float32)  # tf's 2-D softmax is the outer product of these


def _blur(x: np.ndarray, taps: np.ndarray) -> np.ndarray:
    """VALID separable convolution over the height and width axes of ``(..., H, W, C)``."""
    size = len(taps)
    height, width = x.shape[-3] - size + 1, x.shape[-2] - size + 1
    rows = taps[0] * x[..., 0:height, :, :]
    for k in range(1, size):
        rows = rows + taps[k] * x[..., k : k + height, :, :]
    out = taps[0] * rows[..., 0:width, :]
    for k in range(1, size):
        out = out + taps[k] * rows[..., k : k + width, :]
    return out


def ssim(
    img1: Any,
    img2: Any,
    max_val: float,
    filter_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
    return_index_map: bool = False,
) -> np.ndarray:
    """Structural similarity (1.0 for identical images), one value per image, averaged over channels.

    ``return_index_map=True`` returns the per-position map (``(..., H - filter_size + 1, W - filter_size
    + 1)``) instead of its mean.

    >>> image = np.linspace(0, 1, 12 * 12 * 3, dtype=np.float32).reshape(12, 12, 3)
    >>> float(ssim(image, image, max_val=1.0))
    1.0
    """
    fn = "ssim"
    first, second = _pair(img1, img2, fn)
    peak = _max_val(max_val, first.dtype, fn)
    if isinstance(filter_size, bool) or not isinstance(filter_size, (int, np.integer)) or filter_size < 1:
        raise InvalidArgumentError(f"{fn}: filter_size={filter_size!r} is not allowed: an int >= 1")
    if not (np.isfinite(filter_sigma) and filter_sigma > 0):
        raise InvalidArgumentError(f"{fn}: filter_sigma={filter_sigma!r} is not allowed: a number > 0")
    if min(first.shape[-3], first.shape[-2]) < filter_size:
        raise InvalidArgumentError(
            f"{fn}: images of shape {first.shape} are smaller than filter_size={filter_size}; pass a smaller "
            "filter_size or larger images"
        )
    taps = _gaussian_taps(int(filter_size), float(filter_sigma))
    x = convert_image_dtype(first, np.float32)
    y = convert_image_dtype(second, np.float32)
    c1 = np.square(np.float32(k1) * peak)
    c2 = np.square(np.float32(k2) * peak)
    mean_x, mean_y = _blur(x, taps), _blur(y, taps)
    num0 = mean_x * mean_y * np.float32(2)
    den0 = np.square(mean_x) + np.square(mean_y)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = _blur(x * y, taps) * np.float32(2)
    den1 = _blur(np.square(x) + np.square(y), taps)
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    values = luminance * cs
    if return_index_map:
        return values.mean(axis=-1, dtype=np.float32)
    return np.asarray(values.mean(axis=(-3, -2), dtype=np.float32).mean(axis=-1, dtype=np.float32))
