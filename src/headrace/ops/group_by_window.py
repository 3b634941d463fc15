"""``Dataset.group_by_window``: group elements by key into windows and reduce each window to a dataset."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.closures import freeze
from ..core.elements import ElementsNode
from ..core.errors import InvalidArgumentError
from ..core.naming import describe
from ..core.node import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Context,
    Fields,
    Node,
    NodeIterator,
    call,
    call_noted,
    dataset_node,
    note_stage,
)
from ..core.state import ERROR, Bool, Child, Field, Int, Owed, StateFields, encode_element
from .support.elementwise import owed_inputs
from .support.expanding import ExpandingIterator

_MAX_PULL = 1024


class WindowNode(ElementsNode):
    """The elements of one window, as the dataset handed to ``reduce_func`` (in-memory elements, as
    ``core.elements.ElementsNode``; named ``window`` in descriptions)."""

    op = "window"


def scalar_int(value: Any, stage: str, what: str, position: int) -> int:
    """A user function's result that must be a scalar integer (tf.data wants int64)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        return int(value)
    raise InvalidArgumentError(
        f"{stage}: {what} must return a scalar integer, got {type(value).__name__} "
        f"{getattr(value, 'shape', '')} {getattr(value, 'dtype', '')} for input element {position}"
    )


class GroupByWindowNode(Node):
    """``group_by_window(key_func, reduce_func, window_size=None, window_size_func=None)``.

    ``key_func(element)`` (tuples unpacked) gives an integer key; elements gather per key until the
    key's window holds ``window_size`` (or ``window_size_func(key)``) of them, then
    ``reduce_func(key, window)`` turns the window into a dataset whose elements are yielded. At the
    end of the input the unfinished windows are reduced in ascending key order (tf.data's order).

    ``wrap`` turns a node into what ``reduce_func`` receives (the facade passes ``Dataset``).
    """

    op = "group_by_window"
    fields = Fields("key_func", "reduce_func", "window_size", "window_size_func", "wrap")
    calls_user_function = True

    def __init__(
        self,
        parent: Node,
        key_func: Callable,
        reduce_func: Callable,
        window_size: int | None = None,
        window_size_func: Callable | None = None,
        wrap: Callable[[Node], Any] | None = None,
        name: str | None = None,
    ):
        for argument, fn in (("key_func", key_func), ("reduce_func", reduce_func)):
            if not callable(fn):
                raise InvalidArgumentError(f"{argument}={fn!r} is not callable: pass a function")
        if (window_size is None) == (window_size_func is None):
            raise InvalidArgumentError(
                "group_by_window needs exactly one of window_size and window_size_func, got "
                f"window_size={window_size!r}, window_size_func={window_size_func!r}"
            )
        if window_size is not None and (
            not isinstance(window_size, (int, np.integer))
            or isinstance(window_size, bool)
            or window_size <= 0
        ):
            raise InvalidArgumentError(f"window_size={window_size!r} is not allowed: use a positive int")
        if window_size_func is not None and not callable(window_size_func):
            raise InvalidArgumentError(f"window_size_func={window_size_func!r} is not callable")
        super().__init__(parent)
        self.key_func = freeze(key_func)
        self.reduce_func = freeze(reduce_func)
        self.window_size = None if window_size is None else int(window_size)
        self.window_size_func = freeze(window_size_func)
        self.wrap = wrap
        self.name = name

    def describe_args(self) -> str:
        size = self.window_size if self.window_size is not None else describe(self.window_size_func)
        return self.name or f"{describe(self.key_func)}, {describe(self.reduce_func)}, window={size}"

    def cardinality(self) -> int:
        # As tf.data: an infinite input gives an infinite output; otherwise the count depends on keys.
        n = self.parents[0].cardinality()
        return n if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def iterator(self, ctx: Context) -> GroupByWindowIterator:
        return GroupByWindowIterator(self, self.parents[0].iterator(ctx), ctx)


class _Groups(Field):
    """Unfinished windows, ``[[key, [element, ...]], ...]``."""

    def save(self, stage: Any) -> list:
        return [[key, [encode_element(e) for e in group]] for key, group in stage.groups.items()]

    def load(self, fields: StateFields, stage: Any, values: dict) -> dict[int, list]:
        groups = {}
        for i, (key, group) in enumerate(fields.rows(self.name, 2)):
            if not isinstance(group, list):
                raise fields.fail(f"{self.name}[{i}][1]", group, "a list of elements")
            groups[fields.check_int(key, f"{self.name}[{i}][0]", low=None)] = [
                fields.check_element(e, f"{self.name}[{i}][1][{j}]") for j, e in enumerate(group)
            ]
        return groups


class _WindowSizes(Field):
    """Each key's window size, ``[[key, size], ...]``; every group (read before) must be short of it."""

    def save(self, stage: Any) -> list:
        return [[key, size] for key, size in stage.window_sizes.items()]

    def load(self, fields: StateFields, stage: Any, values: dict) -> dict[int, int]:
        window_sizes = {
            fields.check_int(key, f"{self.name}[{i}][0]", low=None): fields.check_int(
                size, f"{self.name}[{i}][1]", low=1
            )
            for i, (key, size) in enumerate(fields.rows(self.name, 2))
        }
        for key, group in values["groups"].items():
            if len(group) >= window_sizes.get(key, 0):  # a full window would have been reduced
                raise fields.fail(
                    "groups", f"{len(group)} elements under key {key}", "fewer than that key's window size"
                )
        return window_sizes


