"""``Dataset.concatenate``: every element of this dataset, then every element of another."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Context, Node, NodeIterator, derived
from ..core.spec import common_spec
from ..core.state import Bool, Child

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
        try:
            first, second = parent.element_spec, dataset.element_spec
        except Exception:  # noqa: BLE001
            # Finding a spec can mean running user code (an empty or failing map): check when asked.
            return
        derived(self)["element_spec"] = common_spec([first, second], _NAMES, self.op)

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

    def elements_at(self, indices, access) -> list:
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

    def iterator(self, ctx: Context) -> ConcatenateIterator:
        return ConcatenateIterator(self, self.parents[0].iterator(ctx), self.parents[1].iterator(ctx))


class ConcatenateIterator(NodeIterator[ConcatenateNode]):
    state_fields = (Child("first"), Child("second"), Bool("in_second"))

    def __init__(self, node: ConcatenateNode, first: NodeIterator, second: NodeIterator):
        super().__init__(node, first, second)
        self.first, self.second = first, second
        self.in_second = False

    def next_chunk(self, n: int) -> list:
        if not self.in_second:
            try:
                chunk = self.first.next_chunk(n)
                self.produced += len(chunk)
                return chunk
            except StopIteration:
                self.in_second = True
        chunk = self.second.next_chunk(n)
        self.produced += len(chunk)
        return chunk

    def __next__(self):
        return self.next_chunk(1)[0]

    def seek_forward(self, n: int) -> int | None:
        skipped = 0
        if not self.in_second:
            first = self.first.seek_forward(n)
            if first is None:
                return None
            if first == n:
                return n
            skipped = first
            self.in_second = True
        rest = self.second.seek_forward(n - skipped)
        if rest is None:  # the second input cannot seek: read and drop instead
            rest = 0
            try:
                while rest < n - skipped:
                    rest += len(self.second.next_chunk(n - skipped - rest))
            except StopIteration:
                pass
        return skipped + rest

    def reset(self) -> None:
        self.first.reset()
        self.second.reset()
        self.in_second = False
