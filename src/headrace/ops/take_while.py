"""``Dataset.take_while``: elements while a predicate holds, then stop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.closures import freeze
from ..core.errors import InvalidArgumentError
from ..core.naming import describe
from ..core.node import UNKNOWN_CARDINALITY, Context, Fields, Node, NodeIterator, note_stage, predicate_bool
from ..core.state import Bool
from .support.elementwise import ElementwiseIterator, owed_inputs


class TakeWhileNode(Node):
    """``take_while(predicate)``: stops at the first element for which ``predicate`` is False (that
    element is dropped). Tuple elements are unpacked into arguments; cardinality is unknown."""

    op = "take_while"
    fields = Fields("predicate")
    calls_user_function = True

    def __init__(self, parent: Node, predicate: Callable, name: str | None = None):
        if not callable(predicate):
            raise InvalidArgumentError(
                f"predicate={predicate!r} is not callable: pass a function returning a bool"
            )
        super().__init__(parent)
        self.predicate = freeze(predicate)
        self.name = name

    def describe_args(self) -> str:
        return self.name or describe(self.predicate)

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def iterator(self, ctx: Context) -> TakeWhileIterator:
        return TakeWhileIterator(self, self.parents[0].iterator(ctx))


class TakeWhileIterator(ElementwiseIterator[TakeWhileNode]):
    state_fields = (*ElementwiseIterator.state_fields, Bool("done"))

    def __init__(self, node: TakeWhileNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.predicate = node.predicate

    def compute(self, inputs: list, first: int) -> list:
        """The leading inputs that pass; sets ``done`` at the first that fails."""
        predicate = self.predicate
        unpack = type(inputs[0]) is tuple
        index = 0
        try:
            for index, element in enumerate(inputs):  # noqa: B007 (index is read after an error)
                result = predicate(*element) if unpack else predicate(element)
                if not (result if type(result) is bool else predicate_bool(result, self.name, first + index)):
                    self.done = True
                    self.owed.clear()  # the inputs after the end are never returned
                    return inputs[:index]
        except Exception as exc:
            note_stage(exc, self.name, first + index)
            return self.hold(
                inputs[:index], exc, first + index, inputs[index], owed_inputs(inputs, first, index + 1)
            )
        return inputs