class _Current(Field):
    """The window being yielded (or null): its key, elements and its dataset's state. Restoring
    rebuilds that dataset by calling reduce_func again on the saved window."""

    def save(self, stage: Any) -> dict | None:
        if stage.current is None:
            return None
        key, elements, sub = stage.current
        return {"key": key, "elements": [encode_element(e) for e in elements], "state": sub.get_state()}

    def load(self, fields: StateFields, stage: Any, values: dict) -> tuple[int, list, dict] | None:
        saved = fields.dict(self.name, optional=True)
        if saved is None:
            return None
        current = fields.record(saved, self.name, ("key", "elements", "state"))
        return current.int("key", low=None), current.elements("elements"), current.dict("state")

    def restore(self, stage: Any, value: Any) -> None:
        stage._close_current()
        if value is not None:
            key, elements, state = value
            sub = stage._open(key, elements)
            sub.set_state(state)
            stage.current = (key, elements, sub)


class GroupByWindowIterator(ExpandingIterator[GroupByWindowNode]):
    state_fields = (
        Child("parent"),
        Int("position"),
        Bool("end_of_input"),
        Owed(),
        _Groups("groups"),
        _WindowSizes("window_sizes"),
        _Current("current"),
    )

    def __init__(self, node: GroupByWindowNode, parent: NodeIterator, ctx: Context):
        super().__init__(node, parent)
        self.parent = parent
        self.ctx = ctx
        self.position = 0  # inputs taken from the parent so far
        self.end_of_input = False
        # owed: inputs pulled but not yet put in a window
        self.groups: dict[int, list] = {}
        self.window_sizes: dict[int, int] = {}
        self.current: tuple[int, list, NodeIterator] | None = None  # the window being yielded

    def _window_size(self, key: int, position: int) -> int:
        size = self.window_sizes.get(key)
        if size is None:
            node = self.node
            if node.window_size is not None:
                size = node.window_size
            else:
                result = call_noted(node.window_size_func, np.int64(key), self.name, position)
                size = scalar_int(result, self.name, "window_size_func", position)
                if size <= 0:
                    raise InvalidArgumentError(
                        f"{self.name}: window_size_func returned {size} for key {key}; window sizes must be > 0"
                    )
            self.window_sizes[key] = size
        return size

    def _open(self, key: int, elements: list) -> NodeIterator:
        window = WindowNode(elements)
        argument = window if self.node.wrap is None else self.node.wrap(window)
        result = call_noted(self.node.reduce_func, (np.int64(key), argument), self.name, self.position - 1)
        return dataset_node(result, self.name, "reduce_func", f"key {key}").iterator(self.ctx)

    def _flush(self, key: int) -> None:
        elements = self.groups.pop(key)
        self.current = (key, elements, self._open(key, elements))

    def _fill_window(self) -> bool:
        """Read input until a window is full (True) or the input ends (False)."""
        while True:
            owed = self.owed
            if not owed:
                if self.end_of_input:
                    return False
                # Pull no more than the fullest window still needs: with a fixed window_size a chunk
                # then fills at most one window, at its end. (A window_size_func may give a new key a
                # smaller window; the rest of the chunk waits in owed, which is checkpointed.)
                room = [self.window_sizes[k] - len(g) for k, g in self.groups.items()]
                if self.node.window_size is not None:
                    room.append(self.node.window_size)
                want = max(1, min(room + [_MAX_PULL])) if room else 1
                try:
                    chunk = self.parent.next_chunk(want)
                except StopIteration:
                    self.end_of_input = True
                    return False
                owed.extend(owed_inputs(chunk, self.position))
                self.position += len(chunk)
            while owed:
                position, kind, element = owed.popleft()
                if kind == ERROR:
                    raise element[0]
                try:
                    key = scalar_int(call(self.node.key_func, element), self.name, "key_func", position)
                except Exception as exc:
                    note_stage(exc, self.name, position)
                    raise
                group = self.groups.setdefault(key, [])
                group.append(element)
                if len(group) >= self._window_size(key, position):
                    self._flush(key)
                    return True

    def open_next(self) -> None:
        """Reduce the next full window (or, at the end of the input, the lowest-keyed unfinished
        one); StopIteration when all are done."""
        if not self._fill_window():
            if not self.groups:
                raise StopIteration
            self._flush(min(self.groups))

    def take(self, n: int) -> list:
        current = self.current
        if current is None:
            return []
        try:
            return current[2].next_chunk(n)
        except StopIteration:
            self._close_current()
            return []

    def __next__(self) -> Any:  # the fast path while a window is open: its own __next__
        current = self.current
        if current is not None:
            try:
                element = next(current[2])
            except StopIteration:
                self._close_current()
            else:
                self.produced += 1
                return element
        return self.next_chunk(1)[0]

    def _close_current(self) -> None:
        if self.current is not None:
            self.current[2].close()
            self.current = None

    def reset(self) -> None:
        self._close_current()
        self.parent.reset()
        self.position = 0
        self.end_of_input = False
        self.groups = {}
        self.window_sizes = {}

    def close(self) -> None:
        self._close_current()
        super().close()
