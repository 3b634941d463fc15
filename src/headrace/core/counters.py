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

Timing is sampled where it would cost: two clock reads per call nearly doubled the time of a cheap
unbatched pipeline. The consumer (``headrace.Iterator``) switches the stages its calls drive between
timed and untimed calls (:func:`set_timed`): every call while calls are slow or recorded, else one
call after each random gap, counted for the gap (``probe.inclusive_ns`` is then an unbiased estimate). A
stage and its inputs are switched together, so they are timed in the same calls and self times (a
difference of two totals) stay consistent; sampling each stage on its own was tried and made that
difference wrong by more than the stage's time on short runs.
"""

from __future__ import annotations

import functools
import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypedDict, TypeVar

from .errors import attempt
from .process import PROCESS
from .structure import flatten

#: The clock of stage time: the timing template, the consumer (``headrace.Iterator``) and prefetch's
#: thread read it by this name (``core.node.perf_ns`` is the same function). Tests of the time
#: accounting swap it in those modules for a clock that moves only when they say (tests/helpers/clock.py).
perf_ns: Callable[[], int] = time.perf_counter_ns


class ReportCounters(TypedDict, total=False):
    """The counters the report reads: ``it.stats()`` reads each into the ``StageStats`` field of its
    name, the timing ones into its busy and one-time seconds; the waits and the startup stay in
    ``extra``. Seconds are summed over workers; ``None`` means not measured."""

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
    executor_reason: str  #: why that executor, in words (measured, tried, given)
    gil_range: tuple[float, float] | None  #: least and greatest GIL share when the probe's pairs disagreed
    run_delay_seconds: float | None  #: workers' time waiting for a core (schedstat); None: unknown
    vectorised_map: str  #: a batch running the map above it once per batch: that map's stage
    input_wait_seconds: float  #: time the stage waited for its parent
    output_wait_seconds: float  #: time its callers were blocked waiting for its workers
    consumer_wait_seconds: float  #: the same, as prefetch names it
    buffered: int  #: elements held now
    buffer_capacity: int  #: elements it may hold
    buffer_bytes: float  #: bytes held now
    bytes_in_per_element: float  #: mean size of an input element
    bytes_out_per_element: float  #: mean size of an output element
    gil_held_fraction: float | None  #: share of a call that holds the GIL (thread workers)
    first_task_seconds: float  #: the first task's time on a worker (one-time costs live here)
    calls_user_function: bool  #: the stage runs a user function (the report's advice reads it)
    reorders: bool  #: the stage may yield out of input order
    reads_input: bool  #: the stage reads files or other outside input (a source)


class StageCounters(ReportCounters, total=False):
    """Counters of one stage: the report's, and stage-specific ones that ``it.stats()`` keeps in
    ``StageStats.extra`` (their names, with the startup and the waits: :data:`EXTRA_KEYS`)."""

    deterministic: bool  #: outputs in input order (parallel map, interleave, TFRecord reads)
    pool_size: int  #: workers started (``parallelism`` may use fewer)
    chunk_size: int  #: elements a worker computes per task
    worker_pids: list[int]  #: the stage's worker processes (threads: none)
    in_flight: int  #: tasks sent to workers and not back yet
    ready: int  #: computed outputs waiting their turn
    messages: int  #: messages exchanged with process workers
    parent_seconds: float  #: the consumer's time sending and receiving them
    snapshots_taken: int  #: parent states kept for exact checkpoints
    mean_buffered: float  #: prefetch: mean elements in the buffer when the consumer took one
    producer_blocked_seconds: float  #: prefetch: its thread's time waiting for room in the buffer
    open_slots: int  #: interleave: inputs open now
    cache_mode: str  #: cache: ``writing``, ``reading`` ...
    cache_file: str  #: cache: its file ("" in memory)
    errors_ignored: int  #: ignore_errors: elements dropped for an error
    workers: int  #: run_on: remote workers
    restarts: int  #: run_on: remote workers started again after a failure
    records_read: int  #: TFRecord: records handed on
    bytes_read: int  #: TFRecord: bytes of those records
    records_skipped: int  #: TFRecord: records lost to damage (``on_error``)
    files_skipped: int  #: TFRecord: files skipped for damage or absence
    damage_found: int  #: TFRecord: damaged places found
    warnings_logged: int  #: TFRecord: damage warnings logged (rate-limited)


#: every key of :class:`StageCounters`: the one list of the counter names (the profile's
#: ``StageStats`` reads them from here).
COUNTER_KEYS = frozenset(StageCounters.__annotations__)
#: the declared counters ``it.stats()`` keeps in ``StageStats.extra``: the stage-specific ones above,
#: the one-time startup and the waits (the report reads them from the timing and busy figures).
EXTRA_KEYS = (COUNTER_KEYS - frozenset(ReportCounters.__annotations__)) | {
    "startup_seconds",
    "output_wait_seconds",
    "consumer_wait_seconds",
}


class Probe:
    """What the profiler measures of one stage, in one object (``NodeIterator.probe``): the timing
    template's books and switches, sampled element sizes, and the trace's link to the stage's last
    logged call. Nothing else of the profiler lives on a stage.

    ``inclusive_ns``: wall time of the stage's calls (each counting ``weight`` times while the
    consumer samples, see :func:`set_timed`); ``timing``: a call is being timed (held up between
    calls: untimed); ``first_call_ns`` / ``first_call_produced``: the first call's exclusive time and
    the elements it made (one-time costs); ``sample_bytes``: the next timed call measures an output
    element (``bytes_out_sum`` / ``bytes_out_samples``); ``last_slice``: the number of the stage's last
    call logged while recording (``CallLog.add_call``), where a producer thread finds it.
    """

    __slots__ = (
        "inclusive_ns",
        "first_call_ns",
        "first_call_produced",
        "timing",
        "weight",
        "sample_bytes",
        "bytes_out_sum",
        "bytes_out_samples",
        "last_slice",
    )

    def __init__(self) -> None:
        self.inclusive_ns = 0
        self.first_call_ns: float = 0
        self.first_call_produced = 0
        self.timing = False
        self.weight = 1
        self.sample_bytes = False
        self.bytes_out_sum = 0.0
        self.bytes_out_samples = 0
        self.last_slice: int | None = None


_M = TypeVar("_M", bound=Callable[..., Any])

CALL, CHUNK = "call", "chunk"


class CallLog(deque):
    """The slices of the trace, recorded while ``headrace.profile.record_calls`` runs; bounded (the
    oldest are dropped first). One tuple per slice::

        (key, (pid, thread), start ns, end ns, elements, kind, number, delivered)

    ``key`` is ``id()`` of the stage's iterator. ``kind`` is :data:`CALL` for a call of the stage
    (logged by the timing template on the thread that made it; ``elements`` is what that call
    produced, None when the stage ran before this recording and its count so far is unknown) or
    :data:`CHUNK` for work a stage's worker did for it (a thread, or a process whose pid is given;
    ``elements`` is how many it computed). Times are ``perf_counter_ns``: CLOCK_MONOTONIC on Linux,
    the same clock in every process, so a worker process's times line up with the parent's.

    ``number`` identifies the slice (unique across recordings). ``delivered`` holds, for a call,
    the numbers of the slices whose first element that call handed on from another thread or
    process: a worker's chunk (parallel map, ``parallelize``, a parallel interleave's read) or the
    producer thread's call of prefetch's input. The stage reports each hand-off with
    :meth:`deliver`; the trace draws its flow arrows from these links.
    """

    def __init__(self, maxlen: int):
        super().__init__(maxlen=maxlen)
        self.pid = os.getpid()
        # Each stage's elements so far at its last logged call (its next call's count is the
        # difference). Cleared past ``maxlen`` stages (a flat_map opens one per element): a stage
        # forgotten so logs its next call without a count, never with a wrong one.
        self.produced: dict[int, int] = {}
        self.limit = maxlen
        # Hand-offs reported during a stage's call in progress, (time, number), by stage: its
        # logged call takes them. Each stage's calls and hand-offs run on one thread at a time.
        self.handed: dict[int, list[tuple[int, int]]] = {}

    def add_call(self, iterator: Any, start: int, end: int) -> None:
        """Log a call of ``iterator`` (the timing template calls this while recording); its number
        goes to ``iterator.probe.last_slice``, where a producer thread calling it finds it."""
        key, produced, seen = id(iterator), iterator.produced, self.produced
        # A first call ever counts from 0 (also when a dead iterator's id was reused); a stage not
        # seen yet that ran before this recording gets no count.
        before = seen.get(key) if iterator.probe.first_call_ns else 0
        if key not in seen and len(seen) >= self.limit:
            seen.clear()
        seen[key] = produced
        # A restore may set a stage's count back (take): then this call's count is unknown too.
        elements = None if before is None or produced < before else produced - before
        handed = self.handed.pop(key, None) if self.handed else None
        # A hand-off made before this call began was made by an untimed call (the consumer's
        # sampling gap as the recording started): it belongs to no logged call, so it is dropped.
        if handed is None:
            delivered = _NONE
        elif len(handed) == 1:  # the usual case (prefetch: one per call), without building a list
            at, number = handed[0]
            delivered = (number,) if at >= start else _NONE
        else:
            delivered = tuple([number for at, number in handed if at >= start])
        number = iterator.probe.last_slice = _next_number()
        self.append((key, (self.pid, _get_ident()), start, end, elements, CALL, number, delivered))

    def add_chunk(self, key: int, pid: int, thread: int, start: int, end: int, elements: int) -> int:
        """Log a chunk of work a worker did for the stage whose iterator has ``id()`` ``key``;
        returns its number, for the stage to :meth:`deliver` when it hands the chunk's first
        element on."""
        number = _next_number()
        self.append((key, (pid, thread), start, end, elements, CHUNK, number, _NONE))
        return number

    def deliver(self, key: int, number: int) -> None:
        """Note that the stage whose iterator has ``id()`` ``key`` is handing on, in its call in
        progress on this thread, the first element of slice ``number`` (made on another thread or
        process); its logged call keeps the link."""
        handed = self.handed.get(key)
        if handed is None:
            if len(self.handed) >= self.limit:  # stages whose calls are never logged again
                self.handed.clear()
            handed = self.handed[key] = []
        handed.append((perf_ns(), number))


# The recording in progress is ``PROCESS.recorder`` (``core/process.py``): timed calls log into it
# from ``rare()``; thread and process workers log each chunk (one check per chunk, not per element).
_get_ident = threading.get_ident
_next_number = itertools.count().__next__  # slice numbers, shared by all recordings: none repeats
_NONE: tuple[int, ...] = ()


def timed(method: _M) -> _M:
    """Wrap an iterator method so the wall time of its calls is added to ``self.probe.inclusive_ns``.

    A call nested in another timed call of the same stage (``__next__`` calling ``next_chunk``) is
    not counted twice. The first call's exclusive time is kept in ``probe.first_call_ns``. A call
    counts ``probe.weight`` times: the untimed calls it stands for (see :func:`set_timed`).
    """
    if getattr(method, "_headrace_timed", False):
        return method
    process = PROCESS  # a closure variable: one lookup less per call than the module's name

    def rare(self: Any, probe: Probe, start: int, end: int) -> None:
        """What only some calls do: log the slice, keep the first call's time."""
        log = process.recorder
        if log is not None:
            log.add_call(self, start, end)
        if not probe.first_call_ns:
            if probe.weight != 1:
                # First called inside a sampled call (a stage that starts late, e.g. concatenate's
                # second input): a one-time cost stands for itself, not for the gap before it.
                probe.inclusive_ns -= (end - start) * (probe.weight - 1)
            probe.first_call_ns = max(1, exclusive_ns(self))
            probe.first_call_produced = self.produced

    # Two shapes, so the per-element path packs no argument tuple (this runs on every call).
    if method.__name__ == "__next__":

        @functools.wraps(method)
        def wrapper(self: Any) -> Any:
            probe = self.probe
            if probe.timing:
                return method(self)
            probe.timing = True
            start = perf_ns()  # looked up at each call (not bound here): tests swap the clock
            try:
                out = method(self)
            finally:
                end = perf_ns()
                probe.inclusive_ns += (end - start) * probe.weight
                probe.timing = False
                if process.recorder is not None or not probe.first_call_ns:
                    rare(self, probe, start, end)
            if probe.sample_bytes:
                note_size(probe, out)
            return out

    else:

        @functools.wraps(method)
        def wrapper(self: Any, *args: Any) -> Any:
            probe = self.probe
            if probe.timing:
                return method(self, *args)
            probe.timing = True
            start = perf_ns()
            try:
                out = method(self, *args)
            finally:
                end = perf_ns()
                probe.inclusive_ns += (end - start) * probe.weight
                probe.timing = False
                if process.recorder is not None or not probe.first_call_ns:
                    rare(self, probe, start, end)
            if probe.sample_bytes and out:
                note_size(probe, out[0])
            return out

    wrapper._headrace_timed = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


