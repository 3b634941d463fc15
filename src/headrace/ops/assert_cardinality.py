"""``assert_cardinality``: declare how many elements a dataset has, and check it while iterating."""

from __future__ import annotations

from typing import Any

from ..core.args import integer
from ..core.errors import DataLossError, check
from ..core.node import INFINITE_CARDINALITY, Context, Fields, Node, NodeIterator
from ..core.state import Child, Int


class CardinalityMismatchError(DataLossError):
    """A dataset had more or fewer elements than ``assert_cardinality`` declared."""


class AssertCardinalityNode(Node):
    """``assert_cardinality(expected)``: the input unchanged, with ``cardinality()`` equal to
    ``expected``; an error when the input turns out longer (at the extra element) or shorter (at its
    end), as tf.data's ``tf.data.experimental.assert_cardinality``."""

    op = "assert_cardinality"
    fields = Fields("expected")

    def __init__(self, parent: Node, expected_cardinality: int, name: str | None = None):
        expected = integer(expected_cardinality)
        check(
            isinstance(expected, int) and not isinstance(expected, bool) and expected >= INFINITE_CARDINALITY,
            "expected_cardinality",
            expected_cardinality,
            "an int >= 0, or INFINITE_CARDINALITY (-1)",
        )
        super().__init__(parent)
        self.expected = expected
        self.name = name

    def describe_args(self) -> str:
        return str(self.expected)

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def cardinality(self) -> int:
        return self.expected

    def iterator(self, ctx: Context) -> AssertCardinalityIterator:
        return AssertCardinalityIterator(self, self.parents[0].iterator(ctx))


class AssertCardinalityIterator(NodeIterator[AssertCardinalityNode]):
    state_fields = (
        Child("parent"),
        Int("count", high=lambda it, values: None if it.node.expected < 0 else it.node.expected),
    )

    def __init__(self, node: AssertCardinalityNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.count = 0

    def next_chunk(self, n: int) -> list:
        expected = self.node.expected
        limit = n if expected == INFINITE_CARDINALITY else min(n, expected - self.count)
        try:
            chunk = self.parent.next_chunk(max(limit, 1))
        except StopIteration:
            if expected != INFINITE_CARDINALITY and self.count < expected:
                raise CardinalityMismatchError(
                    f"{self.name}: the input was expected to contain {expected} elements but contained only "
                    f"{self.count}"
                ) from None
            raise
        if limit == 0:  # one element past the expected count
            raise CardinalityMismatchError(
                f"{self.name}: the input was expected to contain {expected} elements but contained at least "
                f"{expected + 1}"
            )
        self.count += len(chunk)
        self.produced += len(chunk)
        return chunk

    def __next__(self) -> Any:
        return self.next_chunk(1)[0]

    def reset(self) -> None:
        self.parent.reset()
        self.count = 0
