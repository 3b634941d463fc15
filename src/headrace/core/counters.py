"""What every stage reports to the profiler, and the one place stage time is measured.

:class:`StageCounters` is the contract between iterators (``NodeIterator.counters()``) and the
profiler: every key a stage may report, with its meaning and unit. The profiler reads nothing else.

:func:`timed` is the timing template: ``NodeIterator`` wraps every subclass's ``__next__`` and
``next_chunk`` with it, so no op times itself. It books the wall time of each stage's calls; a
stage's *exclusive* (self) time is that less the time of its inputs' calls made inside them
(:func:`exclusive_ns`), the way a profiler separates self time from total time. A serial pipeline's stage times therefore
add up to the consumer's wait instead of counting the source once per stage above it. The first
call of each stage is kept apart (``first_call_seconds``): it carries one-time costs such as a JIT
compile, starting workers or filling a shuffle buffer, which would otherwise inflate the per-element
figure.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypedDict, TypeVar

from .structure import flatten

_perf_ns = time.perf_counter_ns


class StageCounters(TypedDict, total=False):
    """Counters of one stage. Seconds are summed over workers; ``None`` means not measured."""

    name: str  #: readable stage name, e.g. ``map(decode at prep.py:12)``
    op: str  #: the op, e.g. ``map``
    produced: int  #: elements handed downstream
    inclusive_seconds: float  #: wall time of the stage's calls, its inputs' calls included
    exclusive_seconds: float  #: self time measured by the timing template, inputs excluded
    first_call_seconds: float  #: exclusive time of the first call (one-time costs live here)
    first_call_produced: int  #: elements produced by the end of the first call
    busy_seconds: float  #: time workers spent on the stage's own work (stages with workers only)
    cpu_seconds: float  #: CPU time of that work (thread time or process time)
    startup_seconds: float  #: one-time cost measured by the stage itself (worker start, compile)
    parallelism: int  #: workers in use
    executor: str  #: ``inline``, ``thread`` or ``process``
    input_wait_seconds: float  #: time the stage waited for its parent
    output_wait_seconds: float  #: time its callers were blocked waiting for its workers
    consumer_wait_seconds: float  #: the same, as prefetch names it
    buffered: int  #: elements held now
    buffer_capacity: int  #: elements it may hold
    buffer_bytes: float  #: bytes held now
    bytes_in_per_element: float  #: mean size of an input element
    bytes_out_per_element: float  #: mean size of an output element
    gil_held_fraction: float  #: share of a call that holds the GIL (thread workers)


_M = TypeVar("_M", bound=Callable[..., Any])

#: While set (``headrace.profile.record_calls``), every timed call appends ``(id(iterator), thread
#: id, start ns, end ns, elements produced so far)``: the slices of the trace. Bounded: the oldest
#: calls are dropped first.
call_log: deque | None = None
_get_ident = threading.get_ident


def timed(method: _M) -> _M:
    """Wrap an iterator method so the wall time of its calls is added to ``self.inclusive_ns``.

    A call nested in another timed call of the same stage (``__next__`` calling ``next_chunk``) is
    not counted twice. The first call's exclusive time is kept in ``self.first_call_ns``. Every call
    is timed: sampling one in N calls was tried, but a stage's own time is the difference of two
    totals (its calls' and its inputs'), and sampling them apart made that difference wrong by more
    than the stage's time on short runs.
    """
    if getattr(method, "_headrace_timed", False):
        return method

    def rare(self: Any, start: int, end: int) -> None:
        """What only some calls do: log the slice, keep the first call's time."""
        if call_log is not None:
            call_log.append((id(self), _get_ident(), start, end, self.produced))
        if not self.first_call_ns:
            self.first_call_ns = max(1, exclusive_ns(self))
            self.first_call_produced = self.produced

    # Two shapes, so the per-element path packs no argument tuple (this runs on every call).
    if method.__name__ == "__next__":

        @functools.wraps(method)
        def wrapper(self: Any, _clock: Callable[[], int] = _perf_ns) -> Any:
            if self.timing:
                return method(self)
            self.timing = True
            start = _clock()
            try:
                return method(self)
            finally:
                end = _clock()
                self.inclusive_ns += end - start
                self.timing = False
                if call_log is not None or not self.first_call_ns:
                    rare(self, start, end)

    else:

        @functools.wraps(method)
        def wrapper(self: Any, *args: Any) -> Any:
            if self.timing:
                return method(self, *args)
            self.timing = True
            start = _perf_ns()
            try:
                return method(self, *args)
            finally:
                end = _perf_ns()
                self.inclusive_ns += end - start
                self.timing = False
                if call_log is not None or not self.first_call_ns:
                    rare(self, start, end)

    wrapper._headrace_timed = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def total_ns(iterator: Any) -> int:
    """Wall time of all of a stage's calls, its inputs' calls made inside them included."""
    return iterator.inclusive_ns


def exclusive_ns(iterator: Any) -> float:
    """A stage's own time on the threads that call it: its calls' wall time less its inputs'.

    Exact for stages that call their inputs from inside their own calls (every inline stage); stages
    with workers call their inputs elsewhere and report ``busy_seconds`` from the
    workers instead.
    """
    nested = sum(total_ns(child) for child in iterator.inputs)
    return max(0.0, total_ns(iterator) - nested)


def busy_seconds(counters: StageCounters) -> float:
    """A stage's working time: its workers' busy time if it reports one; for a stage with a thread
    of its own (prefetch), its calls' time less the time they spent blocked on that thread; else
    its exclusive time."""
    busy = counters.get("busy_seconds")
    if busy is not None:
        return float(busy)
    if counters.get("executor", "inline") != "inline":
        blocked = counters.get("output_wait_seconds", counters.get("consumer_wait_seconds", 0.0))
        return max(0.0, counters.get("inclusive_seconds", 0.0) - blocked)
    return float(counters.get("exclusive_seconds", 0.0))


def element_nbytes(element: Any) -> int:
    """Bytes an element holds: arrays' ``nbytes``, bytes' length, 8 for any other leaf."""
    return sum(
        getattr(leaf, "nbytes", len(leaf) if isinstance(leaf, bytes) else 8) for leaf in flatten(element)
    )


def buffer_nbytes(buffer: list, samples: int = 8) -> float:
    """Estimated bytes held by ``buffer``: the mean size of up to ``samples`` evenly spread elements
    times its length (elements of one stage rarely differ much in size)."""
    if not buffer:
        return 0.0
    step = max(1, len(buffer) // samples)
    picked = buffer[::step][:samples]
    return sum(element_nbytes(e) for e in picked) / len(picked) * len(buffer)
