"""The iterator shared by ``ragged_batch`` and ``sparse_batch``: gather up to ``batch_size`` rows, then
build one batch of rows whose shapes may differ.

Rows gathered before an upstream error stay for the next call, so an error costs only the failing
element; a batch whose rows cannot be combined raises once and is dropped, as in tf.data. Gathered rows
are part of the checkpoint (``rows``), with the elements taken so far (``position``,
which numbers rows in errors) and whether the input ended.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from ...core.node import Node, NodeIterator
from ...core.state import Bool, Child, Elements, Int

N = TypeVar("N", bound=Node)


class RowBatchIterator(NodeIterator[N], Generic[N]):
    """Needs ``node.batch_size``; subclasses implement ``combine(rows, first)`` (``first``: the
    position of the first row in the input) and may set ``drop_remainder``."""

    state_fields = (
        Child("parent"),
        Elements("rows", max_length=lambda it, values: it.node.batch_size - 1),
        Int("position"),
        Bool("ended"),
    )

    def __init__(self, node: N, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.rows: list = []  # elements of the batch being gathered (kept across a parent's error)
        self.position = 0  # elements taken from the parent
        self.ended = False

    @property
    def drop_remainder(self) -> bool:
        return False

    def combine(self, rows: list, first: int) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        size: int = self.node.batch_size  # type: ignore[attr-defined]  # both users' nodes have it
        while not self.ended and len(self.rows) < size:
            try:
                chunk = self.parent.next_chunk(size - len(self.rows))
            except StopIteration:
                self.ended = True
                break
            self.rows.extend(chunk)
            self.position += len(chunk)
        rows = self.rows
        if not rows or (self.drop_remainder and len(rows) < size):
            raise StopIteration
        # The rows are handed over before combining: a batch that cannot be built (rows whose shapes
        # do not fit) raises once, naming its elements, and the next call goes on with the next rows;
        # kept, it would raise forever (and hang ignore_errors).
        self.rows = []
        out = self.combine(rows, self.position - len(rows))
        self.produced += 1
        return out

    def reset(self) -> None:
        self.parent.reset()
        self.rows, self.position, self.ended = [], 0, False
