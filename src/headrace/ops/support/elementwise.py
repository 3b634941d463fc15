"""The iterator of element-wise ops: each input gives at most one output, in order.

An op fills in :meth:`~headrace.core.node.NodeIterator.compute`, the outputs of a chunk of inputs
(map, filter, take_while, scan, unique, enumerate; a pass-through op keeps the default, the inputs
themselves); this class pulls the chunks, counts positions, serves what a failure left owed first and
saves its state (``parent``, ``position``, ``owed``). Ops that decide how much to pull or what the end
of their input means fill in the hooks too: :meth:`~ElementwiseIterator.wanted` (take, skip,
assert_cardinality, repeat), :meth:`~ElementwiseIterator.input_ended` (repeat, assert_cardinality)
and :meth:`~ElementwiseIterator.input_failed` (ignore_errors, enumerate). See docs/CONTRIBUTING.md,
"The element path".
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
    #: the op decides how many inputs each pull asks for (:meth:`wanted`); False skips the call
    limits = False
    #: the op computes outputs (it fills in :meth:`compute`); False: its outputs are its inputs, passed
    #: on without a call (set by ``__init_subclass__``)
    computes: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.computes = cls.compute is not ElementwiseIterator.compute

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
                want = self.wanted(n) if self.limits else n
                try:
                    chunk = self.parent.next_chunk(want)
                except StopIteration:
                    if self.input_ended():
                        continue
                    raise
                except Exception as exc:
                    if self.input_failed(exc):
                        continue
                    raise
                first = self.position
                self.position = first + len(chunk)
                out = self.compute(chunk, first) if self.computes else chunk
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

    def compute(self, inputs: list, first: int) -> list:
        """The outputs of ``inputs`` (see ``NodeIterator.compute``); by default the inputs: a stage
        that only decides how many elements pass (take, skip, repeat) fills in no more than hooks."""
        return inputs

    def wanted(self, n: int) -> int:
        """How many inputs to pull for a chunk of ``n`` (called when ``limits``): fewer, or raise
        StopIteration to end the epoch without pulling."""
        return n

    def input_ended(self) -> bool:
        """The input ended: True to pull again (repeat's next epoch), False to end (the default), or
        raise an error of the op's own (assert_cardinality)."""
        return False

    def input_failed(self, exc: Exception) -> bool:
        """Pulling raised ``exc``, the error of the input's next element: True to pull again
        (ignore_errors), False to raise it (the default)."""
        return False

    def restarted(self) -> None:
        """Called by ``reset``: start the op's own values (scan's state) again."""
