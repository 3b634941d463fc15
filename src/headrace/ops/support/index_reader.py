"""The iterator of ops that hand out a random-access input in a seeded order of their own, reading
each chunk by index (the input node's ``elements_at``): global_shuffle (a permutation of the
indices) and shuffle over a random-access input (a buffer of indices).

An op fills in :meth:`~RandomAccessIterator.indices`, the input indices of its next chunk, and
extends :meth:`~RandomAccessIterator.start_epoch` with its order's own values; this class reads the
chunks, counts ``position`` and ``produced`` and keeps the seed, the iteration and the epoch the
order derives from.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.node import Access, Context, NodeIterator, NodeT


class RandomAccessIterator(NodeIterator[NodeT]):
    """``next_chunk(n)``: the input's elements at ``indices(n)``, read in one ``elements_at`` call."""

    def __init__(self, node: NodeT, ctx: Context, seed: int, iteration: int):
        super().__init__(node)
        self.ctx = ctx
        self.parent_node = node.parents[0]
        length = self.parent_node.random_access_length()
        if length is None:  # never: the op's node checked it
            raise TypeError(f"{node!r}: its input {self.parent_node!r} cannot be read by index")
        self.length = length
        self.seed = seed
        self.iteration = iteration  # which iter() of the dataset this is
        self.start_epoch(0)

    def start_epoch(self, epoch: int) -> None:
        """Start epoch ``epoch``'s order (an op extends this with its own values)."""
        self.epoch = epoch
        self.access = Access(self.ctx, self.iteration, epoch)
        self.position = 0  # elements handed out this epoch: a chunk counts once it was read

    def next_chunk(self, n: int) -> list:
        indices = self.indices(n)
        out = self.parent_node.elements_at(indices, self.access)
        self.position += len(out)
        self.produced += len(out)
        return out

    def __next__(self) -> Any:
        return self.next_chunk(1)[0]

    def indices(self, n: int) -> np.ndarray:
        """The input indices of the next 1..``n`` elements (int64); StopIteration at the end of the
        epoch."""
        raise NotImplementedError
