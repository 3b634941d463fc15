"""``Dataset.padded_batch``: batch elements of different shapes by padding them to a common shape."""

from __future__ import annotations

from typing import Any

from ..core.args import boolean, integer, is_int
from ..core.errors import check
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Context, Fields, Node
from .support.batch_iterator import BatchingIterator
from .support.padding import (
    check_padded_shapes,
    check_padding_values,
    padded_spec,
    padded_stack,
    resolve_padded_shapes,
    resolve_padding_values,
)


class PaddedBatchNode(Node):
    """``padded_batch(batch_size, padded_shapes=None, padding_values=None, drop_remainder=False)``.

    Each component is padded at the end of every dimension: to ``padded_shapes`` where it gives a
    size, to the largest in the batch where it says None or -1 (and everywhere when it is None).
    ``padding_values`` default to 0, ``False`` for bools and ``b""`` for strings; one scalar pads
    every component.
    """

    op = "padded_batch"
    fields = Fields("batch_size", "padded_shapes", "padding_values", "drop_remainder")

    def __init__(
        self,
        parent: Node,
        batch_size: int,
        padded_shapes: Any = None,
        padding_values: Any = None,
        drop_remainder: bool = False,
        name: str | None = None,
    ):
        batch_size, drop_remainder = integer(batch_size), boolean(drop_remainder)
        check(
            is_int(batch_size, low=1),
            "batch_size",
            batch_size,
            "a positive int",
        )
        check(isinstance(drop_remainder, bool), "drop_remainder", drop_remainder, "True or False")
        check_padded_shapes(padded_shapes)
        check_padding_values(padding_values)
        super().__init__(parent)
        self.batch_size = batch_size
        self.padded_shapes = padded_shapes
        self.padding_values = padding_values
        self.drop_remainder = drop_remainder
        self.name = name

    def describe_args(self) -> str:
        return (
            f"{self.batch_size}, padded_shapes={self.padded_shapes!r}, "
            f"padding_values={self.padding_values!r}, drop_remainder={self.drop_remainder}"
        )

    def compute_element_spec(self) -> Any:
        leading = self.batch_size if self.drop_remainder else None
        return padded_spec(self.parents[0].element_spec, self.padded_shapes, leading, self.op)

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        if n in (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY):
            return n
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def iterator(self, ctx: Context) -> PaddedBatchIterator:
        return PaddedBatchIterator(self, self.parents[0].iterator(ctx))


class PaddedBatchIterator(BatchingIterator):
    def combine(self, elements: list) -> Any:
        node, first = self.node, elements[0]
        return padded_stack(
            elements,
            resolve_padded_shapes(node.padded_shapes, first, self.name),
            resolve_padding_values(node.padding_values, first, self.name),
            self.name,
            first_index=self.produced * node.batch_size,
        )
