"""``assert_cardinality``: declare how many elements a dataset has, and check it while iterating."""

from __future__ import annotations

from typing import Any

from ..core.args import integer, is_int
from ..core.errors import DataLossError, check
from ..core.node import INFINITE_CARDINALITY, Context, Fields, Node
from ..core.state import Child, Int
from .support.elementwise import ElementwiseIterator


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
            is_int(expected, low=INFINITE_CARDINALITY),
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


class AssertCardinalityIterator(ElementwiseIterator[AssertCardinalityNode]):
    state_fields = (
        Child("parent"),
        Int("count", "position", high=lambda it, values: None if it.node.expected < 0 else it.node.expected),
    )
    limits = True

    def wanted(self, n: int) -> int:
        # One more than expected is pulled, to tell a longer input (compute raises) from an exact one.
        expected = self.node.expected
        return n if expected == INFINITE_CARDINALITY else max(1, min(n, expected - self.position))

    def compute(self, inputs: list, first: int) -> list:
        expected = self.node.expected
        if expected != INFINITE_CARDINALITY and first >= expected:  # one element past the expected count
            self.position = first  # the count stays the expected one (a saved state stays valid)
            raise CardinalityMismatchError(
                f"{self.name}: the input was expected to contain {expected} elements but contained at least "
                f"{expected + 1}"
            )
        return inputs

    def input_ended(self) -> bool:
        expected = self.node.expected
        if expected != INFINITE_CARDINALITY and self.position < expected:
            raise CardinalityMismatchError(
                f"{self.name}: the input was expected to contain {expected} elements but contained only "
                f"{self.position}"
            ) from None
        return False