#: The consumer (``headrace.Iterator``) times every call while its calls are slow (each at least
#: ``SLOW_CALL_NS``: the timing is then a negligible share) and for its first ``WARMUP_CALLS``.
#: Otherwise it times one call, then runs a random gap of about ``sample_one_in`` calls untimed (a
#: random length, so no periodic pattern in the data lines up with it), and so on; the timed call
#: after a gap counts for the whole gap (``set_timed``'s weight). 0 times every call, as does
#: recording a trace (``record_calls``). Set per pipeline: ``Options().profiling.sample_one_in``.
WARMUP_CALLS = 32
SLOW_CALL_NS = 1_000_000


def sampled_stages(root: Any) -> list:
    """The stages whose calls all run inside the consumer's calls to ``root``: the ones the
    consumer may switch between timed and untimed. Stops below a stage that calls its inputs from
    a thread of its own (their calls go on between the consumer's; they stay timed)."""
    out, stack = [], [root]
    while stack:
        it = stack.pop()
        out.append(it)
        if not it.inputs_on_other_threads:
            stack.extend(it.inputs)
    return out


def set_timed(stages: list, on: bool, weight: int = 1) -> None:
    """Switch ``stages`` to timed calls, each call's time counting ``weight`` times (the timed call
    stands for the untimed calls before it: an unbiased estimate of the total, with a stage and its
    inputs timed in the same calls so self times stay consistent), or to untimed calls.

    Untimed is the wrapper's nested-call flag (``probe.timing``) held up between calls: the wrapper then
    passes straight through, one attribute check. (Swapping each stage's class for an unwrapped twin
    was tried: changing an object's class defeats CPython's specialised attribute access, and the
    untimed calls came out slower than timed ones.)"""
    for it in stages:
        probe = it.probe
        if on:
            probe.timing = False
            probe.weight = weight
        elif probe.first_call_ns:
            probe.timing = True
        else:
            # Not called yet (concatenate's second input): its first call, often a one-time cost
            # such as opening a file, is timed whenever it comes, and counted once.
            probe.weight = 1


