"""The iterator shared by ``batch`` and ``padded_batch``: gather ``batch_size`` elements, combine them.

An upstream error in the middle of a batch keeps the elements gathered so far; the next call completes
the batch, so an error costs only the failing element (tf.data drops the whole partial batch). Those
elements are part of the checkpoint. Subclasses say how elements become one batch (``combine``).
"""

from __future__ import annotations

from typing import Any

from ...core.node import Node, NodeIterator
from ...core.state import encode_element


class BatchingIterator(NodeIterator):
    """Needs ``node.batch_size`` and ``node.drop_remainder``; subclasses implement ``combine``."""

    state_keys = ("parent", "batches", "partial")

    def __init__(self, node: Node, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.partial: list = []

    def combine(self, elements: list) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        size = self.node.batch_size
        elements, self.partial = self.partial, []
        try:
            while len(elements) < size:
                elements.extend(self.parent.next_chunk(size - len(elements)))
        except StopIteration:
            pass
        except BaseException:
            self.partial = elements
            raise
        if not elements or (self.node.drop_remainder and len(elements) < size):
            raise StopIteration
        out = self.combine(elements)
        self.produced += 1
        return out

    def seek_forward(self, n: int) -> int | None:
        if self.partial:
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
        self.partial = []

    def get_state(self) -> dict:
        return {
            "parent": self.parent.get_state(),
            "batches": self.produced,
            "partial": [encode_element(e) for e in self.partial],
        }

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        batches = fields.int("batches")
        partial = fields.elements("partial", max_length=self.node.batch_size - 1)
        self.parent.set_state(fields.dict("parent"))
        self.produced, self.partial = batches, partial
