"""``tf.io.encode_base64`` / ``decode_base64`` (web-safe alphabet, as TensorFlow) and
``decode_compressed``.

>>> encode_base64(b"\\xfb\\xff"), decode_base64(b"-_8")
(b'-_8', b'\\xfb\\xff')
>>> import gzip
>>> decode_compressed(gzip.compress(b"hi"), "GZIP")
b'hi'
"""

from __future__ import annotations

import base64
import binascii
import zlib
from typing import Any

import numpy as np

from ...core.errors import InvalidArgumentError
from ..records.compression import normalize_compression


def _each(value: Any, fn) -> Any:
    """``fn`` of a bytes/str value, or of each item of an array of them (an object array back)."""
    if isinstance(value, (bytes, bytearray, memoryview, str)):
        return fn(value.encode() if isinstance(value, str) else bytes(value))
    array = np.asarray(value, dtype=object)
    out = np.empty(array.shape, dtype=object)
    out.ravel()[:] = [fn(v.encode() if isinstance(v, str) else bytes(v)) for v in array.ravel()]
    return out[()] if out.shape == () else out


def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> Any:  # noqa: A002 (tf's name)
    """Web-safe base64 (``-`` and ``_``), without padding unless ``pad``."""

    def one(data: bytes) -> bytes:
        text = base64.urlsafe_b64encode(data)
        return text if pad else text.rstrip(b"=")

    return _each(input, one)


def decode_base64(input: Any, name: str | None = None) -> Any:  # noqa: A002 (tf's name)
    """Inverse of ``encode_base64`` (padding optional)."""

    def one(data: bytes) -> bytes:
        try:
            return base64.urlsafe_b64decode(data + b"=" * (-len(data) % 4))
        except (binascii.Error, ValueError) as exc:
            raise InvalidArgumentError(
                f"decode_base64: {data[:40]!r} is not web-safe base64 ({exc})"
            ) from None

    return _each(input, one)


def decode_compressed(bytes: Any, compression_type: str = "", name: str | None = None) -> Any:  # noqa: A002
    """Decompress GZIP or ZLIB data ("" returns it unchanged)."""
    kind = normalize_compression(compression_type)

    def one(data: bytes) -> bytes:
        if not kind:
            return data
        try:
            return zlib.decompress(data, 16 + zlib.MAX_WBITS if kind == "GZIP" else zlib.MAX_WBITS)
        except zlib.error as exc:
            raise InvalidArgumentError(f"decode_compressed: the data is not valid {kind} ({exc})") from None

    return _each(bytes, one)
