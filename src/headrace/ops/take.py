"""``Dataset.take``: at most ``count`` elements (all when -1)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.args import integer, is_int
from ..core.errors import check
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Access, Context, Fields, Node
from ..core.state import Child, Int
from .support.elementwise import ElementwiseIterator


class TakeNode(Node):
    op = "take"
    fields = Fields("count")
    never_raises = True

    def __init__(self, parent: Node, count: int, name: str | None = None):
        count = integer(count)
        check(is_int(count), "count", count, "an int (negative: all)")
        super().__init__(parent)
        self.count = max(count, -1)  # tf.data reads any negative count as -1
        self.name = name

    def is_noop(self) -> bool:
        return self.count == -1

    def describe_args(self) -> str:
        return str(self.count)

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def random_access_length(self) -> int | None:
        n = self.parents[0].random_access_length()
        if n is None:
            return None
        return n if self.count == -1 else min(n, self.count)

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        return self.parents[0].elements_at(indices, access)

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        if self.count == -1:
            return n
        if n == INFINITE_CARDINALITY:
            return self.count
        if n == UNKNOWN_CARDINALITY:
            return UNKNOWN_CARDINALITY
        return min(n, self.count)

    def iterator(self, ctx: Context) -> TakeIterator:
        return TakeIterator(self, self.parents[0].iterator(ctx))


class TakeIterator(ElementwiseIterator[TakeNode]):
    state_fields = (
        Child("parent"),
        Int("taken", "position", high=lambda it, values: None if it.node.count == -1 else it.node.count),
    )
    limits = True

    def wanted(self, n: int) -> int:
        count = self.node.count
        if count != -1:
            n = min(n, count - self.position)
            if n <= 0:
                raise StopIteration
        return n

    def seek_forward(self, n: int) -> int | None:
        if self.node.count != -1:
            n = max(0, min(n, self.node.count - self.position))
        skipped = self.parent.seek_forward(n)
        if skipped is not None:
            self.position += skipped
            self.produced += skipped
        return skipped

    def restored(self) -> None:
        self.produced = self.position
