"""``ElementsNode``: a dataset of elements already in memory (a window of ``window``, a group's
window in ``group_by_window``): what those ops hand to the user as a Dataset."""

from __future__ import annotations

from typing import Any

import numpy as np

from .node import Access, Context, Fields, Node, NodeIterator
from .spec import spec_of
from .state import Int


class ElementsNode(Node):
    """The elements of ``elements`` in order; ``spec`` is their element_spec when known in advance."""

    op = "elements"
    fields = Fields("elements", "spec")

    def __init__(self, elements: list, spec: Any = None):
        super().__init__()
        self.elements = elements
        self.spec = spec

    def describe_args(self) -> str:
        return f"{len(self.elements)} elements"

    def compute_element_spec(self) -> Any:
        if self.spec is not None or not self.elements:
            return self.spec if self.spec is not None else super().compute_element_spec()
        return spec_of(self.elements[0])

    def cardinality(self) -> int:
        return len(self.elements)

    def random_access_length(self) -> int:
        return len(self.elements)

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        return [self.elements[int(i)] for i in indices]

    def iterator(self, ctx: Context) -> ElementsIterator:
        return ElementsIterator(self)


class ElementsIterator(NodeIterator[ElementsNode]):
    state_fields = (Int("index", high=lambda it, values: len(it.node.elements)),)

    def __init__(self, node: ElementsNode):
        super().__init__(node)
        self.index = 0

    def next_chunk(self, n: int) -> list:
        elements = self.node.elements
        if self.index >= len(elements):
            raise StopIteration
        out = elements[self.index : self.index + n]
        self.index += len(out)
        self.produced += len(out)
        return out

    def __next__(self) -> Any:
        return self.next_chunk(1)[0]

    def reset(self) -> None:
        self.index = 0

    def seek_forward(self, n: int) -> int:
        skipped = min(n, len(self.node.elements) - self.index)
        self.index += skipped
        return skipped
