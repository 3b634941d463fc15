"""JPEG compression artefacts as an augmentation: ``adjust_jpeg_quality`` and ``random_jpeg_quality``.

The image goes through ``encode_jpeg`` at the given quality and back through ``decode_jpeg``, as in
tf.image; integer and float images come back in their own dtype (through ``convert_image_dtype``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ._checks import as_image, resolve_rng
from .convert import convert_image_dtype
from .decode import decode_jpeg
from .encode import encode_jpeg


def _quality(value: Any, fn: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= 100:
        raise InvalidArgumentError(f"{fn}: {name}={value!r} is not allowed: an int in 0..100")
    return int(value)


def _round_trip(image: np.ndarray, quality: int, dct_method: str) -> np.ndarray:
    data = encode_jpeg(image, quality=quality)
    return decode_jpeg(data, channels=image.shape[-1], dct_method=dct_method)


def adjust_jpeg_quality(
    image: Any, jpeg_quality: Any, dct_method: str = "", name: str | None = None
) -> np.ndarray:
    """Re-encode as JPEG at ``jpeg_quality`` (0..100; one per image of a batch allowed) and decode.

    >>> image = np.full((16, 16, 3), 0.5, np.float32)
    >>> out = adjust_jpeg_quality(image, 30)
    >>> out.dtype, bool(np.abs(out - image).max() < 0.01)
    (dtype('float32'), True)
    """
    fn = "adjust_jpeg_quality"
    array = as_image(image, fn)
    if array.shape[-1] not in (1, 3):
        raise InvalidArgumentError(
            f"{fn}: image has {array.shape[-1]} channels (shape {array.shape}); expected 1 or 3 (JPEG)"
        )
    qualities = np.asarray(jpeg_quality)
    if qualities.ndim == 0:
        qualities = np.full(array.shape[0] if array.ndim == 4 else 1, qualities)
    elif array.ndim != 4 or qualities.shape != (array.shape[0],):
        raise InvalidArgumentError(
            f"{fn}: jpeg_quality has shape {qualities.shape} for an image of shape {array.shape}; "
            "expected a scalar or one value per image"
        )
    checked = [_quality(q, fn, "jpeg_quality") for q in qualities.tolist()]
    as_bytes = convert_image_dtype(array, np.uint8, saturate=True)
    if array.ndim == 3:
        out = _round_trip(np.ascontiguousarray(as_bytes), checked[0], dct_method)
    else:
        out = np.stack(
            [_round_trip(np.ascontiguousarray(one), q, dct_method) for one, q in zip(as_bytes, checked)]
        )
    return convert_image_dtype(out, array.dtype)


def random_jpeg_quality(
    image: Any,
    min_jpeg_quality: int,
    max_jpeg_quality: int,
    seed: int | None = None,
    *,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """``adjust_jpeg_quality`` at a quality drawn from ``[min_jpeg_quality, max_jpeg_quality)``, per image.

    >>> random_jpeg_quality(np.zeros((2, 8, 8, 3), np.uint8), 40, 90, rng=np.random.default_rng(0)).shape
    (2, 8, 8, 3)
    """
    fn = "random_jpeg_quality"
    low = _quality(min_jpeg_quality, fn, "min_jpeg_quality")
    high = _quality(max_jpeg_quality, fn, "max_jpeg_quality")
    if low >= high:
        raise InvalidArgumentError(
            f"{fn}: min_jpeg_quality={low} must be less than max_jpeg_quality={high} (the range is [min, max))"
        )
    array = as_image(image, fn)
    generator = resolve_rng(rng, seed, fn)
    quality = generator.integers(low, high, size=array.shape[0] if array.ndim == 4 else None)
    return adjust_jpeg_quality(array, quality)
