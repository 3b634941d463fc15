"""The iterator shared by ``batch`` and ``padded_batch``: gather ``batch_size`` elements, combine them.

An upstream error in the middle of a batch keeps the elements gathered so far; the next call completes
the batch, so an error costs only the failing element (tf.data drops the whole partial batch). Those
elements are part of the checkpoint. Subclasses say how elements become one batch (``combine``).
"""

from __future__ import annotations

from typing import Any

from ...core.node import Node, NodeIterator
from ...core.state import INPUT, Child, Int, Owed


class BatchingIterator(NodeIterator):
    """Needs ``node.batch_size`` and ``node.drop_remainder``; subclasses implement ``combine``."""

    # owed: the elements gathered for the next batch when an error upstream interrupted it
    state_fields = (
        Child("parent"),
        Int("batches", "produced"),
        Owed(max_length=lambda it, values: it.node.batch_size - 1),
    )

    def __init__(self, node: Node, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent

    def combine(self, elements: list) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        size = self.node.batch_size
        elements = []
        if self.owed:
            elements = [value for _, _, value in self.owed]
            self.owed.clear()
        try:
            while len(elements) < size:
                elements.extend(self.parent.next_chunk(size - len(elements)))
        except StopIteration:
            pass
        except BaseException:
            self.owed.extend((i, INPUT, e) for i, e in enumerate(elements))
            raise
        if not elements or (self.node.drop_remainder and len(elements) < size):
            raise StopIteration
        out = self.combine(elements)
        self.produced += 1
        return out

    def seek_forward(self, n: int) -> int | None:
        if self.owed:
            return None
        size = self.node.batch_size
        skipped = self.parent.seek_forward(n * size)
        if skipped is None:
            return None
        batches = skipped // size + (1 if skipped % size and not self.node.drop_remainder else 0)
        self.produced += batches
        return batches

    def reset(self) -> None:
        self.parent.reset()
