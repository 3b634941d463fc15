"""``Dataset.global_shuffle``: a uniformly shuffled order of a random-access dataset, O(1) memory."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.args import boolean, integer, is_int
from ..core.errors import InvalidArgumentError, check
from ..core.node import Context, Fields, Node, fresh_seed, resolve_seed
from ..core.state import Int, Seed
from .support.index_reader import RandomAccessIterator
from .support.permutation import IndexPermutation

_READ_AHEAD = 64  # elements read per random-access call on the single-element path
_INDEX_BLOCK = 8192  # shuffled positions mapped to indices per permutation call


class GlobalShuffleNode(Node):
    """``global_shuffle(seed=None, reshuffle_each_iteration=True)`` (tf.data's name).

    Every epoch visits all elements once in the order of a seeded bijection of the indices (see
    ``ops.support.permutation``): no buffer, no permutation table, and a checkpoint is three integers.
    The input must support random access: range, from_tensor_slices, indexed TFRecord files, and
    map/take/skip/batch/zip/concatenate/enumerate/repeat(count) over them.
    """

    op = "global_shuffle"
    fields = Fields("seed", "reshuffle_each_iteration", resources=("fallback_seed",))
    reorders = True

    def __init__(
        self,
        parent: Node,
        seed: int | None = None,
        reshuffle_each_iteration: bool = True,
        name: str | None = None,
    ):
        seed, reshuffle_each_iteration = integer(seed), boolean(reshuffle_each_iteration)
        check(
            seed is None or is_int(seed, low=0),
            "seed",
            seed,
            "None or an int >= 0",
        )
        check(
            isinstance(reshuffle_each_iteration, bool),
            "reshuffle_each_iteration",
            reshuffle_each_iteration,
            "True or False",
        )
        culprit = parent.not_random_access()
        if culprit is not None:
            raise InvalidArgumentError(
                f"global_shuffle needs an input whose elements can be read by index, but {culprit!r} cannot "
                "(its output depends on earlier elements). Move global_shuffle before that stage, or use "
                "shuffle(buffer_size) with interleaved files (see the README's shuffling recipe)."
            )
        super().__init__(parent)
        self.seed = seed
        self.reshuffle_each_iteration = reshuffle_each_iteration
        self.fallback_seed = fresh_seed()
        self.name = name

    def describe_args(self) -> str:
        return f"seed={self.seed}"

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def cardinality(self) -> int:
        return self.parents[0].cardinality()

    def random_access_length(self) -> int | None:
        return None  # a shuffled order has no stable index across epochs

    def iterator(self, ctx: Context) -> GlobalShuffleIterator:
        iteration = ctx.iteration_of(self) if self.reshuffle_each_iteration else 0
        return GlobalShuffleIterator(
            self, ctx, resolve_seed(self.seed, ctx, self, self.fallback_seed), iteration
        )


class GlobalShuffleIterator(RandomAccessIterator[GlobalShuffleNode]):
    state_fields = (
        Seed("seed"),
        Int("iteration"),
        Int("epoch"),
        Int("position", high=lambda it, values: it.length),
    )

    def start_epoch(self, epoch: int) -> None:
        super().start_epoch(epoch)  # position: index in the shuffled order of the next element
        self._permutation = IndexPermutation(self.length, [self.seed, self.iteration, epoch])
        self._ahead: list = []  # elements read ahead; recomputable, so never part of the state
        self._ahead_start = 0
        self._index_block = np.empty(0, np.int64)  # permuted indices of positions [start, start + len)
        self._index_start = 0

    def _permuted(self, start: int, count: int) -> np.ndarray:
        # The permutation costs ~40 numpy calls however many indices it maps, so map a block at a time.
        block = self._index_block
        if not (self._index_start <= start and start + count <= self._index_start + len(block)):
            size = max(count, _INDEX_BLOCK)
            stop = min(self.length, start + size)
            block = self._index_block = self._permutation(np.arange(start, stop, dtype=np.int64))
            self._index_start = start
        return block[start - self._index_start : start - self._index_start + count]

    def __next__(self) -> Any:
        offset = self.position - self._ahead_start
        if not 0 <= offset < len(self._ahead):
            self._ahead = self.parent_node.elements_at(self.indices(_READ_AHEAD), self.access)
            self._ahead_start, offset = self.position, 0
        self.position += 1
        self.produced += 1
        return self._ahead[offset]

    def indices(self, n: int) -> np.ndarray:
        count = min(n, self.length - self.position)
        if count <= 0:
            raise StopIteration
        return self._permuted(self.position, count)  # a failed read is tried again

    def seek_forward(self, n: int) -> int:
        count = max(0, min(n, self.length - self.position))
        self.position += count
        return count

    def reset(self) -> None:
        self.start_epoch(self.epoch + 1 if self.node.reshuffle_each_iteration else self.epoch)

    def restored(self) -> None:
        position = self.position
        self.start_epoch(self.epoch)
        self.position = position
