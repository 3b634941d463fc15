"""``Dataset.skip``: drop the first ``count`` elements (all when -1)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.args import integer, is_int
from ..core.errors import check
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Access, Context, Fields, Node, NodeIterator
from ..core.state import Bool, Child, Int
from .support.elementwise import ElementwiseIterator


class SkipNode(Node):
    """Skipping is a seek where the input supports it (range, tensor slices, indexed files), else a read."""

    op = "skip"
    fields = Fields("count")
    never_raises = True

    def __init__(self, parent: Node, count: int, name: str | None = None):
        count = integer(count)
        check(is_int(count), "count", count, "an int (negative: all)")
        super().__init__(parent)
        self.count = max(count, -1)  # tf.data reads any negative count as -1
        self.name = name

    def is_noop(self) -> bool:
        return self.count == 0

    def describe_args(self) -> str:
        return str(self.count)

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def random_access_length(self) -> int | None:
        n = self.parents[0].random_access_length()
        if n is None:
            return None
        return 0 if self.count == -1 else max(0, n - self.count)

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        return self.parents[0].elements_at(indices + self.count, access)

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        if n in (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY):
            return n  # as tf.data: skip(-1) of an infinite input never ends
        if self.count == -1:
            return 0
        return max(0, n - self.count)

    def iterator(self, ctx: Context) -> SkipIterator:
        return SkipIterator(self, self.parents[0].iterator(ctx))


class SkipIterator(ElementwiseIterator[SkipNode]):
    state_fields = (
        Child("parent"),
        Bool("skipped"),
        Int("dropped", high=lambda it, values: None if it.node.count == -1 else it.node.count),
    )

    limits = True

    def __init__(self, node: SkipNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.skipped = False
        self.dropped = 0  # dropped so far by a skip an upstream error interrupted (kept in the state)

    def _skip(self) -> None:
        count = self.node.count
        if count != -1 and self.parent.seek_forward(count - self.dropped) is not None:
            # an O(1) seek (range, tensor slices, indexed files, and stages that pass it on)
            self.skipped, self.dropped = True, 0
            return
        while count == -1 or self.dropped < count:
            try:
                self.dropped += len(
                    self.parent.next_chunk(1024 if count == -1 else min(count - self.dropped, 1024))
                )
            except StopIteration:
                break
        self.skipped, self.dropped = True, 0

    def wanted(self, n: int) -> int:
        if not self.skipped:
            self._skip()
        return n

    def seek_forward(self, n: int) -> int | None:
        if not self.skipped:
            self._skip()
        return self.parent.seek_forward(n)

    def restarted(self) -> None:
        self.skipped = False
        self.dropped = 0
