"""``tf.io.read_file``, ``write_file``, ``matching_files`` and ``TFRecordOptions``.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> write_file(os.path.join(folder, "a.txt"), b"hello")
>>> read_file(os.path.join(folder, "a.txt"))
b'hello'
>>> [os.path.basename(p) for p in matching_files(os.path.join(folder, "*.txt"))]
[b'a.txt']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.errors import InvalidArgumentError
from ..records.compression import normalize_compression
from .fs import as_path, glob, make_parent_dirs, open_file


def read_file(filename: Any, name: str | None = None) -> bytes:
    """The whole file's bytes (``protocol://`` paths through fsspec)."""
    path = as_path(filename, "filename")
    try:
        with open_file(path, "rb") as file:
            return file.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"read_file: no such file {path!r}") from None


def write_file(filename: Any, contents: Any, name: str | None = None) -> None:
    """Write ``contents`` (bytes, or str as UTF-8) to the file, making missing parent folders."""
    path = as_path(filename, "filename")
    if isinstance(contents, np.ndarray) and contents.shape == ():
        contents = contents.item()
    if isinstance(contents, str):
        contents = contents.encode()
    if not isinstance(contents, (bytes, bytearray, memoryview)):
        raise InvalidArgumentError(
            f"write_file: contents must be bytes or str, got {type(contents).__name__}"
        )
    make_parent_dirs(path)
    with open_file(path, "wb") as file:
        file.write(contents)


def matching_files(pattern: Any, name: str | None = None) -> np.ndarray:
    """Paths (bytes) matching one glob pattern or a list of them, sorted, as an object array."""
    patterns = pattern.ravel().tolist() if isinstance(pattern, np.ndarray) else pattern
    if not isinstance(patterns, (list, tuple)):
        patterns = [patterns]
    found: list[str] = []
    for item in patterns:
        found.extend(glob(as_path(item, "pattern")))
    unique = sorted(set(found))
    out = np.empty(len(unique), dtype=object)
    out[:] = [p.encode() for p in unique]
    return out


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: the compression of a TFRecord file. Accepted wherever a
    ``compression_type`` is (``TFRecordWriter``, ``TFRecordDataset``); the zlib tuning fields are
    kept for compatibility and not used (headrace writes zlib's defaults).

    >>> TFRecordOptions("GZIP").compression_type, TFRecordOptions(compression_type=None).compression_type
    ('GZIP', '')
    """

    def __init__(
        self,
        compression_type: str | None = None,
        flush_mode: int | None = None,
        input_buffer_size: int | None = None,
        output_buffer_size: int | None = None,
        window_bits: int | None = None,
        compression_level: int | None = None,
        compression_method: str | None = None,
        mem_level: int | None = None,
        compression_strategy: int | None = None,
    ):
        self.compression_type = normalize_compression(compression_type)
        self.flush_mode, self.input_buffer_size, self.output_buffer_size = (
            flush_mode,
            input_buffer_size,
            output_buffer_size,
        )
        self.window_bits, self.compression_level, self.compression_method = (
            window_bits,
            compression_level,
            compression_method,
        )
        self.mem_level, self.compression_strategy = mem_level, compression_strategy

    @classmethod
    def get_compression_type_string(cls, options: Any) -> str:
        if isinstance(options, TFRecordOptions):
            return options.compression_type
        return normalize_compression(options)

    def __repr__(self) -> str:
        return f"TFRecordOptions(compression_type={self.compression_type!r})"
