"""``record_calls()``: keep every stage call as a slice for the trace (off by default).

The timing template (``core/counters.py``) times every call anyway; while a recording is on, it
also appends one tuple per call to a bounded log, so a trace can show each call and each batch on
the thread that made it. Costs about one tuple per call and ``max_calls`` tuples of memory.

>>> import headrace as hr
>>> with hr.profile.record_calls() as log:
...     it = iter(hr.Dataset.range(8).batch(4))
...     _ = list(it)
>>> len(it.stats().slices) >= 2
True
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterator

from ..core import counters

#: the log of the last recording that ended, so stats taken after the ``with`` block still see it
_last: deque | None = None


@contextlib.contextmanager
def record_calls(max_calls: int = 1_000_000) -> Iterator[deque]:
    """Record each stage call (and each batch) for the trace while the block runs; keeps the
    newest ``max_calls`` calls."""
    global _last
    if max_calls < 1:
        raise ValueError(f"record_calls: max_calls must be at least 1, got {max_calls}")
    outer = counters.call_log
    log: deque = deque(maxlen=max_calls)
    counters.call_log = log
    try:
        yield log
    finally:
        counters.call_log = outer
        _last = log


def current_log() -> deque | None:
    """The recording in progress, else the last one that ended, else None."""
    return counters.call_log if counters.call_log is not None else _last
