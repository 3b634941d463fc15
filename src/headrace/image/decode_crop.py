"""Decoding a window of a JPEG: ``decode_and_crop_jpeg`` and the reduced-scale ``decode_crop_and_resize_jpeg``.

``decode_and_crop_jpeg`` gives exactly ``decode_jpeg(...)[y:y + h, x:x + w]``, as tf.io does. TensorFlow
links libjpeg itself and skips the rows and columns outside the window; the Python bindings headrace
can use (simplejpeg, Pillow) expose no cropped decode, so here the whole image is decoded with
libjpeg-turbo and then cut: same pixels, no speed-up (benchmarks/image_crop_decode.py measures it).

The speed-up that is available is JPEG DCT scaling: libjpeg-turbo decodes at 1/2, 1/4 or 1/8 scale by
dropping high frequencies before the inverse DCT, which is 2 to 4 times faster than a full decode.
``decode_crop_and_resize_jpeg`` picks the smallest scale at which the window still has at least the
output's pixels, decodes at that scale, crops and resizes. Its pixels differ slightly from
decode-crop-resize (DCT scaling is a different low-pass filter than bilinear sampling), by a few
levels on photos, which is why it is a separate function rather than a silent rewrite.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from .decode import (
    _JPEG,
    ImageDecodeError,
    _as_bytes,
    _check_channels,
    _wrong_format,
    decode_jpeg,
    extract_jpeg_shape,
)
from .encode import encode_jpeg  # noqa: F401  (the docstring examples use it)
from .resize import resize


def _crop_window(crop_window: Any, fn: str) -> tuple[int, int, int, int]:
    window = np.asarray(crop_window)
    if window.shape != (4,) or window.dtype.kind not in "ui":
        raise InvalidArgumentError(
            f"{fn}: crop_window={crop_window!r} is not allowed: [crop_y, crop_x, crop_height, crop_width], "
            "4 ints (e.g. begin[:2] and size[:2] of sample_distorted_bounding_box)"
        )
    y, x, height, width = (int(v) for v in window.tolist())
    if y < 0 or x < 0 or height <= 0 or width <= 0:
        raise InvalidArgumentError(
            f"{fn}: crop_window={[y, x, height, width]} is not allowed: offsets >= 0 and sizes > 0"
        )
    return y, x, height, width


def _header_shape(data: bytes, fn: str) -> tuple[int, int]:
    try:
        height, width, _ = extract_jpeg_shape(data).tolist()
    except ImageDecodeError as exc:  # name the function the user called
        raise ImageDecodeError(str(exc).replace("extract_jpeg_shape:", f"{fn}:", 1)) from None
    return height, width


def _check_inside(window: tuple[int, int, int, int], height: int, width: int, fn: str, scale: str) -> None:
    y, x, crop_height, crop_width = window
    if y + crop_height > height or x + crop_width > width:
        raise InvalidArgumentError(
            f"{fn}: crop_window rows {y}..{y + crop_height - 1}, columns {x}..{x + crop_width - 1} do not fit in "
            f"the {height}x{width} {scale}image; clip the window to the image (extract_jpeg_shape gives its size)"
        )


def decode_and_crop_jpeg(
    contents: Any,
    crop_window: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
    name: str | None = None,
) -> np.ndarray:
    """Decode the ``crop_window = [y, x, height, width]`` of a JPEG; equals ``decode_jpeg(...)[y:y+h, x:x+w]``.

    With ``ratio`` > 1 the window is in the coordinates of the downscaled image, as in tf. The other
    arguments are ``decode_jpeg``'s.

    >>> data = encode_jpeg(np.full((40, 60, 3), 90, np.uint8))
    >>> decode_and_crop_jpeg(data, [10, 20, 16, 24]).shape
    (16, 24, 3)
    """
    fn = "decode_and_crop_jpeg"
    data = _as_bytes(contents, fn)
    window = _crop_window(crop_window, fn)
    _check_channels(channels, fn, (0, 1, 3))
    if ratio not in (1, 2, 4, 8) or isinstance(ratio, bool):
        raise InvalidArgumentError(f"{fn}: ratio={ratio!r} is not allowed: one of 1, 2, 4, 8")
    if data[:3] != _JPEG:
        raise _wrong_format(data, fn, "JPEG")
    # Check the window against the header before paying for the decode (sizes round up when scaled).
    full_height, full_width = _header_shape(data, fn)
    scale = "decoded " if ratio == 1 else f"1/{ratio}-scale "
    _check_inside(window, -(-full_height // ratio), -(-full_width // ratio), fn, scale)
    image = decode_jpeg(
        data,
        channels=channels,
        ratio=ratio,
        fancy_upscaling=fancy_upscaling,
        try_recover_truncated=try_recover_truncated,
        acceptable_fraction=acceptable_fraction,
        dct_method=dct_method,
    )
    y, x, height, width = window
    # A copy: the window of a view would keep the whole decoded image alive in a batch or a buffer.
    return np.ascontiguousarray(image[y : y + height, x : x + width])


def dct_ratio(crop_height: int, crop_width: int, out_height: int, out_width: int, max_ratio: int = 8) -> int:
    """The largest JPEG scale-down (1, 2, 4 or 8, at most ``max_ratio``) that keeps a ``crop_height x
    crop_width`` window at least ``out_height x out_width`` pixels.

    >>> dct_ratio(448, 600, 224, 224), dct_ratio(300, 300, 224, 224), dct_ratio(2000, 1800, 224, 224)
    (2, 1, 8)
    """
    best = 1
    for ratio in (2, 4, 8):
        if ratio <= max_ratio and crop_height // ratio >= out_height and crop_width // ratio >= out_width:
            best = ratio
    return best


def decode_crop_and_resize_jpeg(
    contents: Any,
    crop_window: Any,
    size: Any,
    channels: int = 3,
    method: Any = "bilinear",
    antialias: bool = False,
    max_ratio: int = 8,
    dct_method: str = "",
) -> np.ndarray:
    """Decode a JPEG window and resize it to ``size``, decoding at reduced scale where the window is large.

    ``crop_window`` is ``[y, x, height, width]`` in full-resolution pixels. The JPEG is decoded at the
    smallest scale 1/r (r in 1, 2, 4, 8, at most ``max_ratio``) at which the window still has at least
    ``size`` pixels each way; the window is mapped to that scale (rounded to whole pixels) and resized
    with ``resize(method, antialias)``. ``max_ratio=1`` gives exactly decode, crop, then resize. A
    headrace extension (TensorFlow has no such op); the result is float32, as ``resize``.

    >>> data = encode_jpeg(np.full((512, 512, 3), 200, np.uint8))
    >>> out = decode_crop_and_resize_jpeg(data, [0, 0, 480, 500], (224, 224))
    >>> out.shape, round(float(out.mean()))
    ((224, 224, 3), 200)
    """
    fn = "decode_crop_and_resize_jpeg"
    data = _as_bytes(contents, fn)
    y, x, height, width = _crop_window(crop_window, fn)
    if max_ratio not in (1, 2, 4, 8) or isinstance(max_ratio, bool):
        raise InvalidArgumentError(f"{fn}: max_ratio={max_ratio!r} is not allowed: one of 1, 2, 4, 8")
    if data[:3] != _JPEG:
        raise _wrong_format(data, fn, "JPEG")
    out_size = np.asarray(size)
    if out_size.shape != (2,) or out_size.dtype.kind not in "ui" or np.any(out_size <= 0):
        raise InvalidArgumentError(
            f"{fn}: size={size!r} is not allowed: (new_height, new_width), two ints > 0"
        )
    out_height, out_width = int(out_size[0]), int(out_size[1])
    full_height, full_width = _header_shape(data, fn)
    _check_inside((y, x, height, width), full_height, full_width, fn, "")
    ratio = dct_ratio(height, width, out_height, out_width, max_ratio)
    image = decode_jpeg(data, channels=channels, ratio=ratio, dct_method=dct_method)
    if ratio > 1:
        # The scaled image is ceil(full / ratio); map the window's edges and keep at least one pixel.
        top, left = round(y / ratio), round(x / ratio)
        bottom = min(max(round((y + height) / ratio), top + 1), image.shape[0])
        right = min(max(round((x + width) / ratio), left + 1), image.shape[1])
        window = image[top:bottom, left:right]
    else:
        window = image[y : y + height, x : x + width]
    return resize(window, (out_height, out_width), method=method, antialias=antialias)
