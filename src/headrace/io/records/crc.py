"""CRC32C (Castagnoli) and the masked form TFRecord framing stores.

TFRecord stores ``mask(crc32c(x))`` rather than the plain checksum, because a CRC of data that
itself holds CRCs is weak; the mask is a rotation plus a constant.

>>> hex(crc32c(b"123456789"))
'0xe3069283'
>>> unmask(mask(12345)) == 12345
True
"""

from __future__ import annotations

import crc32c as _crc32c_library

MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF


def crc32c(data: bytes | bytearray | memoryview, value: int = 0) -> int:
    """CRC32C of ``data``, continuing from ``value`` (hardware-accelerated by the crc32c package)."""
    return _crc32c_library.crc32c(data, value)


def mask(crc: int) -> int:
    """TFRecord's masked form of a CRC: rotate right by 15 bits, add a constant."""
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & _U32


def unmask(masked: int) -> int:
    """Inverse of :func:`mask`."""
    rotated = (masked - MASK_DELTA) & _U32
    return ((rotated >> 17) | (rotated << 15)) & _U32


def masked_crc32c(data: bytes | bytearray | memoryview) -> int:
    """``mask(crc32c(data))``, the value TFRecord stores after a length field and after each record.

    >>> masked_crc32c(b"")
    2726488792
    """
    return mask(_crc32c_library.crc32c(data))
