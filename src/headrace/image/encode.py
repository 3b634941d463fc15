"""Encoding ``(H, W, C)`` arrays to JPEG (simplejpeg, Pillow for progressive files) and PNG (Pillow)."""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ._checks import as_image, pillow

try:
    import simplejpeg
except ImportError:  # pragma: no cover - exercised only without the optional dependency
    simplejpeg = None


def _jpeg_input(image: Any, fn: str, format: str) -> np.ndarray:
    array = as_image(image, fn, ranks=(3,))
    if array.dtype != np.uint8:
        raise InvalidArgumentError(
            f"{fn}: image has dtype {array.dtype}; expected uint8 (use convert_image_dtype(image, np.uint8))"
        )
    channels = array.shape[-1]
    if format not in ("", "grayscale", "rgb"):
        raise InvalidArgumentError(f"{fn}: format={format!r} is not allowed: '', 'grayscale' or 'rgb'")
    wanted = {"": (1, 3), "grayscale": (1,), "rgb": (3,)}[format]
    if channels not in wanted:
        raise InvalidArgumentError(
            f"{fn}: image has {channels} channels (shape {array.shape}); expected "
            f"{' or '.join(map(str, wanted))} for format={format!r}"
        )
    if 0 in array.shape[:2]:
        raise InvalidArgumentError(f"{fn}: image has shape {array.shape}; height and width must be > 0")
    return np.ascontiguousarray(array)


def encode_jpeg(
    image: Any,
    format: str = "",
    quality: int = 95,
    progressive: bool = False,
    optimize_size: bool = False,
    chroma_downsampling: bool = True,
    density_unit: str = "in",
    x_density: int = 300,
    y_density: int = 300,
    xmp_metadata: str = "",
    name: str | None = None,
) -> bytes:
    """Encode an ``(H, W, 1)`` or ``(H, W, 3)`` uint8 image as JPEG bytes.

    ``chroma_downsampling`` chooses 4:2:0 (True) or 4:4:4 colour. Density and XMP metadata are
    accepted for tf compatibility and not written.

    >>> data = encode_jpeg(np.zeros((16, 16, 3), np.uint8), quality=80)
    >>> data[:3]
    b'\\xff\\xd8\\xff'
    """
    fn = "encode_jpeg"
    array = _jpeg_input(image, fn, format)
    if isinstance(quality, bool) or not isinstance(quality, (int, np.integer)) or not 0 <= quality <= 100:
        raise InvalidArgumentError(f"{fn}: quality={quality!r} is not allowed: an int in 0..100")
    gray = array.shape[-1] == 1
    if simplejpeg is not None and not progressive and not optimize_size:
        return simplejpeg.encode_jpeg(
            array,
            quality=int(quality),
            colorspace="GRAY" if gray else "RGB",
            colorsubsampling="Gray" if gray else ("420" if chroma_downsampling else "444"),
        )
    Image = pillow(fn).Image  # noqa: N806 (PIL's own name)

    buffer = io.BytesIO()
    Image.fromarray(array[:, :, 0] if gray else array).save(
        buffer,
        "JPEG",
        quality=int(quality),
        progressive=progressive,
        optimize=optimize_size,
        subsampling=2 if chroma_downsampling else 0,
    )
    return buffer.getvalue()


def encode_png(image: Any, compression: int = -1, name: str | None = None) -> bytes:
    """Encode an ``(H, W, C)`` image as PNG: uint8 with 1 to 4 channels, or uint16 with 1.

    ``compression`` is 0 (none, fastest) to 9 (smallest); -1 is zlib's default (6).

    >>> data = encode_png(np.zeros((4, 4, 4), np.uint8), compression=1)
    >>> data[1:4]
    b'PNG'
    """
    fn = "encode_png"
    array = as_image(image, fn, ranks=(3,))
    if isinstance(compression, bool) or compression not in range(-1, 10):
        raise InvalidArgumentError(f"{fn}: compression={compression!r} is not allowed: an int in -1..9")
    channels = array.shape[-1]
    if array.dtype == np.uint8 and channels in (1, 2, 3, 4):
        pixels = array[:, :, 0] if channels == 1 else array
    elif array.dtype == np.uint16 and channels == 1:
        pixels = array[:, :, 0]
    else:
        raise InvalidArgumentError(
            f"{fn}: image has dtype {array.dtype} and {channels} channels (shape {array.shape}); expected "
            "uint8 with 1, 2, 3 or 4 channels, or uint16 with 1 channel"
        )
    if 0 in array.shape[:2]:
        raise InvalidArgumentError(f"{fn}: image has shape {array.shape}; height and width must be > 0")
    Image = pillow(fn).Image  # noqa: N806 (PIL's own name)

    buffer = io.BytesIO()
    # Pillow picks L, LA, RGB, RGBA or I;16 from the array's dtype and shape.
    Image.fromarray(np.ascontiguousarray(pixels)).save(
        buffer, "PNG", compress_level=6 if compression == -1 else int(compression)
    )
    return buffer.getvalue()
