"""``Dataset.filter``: keep the elements for which a predicate is true."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.closures import freeze
from ..core.errors import InvalidArgumentError
from ..core.naming import describe
from ..core.node import Context, Fields, Node, NodeIterator, derived, note_stage, predicate_bool
from ..core.state import OUTPUT
from .map_and_filter import fused_run
from .support.elementwise import ElementwiseIterator, owed_inputs


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

    def fusable_step(self) -> tuple[bool, Callable, str]:
        cache = derived(self)  # asked once per stepping stone of a deep chain: describe() once
        if "fusable_step" not in cache:
            cache["fusable_step"] = (True, self.predicate, f"filter({self.describe_args()})")
        return cache["fusable_step"]

    def fused_with(self, parent: Node) -> Node | None:
        return fused_run(self, parent)  # a long run of maps and filters as one stage

    def iterator(self, ctx: Context) -> FilterIterator:
        return FilterIterator(self, self.parents[0].iterator(ctx))


_BOOL_TYPES = frozenset((bool, np.bool_))


def _valid_true(result: object) -> bool:
    """A later result that is a scalar bool and true (an invalid one is dropped with the error)."""
    try:
        return predicate_bool(result, "", 0)
    except InvalidArgumentError:
        return False


class FilterIterator(ElementwiseIterator[FilterNode]):
    def __init__(self, node: FilterNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.predicate = node.predicate

    def compute(self, inputs: list, first: int) -> list:
        predicate = self.predicate
        results: list = []
        error: Exception | None = None
        try:
            # The calls run in C; a failure leaves the results before it in `results` (extend keeps them).
            if type(inputs[0]) is tuple:
                results.extend(itertools.starmap(predicate, inputs))
            else:
                results.extend(map(predicate, inputs))
            if len(results) != len(inputs):  # the predicate raised StopIteration: extend() ends quietly
                raise StopIteration(f"predicate raised StopIteration on input element {first + len(results)}")
        except Exception as exc:
            error = exc
        if error is None and _BOOL_TYPES.issuperset(map(type, results)):
            return list(itertools.compress(inputs, results))
        out: list = []
        done = len(results)
        for index, result in enumerate(results):
            try:
                keep = predicate_bool(result, self.name, first + index)
            except Exception as exc:
                # The later calls were made already: their elements keep their verdicts; the rest
                # (from a failed call on) wait as inputs.
                later = range(index + 1, done)
                rest = [(first + i, OUTPUT, inputs[i]) for i in later if _valid_true(results[i])]
                note_stage(exc, self.name, first + index)
                return self.hold(
                    out, exc, first + index, inputs[index], rest + owed_inputs(inputs, first, done)
                )
            if keep:
                out.append(inputs[index])
        if error is None:
            return out
        note_stage(error, self.name, first + done)
        return self.hold(out, error, first + done, inputs[done], owed_inputs(inputs, first, done + 1))

    def __next__(self) -> Any:
        if self.owed:
            return self.next_chunk(1)[0]
        predicate = self.predicate
        while True:
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