def exclusive_ns(iterator: Any) -> float:
    """A stage's own time on the threads that call it: its calls' wall time less its inputs'.

    Exact for stages that call their inputs from inside their own calls (every inline stage); stages
    with workers call their inputs elsewhere and report ``busy_seconds`` from the
    workers instead.
    """
    nested = sum(child.probe.inclusive_ns for child in iterator.inputs)
    return max(0.0, iterator.probe.inclusive_ns - nested)


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


def note_size(probe: Probe, element: Any) -> None:
    """Add the size of one output element to the stage's mean (asked for by the consumer now and
    then through ``probe.sample_bytes``, so sizes cost nothing per element)."""
    probe.sample_bytes = False
    measured, size = attempt(element_nbytes, element)
    if not measured:  # an element the estimate cannot read must not stop iteration
        return
    probe.bytes_out_sum += size
    probe.bytes_out_samples += 1


def report_as_own(out: StageCounters, source: StageCounters, keys: tuple[str, ...]) -> None:
    """Copy those of ``keys`` that ``source`` reports into ``out``: a stage showing the counters of an
    iterator it runs inside as its own (the TFRecord source, its interleave's executor)."""
    for key in keys:
        if key in source:
            out[key] = source[key]  # type: ignore[literal-required]  # keys: names of StageCounters


def element_sizes(iterator: Any) -> StageCounters:
    """Mean sizes of a stage's output elements and of its inputs' (when measured)."""
    out: StageCounters = {}
    probe = iterator.probe
    if probe.bytes_out_samples:
        out["bytes_out_per_element"] = probe.bytes_out_sum / probe.bytes_out_samples
    measured = [child.probe for child in iterator.inputs if child.probe.bytes_out_samples]
    if measured:
        out["bytes_in_per_element"] = sum(c.bytes_out_sum / c.bytes_out_samples for c in measured) / len(
            measured
        )
    return out


def buffer_nbytes(buffer: list, samples: int = 8) -> float:
    """Estimated bytes held by ``buffer``: the mean size of up to ``samples`` evenly spread elements
    times its length (elements of one stage rarely differ much in size)."""
    if not buffer:
        return 0.0
    step = max(1, len(buffer) // samples)
    picked = buffer[::step][:samples]
    return sum(element_nbytes(e) for e in picked) / len(picked) * len(buffer)
