"""Writing TFRecord files: one file with :class:`TFRecordWriter`, many shards with :func:`write_shards`.

>>> import os, tempfile
>>> prefix = os.path.join(tempfile.mkdtemp(), "train")
>>> paths = write_shards([b"a", b"b", b"c"], prefix, num_shards=2)
>>> [os.path.basename(p) for p in paths]
['train-00000-of-00002.tfrecord', 'train-00001-of-00002.tfrecord']
>>> from headrace.io.records.tfrecord import tf_record_iterator
>>> [list(tf_record_iterator(p)) for p in paths]
[[b'a', b'c'], [b'b']]
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterable
from typing import IO, Any, cast

import numpy as np

from ...core.args import is_int
from ...core.errors import InvalidArgumentError, check, on_failure
from ..storage.fs import (
    as_path,
    check_storage_options,
    exists,
    is_url,
    make_parent_dirs,
    open_file,
    remove,
)
from ..storage.publish import (
    abandon_set,
    begin_set,
    finish_set,
    os_error,
    publish_file,
    refuse_a_live_writer,
    temporary_path,
)
from ..storage.reclaim import reclaim_set_temporaries
from .compression import CompressingWriter, normalize_compression
from .crc import crc32c, masked_crc32c
from .index import INDEX_SUFFIX, index_path, write_index

_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")


def as_record(value: Any, what: str = "record") -> bytes:
    """A record as bytes: bytes-like values as they are, str as UTF-8, numpy string scalars unwrapped."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, (bytearray, memoryview, np.bytes_)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise InvalidArgumentError(
        f"{what} must be bytes (e.g. a serialized Example), got {type(value).__name__}; "
        "serialize it first, e.g. with headrace.io.serialize_example"
    )


_ADVICE = "free some space or write somewhere else"


class _ChecksummedFile:
    """A binary file that keeps the size and CRC32C of what goes through it (the published checksum)."""

    def __init__(self, raw: IO[bytes]):
        self.raw, self.size, self.crc = raw, 0, 0

    def write(self, data: bytes) -> int:
        self.raw.write(data)
        self.size += len(data)
        self.crc = crc32c(data, self.crc)
        return len(data)

    def flush(self) -> None:
        self.raw.flush()

    def fileno(self) -> int:
        return self.raw.fileno()

    def close(self) -> None:
        self.raw.close()


class TFRecordWriter:
    """Write records to one TFRecord file, byte-compatible with ``tf.io.TFRecordWriter``.

    ``index=True`` also writes the sidecar index on close (offsets are known while writing, so it
    costs nothing). Paths with ``protocol://`` go through fsspec.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "d.tfrecord")
    >>> with TFRecordWriter(path) as writer:
    ...     writer.write(b"hello")
    >>> os.path.getsize(path)
    21
    """

    def __init__(
        self,
        path: Any,
        compression_type: str | None = None,
        *,
        index: bool = False,
        storage_options: dict | None = None,
        options: Any = None,
    ):
        self.path = as_path(path)
        self.storage_options = check_storage_options(storage_options, "TFRecordWriter")
        if options is not None:  # tf.io.TFRecordWriter(path, options=TFRecordOptions(...) or "GZIP")
            if compression_type is not None:
                raise InvalidArgumentError(
                    f"TFRecordWriter: pass compression_type={compression_type!r} or options={options!r}, not both"
                )
            compression_type = options
        self.compression = normalize_compression(
            compression_type, "options" if options is not None else "compression_type"
        )
        check(isinstance(index, bool), "index", index, "True or False")
        self.closed = True  # until the file is open, so close() after a failed open does nothing
        try:
            make_parent_dirs(self.path, self.storage_options)
            self._file = _ChecksummedFile(open_file(self.path, "wb", self.storage_options))
        except OSError as exc:
            raise os_error(exc, self.path, "create the file", _ADVICE) from exc
        self._stream: CompressingWriter | _ChecksummedFile = (
            CompressingWriter(self._file, self.compression) if self.compression else self._file
        )
        self._offsets: list[int] | None = [] if index else None
        self.position = 0  # uncompressed bytes written (offset of the next record's frame)
        self.records = 0
        self.closed = False

    @property
    def file_bytes(self) -> int:
        """Bytes written to the file so far (after compression)."""
        return self._file.size

    @property
    def file_crc32c(self) -> int:
        """CRC32C of the bytes written to the file so far (after compression)."""
        return self._file.crc

    def write(self, record: bytes) -> None:
        """Append one record (bytes; str is written as UTF-8)."""
        if self.closed:
            raise ValueError(f"TFRecordWriter for {self.path!r} is closed")
        data = as_record(record)
        length = _LENGTH.pack(len(data))
        try:
            self._stream.write(
                b"".join((length, _CRC.pack(masked_crc32c(length)), data, _CRC.pack(masked_crc32c(data))))
            )
        except OSError as exc:
            raise os_error(exc, self.path, f"write record {self.records}", _ADVICE) from exc
        if self._offsets is not None:
            self._offsets.append(self.position)
        self.position += len(data) + 16
        self.records += 1

    def flush(self) -> None:
        """Push written records to the file, so a reader sees them complete."""
        if not self.closed:
            try:
                self._stream.flush()
            except OSError as exc:
                raise os_error(exc, self.path, "flush", _ADVICE) from exc

    def close(self, *, sync: bool = False) -> None:
        """Finish the file; ``sync=True`` also makes it durable (``fsync``) before returning."""
        if self.closed:
            return
        self.closed = True
        try:
            if isinstance(self._stream, CompressingWriter):  # i.e. self.compression
                self._stream.finish()
            self._file.flush()
            if sync and not is_url(self.path):
                os.fsync(self._file.fileno())
            self._file.close()
        except OSError as exc:
            with contextlib.suppress(OSError):
                self._file.close()
            raise os_error(exc, self.path, "finish", _ADVICE) from exc
        if self._offsets is not None:
            write_index(self.path, self._offsets, self.position, self.compression, self.storage_options)

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<TFRecordWriter {self.path!r}, {self.records} records>"


