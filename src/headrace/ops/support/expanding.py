"""The iterator of ops where one input gives a run of outputs: unbatch (a batch's rows), flat_map (a
sub-dataset per element), group_by_window (a reduced window per full group).

An op fills in two hooks: :meth:`~ExpandingIterator.take`, up to ``n`` outputs of the open run (an
empty list once it is used up, or when none is open), and :meth:`~ExpandingIterator.open_next`,
which reads its input until the next run is open (StopIteration at the end of the input). This class
hands out the chunks and counts ``produced``. The chunk rule holds by construction: a call returns
the outputs of one run only and pulls the input only while it has none, so an error (raised by the
input while opening a run, or by the run itself, which holds its own outputs before it) never
follows outputs of the same call, and nothing is held here. See docs/CONTRIBUTING.md, "The element
path".
"""

from __future__ import annotations

from typing import Any

from ...core.node import NodeIterator, NodeT


class ExpandingIterator(NodeIterator[NodeT]):
    """``next_chunk(n)``: up to ``n`` outputs of the open run, opening the next one while there are none."""

    def next_chunk(self, n: int) -> list:
        while True:
            out = self.take(n)
            if out:
                self.produced += len(out)
                return out
            self.open_next()

    def __next__(self) -> Any:
        return self.next_chunk(1)[0]

    def take(self, n: int) -> list:
        """Up to ``n`` outputs of the open run, in order; an empty list when the run is used up (close
        it here) or none is open."""
        raise NotImplementedError

    def open_next(self) -> None:
        """Read the input until the next run is open; raise StopIteration when the input has ended
        (and again after), or the input's or the op's error."""
        raise NotImplementedError
