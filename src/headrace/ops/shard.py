"""``Dataset.shard``: every ``num_shards``-th element, starting at ``index``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.args import integer, is_int
from ..core.errors import InvalidArgumentError
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Access, Context, Fields, Node, NodeIterator
from .support.elementwise import ElementwiseIterator

# From this many shards on, gaps are skipped with the input's seek_forward when it can (range, tensor
# slices, indexed files) instead of reading and dropping them.
_SEEK_FROM = 8
_READ_AT_MOST = 4096  # input elements read per parent call when dropping gaps by reading


def _is_int(value: Any) -> bool:
    return is_int(value)


class ShardNode(Node):
    """``shard(num_shards, index)``: keeps input element ``i`` when ``i % num_shards == index``.

    Nothing past the last kept element is read, so the state stays exact.
    """

    op = "shard"
    fields = Fields("num_shards", "index")
    never_raises = True

    def __init__(self, parent: Node, num_shards: int, index: int, name: str | None = None):
        num_shards, index = integer(num_shards), integer(index)
        if not _is_int(num_shards) or num_shards < 1:
            raise InvalidArgumentError(f"num_shards={num_shards!r} is not allowed: a positive int")
        if not _is_int(index) or not 0 <= index < num_shards:
            raise InvalidArgumentError(
                f"index={index!r} is not allowed: an int from 0 to num_shards - 1 = {num_shards - 1}"
            )
        super().__init__(parent)
        self.num_shards = num_shards
        self.index = index
        self.name = name

    def is_noop(self) -> bool:
        return self.num_shards == 1

    def describe_args(self) -> str:
        return f"{self.num_shards}, {self.index}"

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        if n in (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY):
            return n
        return n // self.num_shards + (1 if self.index < n % self.num_shards else 0)

    def random_access_length(self) -> int | None:
        n = self.parents[0].random_access_length()
        return None if n is None else n // self.num_shards + (1 if self.index < n % self.num_shards else 0)

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        return self.parents[0].elements_at(
            self.index + np.asarray(indices, np.int64) * self.num_shards, access
        )

    def iterator(self, ctx: Context) -> ShardIterator:
        return ShardIterator(self, self.parents[0].iterator(ctx))


class ShardIterator(ElementwiseIterator[ShardNode]):
    """Pulls up to the last element still wanted (never past it, so the state stays exact) and keeps
    every ``num_shards``-th; with many shards, skips the gaps with the input's ``seek_forward``."""

    limits = True

    def __init__(self, node: ShardNode, parent: NodeIterator):
        super().__init__(node, parent)
        self._seeking = node.num_shards >= _SEEK_FROM

    def wanted(self, n: int) -> int:
        shards = self.node.num_shards
        gap = (self.node.index - self.position) % shards
        if self._seeking and gap:
            skipped = self.parent.seek_forward(gap)
            if skipped is None:  # the input cannot seek: read and drop from now on
                self._seeking = False
            else:
                self.position += skipped
                if skipped < gap:
                    raise StopIteration  # the input ended inside the gap
                gap = 0
        if self._seeking:
            return 1  # the next element is this shard's: one at a time, the gaps are skipped
        # Up to the last element still wanted, never past it; bounded, since dropped elements need
        # not be held.
        return min(gap + (n - 1) * shards + 1, _READ_AT_MOST)

    def compute(self, inputs: list, first: int) -> list:
        return inputs[(self.node.index - first) % self.node.num_shards :: self.node.num_shards]

    def seek_forward(self, n: int) -> int | None:
        if self.owed:
            return None  # rare (after an error): let the caller read instead
        if n <= 0:
            return 0
        shards = self.node.num_shards
        gap = (self.node.index - self.position) % shards
        read = self.parent.seek_forward(gap + (n - 1) * shards + 1)
        if read is None:
            return None
        self.position += read
        return 0 if read <= gap else (read - gap - 1) // shards + 1
