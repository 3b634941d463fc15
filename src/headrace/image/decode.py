"""Decoding encoded images (bytes) to ``(H, W, C)`` uint8 arrays.

JPEG goes through simplejpeg (libjpeg-turbo, TurboJPEG API): on this project's benchmark it decodes a
64x64 JPEG in 33 us against Pillow's 85 us, and a 224x224 one in 0.42 ms against 0.50 ms, with
identical pixels. PNG, GIF, BMP and WebP go through Pillow. JPEG pixels equal ``tf.io.decode_jpeg``'s
for the same options: both are libjpeg-turbo, and ``dct_method=""`` means the fast integer DCT in
both (TensorFlow's documented "system-specific default").
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ..core.errors import DataLossError, InvalidArgumentError, StructureError
from ..core.trace_hook import traceable
from ._checks import pillow
from .convert import convert_image_dtype
from .encode import encode_jpeg, encode_png  # noqa: F401  (the docstring examples use them)

try:  # simplejpeg is the fast path; Pillow decodes everything when it is missing.
    import simplejpeg
except ImportError:  # pragma: no cover - exercised only without the optional dependency
    simplejpeg = None


class ImageDecodeError(DataLossError):
    """Encoded image bytes cannot be decoded: not an image, an unsupported format, or damaged data.

    Inside a pipeline the map stage adds the element's position as a note; skip such elements with
    ``ignore_errors`` (or ``on_error``) where the pipeline offers it.
    """


_JPEG = b"\xff\xd8\xff"
_PNG = b"\x89PNG\r\n\x1a\n"
_GIF = (b"GIF87a", b"GIF89a")
_BMP = b"BM"


def sniff_format(contents: bytes) -> str | None:
    """The image format named by the first bytes: ``"jpeg"``, ``"png"``, ``"gif"``, ``"bmp"``, ``"webp"``.

    >>> sniff_format(b"\\x89PNG\\r\\n\\x1a\\n...."), sniff_format(b"hello")
    ('png', None)
    """
    if contents[:3] == _JPEG:
        return "jpeg"
    if contents[:8] == _PNG:
        return "png"
    if contents[:6] in _GIF:
        return "gif"
    if contents[:2] == _BMP:
        return "bmp"
    if contents[:4] == b"RIFF" and contents[8:12] == b"WEBP":
        return "webp"
    return None


def _as_bytes(contents: Any, fn: str) -> bytes:
    if isinstance(contents, bytes):
        return contents
    if isinstance(contents, np.ndarray):
        if contents.dtype == object and contents.ndim == 0:
            return _as_bytes(contents[()], fn)
        if contents.dtype == np.uint8 and contents.ndim == 1:
            return contents.tobytes()
    if isinstance(contents, (bytearray, memoryview)):
        return bytes(contents)
    if isinstance(contents, str):
        raise InvalidArgumentError(
            f"{fn}: contents is a str ({contents[:40]!r}); pass the encoded bytes, e.g. open(path, 'rb').read()"
        )
    shape = getattr(contents, "shape", None)
    raise InvalidArgumentError(
        f"{fn}: contents has type {type(contents).__name__}"
        + (f" with shape {shape}" if shape is not None else "")
        + "; expected the encoded image as bytes (one image, not a batch: see decode_batch)"
    )


def _describe(contents: bytes) -> str:
    return f"{len(contents)} bytes starting {contents[:12]!r}"


def _check_pixels(height: int, width: int, fn: str, contents: bytes) -> None:
    """The memory budget for images, checked from the header before a pixel is allocated."""
    pixels = int(height) * int(width)
    if pixels > _pixel_budget():  # the message is built only when it is needed
        _io_limits().check_size("max_image_pixels", pixels, f"{fn}: {_describe(contents)} ({height}x{width})")


def _check_channels(channels: Any, fn: str, allowed: tuple[int, ...]) -> int:
    if isinstance(channels, bool) or not isinstance(channels, (int, np.integer)) or channels not in allowed:
        raise InvalidArgumentError(
            f"{fn}: channels={channels!r} is not allowed: one of {', '.join(map(str, allowed))} "
            "(0 keeps the image's own channel count)"
        )
    return int(channels)


def _wrong_format(contents: bytes, fn: str, wanted: str) -> ImageDecodeError:
    found = sniff_format(contents)
    if found is not None:
        hint = f"it is a {found.upper()}: use decode_image, which accepts JPEG, PNG, GIF, BMP and WebP"
    elif not contents:
        hint = "the contents are empty"
    else:
        hint = "the bytes do not start with any known image signature"
    return ImageDecodeError(f"{fn}: {_describe(contents)} are not a {wanted} image; {hint}")


# --- JPEG --------------------------------------------------------------------------------------------------


@traceable("io.decode_jpeg")
def decode_jpeg(
    contents: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
    name: str | None = None,
) -> np.ndarray:
    """Decode a JPEG to ``(H, W, C)`` uint8; ``channels`` 0 (as stored: 1 or 3), 1 or 3.
    PNG and one-frame GIF bytes decode too, as in TF (``decode_image`` takes every format).

    ``ratio`` (1, 2, 4, 8) downscales while decoding, much faster than decode then resize.
    ``dct_method`` ``""`` (the default, as tf: ``"INTEGER_FAST"``) or ``"INTEGER_ACCURATE"``;
    ``fancy_upscaling=False`` upsamples colour by pixel repetition (faster, blockier).
    ``try_recover_truncated=True`` returns what a truncated file holds (the rest grey);
    ``acceptable_fraction`` is accepted for tf compatibility and not used.

    >>> data = encode_jpeg(np.full((8, 6, 3), 200, np.uint8))
    >>> image = decode_jpeg(data)
    >>> image.shape, image.dtype, int(image[0, 0, 0])
    ((8, 6, 3), dtype('uint8'), 200)
    >>> decode_jpeg(data, channels=1, ratio=2).shape
    (4, 3, 1)
    """
    fn = "decode_jpeg"
    if (
        type(contents) is bytes
        and type(channels) is int
        and (channels == 3 or channels == 0)
        and ratio == 1
        and type(ratio) is int
        and fancy_upscaling is True
        and not try_recover_truncated
        and not dct_method
        and contents[:3] == _JPEG
        and simplejpeg is not None
    ):  # the usual call: no option to check
        image = _usual_jpeg(contents, channels)
        if image is not None:
            return image
    data = _as_bytes(contents, fn)
    channels = _check_channels(channels, fn, (0, 1, 3))
    if ratio not in (1, 2, 4, 8) or isinstance(ratio, bool):
        raise InvalidArgumentError(f"{fn}: ratio={ratio!r} is not allowed: one of 1, 2, 4, 8")
    if dct_method not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
        raise InvalidArgumentError(
            f"{fn}: dct_method={dct_method!r} is not allowed: '', 'INTEGER_FAST' or 'INTEGER_ACCURATE'"
        )
    if data[:3] != _JPEG:
        return _decode_other_format(data, fn, channels, "JPEG")
    return _decode_jpeg(data, fn, channels, ratio, fancy_upscaling, not try_recover_truncated, dct_method)


#: Start-of-frame markers (C0-CF less DHT, JPG and DAC): the frame header, with the image's size.
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
#: Segments that may come before it and are skipped by their length: DHT, DQT, DRI, APPn, COM.
_SKIPPED = frozenset([0xC4, 0xDB, 0xDD, *range(0xE0, 0xF0), 0xFE])


def _jpeg_frame(data: bytes) -> tuple[int, int, int] | None:
    """``(height, width, components)`` of a JPEG's frame header, reached through the segments after
    SOI as libjpeg reads them (~1 us, libjpeg's header pass ~3 us); None for anything else (a fill
    byte, stray data, a cut): the caller then leaves the file to libjpeg's checks."""
    p = 2
    last = len(data) - 10  # a frame header needs 10 bytes
    while p < last:
        marker = data[p + 1]
        if data[p] != 0xFF:
            return None
        if marker in _SOF:
            return data[p + 5] << 8 | data[p + 6], data[p + 7] << 8 | data[p + 8], data[p + 9]
        length = data[p + 2] << 8 | data[p + 3]
        if marker not in _SKIPPED or length < 2:
            return None
        p += 2 + length
    return None


