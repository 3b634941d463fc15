"""``Dataset.range``: arithmetic progressions of int64 scalars."""

from __future__ import annotations

import numpy as np

from ..core.args import integer
from ..core.errors import InvalidArgumentError
from ..core.node import Context, Fields, Node, NodeIterator
from ..core.spec import TensorSpec, as_dtype
from ..core.state import Int


class RangeNode(Node):
    """``range([start,] stop[, step])`` like Python's, yielding numpy scalars of ``output_type``."""

    op = "range"
    fields = Fields("start", "stop", "step", "output_type", "length")
    never_raises = True

    def __init__(self, *args: int, output_type=np.int64):
        args = tuple(integer(arg) for arg in args)
        if not 1 <= len(args) <= 3:
            raise InvalidArgumentError(
                f"range takes 1 to 3 positional arguments (stop, or start, stop[, step]), got {len(args)}"
            )
        for arg in args:
            if not isinstance(arg, (int, np.integer)) or isinstance(arg, bool):
                raise InvalidArgumentError(f"range arguments must be ints, got {arg!r}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        if step == 0:
            raise InvalidArgumentError("range step=0 is not allowed: use a non-zero step")
        super().__init__()
        self.start, self.stop, self.step = int(start), int(stop), int(step)
        self.output_type = as_dtype(output_type)
        self.length = len(range(self.start, self.stop, self.step))

    def describe_args(self) -> str:
        return f"{self.start}, {self.stop}, {self.step}"

    def compute_element_spec(self):
        return TensorSpec((), self.output_type)

    def cardinality(self) -> int:
        return self.length

    def random_access_length(self) -> int:
        return self.length

    def elements_at(self, indices, access) -> list:
        return list((self.start + np.asarray(indices, dtype=np.int64) * self.step).astype(self.output_type))

    def iterator(self, ctx: Context) -> RangeIterator:
        return RangeIterator(self)


class RangeIterator(NodeIterator[RangeNode]):
    state_fields = (Int("index", high=lambda it, values: it.node.length),)
    _BLOCK = 512  # values made by one np.arange call; serving from a list costs ~40 ns per element

    def __init__(self, node: RangeNode):
        super().__init__(node)
        self.index = 0
        self._block: list = []
        self._block_start = 0  # index of _block[0]

    def __next__(self):
        offset = self.index - self._block_start
        block = self._block
        if not 0 <= offset < len(block):  # also after a reset or restore to an earlier index
            if self.index >= self.node.length:
                raise StopIteration
            self._refill()
            block, offset = self._block, 0
        self.index += 1
        self.produced += 1
        return block[offset]

    def _refill(self) -> None:
        node = self.node
        count = min(self._BLOCK, node.length - self.index)
        first = node.start + self.index * node.step
        self._block = list(np.arange(first, first + count * node.step, node.step, dtype=node.output_type))
        self._block_start = self.index

    def next_chunk(self, n: int) -> list:
        node = self.node
        count = min(n, node.length - self.index)
        if count <= 0:
            raise StopIteration
        first = node.start + self.index * node.step
        values = list(np.arange(first, first + count * node.step, node.step, dtype=node.output_type))
        self.index += count
        self.produced += count
        return values

    def reset(self) -> None:
        self.index = 0
        self._block = []

    def restored(self) -> None:
        self._block = []

    def seek_forward(self, n: int) -> int:
        """O(1) skip; returns how many were skipped."""
        count = max(0, min(n, self.node.length - self.index))
        self.index += count
        self._block = []
        return count
