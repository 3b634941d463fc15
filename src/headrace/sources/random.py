"""``Dataset.random``: an endless stream of random non-negative int64 values."""

from __future__ import annotations

import numpy as np

from ..core.args import boolean, integer, is_seed
from ..core.errors import check
from ..core.node import INFINITE_CARDINALITY, Context, Fields, Node, NodeIterator, fresh_seed, resolve_seed
from ..core.spec import TensorSpec
from ..core.state import Int


class RandomNode(Node):
    """``random(seed=None, rerandomize_each_iteration=None)``: int64 values uniform in ``[0, 2**32)``,
    tf.data's range (its generator yields 32-bit numbers).

    With ``rerandomize_each_iteration`` False or None (the default, as tf.data) every iteration of the
    dataset yields the same sequence; True gives each a new one (reproducible from ``seed``). The
    values are not tf.data's (its generator is Philox inside TensorFlow): a deliberate difference.
    Checkpoints are a count: restoring jumps the generator ahead in O(1).
    """

    op = "random"
    fields = Fields("seed", "rerandomize", resources=("fallback_seed",))

    def __init__(self, seed: int | None = None, rerandomize_each_iteration: bool | None = None):
        seed, rerandomize_each_iteration = integer(seed), boolean(rerandomize_each_iteration)
        check(
            is_seed(seed),
            "seed",
            seed,
            "None or an int in [0, 2**63)",
        )
        check(
            rerandomize_each_iteration in (None, True, False),
            "rerandomize_each_iteration",
            rerandomize_each_iteration,
            "None, True or False",
        )
        super().__init__()
        self.seed = seed
        self.rerandomize = bool(rerandomize_each_iteration)
        self.fallback_seed = fresh_seed()

    def describe_args(self) -> str:
        return f"seed={self.seed}, rerandomize_each_iteration={self.rerandomize}"

    def compute_element_spec(self) -> TensorSpec:
        return TensorSpec((), np.int64)

    def cardinality(self) -> int:
        return INFINITE_CARDINALITY

    def iterator(self, ctx: Context) -> RandomIterator:
        iteration = ctx.iteration_of(self) if self.rerandomize else 0
        return RandomIterator(self, resolve_seed(self.seed, ctx, self, self.fallback_seed), iteration)


class RandomIterator(NodeIterator[RandomNode]):
    state_fields = (Int("epoch"), Int("index"))

    def __init__(self, node: RandomNode, seed: int, iteration: int):
        super().__init__(node)
        self.seed, self.iteration = seed, iteration
        self._start(0, 0)

    def _start(self, epoch: int, index: int) -> None:
        self.epoch, self.index = epoch, index
        key = [self.seed, self.iteration, epoch] if self.node.rerandomize else [self.seed]
        self.generator = np.random.PCG64(np.random.SeedSequence(key))
        self.generator.advance(index)  # one 64-bit draw per element, so a count is a position

    def next_chunk(self, n: int) -> list:
        raw = self.generator.random_raw(n)
        self.index += n
        self.produced += n
        return list((raw >> np.uint64(32)).astype(np.int64))

    def __next__(self):
        return self.next_chunk(1)[0]

    def reset(self) -> None:
        self._start(self.epoch + 1 if self.node.rerandomize else self.epoch, 0)

    def seek_forward(self, n: int) -> int:
        self.generator.advance(n)
        self.index += n
        return n

    def restored(self) -> None:
        self._start(self.epoch, self.index)