def _usual_jpeg(data: bytes, channels: int) -> np.ndarray | None:
    """JPEG bytes decoded with no option (``channels`` 0 or 3), or None when the header is unusual or
    the decoder refuses the data: the general path then checks the file and says what is wrong. The
    size comes from :func:`_jpeg_frame`, the only frame header libjpeg accepts in a file it decodes."""
    frame = _jpeg_frame(data)
    if frame is None:
        return None
    height, width, components = frame
    if height * width > _pixel_budget():
        return None  # the general path raises the budget's error
    if components == 3 or (components == 1 and channels == 3):  # YCbCr or RGB; grey to RGB
        colorspace = "RGB"
    elif components == 1:
        colorspace = "GRAY"
    else:  # CMYK, YCCK: Pillow's
        return None
    try:
        return simplejpeg.decode_jpeg(data, colorspace, True)
    except ValueError:
        return None


def _decode_jpeg(
    data: bytes,
    fn: str,
    channels: int,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    strict: bool = True,
    dct_method: str = "",
) -> np.ndarray:
    """JPEG bytes (checked by the caller) to ``(H, W, C)`` uint8 through simplejpeg."""
    if simplejpeg is None:  # pragma: no cover
        return _decode_with_pillow(data, fn, "JPEG", channels, ratio=ratio)
    height, width, colorspace = _jpeg_header(data, fn, strict)
    if height * width > _pixel_budget():
        _check_pixels(height, width, fn, data)
    if colorspace in ("CMYK", "YCCK"):
        return _decode_with_pillow(data, fn, "JPEG", channels or 3, ratio=ratio)
    gray = channels == 1 or (channels == 0 and colorspace == "Gray")
    try:
        return simplejpeg.decode_jpeg(
            data,
            colorspace="GRAY" if gray else "RGB",
            fastdct=dct_method != "INTEGER_ACCURATE",
            fastupsample=not fancy_upscaling,
            min_height=-(-height // ratio),
            min_width=-(-width // ratio),
            min_factor=ratio,
            strict=strict,
        )
    except ValueError as exc:
        raise ImageDecodeError(
            f"{fn}: {_describe(data)} are a damaged or unsupported JPEG ({height}x{width}, {colorspace}): "
            f"{exc}" + ("; try_recover_truncated=True decodes what is there" if "end of" in str(exc) else "")
        ) from None


def _decode_other_format(
    data: bytes, fn: str, channels: int, wanted: str, dtype: Any = np.uint8
) -> np.ndarray:
    """What TF's ``decode_jpeg`` and ``decode_png`` also decode: JPEG, PNG and one-frame GIF (one
    kernel serves them all there); BMP, WebP and animated GIFs need ``decode_image``, as in TF."""
    kind = sniff_format(data)
    if kind == "jpeg":
        if channels not in (0, 1, 3):
            raise InvalidArgumentError(f"{fn}: channels={channels} is not allowed for a JPEG: 0, 1 or 3")
        image = _decode_jpeg(data, fn, channels)
    elif kind == "png":
        return _decode_with_pillow(data, fn, "PNG", channels, dtype=dtype)
    elif kind == "gif":
        image = _decode_with_pillow(data, fn, "GIF", channels, all_frames=True)
        if image.ndim == 4:
            raise ImageDecodeError(
                f"{fn}: {_describe(data)} are an animated GIF of {len(image)} frames; decode_image decodes "
                "every frame (or the first with expand_animations=False)"
            )
    else:
        raise _wrong_format(data, fn, wanted)
    return image if image.dtype == dtype else convert_image_dtype(image, dtype)


def _jpeg_header(data: bytes, fn: str, strict: bool = True) -> tuple[int, int, str]:
    """``(height, width, colorspace)`` from libjpeg's header pass, or the error saying it is unreadable."""
    try:
        height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data, strict=strict)
    except ValueError as exc:
        raise ImageDecodeError(f"{fn}: {_describe(data)} are not a readable JPEG: {exc}") from None
    return height, width, colorspace


_limits: Any = None


def _io_limits() -> Any:
    """``headrace.io.limits``, imported on first use (image does not import io at import time) and
    kept: an import statement costs ~2 us a call."""
    global _limits
    if _limits is None:
        from ..io import limits  # noqa: PLC0415

        _limits = limits
    return _limits


_budget_env: tuple[Any, bytes, int] | None = None  # (os.environ's store, the variable's key, the default)


def _pixel_budget() -> int:
    """The ``max_image_pixels`` budget (read per call: ``set_limit`` may change it at any time). While
    its variable is unset (the usual case) the default, seen in ``os.environ``'s own store: its
    ``get`` raises and catches a KeyError, ~1.3 us a decoded image."""
    global _budget_env
    if _budget_env is None:
        import os  # noqa: PLC0415

        limits = _io_limits()
        spec = limits.LIMITS["max_image_pixels"]
        store = getattr(os.environ, "_data", None)
        encode = getattr(os.environ, "encodekey", None)
        _budget_env = (store, encode(spec.env) if encode is not None else b"", spec.default)
    store, key, default = _budget_env
    if store is not None and key and key not in store:
        return default
    return _io_limits().limit("max_image_pixels")


def extract_jpeg_shape(contents: Any, output_type: Any = np.int32, name: str | None = None) -> np.ndarray:
    """``[height, width, channels]`` of a JPEG from its header, without decoding the pixels.

    >>> extract_jpeg_shape(encode_jpeg(np.zeros((5, 7, 3), np.uint8))).tolist()
    [5, 7, 3]
    """
    fn = "extract_jpeg_shape"
    data = _as_bytes(contents, fn)
    if data[:3] != _JPEG:
        raise _wrong_format(data, fn, "JPEG")
    if simplejpeg is None:  # pragma: no cover
        return np.array(_decode_with_pillow(data, fn, "JPEG", 0).shape, dtype=output_type)
    try:
        height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data)
    except ValueError as exc:
        raise ImageDecodeError(f"{fn}: {_describe(data)} are not a readable JPEG: {exc}") from None
    channels = {"Gray": 1, "CMYK": 4, "YCCK": 4}.get(colorspace, 3)
    return np.array([height, width, channels], dtype=output_type)


