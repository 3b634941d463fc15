"""Sidecar indexes of record offsets: exact cardinality, ``skip(n)`` as a seek, random access.

``build_index("data.tfrecord")`` reads the whole file once, verifying every CRC, and writes
``data.tfrecord.hridx``: a one-line JSON header (format, compression, record count, and a fingerprint
of the file: its size and the CRC32C of its first and last 64 KiB), the frame offsets as
little-endian int64, and a CRC32C of all that. An index whose fingerprint no longer matches the file
is *stale*; one whose own checksum fails is *damaged* (a flipped bit in an offset would otherwise
give a duplicate and a missing record). Neither is ever used silently: readers rebuild it or refuse
it, as asked. (The modification time is deliberately not part of the fingerprint, so copying a
dataset keeps its indexes valid.) The sidecar is written under a temporary name and renamed; the
temporaries of writers that died are removed by the next write.

>>> import os, tempfile
>>> from headrace.io.records.tfrecord import encode_record
>>> path = os.path.join(tempfile.mkdtemp(), "c.tfrecord")
>>> with open(path, "wb") as f:
...     _ = f.write(b"".join(encode_record(b"r%d" % i) for i in range(3)))
>>> index = build_index(path)
>>> len(index), index.offsets.tolist()
(3, [0, 18, 36])
>>> IndexedRecords([path])[2]
b'r2'
"""

from __future__ import annotations

import json
import mmap
import os
import struct
from collections.abc import Callable, Sequence
from typing import Any, cast, overload

import numpy as np

from ...core.errors import DataLossError, InvalidArgumentError, on_failure
from ..limits import load_json
from ..storage.fs import as_path, exists, file_size, is_url, make_parent_dirs, open_file, remove, replace
from ..storage.publish import reclaim_temporaries, remove_temporary, temporary_path
from .compression import normalize_compression
from .crc import crc32c
from .tfrecord import RecordReader, _kernels

INDEX_SUFFIX = ".hridx"
MAGIC = b"HRIDX1\n"
_MAX_HEADER = 1 << 20  # the header is a few fields and a file fingerprint
_FORMAT = 2  # 2: a CRC32C of the whole sidecar at its end (1 had none)
_TRAILER = struct.Struct("<I")
_FINGERPRINT_BYTES = 1 << 16
#: how TFRecordDataset(index=...) treats sidecar indexes
INDEX_POLICIES = (None, False, "build", "require")


class StaleIndexError(InvalidArgumentError):
    """An index is missing, unreadable or no longer matches its file, and was required."""


def index_path(path: str) -> str:
    """Where the sidecar index of ``path`` lives.

    >>> index_path("data/train-00000-of-00010.tfrecord")
    'data/train-00000-of-00010.tfrecord.hridx'
    """
    return as_path(path) + INDEX_SUFFIX


def fingerprint(path: str, storage_options: dict | None = None) -> dict:
    """Size and CRC32C of the first and last 64 KiB: cheap, and changes whenever the file does in
    practice (appends, truncation, rewrites, a different file under the same name)."""
    size = file_size(path, storage_options)
    with open_file(path, "rb", storage_options) as f:
        head = f.read(_FINGERPRINT_BYTES)
        if size is None:
            rest = head + f.read()
            size = len(rest)
            tail = rest[-_FINGERPRINT_BYTES:]
        elif size > _FINGERPRINT_BYTES:
            f.seek(max(size - _FINGERPRINT_BYTES, 0))
            tail = f.read(_FINGERPRINT_BYTES)
        else:
            tail = head
    return {"size": int(size), "head_crc32c": crc32c(head), "tail_crc32c": crc32c(tail)}


class RecordIndex:
    """Frame offsets of one file's records (in the decompressed stream for compressed files)."""

    def __init__(self, path: str, compression: str, offsets: np.ndarray, end: int, file_fingerprint: dict):
        self.path = path
        self.compression = compression
        self.offsets = offsets
        self.end = int(end)  # stream offset just past the last record
        self.fingerprint = file_fingerprint

    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def num_records(self) -> int:
        return len(self.offsets)

    def offset_of(self, record: int) -> int:
        """Stream offset of ``record``'s frame; ``len(self)`` gives the end of the last record."""
        if record >= len(self.offsets):
            return self.end
        return int(self.offsets[record])

    def __repr__(self) -> str:
        return f"RecordIndex({self.path!r}, {len(self)} records)"


