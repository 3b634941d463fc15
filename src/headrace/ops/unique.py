"""``Dataset.unique``: drop elements equal to one seen before."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.node import UNKNOWN_CARDINALITY, Context, Node, NodeIterator
from ..core.state import Field, StateFields, encode_element
from .support.elementwise import ElementwiseIterator, owed_inputs


def unique_key(element: Any, stage: str, position: int) -> Any:
    """A hashable key for an element of one integer or string tensor (tf.data allows only those)."""
    if isinstance(element, (bytes, str)):
        return element.encode() if isinstance(element, str) else element
    if isinstance(element, (int, np.integer)) and not isinstance(element, (bool, np.bool_)):
        return int(element)
    strings = isinstance(element, np.ndarray) and element.dtype == object
    if (
        strings
        and all(isinstance(v, bytes) for v in element.flat)
        or (isinstance(element, np.ndarray) and element.dtype.kind in "iu")
    ):
        if element.shape == ():
            return element.item()
        return (element.shape, tuple(element.flat))
    raise InvalidArgumentError(
        f"{stage}: input element {position} is {type(element).__name__} "
        f"{getattr(element, 'dtype', '')}; unique needs elements of one integer or string tensor "
        "(as tf.data); map to such a key first"
    )


class UniqueNode(Node):
    """``unique()``: each distinct element once, in order of first appearance. Remembers every
    distinct element (and checkpoints them), so it suits small vocabularies, not unbounded streams."""

    op = "unique"

    def __init__(self, parent: Node, name: str | None = None):
        super().__init__(parent)
        self.name = name

    def describe_args(self) -> str:
        return self.name or ""

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def cardinality(self) -> int:
        # tf.data does not know either, even for an infinite input (it may have few distinct values).
        return 0 if self.parents[0].cardinality() == 0 else UNKNOWN_CARDINALITY

    def iterator(self, ctx: Context) -> UniqueIterator:
        return UniqueIterator(self, self.parents[0].iterator(ctx))


class Seen(Field):
    """The distinct elements served so far (at most ``position``), kept by their key."""

    def save(self, stage: Any) -> list:
        return [encode_element(e) for e in stage.seen.values()]

    def load(self, fields: StateFields, stage: Any, values: dict) -> dict:
        elements = fields.elements(self.name, max_length=values["position"])
        return {unique_key(e, stage.name, i): e for i, e in enumerate(elements)}


class UniqueIterator(ElementwiseIterator[UniqueNode]):
    state_fields = (*ElementwiseIterator.state_fields, Seen("seen"))

    def __init__(self, node: UniqueNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.seen: dict = {}  # key -> first element with that key (kept for checkpoints)

    def compute(self, inputs: list, first: int) -> list:
        out: list = []
        seen = self.seen
        for offset, element in enumerate(inputs):
            try:
                key = unique_key(element, self.name, first + offset)
            except InvalidArgumentError as exc:  # an element unique refuses: the rest are kept
                return self.hold(out, exc, first + offset, element, owed_inputs(inputs, first, offset + 1))
            if key not in seen:
                seen[key] = element
                out.append(element)
        return out

    def restarted(self) -> None:
        self.seen = {}