# --- Pillow formats ----------------------------------------------------------------------------------------

_PIL_MODES_FOR_CHANNELS = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _pil_frame_to_array(frame, channels: int, want_uint16: bool) -> np.ndarray:
    mode = frame.mode
    if mode in ("I;16", "I;16B", "I;16L", "I") and channels in (0, 1):
        array = np.asarray(frame)
        array = np.clip(array, 0, 65535).astype(np.uint16) if array.dtype != np.uint16 else array
        array = array if want_uint16 else (array >> 8).astype(np.uint8)
        return array[:, :, None]
    if channels == 0:
        if mode == "P":
            target = "RGBA" if "transparency" in frame.info else "RGB"
        elif mode in ("L", "LA", "RGB", "RGBA"):
            target = mode
        elif mode == "PA":
            target = "RGBA"
        elif mode in ("1", "I;16", "I;16B", "I;16L", "I", "F"):
            target = "L"
        else:
            target = "RGB"
    else:
        target = _PIL_MODES_FOR_CHANNELS[channels]
    if mode in ("I;16", "I;16B", "I;16L", "I"):  # 16-bit grey to more channels: keep the high byte
        high = (np.clip(np.asarray(frame), 0, 65535) >> 8).astype(np.uint8)
        frame = pillow("decode_image").Image.fromarray(high)
    array = np.asarray(frame.convert(target) if frame.mode != target else frame)
    if array.ndim == 2:
        array = array[:, :, None]
    if want_uint16:
        array = array.astype(np.uint16) * np.uint16(257)
    return array