def write_index(
    path: str,
    offsets: Sequence[int] | np.ndarray,
    end: int,
    compression_type: str | None,
    storage_options: dict | None = None,
) -> RecordIndex:
    """Write the sidecar of ``path`` from known offsets (used by writers, which know them for free)."""
    path = as_path(path)
    offsets = np.ascontiguousarray(offsets, dtype="<i8")
    index = RecordIndex(
        path, normalize_compression(compression_type), offsets, end, fingerprint(path, storage_options)
    )
    header = {
        "format": _FORMAT,
        "compression": index.compression,
        "num_records": len(offsets),
        "end": index.end,
        "fingerprint": index.fingerprint,
    }
    target = index_path(path)
    make_parent_dirs(target, storage_options)
    if not is_url(target):  # temporaries of earlier writers that were killed or ran out of disk
        reclaim_temporaries(os.path.dirname(target), os.path.basename(target) + ".incomplete-")
    temporary = temporary_path(target)
    body = MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n" + offsets.tobytes()
    with on_failure(remove_temporary, temporary, storage_options):
        with open_file(temporary, "wb", storage_options) as f:
            f.write(body + _TRAILER.pack(crc32c(body)))
        replace(temporary, target, storage_options)
    return index


@overload
def build_index(
    path: list | tuple,
    compression_type: str | None = None,
    *,
    progress: Callable[[int], None] | None = None,
    storage_options: dict | None = None,
) -> list[RecordIndex]: ...
@overload
def build_index(
    path: Any,
    compression_type: str | None = None,
    *,
    progress: Callable[[int], None] | None = None,
    storage_options: dict | None = None,
) -> RecordIndex: ...
def build_index(
    path: Any,
    compression_type: str | None = None,
    *,
    progress: Callable[[int], None] | None = None,
    storage_options: dict | None = None,
) -> RecordIndex | list[RecordIndex]:
    """Read ``path`` once (every CRC verified; a damaged file raises ``RecordError``), write its
    sidecar index and return it. ``progress(stream_bytes_so_far)`` is called as reading goes.

    ``path`` may be a list or tuple of paths (what ``write_shards`` returns): each file is indexed in
    turn, ``progress`` counting within the file being read, and the list of indexes is returned.
    """
    if isinstance(path, (list, tuple)):
        return [_build_one(p, compression_type, progress, storage_options) for p in path]
    return _build_one(path, compression_type, progress, storage_options)


def _build_one(
    path: Any,
    compression_type: str | None,
    progress: Callable[[int], None] | None,
    storage_options: dict | None,
) -> RecordIndex:
    path = as_path(path)
    chunks = []
    with RecordReader(path, compression_type, buffer_size=1 << 20, storage_options=storage_options) as reader:
        while True:
            try:
                chunks.append(reader.next_offsets())
            except StopIteration:
                break
            if progress is not None:
                progress(reader.offset)
        end = reader.offset
    offsets = np.concatenate(chunks) if chunks else np.empty(0, dtype=np.int64)
    return write_index(path, offsets, end, compression_type, storage_options)


_HEADER_TYPES = {"compression": str, "num_records": int, "end": int, "fingerprint": dict}


