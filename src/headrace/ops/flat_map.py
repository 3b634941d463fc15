"""``Dataset.flat_map``: map each element to a dataset and yield all of their elements in order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.closures import freeze
from ..core.errors import InvalidArgumentError
from ..core.naming import describe
from ..core.node import Context, Fields, Node, NodeIterator, open_user_dataset
from ..core.state import Child, Field, Int, StateFields, encode_element
from .support.expanding import ExpandingIterator


class FlatMapNode(Node):
    """``flat_map(map_func)``: ``map_func`` (tuples unpacked) returns a headrace Dataset per element.

    The sub-datasets run one after the other, each to its end, in input order.
    """

    op = "flat_map"
    fields = Fields("map_func")
    calls_user_function = True

    def __init__(self, parent: Node, map_func: Callable, name: str | None = None):
        if not callable(map_func):
            raise InvalidArgumentError(
                f"map_func={map_func!r} is not callable: pass a function returning a Dataset"
            )
        super().__init__(parent)
        self.map_func = freeze(map_func)
        self.name = name

    def describe_args(self) -> str:
        return self.name or describe(self.map_func)

    def iterator(self, ctx: Context) -> FlatMapIterator:
        return FlatMapIterator(self, self.parents[0].iterator(ctx), ctx)


class _Current(Field):
    """The open sub-dataset, or None: the input element it was made from and its state. A restore
    rebuilds it by calling map_func again on that element."""

    def save(self, stage: Any) -> dict | None:
        if stage.sub is None:
            return None
        return {"input": encode_element(stage.input), "state": stage.sub.get_state()}

    def load(self, fields: StateFields, stage: Any, values: dict) -> tuple[Any, dict] | None:
        saved = fields.dict(self.name, optional=True)
        if saved is None:
            return None
        current = fields.record(saved, self.name, ("input", "state"))
        if values["position"] == 0:
            raise fields.fail("position", 0, "an int >= 1 while a sub-dataset is open")
        return current.element("input"), current.dict("state")

    def restore(self, stage: Any, value: Any) -> None:
        stage._drop_sub()
        if value is not None:
            element, state = value
            stage.sub = stage._open(element, stage.position - 1)
            stage.sub.set_state(state)
            stage.input = element


class FlatMapIterator(ExpandingIterator[FlatMapNode]):
    state_fields = (Child("parent"), Int("position"), _Current("current"))

    def __init__(self, node: FlatMapNode, parent: NodeIterator, ctx: Context):
        super().__init__(node, parent)
        self.parent = parent
        self.ctx = ctx
        self.position = 0  # inputs taken from the parent so far
        self.input: Any = None  # the input element the open sub-iterator was made from
        self.sub: NodeIterator | None = None

    def _open(self, element: Any, position: int) -> NodeIterator:
        return open_user_dataset(self, self.node.map_func, element, position, self.ctx)

    def open_next(self) -> None:
        element = next(self.parent)
        self.position += 1
        self.sub = self._open(element, self.position - 1)
        self.input = element

    def take(self, n: int) -> list:
        sub = self.sub
        if sub is None:
            return []
        try:
            return sub.next_chunk(n)
        except StopIteration:
            self._drop_sub()
            return []

    def __next__(self) -> Any:  # the fast path: the sub-datasets' own __next__, one element at a time
        while True:
            sub = self.sub
            if sub is None:
                self.open_next()
                continue
            try:
                element = next(sub)
            except StopIteration:
                self._drop_sub()
                continue
            self.produced += 1
            return element

    def _drop_sub(self) -> None:
        if self.sub is not None:
            self.sub.close()
        self.sub, self.input = None, None

    def reset(self) -> None:
        self._drop_sub()
        self.parent.reset()
        self.position = 0

    def close(self) -> None:
        self._drop_sub()
        super().close()