def shard_name(prefix: str, shard: int, num_shards: int, suffix: str = ".tfrecord") -> str:
    """``prefix-00003-of-00020.tfrecord``.

    >>> shard_name("out/train", 3, 20)
    'out/train-00003-of-00020.tfrecord'
    """
    return f"{prefix}-{shard:05d}-of-{num_shards:05d}{suffix}"


def write_shards(
    records: Iterable[Any],
    prefix: Any,
    *,
    num_shards: int | None = None,
    shard_size: int | None = None,
    compression_type: str | None = None,
    suffix: str = ".tfrecord",
    index: bool = False,
    storage_options: dict | None = None,
) -> list[str]:
    """Write ``records`` (bytes, or any iterable/Dataset of them) into ``prefix-NNNNN-of-MMMMM`` shards.

    - ``num_shards=N``: record ``i`` goes to shard ``i % N`` (so reading the shards with
      ``TFRecordDataset(paths, num_parallel_reads=N)`` gives the records back in their original order);
    - ``shard_size=B``: shards are filled one after the other, each closed once it holds at least ``B``
      bytes of framed records (before compression).

    Publication is safe (see docs/reliability.md): each shard is written under a temporary name
    (``....incomplete-...``) and synced; then ``.prefix.manifest.json`` is written as ``publishing``, the
    shards are renamed to their final names, shards of an earlier set under the same prefix that this
    one does not overwrite are removed, and the manifest is rewritten as ``complete`` with each shard's
    size and CRC32C. Readers (``TFRecordDataset``, ``list_files``) refuse a set whose manifest is not
    complete, so an interrupted run is never read as a finished set; the next run reclaims the
    temporaries of dead writers on this host, and names those of another host's writers in a
    ``ShardSetWarning`` (:func:`~headrace.io.reclaim_shards` removes them). On an error the temporary
    files are removed. Returns the shard paths. ``protocol://`` prefixes (with ``storage_options``)
    get the same manifest, beside the shards, and the same reclaim.
    """
    prefix = as_path(prefix, "prefix")
    storage_options = check_storage_options(storage_options, "write_shards")
    compression = normalize_compression(compression_type)
    if num_shards is not None and shard_size is not None:
        raise InvalidArgumentError("write_shards: give num_shards or shard_size, not both")
    if shard_size is None and num_shards is None:
        num_shards = 1
    if num_shards is not None:
        check(
            is_int(num_shards, low=1),
            "num_shards",
            num_shards,
            "a positive int",
        )
    if shard_size is not None:
        check(
            is_int(shard_size, low=1),
            "shard_size",
            shard_size,
            "a positive number of bytes",
        )
    local = not is_url(prefix)
    reclaim_set_temporaries(prefix, storage_options, tool="write_shards")
    refuse_a_live_writer(prefix, "write_shards", storage_options)
    writers: list[TFRecordWriter] = []

    def open_shard(number: int) -> TFRecordWriter:
        writer = TFRecordWriter(
            temporary_path(f"{prefix}-{number:05d}{suffix}"),
            compression,
            index=index,
            storage_options=storage_options,
        )
        writers.append(writer)
        return writer

    with on_failure(_remove_temporaries, writers):
        if num_shards is not None:
            shards = [open_shard(k) for k in range(num_shards)]
            for i, record in enumerate(records):
                shards[i % num_shards].write(as_record(record, f"record {i}"))
        else:
            size_limit = cast(int, shard_size)  # num_shards is None here, so shard_size was given
            current = None
            for i, record in enumerate(records):
                if current is None:
                    current = open_shard(len(writers))
                current.write(as_record(record, f"record {i}"))
                if current.position >= size_limit:
                    current.close(sync=local)
                    current = None
            if not writers:  # nothing to write: one empty shard, as num_shards=1 would give
                open_shard(0)
        for writer in writers:
            writer.close(sync=local)
        total = len(writers)
        finals = [shard_name(prefix, number, total, suffix) for number in range(total)]
        entries: list[dict | None] = [
            {
                "file": os.path.basename(final),
                "bytes": writer.file_bytes,
                "crc32c": writer.file_crc32c,
                "records": writer.records,
            }
            for writer, final in zip(writers, finals)
        ]
        body = begin_set(
            prefix, "write_shards", entries, {"compression": compression, "index": index}, storage_options
        )
    # On a failure from here on, shards already renamed stay under a manifest saying "publishing".
    with on_failure(_abandon, writers, prefix, body, storage_options):
        for writer, final in zip(writers, finals):
            if index:  # the sidecar first: the fingerprint is of the contents, so it moves with its file
                publish_file(index_path(writer.path), index_path(final), storage_options)
            publish_file(writer.path, final, storage_options)
        finish_set(prefix, body, companions=(INDEX_SUFFIX,), storage_options=storage_options)
    return finals


def _abandon(writers: list[TFRecordWriter], prefix: str, body: dict, storage_options: dict | None) -> None:
    _remove_temporaries(writers)
    abandon_set(prefix, body, storage_options)


def _remove_temporaries(writers: list[TFRecordWriter]) -> None:
    for writer in writers:
        with contextlib.suppress(Exception):
            writer.close()
        for leftover in (writer.path, index_path(writer.path)):
            with contextlib.suppress(Exception):
                if exists(leftover, writer.storage_options):
                    remove(leftover, writer.storage_options)
