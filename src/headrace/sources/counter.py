"""``Dataset.counter``: an endless arithmetic progression (tf.data's ``Dataset.counter``)."""

from __future__ import annotations

import numpy as np

from ..core.args import integer, is_int
from ..core.errors import InvalidArgumentError, check
from ..core.node import INFINITE_CARDINALITY, Context, Fields, Node, NodeIterator
from ..core.spec import TensorSpec, as_dtype
from ..core.state import Int


class CounterNode(Node):
    """``counter(start=0, step=1, dtype=int64)``: ``start, start + step, ...`` forever."""

    op = "counter"
    fields = Fields("dtype", "start", "step")
    never_raises = True

    def __init__(self, start: int = 0, step: int = 1, dtype=np.int64):
        start, step = integer(start), integer(step)
        for argument, value in (("start", start), ("step", step)):
            check(is_int(value), argument, value, "an int")
        self.dtype = as_dtype(dtype)
        if self.dtype.kind not in "iuf":
            raise InvalidArgumentError(
                f"counter: dtype={self.dtype} is not allowed: an integer or float dtype"
            )
        super().__init__()
        self.start, self.step = start, step

    def describe_args(self) -> str:
        return f"start={self.start}, step={self.step}, dtype={self.dtype.name}"

    def compute_element_spec(self) -> TensorSpec:
        return TensorSpec((), self.dtype)

    def cardinality(self) -> int:
        return INFINITE_CARDINALITY

    def iterator(self, ctx: Context) -> CounterIterator:
        return CounterIterator(self)


class CounterIterator(NodeIterator[CounterNode]):
    state_fields = (Int("index", high=2**62),)

    def __init__(self, node: CounterNode):
        super().__init__(node)
        self.index = 0

    def next_chunk(self, n: int) -> list:
        node = self.node
        first = node.start + self.index * node.step
        values = np.arange(n, dtype=np.int64) * node.step + first
        self.index += n
        self.produced += n
        return list(values.astype(node.dtype, copy=False))

    def __next__(self):
        return self.next_chunk(1)[0]

    def reset(self) -> None:
        self.index = 0

    def seek_forward(self, n: int) -> int:
        self.index += n
        return n
