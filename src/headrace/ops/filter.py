"""``Dataset.filter``: keep the elements for which a predicate is true."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.closures import freeze
from ..core.errors import InvalidArgumentError
from ..core.naming import describe
from ..core.node import Context, Fields, Node, NodeIterator, note_stage, predicate_bool
from ..core.state import encode_element


class FilterNode(Node):
    """``filter(predicate)``: the predicate returns a scalar bool (Python or numpy)."""

    op = "filter"
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

    def iterator(self, ctx: Context) -> FilterIterator:
        return FilterIterator(self, self.parents[0].iterator(ctx))


_BOOL_TYPES = frozenset((bool, np.bool_))


def _valid_true(result: object) -> bool:
    """A later result that is a scalar bool and true (an invalid one is dropped with the error)."""
    try:
        return predicate_bool(result, "", 0)
    except Exception:  # noqa: BLE001
        return False


class FilterIterator(NodeIterator[FilterNode]):
    state_keys = ("parent", "position", "pending")

    def __init__(self, node: FilterNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.predicate = node.predicate
        self.position = 0  # inputs taken from the parent so far
        # As in map: after a predicate error inside a chunk, kept elements and unfiltered inputs wait here.
        self.pending: list[tuple[bool, object]] = []

    def _filter(self, elements: list, first: int) -> list:
        predicate = self.predicate
        results: list = []
        error: Exception | None = None
        try:
            # The calls run in C; a failure leaves the results before it in `results` (extend keeps them).
            if type(elements[0]) is tuple:
                results.extend(itertools.starmap(predicate, elements))
            else:
                results.extend(map(predicate, elements))
            if len(results) != len(elements):  # the predicate raised StopIteration: extend() ends quietly
                raise StopIteration(f"predicate raised StopIteration on input element {first + len(results)}")
        except Exception as exc:
            error = exc
        if error is None and _BOOL_TYPES.issuperset(map(type, results)):
            return list(itertools.compress(elements, results))
        out: list = []
        done = len(results)
        for index, result in enumerate(results):
            try:
                keep = predicate_bool(result, self.name, first + index)
            except Exception as exc:
                # The later calls were made already: their elements keep their verdicts; the rest
                # (from a failed call on, which is then called again) wait as inputs.
                later = zip(elements[index + 1 : done], results[index + 1 :])
                rest = [(True, e) for e, r in later if _valid_true(r)] + [(False, e) for e in elements[done:]]
                note_stage(exc, self.name, first + index)
                return self._then_error(out, exc, elements[index], rest)
            if keep:
                out.append(elements[index])
        if error is None:
            return out
        note_stage(error, self.name, first + done)
        return self._then_error(out, error, elements[done], [(False, e) for e in elements[done + 1 :]])

    def _then_error(self, out: list, exc: Exception, failing: object, rest: list) -> list:
        """The kept elements before a predicate error go out now, the error at the next call; the
        elements after it wait in ``pending``. While the error is held the failing element waits
        first among them, so a state saved then tests it again on restore."""
        if out:
            self.pending = [(False, failing), *rest, *self.pending]
            return self.elements_then_error(out, exc, counted=True)
        self.pending = rest + self.pending
        raise exc

    def _take_pending(self) -> list:
        out = []
        while self.pending and self.pending[0][0]:
            out.append(self.pending.pop(0)[1])
        if out:
            return out
        inputs = []
        while self.pending and not self.pending[0][0]:
            inputs.append(self.pending.pop(0)[1])
        first = self.position - len(self.pending) - len(inputs)
        return self._filter(inputs, first)

    def __next__(self) -> Any:
        predicate = self.predicate
        while True:
            if self.pending:  # a held error keeps its element here, so it is checked only here
                self.raise_held_error(self.pending)
                kept = self._take_pending()
                if kept:
                    # Serve one; any others go back to the front as kept elements.
                    self.pending[0:0] = [(True, e) for e in kept[1:]]
                    self.produced += 1
                    return kept[0]
                continue
            element = next(self.parent)
            position = self.position
            self.position = position + 1
            try:
                result = predicate(*element) if type(element) is tuple else predicate(element)
            except Exception as exc:
                note_stage(exc, self.name, position)
                raise
            kind = type(result)
            if result if kind is bool or kind is np.bool_ else predicate_bool(result, self.name, position):
                self.produced += 1
                return element

    def next_chunk(self, n: int) -> list:
        while True:
            if self.pending:
                self.raise_held_error(self.pending)
                out = self._take_pending()
                if out:
                    self.produced += len(out)
                    return out
                continue
            chunk = self.parent.next_chunk(n)
            first = self.position
            self.position += len(chunk)
            out = self._filter(chunk, first)
            if out:
                self.produced += len(out)
                return out

    def reset(self) -> None:
        self.parent.reset()
        self.position = 0
        self.pending = []

    def get_state(self) -> dict:
        return {
            "parent": self.parent.get_state(),
            "position": self.position,
            "pending": [[kept, encode_element(e)] for kept, e in self.pending],
        }

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        position = fields.int("position")
        pending = [
            (fields.check_bool(kept, f"pending[{i}][0]"), fields.check_element(e, f"pending[{i}][1]"))
            for i, (kept, e) in enumerate(fields.rows("pending", 2, max_length=position))
        ]
        self.parent.set_state(fields.dict("parent"))
        self.position = position
        self.pending = pending
