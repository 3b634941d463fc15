"""Reading ahead of a consumer (device prefetch) while keeping checkpoints exact.

Framework adapters copy batches to an accelerator a few batches before the training step needs them,
so the copy overlaps compute. The pipeline has then moved past batches the consumer has not seen; a
checkpoint must describe what the consumer saw. :class:`ReadAhead` pairs each batch read ahead with
the iterator's state just after it, and reports the state of the last batch handed out.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from .iterator import Iterator


class ReadAhead:
    """Up to ``depth`` elements of ``iterator`` in flight, each passed through ``stage`` when read.

    Each read ahead costs one ``get_state()`` of the pipeline (small, except for pipelines holding
    large shuffle buffers: read no further ahead than needed there).

    >>> import headrace as hr
    >>> ahead = ReadAhead(iter(hr.Dataset.range(5)), depth=2, stage=lambda x: int(x) * 10)
    >>> next(ahead), next(ahead)
    (0, 10)
    >>> resumed = iter(hr.Dataset.range(5))
    >>> resumed.set_state(ahead.get_state())  # after 10, although 20 and 30 were read already
    >>> [int(x) for x in resumed]
    [2, 3, 4]
    """

    def __init__(self, iterator: Iterator, depth: int, stage: Callable[[Any], Any] = lambda x: x):
        if depth < 1:
            raise ValueError(f"depth={depth} must be >= 1")
        self.iterator = iterator
        self.depth = depth
        self.stage = stage
        self._queue: collections.deque = collections.deque()
        self._served_state = iterator.get_state()
        self._ended = False

    def _fill(self) -> None:
        while not self._ended and len(self._queue) < self.depth:
            try:
                element = next(self.iterator)
            except StopIteration:
                self._ended = True
                return
            self._queue.append((self.stage(element), self.iterator.get_state()))

    def __iter__(self) -> ReadAhead:
        return self

    def __next__(self) -> Any:
        self._fill()
        if not self._queue:
            raise StopIteration
        element, self._served_state = self._queue.popleft()
        self._fill()  # start the next copies before the consumer computes on this one
        return element

    def get_state(self) -> dict:
        """The iterator's state just after the last element handed out."""
        return self._served_state