def _read_sidecar(path: str, storage_options: dict | None = None) -> tuple[dict, np.ndarray]:
    """The header and offsets of ``path``'s sidecar; ValueError saying what is wrong with it."""
    with open_file(index_path(path), "rb", storage_options) as f:
        blob = f.read()
    if not blob.startswith(MAGIC):
        raise ValueError("it does not start with the headrace index marker")
    newline = blob.find(b"\n", len(MAGIC))
    header: Any = None
    damage = "is not a JSON object"
    try:
        header = load_json(blob[len(MAGIC) : newline], "it", _MAX_HEADER) if newline > 0 else None
    except ValueError as exc:
        damage = str(exc)[3:]  # "it is nested ..." -> "is nested ...": reported below, after the checksum
    if isinstance(header, dict) and header.get("format") not in (None, _FORMAT):
        raise ValueError(
            f"it has format {header.get('format')!r}, this headrace reads format {_FORMAT} (rebuild it)"
        )
    if len(blob) < _TRAILER.size or _TRAILER.unpack_from(blob, len(blob) - _TRAILER.size)[0] != crc32c(
        blob[: -_TRAILER.size]
    ):
        raise ValueError(
            "damaged: its checksum does not match its contents (a changed byte in storage, or an "
            "interrupted copy); rebuild it"
        )
    if not isinstance(header, dict):
        raise ValueError(f"damaged: its header {damage}")
    for key, kind in _HEADER_TYPES.items():
        if type(header.get(key)) is not kind:
            raise ValueError(f"damaged: its header has {key}={header.get(key)!r}, not a {kind.__name__}")
    data = blob[newline + 1 : -_TRAILER.size]
    if len(data) % 8:
        raise ValueError(f"damaged: its offsets take {len(data)} bytes, not a multiple of 8")
    offsets = np.frombuffer(data, dtype="<i8").astype(np.int64)
    if len(offsets) != header["num_records"]:
        raise ValueError(f"it lists {len(offsets)} offsets but its header says {header['num_records']}")
    if len(offsets) and (offsets[0] < 0 or np.any(np.diff(offsets) <= 0) or offsets[-1] >= header["end"]):
        raise ValueError("damaged: its offsets do not increase from 0 to the end of the file")
    return header, offsets


def check_index(
    path: Any, compression_type: str | None = None, storage_options: dict | None = None
) -> tuple[RecordIndex | None, str]:
    """``(index, "fresh")`` when a usable sidecar exists, else ``(None, reason)`` naming why not
    (``"missing"``, or what makes it stale or unreadable)."""
    path = as_path(path)
    compression = normalize_compression(compression_type)
    if not exists(index_path(path), storage_options):
        return None, "missing"
    try:
        header, offsets = _read_sidecar(path, storage_options)
    except (OSError, ValueError) as exc:
        return None, str(exc) if str(exc).startswith("damaged") else f"unreadable: {exc}"
    if header.get("compression") != compression:
        return None, f"stale: it was built for compression {header.get('compression')!r}, not {compression!r}"
    current = fingerprint(path, storage_options)
    saved = header.get("fingerprint", {})
    if current != saved:
        if current.get("size") != saved.get("size"):
            what = f"the file's size changed from {saved.get('size')} to {current['size']} bytes"
        else:
            what = "the file's contents changed (same size, different checksum)"
        return None, f"stale: {what} since the index was built"
    return RecordIndex(path, compression, offsets, header["end"], current), "fresh"


def load_index(
    path: Any,
    compression_type: str | None = None,
    policy: Any = "require",
    storage_options: dict | None = None,
) -> RecordIndex | None:
    """The index of ``path`` under a policy:

    - ``"require"``: a fresh index or :class:`StaleIndexError` naming the problem and the fix;
    - ``"build"``: a fresh index, built (and CRC-verified) when missing or stale;
    - ``None``: a fresh index if there is one, else None (a stale one is ignored, never used);
    - ``False``: None.
    """
    if policy not in INDEX_POLICIES:
        raise InvalidArgumentError(f"index={policy!r} is not allowed: use None, False, 'build' or 'require'")
    if policy is False:
        return None
    path = as_path(path)
    index, reason = check_index(path, compression_type, storage_options)
    if index is not None:
        return index
    if policy == "build":
        return build_index(path, compression_type, storage_options=storage_options)
    if policy == "require":
        raise StaleIndexError(
            f"index of {path!r} is {reason} ({index_path(path)}); build it with `headrace index {path}` "
            "or headrace.io.build_index, or pass index='build'"
        )
    return None


