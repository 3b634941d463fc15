"""The iterator of element-wise ops (map, filter, take_while, scan): each input gives at most one output.

An op fills in :meth:`~headrace.core.node.NodeIterator.compute`, the outputs of a chunk of inputs;
this class pulls the chunks, counts positions, serves what a failure left owed first and saves its
state (``parent``, ``position``, ``owed``). See docs/CONTRIBUTING.md, "The element path".
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...core.node import NodeIterator, NodeT
from ...core.state import INPUT, Child, Field, Int, Owed


def owed_inputs(inputs: list, first: int, start: int = 0) -> list:
    """``owed`` entries for ``inputs[start:]`` (taken at ``first``, ``first + 1``, ...), not computed."""
    return [(first + i, INPUT, element) for i, element in enumerate(inputs[start:], start)]


class ElementwiseIterator(NodeIterator[NodeT]):
    """Pulls a chunk from its parent and returns ``compute(chunk, first)``; an empty result (all
    filtered out) pulls again; ``done`` (take_while) ends the epoch."""

    state_fields: ClassVar[tuple[Field, ...]] = (Child("parent"), Int("position"), Owed())
    done = False

    def __init__(self, node: NodeT, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.position = 0  # inputs taken from the parent so far

    def next_chunk(self, n: int) -> list:
        while True:
            if self.owed:
                out = self.serve_owed(n)
            elif self.done:
                raise StopIteration
            else:
                chunk = self.parent.next_chunk(n)
                first = self.position
                self.position = first + len(chunk)
                out = self.compute(chunk, first)
            if out:
                self.produced += len(out)
                return out

    def __next__(self) -> Any:
        return self.next_chunk(1)[0]

    def reset(self) -> None:
        self.parent.reset()
        self.position = 0
        self.__dict__.pop("done", None)
        self.restarted()

    def restarted(self) -> None:
        """Called by ``reset``: start the op's own values (scan's state) again."""
