"""``Dataset.window``: group consecutive elements into windows, each a dataset (per component)."""

from __future__ import annotations

from typing import Any

from ..core.args import boolean, integer, is_int
from ..core.elements import ElementsNode
from ..core.errors import check
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Context, Fields, Node, NodeIterator
from ..core.state import Bool, Child, Elements, Int
from ..core.structure import flatten, pack_as


def _positive(value: Any) -> bool:
    return is_int(value, low=1)


class WindowNode(Node):
    """``window(size, shift=None, stride=1, drop_remainder=False)``, as tf.data.

    Window ``k`` holds the input elements at ``k * shift + j * stride`` for ``j < size``; ``shift``
    defaults to ``size``. Without ``drop_remainder`` the windows that start before the end but run
    past it are yielded shorter. Each output element has the input's structure with a dataset in place
    of every component (``wrap`` turns a node into what the user gets: the facade passes ``Dataset``).
    """

    op = "window"
    fields = Fields("size", "shift", "stride", "drop_remainder", "wrap")

    def __init__(
        self,
        parent: Node,
        size: int,
        shift: int | None = None,
        stride: int = 1,
        drop_remainder: bool = False,
        wrap: Any = None,
        name: str | None = None,
    ):
        size, shift, stride = integer(size), integer(shift), integer(stride)
        drop_remainder = boolean(drop_remainder)
        check(_positive(size), "size", size, "a positive int")
        check(shift is None or _positive(shift), "shift", shift, "None (= size) or a positive int")
        check(_positive(stride), "stride", stride, "a positive int")
        check(isinstance(drop_remainder, bool), "drop_remainder", drop_remainder, "True or False")
        super().__init__(parent)
        self.size, self.shift, self.stride = size, size if shift is None else shift, stride
        self.drop_remainder = drop_remainder
        self.wrap = wrap
        self.name = name

    def describe_args(self) -> str:
        return f"{self.size}, shift={self.shift}, stride={self.stride}, drop_remainder={self.drop_remainder}"

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        if n < 0:
            return n if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY
        if self.drop_remainder:
            span = (self.size - 1) * self.stride + 1
            return 0 if n < span else (n - span) // self.shift + 1
        return -(-n // self.shift)

    def compute_element_spec(self) -> Any:
        raise TypeError(
            f"{self!r}: elements are datasets, which have no TensorSpec here; use the window's "
            "element_spec instead"
        )

    def make_window(self, rows: list) -> Any:
        """The user-facing element: the rows' structure with a dataset of each component's values."""
        structure = rows[0]
        columns = list(zip(*(flatten(row) for row in rows)))
        datasets = [ElementsNode(list(column)) for column in columns]
        if self.wrap is not None:
            datasets = [self.wrap(node) for node in datasets]
        return pack_as(structure, datasets) if isinstance(structure, (tuple, dict)) else datasets[0]

    def iterator(self, ctx: Context) -> WindowIterator:
        return WindowIterator(self, self.parents[0].iterator(ctx))


class WindowIterator(NodeIterator[WindowNode]):
    state_fields = (
        Child("parent"),
        Elements("buffer", max_length=lambda it, values: it.span),
        Int("to_skip", high=lambda it, values: it.node.shift),
        Bool("ended"),
    )

    def __init__(self, node: WindowNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.span = (node.size - 1) * node.stride + 1
        self.buffer: list = []  # the next window's input elements, from its first
        self.to_skip = 0  # input elements to drop before the next window (shift > span)
        self.ended = False

    def _fill(self) -> None:
        while not self.ended and (self.to_skip or len(self.buffer) < self.span):
            try:
                chunk = self.parent.next_chunk(max(self.to_skip, self.span - len(self.buffer)))
            except StopIteration:
                self.ended = True
                return
            if self.to_skip:
                dropped = min(self.to_skip, len(chunk))
                self.to_skip -= dropped
                chunk = chunk[dropped:]
            self.buffer.extend(chunk)

    def __next__(self) -> Any:
        self._fill()
        node = self.node
        if not self.buffer or (node.drop_remainder and len(self.buffer) < self.span):
            raise StopIteration
        rows = self.buffer[: self.span : node.stride]
        dropped = min(node.shift, len(self.buffer))
        self.to_skip += node.shift - dropped
        del self.buffer[:dropped]
        out = node.make_window(rows)
        self.produced += 1
        return out

    def reset(self) -> None:
        self.parent.reset()
        self.buffer, self.to_skip, self.ended = [], 0, False