class IndexedRecords:
    """Random access to the records of indexed files: ``records[i]`` is record ``i`` of the files
    taken one after the other. Each read verifies the record's CRCs. Compressed files work but each
    backward jump decompresses from the start of the file; prefer plain files for random access.
    """

    def __init__(
        self,
        paths: Sequence[Any],
        compression_type: str | None = None,
        index: Any = "build",
        storage_options: dict | None = None,
    ):
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        self.paths = [as_path(p) for p in paths]
        self.compression = normalize_compression(compression_type)
        self.storage_options = storage_options
        # Random access needs every file's index: only "build" and "require" (and None, read as
        # "require") can give one for sure.
        if index is not None and index not in ("build", "require"):
            raise InvalidArgumentError(
                f"IndexedRecords: index={index!r} is not allowed: random access needs an index; use "
                "'build' (make missing or stale ones) or 'require' (raise if one is missing)"
            )
        self.indexes = [
            cast(
                RecordIndex,
                load_index(p, self.compression, index if index is not None else "require", storage_options),
            )
            for p in self.paths
        ]
        counts = np.array([len(i) for i in self.indexes], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(counts)])  # first global record of each file
        self._readers: dict[int, RecordReader] = {}
        self._maps: dict[int, tuple] = {}

    def __len__(self) -> int:
        return int(self.starts[-1])

    def locate(self, i: int) -> tuple[int, int]:
        """(file number, record number in that file) of global record ``i``."""
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"record {i} is out of range: there are {n} records")
        i = i % n if i < 0 else i
        file = int(np.searchsorted(self.starts, i, side="right")) - 1
        return file, int(i - self.starts[file])

    def __getitem__(self, i: int) -> bytes:
        file, record = self.locate(int(i))
        reader = self._readers.get(file)
        if reader is None:
            reader = RecordReader(
                self.paths[file], self.compression, buffer_size=8192, storage_options=self.storage_options
            )
            self._readers[file] = reader
        reader.seek(self.indexes[file].offset_of(record), record)
        return reader.next_chunk(1)[0]

    def read_many(self, indices: np.ndarray) -> list[bytes]:
        """Records at ``indices`` (any order), CRCs verified; the fast path for global shuffle.

        Plain files are memory-mapped and each file's share of the indices is framed and verified in
        one compiled pass; compressed and remote files fall back to a seek per record.
        """
        indices = np.asarray(indices, dtype=np.int64)
        if len(indices) and (indices.min() < 0 or indices.max() >= len(self)):
            bad = int(indices[(indices < 0) | (indices >= len(self))][0])
            raise IndexError(f"record {bad} is out of range: the files hold {len(self)} records")
        if self.compression or any("://" in path for path in self.paths):
            return [self[int(i)] for i in indices]  # no mmap for compressed or remote files
        if len(self.paths) == 1:
            return self._read_file(0, indices)
        files = np.searchsorted(self.starts, indices, side="right") - 1
        out: list = [None] * len(indices)
        for file in np.unique(files).tolist():
            where = np.flatnonzero(files == file)
            for slot, record in zip(
                where.tolist(), self._read_file(file, indices[where] - self.starts[file])
            ):
                out[slot] = record
        return out

    def _read_file(self, file: int, local: np.ndarray) -> list[bytes]:
        """Records ``local`` of one file, framed and CRC-verified in one compiled pass.

        Not sorted by offset: a chunk's few hundred records are spread over the file either way, and
        the page cache serves them; sorting measured slower.
        """
        view, raw = self._mapped(file)
        offsets = self.indexes[file].offsets[local].astype(np.int64)
        starts = np.empty(len(offsets), np.int64)
        ends = np.empty(len(offsets), np.int64)
        failed, status = _kernels().frames_at(view, offsets, starts, ends)
        if failed >= 0:
            kind = {2: "length CRC mismatch", 3: "data CRC mismatch"}.get(int(status), "truncated record")
            raise DataLossError(
                f"{self.paths[file]}: record {int(local[failed])} at byte offset {int(offsets[failed])}: "
                f"{kind} (the file changed since its index was built, or is damaged)"
            )
        return [raw[a:b] for a, b in zip(starts.tolist(), ends.tolist())]

    def _mapped(self, file: int):
        mapped = self._maps.get(file)
        if mapped is None:
            with open(self.paths[file], "rb") as f:
                raw = (
                    mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                    if os.path.getsize(self.paths[file])
                    else b""
                )
            mapped = self._maps[file] = (np.frombuffer(raw, dtype=np.uint8), raw)
        return mapped

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()
        self._maps.clear()  # the mmaps close when the last view of them goes

    def __enter__(self) -> IndexedRecords:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def remove_index(path: Any, storage_options: dict | None = None) -> None:
    """Delete the sidecar of ``path`` if there is one."""
    target = index_path(as_path(path))
    if exists(target, storage_options):
        remove(target, storage_options)
