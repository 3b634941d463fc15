"""TFRecord framing: read and write record files byte-compatibly with TensorFlow.

Each record is framed as ``uint64 length | uint32 masked_crc32c(length) | data |
uint32 masked_crc32c(data)`` (little endian). :class:`RecordReader` verifies both CRCs of every
record, many records per compiled call, and knows the exact position of the next record, so a
reader can be checkpointed and restored by ``(offset, record)``.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
>>> with open(path, "wb") as f:
...     _ = f.write(encode_record(b"first") + encode_record(b"second"))
>>> reader = RecordReader(path)
>>> reader.next_chunk(10), reader.offset, reader.record
([b'first', b'second'], 43, 2)
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import IO, Any, cast

import numpy as np

from ...core.errors import DataLossError
from ..limits import exceeded, limit
from ..storage.fs import as_path, file_size, open_file
from .compression import (
    BAD_STREAM,
    TRUNCATED_STREAM,
    CompressedStreamError,
    DecompressingReader,
    detect_compression,
    normalize_compression,
)
from .crc import masked_crc32c

HEADER = 12
FOOTER = 4
DEFAULT_BUFFER_SIZE = 256 * 1024  # TensorFlow's default read buffer
MIN_BUFFER_SIZE = 4096
#: Records above this are refused as damage whatever the budget: no protobuf can be this large.
MAX_RECORD_BYTES = (1 << 31) - 1
_TABLE = 4096  # frames walked per compiled call
_READ_STEP = 1 << 26  # never ask a file for more than this at once

LENGTH_CRC_MISMATCH = "length CRC mismatch"
DATA_CRC_MISMATCH = "data CRC mismatch"
TRUNCATED_RECORD = "truncated record"
RECORD_TOO_LARGE = "record too large"
#: every kind a RecordError can have
ERROR_KINDS = (
    LENGTH_CRC_MISMATCH,
    DATA_CRC_MISMATCH,
    TRUNCATED_RECORD,
    RECORD_TOO_LARGE,
    BAD_STREAM,
    TRUNCATED_STREAM,
)
DAMAGE_HINT = (
    "the file is damaged: restore it from a good copy, or read past the damage with "
    "on_corrupt='skip_record' or 'skip_file' (or .ignore_errors())"
)
_HEADER_STRUCT = struct.Struct("<QI")
_CRC_STRUCT = struct.Struct("<I")


def _kernels():
    # numba costs ~0.4 s to import: load the compiled framing on the first read, not on `import headrace`.
    from . import framing_kernels  # noqa: PLC0415

    return framing_kernels


class RecordError(DataLossError):
    """A damaged TFRecord: names the file, the record number, the byte offset and the kind of damage.

    ``kind`` is one of ``ERROR_KINDS``. ``recoverable`` says whether the records after it can still be
    located (true only for a data CRC mismatch, whose frame length is intact).
    """

    def __init__(
        self,
        path: str,
        record: int,
        offset: int,
        kind: str,
        detail: str = "",
        compressed: bool = False,
        hint: str | None = None,
    ):
        where = "offset in the decompressed stream" if compressed else "byte offset"
        message = f"{path}: {kind} at record {record}, {where} {offset}"
        if detail:
            message += f" ({detail})"
        message += "; " + (hint or DAMAGE_HINT)
        super().__init__(message)
        self.path = path
        self.record = record
        self.offset = offset
        self.kind = kind
        self.recoverable = kind == DATA_CRC_MISMATCH  # (in a compressed file the reader clears it)


def encode_record(data: bytes | bytearray | memoryview) -> bytes:
    """One framed record, exactly as TensorFlow's TFRecordWriter writes it.

    >>> encode_record(b"")
    b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00)\\x03\\x98\\x07\\xd8\\xea\\x82\\xa2'
    """
    length = _HEADER_STRUCT.pack(len(data), 0)[:8]
    return b"".join(
        (length, _CRC_STRUCT.pack(masked_crc32c(length)), data, _CRC_STRUCT.pack(masked_crc32c(data)))
    )


class RecordReader:
    """Sequential reader of one TFRecord file (plain, GZIP or ZLIB) with every CRC verified.

    ``offset`` (in the decompressed stream for compressed files) and ``record`` always describe the
    next record to be returned. After a :class:`RecordError` in a plain file the reader is positioned
    past the damage when it can be (data CRC mismatch: the next record); otherwise the rest of the
    file reads as empty unless :meth:`resync` finds the next intact frame. In a GZIP/ZLIB file every
    record before the damage is delivered, and the rest reads as empty: a damaged deflate stream can
    reproduce earlier records verbatim, which must never be delivered twice.
    """

    def __init__(
        self,
        path: Any,
        compression_type: str | None = None,
        buffer_size: int | None = None,
        *,
        offset: int = 0,
        record: int = 0,
        storage_options: dict | None = None,
    ):
        self.path = as_path(path)
        self.storage_options = storage_options
        self.compression = normalize_compression(compression_type)
        self.buffer_size = DEFAULT_BUFFER_SIZE if not buffer_size else max(int(buffer_size), MIN_BUFFER_SIZE)
        self._kernels = _kernels()
        self._starts_array = np.empty(_TABLE, dtype=np.int64)
        self._ends_array = np.empty(_TABLE, dtype=np.int64)
        # Plain files have a known size, which bounds every length field before anything is read.
        self._size = None if self.compression else file_size(self.path, storage_options)
        self._raw: IO[bytes] | None = None
        self._source: DecompressingReader | IO[bytes]  # the decoded stream, set by _open()
        self.lost = ""  # after a resync that found nothing in a compressed file: what was lost
        self._open()
        self.record = 0
        if offset or record:
            self.seek(offset, record)

    # --- buffer management ---------------------------------------------------------------------------
    def _open(self) -> None:
        if self._raw is not None:
            self._raw.close()
        raw = self._raw = open_file(self.path, "rb", self.storage_options)
        self._source = DecompressingReader(raw, self.compression) if self.compression else raw
        self._reset_buffer(0)

    def _reset_buffer(self, base: int) -> None:
        self._data = b""  # bytes of the stream from offset _base on
        self._view = np.frombuffer(self._data, dtype=np.uint8)
        self._base = base
        self._pos = 0  # first byte of _data not yet framed
        self._starts: list[int] = []  # framed records not yet returned: data spans in _data
        self._ends: list[int] = []
        self._cursor = 0
        self._source_done = False
        self._stream_error: CompressedStreamError | None = None  # raised once buffered records are served
        self._dead = False  # the rest of the file cannot be located

    def _max_length(self) -> int:
        # An unchecked length from a damaged or hostile file must never decide how much memory is
        # used: the budget bounds it, and for plain files so does what is left of the file.
        budget = min(MAX_RECORD_BYTES, limit("max_record_bytes"))
        if self._size is None:
            return budget
        return max(0, min(budget, self._size - self._base - HEADER - FOOTER))

    def _read_more(self, frame_size: int) -> bool:
        """Make ``_data[_pos:]`` hold at least ``frame_size`` bytes if the file has them."""
        if self._source_done:
            return False
        if self._size is not None and self._base + self._pos + frame_size > self._size:
            self._source_done = True  # the frame cannot fit in what is left: never allocate for it
            return False
        keep = self._data[self._pos :]
        missing = max(frame_size - len(keep), 1)
        want = max(missing, self.buffer_size)
        pieces = [keep] if keep else []
        got = 0
        while got < missing:
            try:
                piece = self._source.read(min(want - got, _READ_STEP))
            except CompressedStreamError as exc:
                self._stream_error = exc
                self._source_done = True
                break
            if not piece:
                self._source_done = True
                break
            pieces.append(piece)
            got += len(piece)
        if not got:
            return False
        self._base += self._pos
        self._data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        self._view = np.frombuffer(self._data, dtype=np.uint8)
        self._pos = 0
        return True

    def _error(self, kind: str, detail: str = "", hint: str | None = None) -> RecordError:
        return RecordError(
            self.path, self.record, self._base + self._pos, kind, detail, bool(self.compression), hint
        )

    def _unread(self) -> str:
        """What a damaged compressed file loses: the compressed bytes not yet decoded."""
        try:
            size = file_size(self.path, self.storage_options)
        except OSError:
            size = None
        # called for compressed files only, whose _source is a DecompressingReader
        source = cast(DecompressingReader, self._source)
        left = None if size is None else max(size - source.consumed, 0)
        if not left:
            return "the records after it are lost"
        return f"the records in at least its last {left} of {size} compressed bytes are lost"

    def _compression_hint(self) -> str | None:
        """When the very first bytes fail, the usual cause is a wrong compression_type: say so."""
        if self._base + self._pos != 0:
            return None
        with open_file(self.path, "rb", self.storage_options) as f:
            guess = detect_compression(f.read(16))
        if guess is None or guess == self.compression:
            return None
        return f"the file looks {guess or 'uncompressed'}: pass compression_type={guess!r}"

    def _fill(self) -> None:
        """Frame the next records into the table; StopIteration at the clean end of the file."""
        kernels = self._kernels
        while True:
            if self._dead:
                raise StopIteration
            count, pos, status, aux = kernels.frame_records(
                self._view,
                self._pos,
                len(self._data),
                _TABLE,
                self._max_length(),
                self._starts_array,
                self._ends_array,
            )
            if count:
                self._starts = self._starts_array[:count].tolist()
                self._ends = self._ends_array[:count].tolist()
                self._cursor = 0
                self._pos = pos
                return
            if status == kernels.OK or status == kernels.NEED_MORE:
                needed = aux if status == kernels.NEED_MORE else HEADER
                if self._read_more(needed):
                    continue
                self._dead = True
                leftover = len(self._data) - self._pos
                if self._size is not None:  # bytes never read because the frame could not fit
                    leftover = max(leftover, self._size - self._base - self._pos)
                if self._stream_error is not None:
                    raise self._error(
                        self._stream_error.kind, self._stream_error.detail, self._compression_hint()
                    )
                if leftover == 0:
                    raise StopIteration
                raise self._error(
                    TRUNCATED_RECORD,
                    f"the file ends {leftover} bytes into a frame of "
                    + (f"{needed} bytes" if needed > HEADER else "at least 12 bytes"),
                )
            if status == kernels.DATA_CRC:
                if self.compression:
                    # Damaged data in a GZIP/ZLIB file means a damaged deflate stream, whose later
                    # output can hold exact copies of earlier records (see resync): stop here.
                    self._dead = True
                    error = self._error(
                        DATA_CRC_MISMATCH,
                        f"{aux} bytes of data; the rest of the compressed stream cannot be trusted: "
                        + self._unread(),
                    )
                    error.recoverable = False
                    raise error
                error = self._error(DATA_CRC_MISMATCH, f"{aux} bytes of data")
                self._pos = pos + HEADER + aux + FOOTER  # the frame is intact: continue after it
                self.record += 1
                raise error
            if status == kernels.LENGTH_CRC:
                self._dead = True
                raise self._error(
                    LENGTH_CRC_MISMATCH, "the records after it cannot be located", self._compression_hint()
                )
            # TOO_LARGE: a length field that passed its CRC but cannot be right
            length = int.from_bytes(self._data[self._pos : self._pos + 8], "little")
            self._dead = True
            left = None if self._size is None else self._size - self._base - self._pos - HEADER - FOOTER
            if left is not None and length > left:
                raise self._error(
                    TRUNCATED_RECORD, f"the length field says {length} bytes but only {max(left, 0)} are left"
                )
            if length > MAX_RECORD_BYTES:
                raise self._error(RECORD_TOO_LARGE, f"the length field says {length} bytes")
            raise self._error(
                RECORD_TOO_LARGE,
                exceeded("max_record_bytes", length, "the length field"),
                hint="if the file is damaged, read past it with on_corrupt='skip_file'",
            )

    # --- reading -----------------------------------------------------------------------------------
    @property
    def offset(self) -> int:
        """Stream offset of the next record's frame."""
        if self._cursor < len(self._starts):
            return self._base + self._starts[self._cursor] - HEADER
        return self._base + self._pos

    def buffered(self) -> int:
        """How many records are framed and verified already: the next ``next_chunk`` calls give that
        many without reading, and cannot fail."""
        return len(self._starts) - self._cursor

    def next_chunk(self, n: int) -> list[bytes]:
        """The next 1..n records; StopIteration at the end of the file, RecordError on damage."""
        cursor = self._cursor
        if cursor >= len(self._starts):
            self._fill()
            cursor = 0
        stop = min(cursor + n, len(self._starts))
        data = self._data
        records = [data[s:e] for s, e in zip(self._starts[cursor:stop], self._ends[cursor:stop])]
        self._cursor = stop
        self.record += stop - cursor
        return records

    def __iter__(self) -> RecordReader:
        return self

    def __next__(self) -> bytes:
        return self.next_chunk(1)[0]

    def chunks(self, n: int = 1024) -> Iterator[list[bytes]]:
        """Lists of up to ``n`` records until the end of the file (RecordError on damage)."""
        while True:
            try:
                yield self.next_chunk(n)
            except StopIteration:
                return

    def next_offsets(self) -> np.ndarray:
        """Frame offsets of the next records (consumed without building them), for indexing."""
        if self._cursor >= len(self._starts):
            self._fill()
        starts = np.asarray(self._starts[self._cursor :], dtype=np.int64) + (self._base - HEADER)
        self.record += len(starts)
        self._cursor = len(self._starts)
        return starts

    def skip(self, n: int) -> int:
        """Pass over up to ``n`` records (CRCs still verified); returns how many were skipped."""
        skipped = 0
        while skipped < n:
            if self._cursor >= len(self._starts):
                try:
                    self._fill()
                except StopIteration:
                    break
            take = min(n - skipped, len(self._starts) - self._cursor)
            self._cursor += take
            self.record += take
            skipped += take
        return skipped

    def seek(self, offset: int, record: int) -> None:
        """Continue at stream ``offset``, which must be a frame boundary, numbering it ``record``."""
        offset = int(offset)
        if not self.compression:
            cast(IO[bytes], self._raw).seek(offset)  # open from __init__ until close()
            self._reset_buffer(offset)
        else:
            if offset < self._base + self._pos or self._dead or self._stream_error is not None:
                self._open()  # compressed streams only go forward: start again
            self._discard_to(offset)
        self.record = int(record)

    def _discard_to(self, offset: int) -> None:
        data, base = self._data[self._pos :], self._base + self._pos
        while base + len(data) < offset:
            base += len(data)
            try:
                data = self._source.read(min(offset - base, _READ_STEP))
            except CompressedStreamError as exc:
                data, self._stream_error, self._source_done = b"", exc, True
            if not data:
                self._source_done = True
                break
        self._data = data
        self._view = np.frombuffer(data, dtype=np.uint8)
        self._base = base
        self._pos = min(offset - base, len(data))
        self._starts, self._ends, self._cursor = [], [], 0

    def resync(self) -> int | None:
        """After a length CRC mismatch, find the next intact frame by scanning forward.

        Returns the number of bytes passed over, or None when no intact frame follows (the reader is
        then at the end). A frame is accepted when its length CRC passes and, if it fits in the
        buffer, its data CRC too: a false match needs two 32-bit checksums to agree by chance.

        In a GZIP/ZLIB file nothing is scanned and None is returned: damaged framing there usually
        means the deflate decoder lost its place, and its output then holds exact copies of earlier
        records (back-references into the last 32 KiB), which a scan would deliver a second time.
        """
        if self.compression:
            self._pos = len(self._data)
            self._dead = True
            self.lost = self._unread()
            return None
        damaged = self._base + self._pos
        position = self._pos + 1
        while True:
            found = self._kernels.find_frame(self._view, position, len(self._data), self._max_length())
            if found >= 0:
                self._pos = found
                self._dead = False
                self.record += 1  # the damaged region counts as one record
                return self._base + found - damaged
            self._pos = max(position, len(self._data) - (HEADER - 1))
            if not self._read_more(len(self._data) - self._pos + 1):
                self._pos = len(self._data)
                self._dead = True
                return None
            position = 0

    def close(self) -> None:
        if self._raw is not None:
            self._raw.close()
            self._raw = None

    def __enter__(self) -> RecordReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def tf_record_iterator(path: Any, compression_type: str | None = None) -> Iterator[bytes]:
    """Every record of one file, in order (``tf.compat.v1.io.tf_record_iterator``).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "b.tfrecord")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(encode_record(b"x"))
    >>> list(tf_record_iterator(path))
    [b'x']
    """
    with RecordReader(path, compression_type) as reader:
        for chunk in reader.chunks():
            yield from chunk
