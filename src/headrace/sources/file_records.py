"""The shared base of the sources that read one file as a sequence of records (text lines, fixed
length records, CSV rows): opening (local or fsspec, GZIP/ZLIB), counting, checkpoints.

Several files are read by the facade as ``from_tensor_slices(files).flat_map(...)`` (or
``interleave`` for ``num_parallel_reads``), so each node reads exactly one file. A checkpoint is the
number of records read; restoring re-reads the file up to there (records are not fixed in size, and
compressed streams cannot seek).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from ..core.args import integer, is_int
from ..core.errors import CheckpointError, check, pattern_hint
from ..core.node import Context, Fields, Node, NodeIterator
from ..core.state import Int
from ..io.records.compression import DecompressingReader, normalize_compression
from ..io.storage.fs import as_path, check_storage_options, open_file

READ_SIZE = 1 << 16


class ByteStream(Protocol):
    """What record readers need of an open file: ``read(n)`` (a file, or a decompressing reader)."""

    def read(self, n: int, /) -> bytes: ...


def split_lines(stream: ByteStream, keep_ends: bool = False, size: int = READ_SIZE) -> Iterator[bytes]:
    """The lines of a binary stream, split on ``\\n``. Without ``keep_ends`` the ``\\n`` goes, and so
    does every ``\\r`` (tf.data's TextLineDataset drops them wherever they are). A last line without
    ``\\n`` is yielded; a final ``\\n`` makes no empty line.

    >>> import io
    >>> list(split_lines(io.BytesIO(b"a\\r\\nb\\n\\nc\\rd")))
    [b'a', b'b', b'', b'cd']
    """
    pending = b""
    while True:
        chunk = stream.read(size)
        if not chunk:
            break
        if not keep_ends and b"\r" in chunk:
            chunk = chunk.replace(b"\r", b"")
        pending += chunk
        lines = pending.split(b"\n")
        pending = lines.pop()
        for line in lines:
            yield line + b"\n" if keep_ends else line
    if pending:
        yield pending


class FileRecordsNode(Node):
    """One file's records; subclasses set ``op`` and implement ``records(stream)``."""

    op = "file_records"
    fields = Fields("path", "compression", "buffer_size", resources=("storage_options",))

    def __init__(
        self,
        filename: Any,
        compression_type: str | None = None,
        buffer_size: int | None = None,
        storage_options: dict | None = None,
    ):
        buffer_size = integer(buffer_size)
        check(
            buffer_size is None or is_int(buffer_size, low=0),
            "buffer_size",
            buffer_size,
            "None or an int >= 0 (bytes)",
        )
        super().__init__()
        self.path = as_path(filename, "filenames")
        self.compression = normalize_compression(compression_type)
        self.buffer_size = buffer_size or READ_SIZE
        self.storage_options = check_storage_options(storage_options, self.op)

    def describe_args(self) -> str:
        extra = f", {self.compression}" if self.compression else ""
        return f"{self.path!r}{extra}"

    def records(self, stream: ByteStream) -> Iterator[Any]:
        raise NotImplementedError

    def open(self) -> ByteStream:
        try:
            raw = open_file(self.path, "rb", self.storage_options)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"{self.op}: no such file {self.path!r}{pattern_hint(self.path)}"
            ) from None
        return DecompressingReader(raw, self.compression) if self.compression else raw

    def iterator(self, ctx: Context) -> FileRecordsIterator:
        return FileRecordsIterator(self)


class FileRecordsIterator(NodeIterator[FileRecordsNode]):
    state_fields = (Int("records"),)

    def __init__(self, node: FileRecordsNode):
        super().__init__(node)
        self.records = 0  # records yielded so far this epoch
        self._stream: Any = None
        self._raw: Any = None
        self._records: Iterator[Any] | None = None

    def _open(self) -> Iterator[Any]:
        stream = self.node.open()
        self._raw = getattr(stream, "raw", stream)
        self._stream = stream
        records = self._records = self.node.records(stream)
        for _ in range(self.records):  # after a restore: read up to where the checkpoint was
            if next(records, _END) is _END:
                raise CheckpointError(
                    f"{self.name}: the checkpoint is at record {self.records} but the file has fewer; "
                    "was it changed since?"
                )
        return records

    def next_chunk(self, n: int) -> list:
        records = self._records if self._records is not None else self._open()
        out = []
        for _ in range(n):
            record = next(records, _END)
            if record is _END:
                break
            out.append(record)
        if not out:
            self._close_file()
            self._records = iter(())
            raise StopIteration
        self.records += len(out)
        self.produced += len(out)
        return out

    def __next__(self):
        return self.next_chunk(1)[0]

    def _close_file(self) -> None:
        for handle in (self._stream, self._raw):
            close = getattr(handle, "close", None)
            if close is not None:
                close()
        self._stream = self._raw = None

    def reset(self) -> None:
        self._close_file()
        self._records = None
        self.records = 0

    def close(self) -> None:
        self._close_file()
        super().close()

    def restored(self) -> None:
        records = self.records
        self.reset()
        self.records = records


_END = object()
