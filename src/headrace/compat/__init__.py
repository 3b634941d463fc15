"""tf.compat: the string helpers, ``dimension_value``, and TF1's namespace as ``headrace.compat.v1``.

A TF1 input function that reads ``import tensorflow.compat.v1 as tf`` ports with
``import headrace.compat.v1 as tf``: TF1's names (``tf.parse_single_example``, ``tf.decode_raw``,
``tf.to_float``, ``tf.py_func``, ``tf.random_uniform`` ...) resolve there, and every other name as it does
in ``headrace``.
"""

from __future__ import annotations

import os
from typing import Any

from . import v1


def as_bytes(bytes_or_text: Any, encoding: str = "utf-8") -> bytes:
    """``bytes`` of a str (encoded) or of a bytes-like value; anything else is a TypeError, as in tf."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: Any, encoding: str = "utf-8") -> str:
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, (bytes, bytearray)):
        return bytes(bytes_or_text).decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text
as_bytes_any = as_bytes


def as_str_any(value: Any, encoding: str = "utf-8") -> str:
    return as_str(value, encoding) if isinstance(value, (bytes, bytearray)) else str(value)


def path_to_str(path: Any) -> Any:
    return os.fspath(path) if isinstance(path, os.PathLike) else path


def dimension_value(dimension: Any) -> Any:
    """A shape entry as an int (``None`` when unknown); shapes here are tuples of ints already."""
    return getattr(dimension, "value", dimension)


def forward_compatible(year: int, month: int, day: int) -> bool:
    return True


def __getattr__(name: str) -> Any:
    if name == "v2":
        import headrace  # noqa: PLC0415

        return headrace
    raise AttributeError(f"module 'headrace.compat' has no attribute {name!r}")


__all__ = [
    "as_bytes",
    "as_str",
    "as_str_any",
    "as_text",
    "dimension_value",
    "forward_compatible",
    "path_to_str",
    "v1",
]
