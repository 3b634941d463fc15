"""``Dataset.enumerate``: pair each element with its int64 index, ``(index, element)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import check
from ..core.node import Access, Context, Fields, Node, NodeIterator
from ..core.spec import TensorSpec
from ..core.state import Child, Int
from .support.elementwise import ElementwiseIterator

_INT64_MAX = int(np.iinfo(np.int64).max)


class EnumerateNode(Node):
    """``enumerate(start=0)``: yields ``(np.int64(start + i), element_i)``.

    The cardinality is the input's (tf.data builds this as a zip with a huge range, which gives the
    same numbers).
    """

    op = "enumerate"
    fields = Fields("start")
    never_raises = True

    def __init__(self, parent: Node, start: int = 0, name: str | None = None):
        check(
            isinstance(start, (int, np.integer))
            and not isinstance(start, bool)
            and -_INT64_MAX - 1 <= int(start) <= _INT64_MAX,
            "start",
            start,
            "an int in the int64 range",
        )
        super().__init__(parent)
        self.start = int(start)
        self.name = name

    def describe_args(self) -> str:
        return f"start={self.start}"

    def compute_element_spec(self) -> Any:
        return (TensorSpec((), np.int64), self.parents[0].element_spec)

    def cardinality(self) -> int:
        return self.parents[0].cardinality()

    def random_access_length(self) -> int | None:
        return self.parents[0].random_access_length()

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        numbers = np.asarray(indices, dtype=np.int64) + np.int64(self.start)
        return list(zip(numbers, self.parents[0].elements_at(indices, access)))

    def iterator(self, ctx: Context) -> EnumerateIterator:
        return EnumerateIterator(self, self.parents[0].iterator(ctx))


class EnumerateIterator(ElementwiseIterator[EnumerateNode]):
    # position: elements enumerated in this epoch; it is added to start in int64
    state_fields = (Child("parent"), Int("index", "position", high=2**62))

    def __init__(self, node: EnumerateNode, parent: NodeIterator):
        super().__init__(node, parent)
        # As tf.data (enumerate is zip(range, input) there): an input element that fails uses up its
        # index, so indices stay the input's positions under ignore_errors. Chunks from an input
        # that may fail cannot say which element did, so those are enumerated one by one.
        self.limits = not node.parents[0].cannot_fail()

    def wanted(self, n: int) -> int:
        return 1  # (only called when the input may fail)

    def compute(self, inputs: list, first: int) -> list:
        start = self.node.start + first
        return list(zip(np.arange(start, start + len(inputs), dtype=np.int64), inputs))

    def input_failed(self, exc: Exception) -> bool:
        self.position += 1  # the failed element used up its index
        return False

    def seek_forward(self, n: int) -> int | None:
        skipped = self.parent.seek_forward(n)
        if skipped is not None:
            self.position += skipped
        return skipped