def _decode_with_pillow(
    data: bytes,
    fn: str,
    kind: str,
    channels: int,
    ratio: int = 1,
    dtype: Any = np.uint8,
    all_frames: bool = False,
) -> np.ndarray:
    pil = pillow(fn)
    Image, ImageSequence = pil.Image, pil.ImageSequence  # noqa: N806 (PIL's own names)
    limits = _io_limits()
    want_uint16 = dtype is not np.uint8 and np.dtype(dtype) == np.uint16
    try:
        with Image.open(io.BytesIO(data)) as im:
            _check_pixels(im.height, im.width, fn, data)
            if ratio > 1:
                im.draft(im.mode, (-(-im.width // ratio), -(-im.height // ratio)))
            if all_frames and getattr(im, "n_frames", 1) > 1:
                frames = [
                    _pil_frame_to_array(f.convert("RGBA" if channels == 4 else "RGB"), channels, want_uint16)
                    for f in ImageSequence.Iterator(im)
                ]
                return np.stack(frames)
            im.load()
            out = _pil_frame_to_array(im, channels, want_uint16)
    except limits.LimitExceededError:
        raise
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise ImageDecodeError(
            f"{fn}: {_describe(data)} are a damaged or unsupported {kind}: {exc}"
        ) from None
    return np.ascontiguousarray(out)


@traceable("io.decode_png")
def decode_png(
    contents: Any, channels: int = 0, dtype: Any = np.uint8, name: str | None = None
) -> np.ndarray:
    """Decode a PNG to ``(H, W, C)``; ``channels`` 0 (as stored), 1, 2, 3 or 4; dtype uint8 or uint16.

    16-bit PNGs keep their precision with ``dtype=np.uint16`` (grey only: Pillow reads 16-bit colour
    PNGs as 8-bit); 8-bit ones are scaled by 257, as tf. JPEG and one-frame GIF bytes decode too, as in TF.

    >>> data = encode_png(np.arange(12, dtype=np.uint8).reshape(2, 2, 3))
    >>> decode_png(data)[1, 1].tolist()
    [9, 10, 11]
    """
    fn = "decode_png"
    if type(contents) is bytes and channels == 0 and type(channels) is int and dtype is np.uint8:
        if contents[:8] == _PNG:  # the usual call: no option to check
            return _decode_with_pillow(contents, fn, "PNG", 0)
    data = _as_bytes(contents, fn)
    channels = _check_channels(channels, fn, (0, 1, 2, 3, 4))
    if np.dtype(dtype) not in (np.uint8, np.uint16):
        raise InvalidArgumentError(f"{fn}: dtype={dtype!r} is not allowed: np.uint8 or np.uint16")
    if data[:8] != _PNG:
        return _decode_other_format(data, fn, channels, "PNG", dtype=np.dtype(dtype))
    return _decode_with_pillow(data, fn, "PNG", channels, dtype=dtype)


@traceable("io.decode_image")
def decode_image(
    contents: Any,
    channels: int | None = None,
    dtype: Any = np.uint8,
    name: str | None = None,
    expand_animations: bool = True,
) -> np.ndarray:
    """Decode JPEG, PNG, GIF, BMP or WebP, recognised by their first bytes.

    Returns ``(H, W, C)``, or ``(frames, H, W, C)`` for an animated GIF when ``expand_animations``
    (else its first frame). A float ``dtype`` gives values in 0..1 (``convert_image_dtype``).

    >>> decode_image(encode_png(np.zeros((3, 4, 1), np.uint8))).shape
    (3, 4, 1)
    >>> decode_image(encode_jpeg(np.zeros((3, 4, 3), np.uint8)), dtype=np.float32).dtype
    dtype('float32')
    """
    fn = "decode_image"
    if type(contents) is bytes and channels is None and dtype is np.uint8:  # the usual call
        if contents[:3] == _JPEG and simplejpeg is not None:
            image = _usual_jpeg(contents, 0)
            if image is not None:
                return image
        elif contents[:8] == _PNG:
            return _decode_with_pillow(contents, "decode_png", "PNG", 0)
    data = _as_bytes(contents, fn)
    channels = _check_channels(0 if channels is None else channels, fn, (0, 1, 3, 4))
    target = np.dtype(dtype)
    if target not in (np.uint8, np.uint16) and target.kind != "f":
        raise InvalidArgumentError(f"{fn}: dtype={dtype!r} is not allowed: uint8, uint16 or a float dtype")
    kind = sniff_format(data)
    if kind == "jpeg":
        if channels == 4:
            raise InvalidArgumentError(f"{fn}: channels=4 is not allowed for a JPEG: 0, 1 or 3")
        image = _decode_jpeg(data, "decode_jpeg", channels)
    elif kind == "png":
        depth = np.uint16 if target == np.uint16 else np.uint8
        image = _decode_with_pillow(data, "decode_png", "PNG", channels, dtype=depth)
    elif kind is None:
        reason = "the contents are empty" if not data else "the bytes do not start with any known signature"
        raise ImageDecodeError(
            f"{fn}: {_describe(data)} are not an image in a supported format (JPEG, PNG, GIF, BMP, WebP); "
            f"{reason}"
        )
    else:
        image = _decode_with_pillow(data, fn, kind.upper(), channels, all_frames=expand_animations)
    return image if image.dtype == target else convert_image_dtype(image, target)


def decode_batch(contents: Sequence[Any], channels: int = 3) -> np.ndarray:
    """Decode a batch of same-sized encoded images into one ``(N, H, W, C)`` uint8 array.

    JPEGs decode straight into the output (no per-image copy and no ``np.stack``). Every image must
    have the size of the first; resize per element first when they differ.

    >>> batch = [encode_jpeg(np.full((4, 4, 3), v, np.uint8)) for v in (0, 255)]
    >>> out = decode_batch(batch)
    >>> out.shape, int(out[1, 0, 0, 0])
    ((2, 4, 4, 3), 255)
    """
    fn = "decode_batch"
    channels = _check_channels(channels, fn, (1, 3, 4))
    if isinstance(contents, (bytes, str)) or (isinstance(contents, np.ndarray) and contents.ndim != 1):
        raise InvalidArgumentError(
            f"{fn}: contents must be a sequence of encoded images (a batch), got "
            f"{type(contents).__name__}{' of shape ' + str(contents.shape) if hasattr(contents, 'shape') else ''}"
        )
    items = [_as_bytes(c, fn) for c in contents]
    if not items:
        raise InvalidArgumentError(f"{fn}: contents is empty; a batch needs at least one image")
    out: np.ndarray | None = None
    first_shape: tuple[int, ...] = ()
    for index, data in enumerate(items):
        direct = simplejpeg is not None and channels in (1, 3) and data[:3] == _JPEG
        if direct and out is not None:
            try:
                height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data)
            except ValueError as exc:
                raise ImageDecodeError(
                    f"{fn}: image {index}: {_describe(data)} are not a readable JPEG: {exc}"
                ) from None
            if colorspace not in ("CMYK", "YCCK"):
                if (height, width) != first_shape[:2]:
                    raise StructureError(
                        f"{fn}: image {index} is {height}x{width} but image 0 is "
                        f"{first_shape[0]}x{first_shape[1]}; resize each image before batching"
                    )
                try:
                    simplejpeg.decode_jpeg(
                        data, colorspace="GRAY" if channels == 1 else "RGB", fastdct=True, buffer=out[index]
                    )
                except ValueError as exc:
                    raise ImageDecodeError(
                        f"{fn}: image {index}: {_describe(data)} are a damaged JPEG: {exc}"
                    ) from None
                continue
        try:
            image = decode_image(data, channels=channels, expand_animations=False)
        except ImageDecodeError as exc:
            raise ImageDecodeError(f"{fn}: image {index}: {exc}") from None
        if out is None:
            first_shape = image.shape
            out = np.empty((len(items), *image.shape), dtype=np.uint8)
        elif image.shape != first_shape:
            raise StructureError(
                f"{fn}: image {index} has shape {image.shape} but image 0 has {first_shape}; "
                "resize each image before batching"
            )
        out[index] = image
    return cast(np.ndarray, out)  # set by image 0: items was checked to be non-empty
