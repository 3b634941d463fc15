"""``Dataset.scan``: map with a running state carried from element to element."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.closures import freeze
from ..core.errors import InvalidArgumentError, StructureError
from ..core.naming import describe
from ..core.node import Context, Fields, Node, NodeIterator, note_stage
from ..core.state import Element, StateFields, encode_element
from .support.elementwise import ElementwiseIterator, owed_inputs
from .support.user_state import as_state, check_new_state, restored_state


class ScanNode(Node):
    """``scan(initial_state, scan_func)``: ``scan_func(state, element)`` returns
    ``(new_state, output)``; outputs are yielded, the state is carried on. The element is passed as
    one argument (not unpacked), as in tf.data.
    """

    op = "scan"
    fields = Fields("initial_state", "scan_func")
    calls_user_function = True

    def __init__(self, parent: Node, initial_state: Any, scan_func: Callable, name: str | None = None):
        if not callable(scan_func):
            raise InvalidArgumentError(
                f"scan_func={scan_func!r} is not callable: pass a function (state, element) -> "
                "(new_state, output)"
            )
        super().__init__(parent)
        self.initial_state = as_state(initial_state, "initial_state")
        encode_element(self.initial_state)  # fail now, not at the first checkpoint
        self.scan_func = freeze(scan_func)
        self.name = name

    def describe_args(self) -> str:
        return self.name or describe(self.scan_func)

    def cardinality(self) -> int:
        return self.parents[0].cardinality()

    def iterator(self, ctx: Context) -> ScanIterator:
        return ScanIterator(self, self.parents[0].iterator(ctx))


class ScanState(Element):
    """scan's running state: checked against the initial state's structure on restore."""

    def load(self, fields: StateFields, stage: Any, values: dict) -> Any:
        return restored_state(fields, self.name, stage.node.initial_state)


class ScanIterator(ElementwiseIterator[ScanNode]):
    state_fields = (*ElementwiseIterator.state_fields, ScanState("state"))

    def __init__(self, node: ScanNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.state = node.initial_state

    def compute(self, inputs: list, first: int) -> list:
        scan_func = self.node.scan_func
        out: list = []
        for offset, element in enumerate(inputs):
            position = first + offset
            try:
                result = scan_func(self.state, element)
                if not isinstance(result, tuple) or len(result) != 2:
                    raise StructureError(
                        f"{self.name}: scan_func must return a pair (new_state, output), got "
                        f"{type(result).__name__} for input element {position}"
                    )
                self.state = check_new_state(self.state, result[0], self.name, position)
            except Exception as exc:
                note_stage(exc, self.name, position)
                return self.hold(out, exc, position, element, owed_inputs(inputs, first, offset + 1))
            out.append(result[1])
        return out

    def restarted(self) -> None:
        self.state = self.node.initial_state
