"""``Dataset.enumerate``: pair each element with its int64 index, ``(index, element)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import check
from ..core.node import Access, Context, Fields, Node, NodeIterator
from ..core.spec import TensorSpec
from ..core.state import Child, Int

_INT64_MAX = int(np.iinfo(np.int64).max)


class EnumerateNode(Node):
    """``enumerate(start=0)``: yields ``(np.int64(start + i), element_i)``.

    The cardinality is the input's (tf.data builds this as a zip with a huge range, which gives the
    same numbers).
    """

    op = "enumerate"
    fields = Fields("start")
    never_raises = True

    def __init__(self, parent: Node, start: int = 0, name: str | None = None):
        check(
            isinstance(start, (int, np.integer))
            and not isinstance(start, bool)
            and -_INT64_MAX - 1 <= int(start) <= _INT64_MAX,
            "start",
            start,
            "an int in the int64 range",
        )
        super().__init__(parent)
        self.start = int(start)
        self.name = name

    def describe_args(self) -> str:
        return f"start={self.start}"

    def compute_element_spec(self) -> Any:
        return (TensorSpec((), np.int64), self.parents[0].element_spec)

    def cardinality(self) -> int:
        return self.parents[0].cardinality()

    def random_access_length(self) -> int | None:
        return self.parents[0].random_access_length()

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        numbers = np.asarray(indices, dtype=np.int64) + np.int64(self.start)
        return list(zip(numbers, self.parents[0].elements_at(indices, access)))

    def iterator(self, ctx: Context) -> EnumerateIterator:
        return EnumerateIterator(self, self.parents[0].iterator(ctx))


class EnumerateIterator(NodeIterator[EnumerateNode]):
    state_fields = (Child("parent"), Int("index", high=2**62))  # index is added to start in int64

    def __init__(self, node: EnumerateNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.index = 0  # elements enumerated in this epoch
        # As tf.data (enumerate is zip(range, input) there): an input element that fails uses up its
        # index, so indices stay the input's positions under ignore_errors. Chunks from an input
        # that may fail cannot say which element did, so those are enumerated one by one.
        self.chunked = node.parents[0].cannot_fail()

    def __next__(self) -> Any:
        try:
            element = next(self.parent)
        except StopIteration:
            raise
        except Exception:
            self.index += 1
            raise
        value = np.int64(self.node.start + self.index)
        self.index += 1
        self.produced += 1
        return (value, element)

    def next_chunk(self, n: int) -> list:
        if not self.chunked:
            return super().next_chunk(n)
        chunk = self.parent.next_chunk(n)
        first = self.node.start + self.index
        indices = np.arange(first, first + len(chunk), dtype=np.int64)
        self.index += len(chunk)
        self.produced += len(chunk)
        return list(zip(indices, chunk))

    def seek_forward(self, n: int) -> int | None:
        skipped = self.parent.seek_forward(n)
        if skipped is not None:
            self.index += skipped
        return skipped

    def reset(self) -> None:
        self.parent.reset()
        self.index = 0
