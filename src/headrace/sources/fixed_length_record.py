"""``FixedLengthRecordDataset``: a file cut into records of one size, after a header, before a footer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core.args import integer, is_int
from ..core.errors import DataLossError, check
from ..core.node import Fields
from ..core.spec import TensorSpec, string
from .file_records import ByteStream, FileRecordsNode


def _size(value: Any) -> bool:
    return is_int(value, low=0)


class FixedLengthRecordNode(FileRecordsNode):
    """One file's records of ``record_bytes`` bytes each, between ``header_bytes`` and ``footer_bytes``.

    A body that is not a whole number of records raises ``DataLossError`` naming the file and the
    sizes (tf.data refuses it too), when the end of the file is reached.
    """

    op = "fixed_length_record"
    fields = Fields("record_bytes", "header_bytes", "footer_bytes")

    def __init__(
        self,
        filename: Any,
        record_bytes: int,
        header_bytes: int | None = None,
        footer_bytes: int | None = None,
        buffer_size: int | None = None,
        compression_type: str | None = None,
        storage_options: dict | None = None,
    ):
        record_bytes, header_bytes, footer_bytes = (
            integer(record_bytes),
            integer(header_bytes),
            integer(footer_bytes),
        )
        check(_size(record_bytes) and record_bytes > 0, "record_bytes", record_bytes, "a positive int")
        for argument, value in (("header_bytes", header_bytes), ("footer_bytes", footer_bytes)):
            check(value is None or _size(value), argument, value, "None or an int >= 0")
        super().__init__(filename, compression_type, buffer_size, storage_options)
        self.record_bytes = record_bytes
        self.header_bytes = header_bytes or 0
        self.footer_bytes = footer_bytes or 0

    def describe_args(self) -> str:
        return (
            f"{super().describe_args()}, record_bytes={self.record_bytes}, header_bytes={self.header_bytes}, "
            f"footer_bytes={self.footer_bytes}"
        )

    def compute_element_spec(self) -> TensorSpec:
        return TensorSpec((), string)

    def records(self, stream: ByteStream) -> Iterator[bytes]:
        size, header, footer = self.record_bytes, self.header_bytes, self.footer_bytes
        pending = b""
        skipped = 0
        while skipped < header:
            chunk = stream.read(header - skipped)
            if not chunk:
                break
            skipped += len(chunk)
        block = max(self.buffer_size, size + footer)
        ended = False
        while not ended:
            chunk = stream.read(block)
            ended = not chunk
            pending += chunk
            # Keep the footer's bytes back: they are only known to be the footer at the end.
            whole = (len(pending) - footer) // size if len(pending) > footer else 0
            for k in range(whole):
                yield pending[k * size : (k + 1) * size]
            pending = pending[whole * size :]
        body = len(pending) - footer
        if skipped < header or body != 0:
            raise DataLossError(
                f"{self.op}: {self.path!r} has a body (after the {header}-byte header, before the "
                f"{footer}-byte footer) that is not a whole number of {size}-byte records: "
                f"{max(body, 0)} bytes are left over at the end; check record_bytes, header_bytes and footer_bytes"
            )
