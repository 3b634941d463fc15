"""``Dataset.concatenate``: every element of this dataset, then every element of another."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.node import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Access,
    Context,
    Node,
    NodeIterator,
    derived,
    known_specs,
)
from ..core.spec import common_spec
from ..core.state import Children, Int
from .support.elementwise import ElementwiseIterator

_NAMES = ["this dataset", "the dataset argument"]


class ConcatenateNode(Node):
    """``concatenate(dataset)``: the input's elements, then ``dataset``'s.

    The element specs must agree in structure and dtype (checked when the pipeline is built, as in
    tf.data); shapes that differ become unknown (``None``) in ``element_spec``.
    """

    op = "concatenate"
    never_raises = True

    def __init__(self, parent: Node, dataset: Node, name: str | None = None):
        super().__init__(parent, dataset)
        self.name = name
        specs = known_specs((parent, dataset))
        if specs is not None:
            derived(self)["element_spec"] = common_spec(specs, _NAMES, self.op)

    def compute_element_spec(self) -> Any:
        return common_spec([p.element_spec for p in self.parents], _NAMES, self.op)

    def cardinality(self) -> int:
        first, second = (p.cardinality() for p in self.parents)
        if INFINITE_CARDINALITY in (first, second):
            return INFINITE_CARDINALITY
        if UNKNOWN_CARDINALITY in (first, second):
            return UNKNOWN_CARDINALITY
        return first + second

    def random_access_length(self) -> int | None:
        first, second = (p.random_access_length() for p in self.parents)
        return None if first is None or second is None else first + second

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        indices = np.asarray(indices, dtype=np.int64)
        boundary = self.parents[0].random_access_length()
        if boundary is None:
            raise NotImplementedError(f"{self!r} cannot read elements by index")
        in_first = indices < boundary
        out: list = [None] * len(indices)
        for mask, parent, offset in ((in_first, self.parents[0], 0), (~in_first, self.parents[1], boundary)):
            positions = np.flatnonzero(mask)
            if len(positions):
                for position, element in zip(
                    positions.tolist(), parent.elements_at(indices[mask] - offset, access)
                ):
                    out[position] = element
        return out

    #: A chain of concatenates is built as one stage over all its inputs (see ConcatenateIterator),
    #: so an inner concatenate of a chain gets no iterator and is no stepping stone for building.
    builds_flat = True

    def chain(self) -> list[Node]:
        """The inputs of the chain of concatenates ending here, in order (``a.concatenate(b)
        .concatenate(c)`` and ``a.concatenate(b.concatenate(c))``: ``[a, b, c]``); iterative."""
        inputs: list[Node] = []
        stack: list[Node] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, ConcatenateNode):
                stack += (node.parents[1], node.parents[0])
            else:
                inputs.append(node)
        return inputs

    def iterator(self, ctx: Context) -> ConcatenateIterator:
        return ConcatenateIterator(self, [node.iterator(ctx) for node in self.chain()])


class ConcatenateIterator(ElementwiseIterator[ConcatenateNode]):
    """Every input of a chain of concatenates in turn: pulling an element is one call into the input
    being read (``parent``), whatever the chain's length (nested iterators took one Python call per
    concatenate: a chain of 600 overflowed the stack), and the state is a flat list, not nested per
    concatenate."""

    state_fields = (
        Children("inputs"),
        Int("current", high=lambda it, values: len(it.inputs) - 1),
    )

    def __init__(self, node: ConcatenateNode, inputs: list[NodeIterator]):
        super().__init__(node, inputs[0])
        self.inputs = list(inputs)
        self.current = 0  # the input being read: ``parent``

    def _read(self, current: int) -> None:
        self.current, self.parent = current, self.inputs[current]

    def input_ended(self) -> bool:
        if self.current + 1 >= len(self.inputs):
            return False
        self._read(self.current + 1)
        return True

    def seek_forward(self, n: int) -> int | None:
        skipped = 0
        while skipped < n:
            source = self.inputs[self.current]
            wanted = n - skipped
            got = source.seek_forward(wanted)
            if got is None:
                if skipped == 0:
                    return None  # the caller reads and drops instead
                got = 0  # part skipped already: read and drop the rest of this input here
                try:
                    while got < wanted:
                        got += len(source.next_chunk(wanted - got))
                except StopIteration:
                    pass
            skipped += got
            if got < wanted:  # this input ended
                if self.current + 1 >= len(self.inputs):
                    break
                self._read(self.current + 1)
        return skipped

    def reset(self) -> None:
        for source in self.inputs:
            source.reset()
        self._read(0)
        self.position = 0

    def restored(self) -> None:
        self._read(self.current)

    def upgraded_state(self, state: Any) -> Any:
        if isinstance(state, dict) and "in_second" in state:
            return self._flattened(state)
        return state

    def _flattened(self, state: dict) -> dict:
        """A checkpoint of the nested format (before the chain was one stage: ``first``, ``second``,
        ``in_second`` per concatenate) in the flat one; read iteratively."""
        seconds, flags = [], []
        for _ in range(len(self.inputs) - 1):
            if not isinstance(state, dict) or not {"first", "second", "in_second"} <= set(state):
                return {"nested": state}  # refused by the checks that follow
            seconds.append(state["second"])
            flags.append(state["in_second"])
            state = state["first"]
        states = [state, *reversed(seconds)]
        current = 0
        for position, flag in zip(range(len(flags), 0, -1), flags):  # the outermost first
            if flag is True:
                current = position
                break
        return {"inputs": states, "current": current}
