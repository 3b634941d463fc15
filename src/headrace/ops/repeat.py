"""``Dataset.repeat``: run the input for ``count`` epochs (forever when None or -1)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.args import integer, is_int
from ..core.errors import check
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Access, Context, Fields, Node, NodeIterator
from ..core.state import Child, Int
from .support.elementwise import ElementwiseIterator


class RepeatNode(Node):
    """Each new epoch rewinds the input with ``reset()``, so shuffles reshuffle as in tf.data. An input
    that yields nothing in an epoch ends the repeat instead of spinning forever."""

    op = "repeat"
    fields = Fields("count")
    never_raises = True

    def __init__(self, parent: Node, count: int | None = None, name: str | None = None):
        count = integer(count)
        check(
            count is None or is_int(count),
            "count",
            count,
            "None or an int (negative: forever)",
        )
        super().__init__(parent)
        self.count = -1 if count is None else max(count, -1)  # tf.data reads any negative count as -1
        self.name = name

    def is_noop(self) -> bool:
        return self.count == 1

    def describe_args(self) -> str:
        return "" if self.count == -1 else str(self.count)

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def random_access_length(self) -> int | None:
        n = self.parents[0].random_access_length()
        if n is None or self.count == -1:
            return None  # an endless repeat has no index space to shuffle
        return n * self.count

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        # Each repetition is an epoch of the input: seeded stages see the epoch they would see in a
        # sequential pass.
        n = self.parents[0].random_access_length()
        if n is None:
            raise NotImplementedError(f"{self!r} cannot read elements by index")
        indices = np.asarray(indices, dtype=np.int64)
        epochs, offsets = np.divmod(indices, n)
        out: list = [None] * len(indices)
        for epoch in np.unique(epochs).tolist():
            where = np.flatnonzero(epochs == epoch)
            elements = self.parents[0].elements_at(
                offsets[where], Access(access.ctx, access.iteration, access.epoch + epoch)
            )
            for slot, element in zip(where.tolist(), elements):
                out[slot] = element
        return out

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        if self.count == 0 or n == 0:
            return 0
        if self.count == -1:
            return INFINITE_CARDINALITY  # as tf.data, even for an input of unknown size
        if n in (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY):
            return n
        return n * self.count

    def iterator(self, ctx: Context) -> RepeatIterator:
        return RepeatIterator(self, self.parents[0].iterator(ctx))


class RepeatIterator(ElementwiseIterator[RepeatNode]):
    state_fields = (
        Child("parent"),
        Int("epoch", high=lambda it, values: None if it.node.count == -1 else it.node.count),
        Int("in_epoch", "position"),
    )
    limits = True

    def __init__(self, node: RepeatNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.epoch = 0  # position: elements yielded in the current epoch

    def wanted(self, n: int) -> int:
        if self.node.count != -1 and self.epoch >= self.node.count:
            raise StopIteration
        return n

    def input_ended(self) -> bool:
        """The next epoch starts, unless this one was empty (stop rather than loop forever) or the last."""
        count = self.node.count
        if self.position:
            self.epoch += 1
            self.position = 0
            if count == -1 or self.epoch < count:
                self.parent.reset()
                return True
        if count != -1:
            self.epoch = count  # stays finished on later calls
        return False

    def restarted(self) -> None:
        self.epoch = 0
