"""``Dataset.take_while``: elements while a predicate holds, then stop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.closures import freeze
from ..core.errors import InvalidArgumentError
from ..core.naming import describe
from ..core.node import UNKNOWN_CARDINALITY, Context, Fields, Node, NodeIterator, note_stage, predicate_bool
from ..core.state import encode_element


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


class TakeWhileIterator(NodeIterator[TakeWhileNode]):
    state_keys = ("parent", "position", "done", "passed", "untested")

    def __init__(self, node: TakeWhileNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.predicate = node.predicate
        self.position = 0  # inputs taken from the parent so far
        self.done = False
        # After a predicate error inside a chunk, the elements that passed before it and the inputs
        # after it wait here, so an error loses nothing but the failing element (as in map and filter).
        self.passed: list = []
        self.untested: list = []

    def _accept(self, chunk: list, first: int) -> list:
        """The leading elements of ``chunk`` that pass; sets ``done`` at the first that fails."""
        predicate = self.predicate
        unpack = type(chunk[0]) is tuple
        index = 0
        try:
            for index, element in enumerate(chunk):  # noqa: B007 (index is read after an error)
                result = predicate(*element) if unpack else predicate(element)
                if not (result if type(result) is bool else predicate_bool(result, self.name, first + index)):
                    self.done = True
                    return chunk[:index]
        except Exception as exc:
            note_stage(exc, self.name, first + index)
            if not index:
                self.untested = chunk[1:] + self.untested
                raise
            # The elements that passed go out now, the error at the next call. Meanwhile the failing
            # element stays first in `untested`: a state saved then tests it again on restore.
            self.untested = chunk[index:] + self.untested
            return self.elements_then_error(chunk[:index], exc, counted=True)
        return chunk

    def next_chunk(self, n: int) -> list:
        self.raise_held_error(self.untested)  # the failing element waits first in untested
        if self.done:
            raise StopIteration
        if self.passed:  # a state saved by an older headrace, which raised before these
            out, self.passed = self.passed, []
            self.produced += len(out)
            return out
        if self.untested:
            chunk, self.untested = self.untested[:n], self.untested[n:]
            first = self.position - len(self.untested) - len(chunk)
        else:
            chunk = self.parent.next_chunk(n)
            first = self.position
            self.position += len(chunk)
        out = self._accept(chunk, first)
        if not out:
            raise StopIteration
        self.produced += len(out)
        return out

    def __next__(self) -> Any:
        return self.next_chunk(1)[0]

    def reset(self) -> None:
        self.parent.reset()
        self.position = 0
        self.done = False
        self.passed = []
        self.untested = []

    def get_state(self) -> dict:
        return {
            "parent": self.parent.get_state(),
            "position": self.position,
            "done": self.done,
            "passed": [encode_element(e) for e in self.passed],
            "untested": [encode_element(e) for e in self.untested],
        }

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        position, done = fields.int("position"), fields.bool("done")
        passed = fields.elements("passed", max_length=position)
        untested = fields.elements("untested", max_length=position - len(passed))
        self.parent.set_state(fields.dict("parent"))
        self.position, self.done, self.passed, self.untested = position, done, passed, untested
