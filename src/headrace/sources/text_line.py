"""``TextLineDataset``: the lines of a text file, as bytes without their line ending."""

from __future__ import annotations

from collections.abc import Iterator

from ..core.spec import TensorSpec, string
from .file_records import ByteStream, FileRecordsNode, split_lines


class TextLineNode(FileRecordsNode):
    """One file's lines (``\\n`` or ``\\r\\n`` removed), as tf.data's ``TextLineDataset``."""

    op = "text_line"

    def compute_element_spec(self) -> TensorSpec:
        return TensorSpec((), string)

    def records(self, stream: ByteStream) -> Iterator[bytes]:
        return split_lines(stream, size=self.buffer_size)
