"""``executor=None``: pick threads or processes for a map stage, once, by measuring its function.

The probe computes real elements (they are handed on in order, never computed twice): two to four
alone (the first bare, then one or two after a native-threads window), then five pairs at once (one in a helper thread, one in the caller). Every call is timed on its own
thread's clocks: CPU time (``thread_time``) and, on Linux, the time it sat runnable waiting for a
core (``/proc/thread-self/schedstat``); a pair's clocks all start at its release (:func:`_pair`).
What is left of the wall time is time the thread was *blocked*: waiting on I/O or on the GIL. A call
blocked longer in a pair than alone waited for the other call to let go of the GIL; that extra time
over the other call's CPU time is the share of a call that holds the GIL (``gil_fraction``: ~1 for
pure Python, ~0 for numpy, zlib, decoders, I/O). Another program keeping the cores busy lengthens
wall times and run-queue waits, not CPU or blocked times; the other call's time preempted is taken
off the wait (a thread preempted while it held the GIL for a moment blocks its partner that long).
A heavily loaded machine can still disturb a pair either way: five pairs are measured and the
median counts, and a running stage is tried against inline (``ops/map_executor.py``) whatever the probe said.

The rule, from those numbers (:func:`decide`):

- one worker or one CPU, or a function cloudpickle cannot send: threads;
- a call alone takes under :data:`CHEAP_SECONDS` (a parse, a cast): ``inline`` at once, with no
  pairs measured: a hand-off to a thread costs the consumer more than such a call;
- whenever neither threads nor processes are estimated at least :data:`INLINE_GAIN` times one worker:
  ``inline``, the function called in the consumer's thread (cheap calls that hold the GIL: each
  element's hand-off to a thread, :data:`THREAD_COST_SECONDS`, would cost more than it gains);
- one call uses under :data:`MIN_PROCESS_CALL_SECONDS` of CPU: threads (a process round trip costs
  more than such a call; functions that mostly wait on I/O land here);
- while a call runs alone, native threads (not Python's: BLAS pools, threaded decoders) use more than
  :data:`OWN_THREADS` of its CPU: threads (processes would each start such pools on the same cores);
- processes only when they are estimated at least :data:`PROCESS_GAIN` times faster than threads:
  threads are capped by the GIL at ``1 / gil_fraction`` calls at once, processes by the cores and by
  the cost of moving each element there and its result back (:func:`transport_seconds`, measured on
  the probe's first input and result: pickling, unpickling and copying, plus
  :data:`PROCESS_COST_SECONDS` of messaging). The parent does its share of that moving alone, so it
  also caps processes at ``wall / transport`` calls at once. So a function that releases the GIL gets
  threads, and so does one whose elements cost more to move than to compute.

The choice is made once per stage of a pipeline, at its first iteration, and kept in the pipeline's
session (``core/run.py``: ``Run.remember``) for every later epoch and ``iter()`` of it; ``executor=``
skips the probe. ``Dataset.explain()`` and
``it.stats().report()`` show the reason.

>>> import time
>>> choice, outcomes = probe(lambda: None, [lambda: time.sleep(0.002)] * 6, workers=2, cpus=2)
>>> choice.kind, len(outcomes) <= 4  # calls this cheap in CPU need no pair: only solo calls ran
('thread', True)
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import process_time_ns, thread_time_ns
from typing import Any, TypedDict

from ..core.errors import attempt
from ..core.fingerprint import pipeline_key
from ..core.node import Node, Role, perf_ns
from ..core.process import PROCESS

MIN_PROCESS_CALL_SECONDS = 200e-6
PROCESS_COST_SECONDS = 50e-6  # the parent's share of sending one element to a process and back
# What a thread map costs per element in the consumer's thread, holding the GIL: taking the input,
# queueing it, waking a worker, collecting and ordering the result (measured ~15-25 us on the 2-core box).
THREAD_COST_SECONDS = 20e-6
INLINE_GAIN = 1.2  # below this estimated gain over one worker, the map runs inline (no hand-offs)
OVERLAP_TRUSTED = 1.5  # pairs at least this much faster than two calls in a row: the GIL model stands
# A call this short gains nothing from a thread whatever its GIL share (threads would reach at most
# its time over THREAD_COST_SECONDS, under INLINE_GAIN) and is far below a process round trip.
CHEAP_SECONDS = INLINE_GAIN * THREAD_COST_SECONDS
COPY_SECONDS_PER_BYTE = 0.5e-9  # large arrays go through shared memory: copied in, and out again
PROCESS_GAIN = 1.5  # processes must be estimated this much faster than threads: a large, robust gain
BACKGROUND_SECONDS = 0.003  # before each solo call: how busy unrelated native threads are
# Calls alone: the first often pays one-time costs (imports, kernels loading, a parse plan), so the
# fastest counts. The first runs with no window before it, and so does the second when the first
# took under COLD_SECONDS (a cheap call's first one can cost ~20x the next): a call cheaper than a
# thread hand-off (:data:`CHEAP_SECONDS`) decides ``inline`` before any window is waited.
SOLO_CALLS = 2
COLD_SECONDS = 1e-3
PAIRS = 5  # the probe is repeated; the median pair counts, so two disturbed pairs cannot decide
PROBE_ELEMENTS = SOLO_CALLS + 2 * PAIRS
#: pairs whose GIL shares spread over more than this disagree (a busy machine): more are measured,
#: up to MAX_PAIRS, and if they still disagree (an outlier left out) the choice says it is uncertain
DISAGREE = 0.5
MAX_PAIRS = 9  # from 9 pairs on, two disturbed pairs at each end are out-voted
OWN_THREADS = 0.3  # other threads of the process burn this much CPU per CPU of a call: it has its own

_SCHEDSTAT = "/proc/thread-self/schedstat"
_has_schedstat = os.path.exists(_SCHEDSTAT)


@dataclass(frozen=True)
class Choice:
    """The executor of one stage and why; measurements are None where they were not taken."""

    kind: str
    reason: str
    cpu_seconds: float | None = None  # CPU time of one call
    wall_seconds: float | None = None  # its wall time, less time spent waiting for a core
    gil_fraction: float | None = None  # share of a call that holds the GIL
    final: bool = True  # False: decided without a measurement (the next iteration measures again)
    # Time the probe's calls spent in the function (all threads): real elements, counted as the
    # stage's work so that a short first epoch's report does not miss them.
    probe_busy_seconds: float = 0.0
    probe_cpu_seconds: float = 0.0
    #: the wall time of the probe's first call: compile and first-use costs land there, and the
    #: report keeps them apart from the per-element figures (one-time costs)
    first_call_seconds: float = 0.0
    tried: bool = False  # True once a running stage tried it against inline (the parallel map's trial, ops/map_executor.py)
    # The least and greatest GIL share over the pairs, when they disagreed even after more pairs
    # (a busy machine): the median decided, and the report says the measurement is uncertain.
    gil_range: tuple[float, float] | None = None


class Verdicts:
    """Choices a running stage tried against inline (:attr:`Choice.tried`), kept for pipelines built
    again with the same stages: a new ``Dataset`` each epoch (or each benchmark run) starts from the
    verdict instead of probing and trying again, which on a short epoch costs as much as it finds.

    Keyed by the stage's pipeline key (``core.fingerprint.pipeline_key``: its function's code,
    constants and captured values, and every stage above it, not files or lines) and its execution
    settings (``num_parallel_calls``, ``executor`` ...). Captured objects the key sees by type only (a
    mutable container, a model) may differ under one key: the verdict, a speed choice, is reused then
    too. Bounded: the newest :data:`MAX_VERDICTS` are kept. One per process (``core.process.PROCESS.verdicts``).
    """

    def __init__(self, limit: int) -> None:
        self._kept: OrderedDict[tuple, Choice] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def recall(self, node: Node) -> Choice | None:
        """The verdict an earlier pipeline with the same stage reached, its reason saying so."""
        key = _verdict_key(node)
        with self._lock:
            choice = self._kept.get(key) if key is not None else None
        if choice is None:
            return None
        return dataclasses.replace(
            choice, reason=f"as an earlier pipeline with the same stages tried: {choice.reason}"
        )

    def keep(self, node: Node, choice: Choice) -> None:
        if not choice.tried:
            return
        key = _verdict_key(node)
        if key is None:
            return
        with self._lock:
            self._kept[key] = choice
            self._kept.move_to_end(key)
            while len(self._kept) > self._limit:
                self._kept.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


def _verdict_key(node: Node) -> tuple | None:
    found, key = attempt(pipeline_key, node)  # an unhashable capture: nothing is kept for it
    if not found:
        return None
    settings = sorted((name, repr(getattr(node, name, None))) for name in node.fields.named(Role.SETTING))
    return key, tuple(settings)


MAX_VERDICTS = 256
PROCESS.verdicts = Verdicts(MAX_VERDICTS)


class Measured(TypedDict):
    """The measurements of a :class:`Choice`, passed on as its keyword arguments."""

    cpu_seconds: float | None
    wall_seconds: float | None
    gil_fraction: float | None


# --- measuring --------------------------------------------------------------------------------------
@dataclass
class Timing:
    wall_ns: int
    cpu_ns: int
    delay_ns: int  # runnable but waiting for a core (0 where the kernel does not say)

    @property
    def blocked_ns(self) -> int:
        """Time off the CPU by the thread's own doing: I/O, locks, the GIL."""
        return max(0, self.wall_ns - self.cpu_ns - self.delay_ns)

    @property
    def own_ns(self) -> int:
        """The wall time less the wait for a core, and never under the CPU time: the kernel books a
        wait when the thread next runs, so a wait that began before the call can land inside it and
        exceed its wall time (seen beside a busy native thread: a call of "-414 us")."""
        return max(self.wall_ns - self.delay_ns, self.cpu_ns)


def run_delay_ns() -> int:
    """Time this thread sat runnable waiting for a core (another thread's: :func:`_task_clocks`); 0 where
    the kernel does not say (no ``/proc/thread-self/schedstat``)."""
    if not _has_schedstat:
        return 0
    try:
        with open(_SCHEDSTAT, "rb") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _clocks() -> tuple[int, int, int]:
    # The /proc read comes first here and last in _since: its own cost (tens of us in a VM) stays out
    # of the call's wall and CPU time (it had measured a 60 us function at 150 us of CPU).
    delay = run_delay_ns()
    return perf_ns(), thread_time_ns(), delay


def _since(start: tuple[int, int, int]) -> Timing:
    cpu = thread_time_ns()
    wall = perf_ns()
    return Timing(wall - start[0], cpu - start[1], run_delay_ns() - start[2])


def _run(call: Callable[[], Any]) -> tuple[bool, Any]:
    try:
        return True, call()
    except Exception as exc:  # noqa: BLE001 (delivered in order like any result)
        return False, exc


def transport_seconds(values: Sequence[Any]) -> float:
    """What moving ``values`` (an input and its result) between processes costs the parent: pickling
    and unpickling each (the parent pickles inputs and unpickles results; a worker does the mirror
    work at the same time), a copy per byte, and the messaging cost of an element."""
    import pickle  # noqa: PLC0415

    total = PROCESS_COST_SECONDS
    for value in values:
        try:
            start = perf_ns()
            buffers: list = []
            head = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
            pickle.loads(head, buffers=buffers)
            size = len(head) + sum(memoryview(b).nbytes for b in buffers)
            total += (perf_ns() - start) / 1e9 + size * COPY_SECONDS_PER_BYTE
        except Exception:  # noqa: BLE001 (a value pickle cannot take travels by cloudpickle: costlier)
            total += PROCESS_COST_SECONDS
    return total


def _python_threads_cpu_ns() -> int | None:
    """CPU time of every Python thread of this process (None where /proc does not say)."""
    total = 0
    here = threading.current_thread()
    for thread in threading.enumerate():
        if thread is here:
            # /proc books a running thread's CPU late (at the next tick or switch); this clock is exact
            # and process_time is too, so the difference is not mistaken for a native thread's CPU.
            total += thread_time_ns()
            continue
        try:
            with open(f"/proc/self/task/{thread.native_id}/schedstat", "rb") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError, TypeError):
            pass
    return total if _has_schedstat else None


def _native_cpu_ns() -> int | None:
    """CPU time of this process's threads that Python does not know (None where /proc does not say)."""
    python = _python_threads_cpu_ns()
    return None if python is None else process_time_ns() - python


def _background_rate() -> float | None:
    """CPU per wall ns that native threads Python does not know use while no call runs (a client
    library's, such as Ray's or gRPC's), over a short window; None where /proc does not say."""
    before, idle_from = _native_cpu_ns(), perf_ns()
    if before is None:
        return None  # nothing to measure: no window to wait for
    time.sleep(BACKGROUND_SECONDS)
    mid, idle_to = _native_cpu_ns(), perf_ns()
    return None if before is None or mid is None else (mid - before) / max(idle_to - idle_from, 1)


def _solo(
    call: Callable[[], Any], background: float | None = None, native: bool = True
) -> tuple[tuple[bool, Any], Timing, int | None]:
    """The outcome, the thread's timing, and the CPU time that threads Python does not know (BLAS
    pools, threaded decoders) used meanwhile: the call's own helpers. Other pipeline stages' workers
    are Python threads, so they do not count; native threads that were already busy before the call
    (``background``: :func:`_background_rate`, measured here when not given) are subtracted.
    ``native=False``: only the call and its timing (no window before it, no helpers measured)."""
    if not native:
        start = _clocks()
        outcome = _run(call)
        return outcome, _since(start), None
    if background is None:
        background = _background_rate()
    mid = _native_cpu_ns()
    start = _clocks()
    outcome = _run(call)
    timing = _since(start)
    after = _native_cpu_ns()
    if background is None or mid is None or after is None:
        return outcome, timing, None
    return outcome, timing, max(0, int((after - mid) - background * timing.wall_ns))


def _task_clocks(native_id: int) -> tuple[int, int] | None:
    """CPU time and run-queue wait of another thread of this process (exact while it is blocked: the
    kernel books a thread's time when it stops running); None where /proc does not say."""
    try:
        with open(f"/proc/self/task/{native_id}/schedstat", "rb") as f:
            cpu, delay = f.read().split()[:2]
        return int(cpu), int(delay)
    except (OSError, ValueError):
        return None


def _pair(
    first: Callable[[], Any], second: Callable[[], Any], partner: _Partner | None = None
) -> list[tuple[tuple[bool, Any], Timing]]:
    """``first`` in a helper thread and ``second`` here, released together. Every clock of both calls
    starts at the release: the thread that releases reads its own, and the other thread's (blocked at
    the barrier) from ``/proc``. A call waiting for the GIL cannot read its clocks until it has it, and
    clocks read before the barrier would count a thread's start-up (its CPU, its wait for a core on
    a busy machine) in its CPU and delay but not in its wall time: that hid the GIL (a pure-Python
    function measured 25%, a parser 0% while other programs ran)."""
    waiting: list[int] = []  # native ids of the threads at the barrier
    released: dict[int, tuple[int, int, int]] = {}  # native id -> (wall, cpu, delay) at the release

    def release() -> None:  # runs in the last thread to arrive, the other one blocked
        here = threading.get_native_id()
        wall = perf_ns()
        for native in waiting:
            if native == here:
                released[native] = (wall, thread_time_ns(), run_delay_ns())
            elif _has_schedstat and (other := _task_clocks(native)) is not None:
                released[native] = (wall, *other)
        released[0] = (wall, 0, 0)

    together = threading.Barrier(2, action=release)

    def timed(call: Callable[[], Any]) -> tuple[tuple[bool, Any], Timing]:
        native = threading.get_native_id()
        start = _clocks()
        waiting.append(native)
        together.wait()
        outcome = _run(call)
        # Without /proc: CPU and delay from before the barrier, wall time from the release.
        at = released.get(native) or (released[0][0], start[1], start[2])
        return outcome, _since(at)

    box: list = []
    if partner is None:
        helper = threading.Thread(target=lambda: box.append(timed(first)), name="headrace executor probe")
        helper.start()
        here = timed(second)
        helper.join()
    else:
        partner.run(lambda: box.append(timed(first)))
        here = timed(second)
        partner.join()
    return [box[0], here]


class _Partner:
    """One helper thread for all of a probe's pairs: starting a thread per pair cost ~1-2 ms each on a
    busy 2-core machine, more than the calls measured."""

    def __init__(self) -> None:
        self._work: list[Callable[[], Any] | None] = []
        self._ready = threading.Condition()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="headrace executor probe", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._ready:
                while not self._work:
                    self._ready.wait()
                job = self._work.pop()
            if job is None:
                return
            try:
                job()
            finally:
                self._done.set()

    def run(self, job: Callable[[], Any]) -> None:
        self._done.clear()
        with self._ready:
            self._work.append(job)
            self._ready.notify()

    def join(self) -> None:
        self._done.wait()

    def close(self) -> None:
        with self._ready:
            self._work.append(None)
            self._ready.notify()
        self._thread.join()


def gil_fraction(solo_blocked_ns: int, pair: list[Timing]) -> float | None:
    """Share of a call holding the GIL, from a pair run at once: the longest extra block of one call
    over the other call's CPU time (a call can wait for the GIL at most while the other computes).
    The other call's own wait for a core is taken off the block: a thread the OS preempted while it
    held the GIL for a moment keeps the waiter blocked that long, which is load, not the function.
    That wait counts at most as the other call's time off the CPU: a running thread's delay may be
    booked late (seen in a VM), so it can exceed the interval it is read over."""
    (a, b) = pair
    shares = []
    for waiter, other in ((a, b), (b, a)):
        if other.cpu_ns > 0:
            preempted = min(other.delay_ns, max(0, other.wall_ns - other.cpu_ns))
            shares.append((waiter.blocked_ns - solo_blocked_ns - preempted) / other.cpu_ns)
    return min(1.0, max(0.0, max(shares))) if shares else None


def probe(
    fn: Callable,
    calls: Sequence[Callable[[], Any]],
    workers: int,
    cpus: int,
    inputs: Sequence[Any] = (),
    more: Callable[[int], Sequence[Callable[[], Any]]] | None = None,
) -> tuple[Choice, list[tuple[bool, Any]]]:
    """Measure ``calls`` (up to :data:`PROBE_ELEMENTS` thunks computing real elements, in order) and
    decide; returns the choice and the outcomes ``(ok, value)`` of the calls made (a prefix of
    ``calls`` and of what ``more`` gave). ``inputs``: the first call's input element, to measure
    what moving it costs. ``more(n)``: up to ``n`` further thunks (the next elements), asked for when
    the pairs disagree. The choice carries the time the calls took (``probe_busy_seconds``,
    ``probe_cpu_seconds``)."""
    timings: list[Timing] = []
    calls = list(calls)
    choice, outcomes = _probe(fn, calls, workers, cpus, inputs, timings, more)
    busy = sum(t.wall_ns for t in timings) / 1e9
    cpu = sum(t.cpu_ns for t in timings) / 1e9
    first = timings[0].wall_ns / 1e9 if timings else 0.0
    return (
        dataclasses.replace(choice, probe_busy_seconds=busy, probe_cpu_seconds=cpu, first_call_seconds=first),
        outcomes,
    )


def _probe(
    fn: Callable,
    calls: list[Callable[[], Any]],
    workers: int,
    cpus: int,
    inputs: Sequence[Any],
    timings: list[Timing],
    more: Callable[[int], Sequence[Callable[[], Any]]] | None = None,
) -> tuple[Choice, list[tuple[bool, Any]]]:
    outcomes: list[tuple[bool, Any]] = []
    if workers < 2 or cpus < 2 or not calls:
        return decide(workers, cpus), outcomes
    solo: list[Timing] = []
    # CPU of the call's own native threads per CPU of the call (BLAS, threaded decoders), measured
    # around one solo call after a window (:func:`_solo`): a function with its own threads shows them
    # in every call. The calls before it run bare, so a cheap map (a parse, a cast) is decided inline
    # after a call or two, before any window (3 ms, a few % of a short run) or pair is waited for.
    helpers: float | None = None
    checked = False
    windows = 0

    def window_wanted() -> bool:  # a second window when the first saw native threads: the least counts
        return helpers is None or (helpers > OWN_THREADS and windows < 2)

    while len(solo) < SOLO_CALLS or window_wanted():
        if len(solo) >= len(calls):
            if more is None or not window_wanted():
                break
            calls.extend(more(1))  # the bare calls took the solo places: one more measures the window
            if len(solo) >= len(calls):
                break
        bare = not solo or (len(solo) == 1 and solo[0].wall_ns < COLD_SECONDS * 1e9)
        outcome, timing, native_cpu = _solo(calls[len(solo)], native=not bare)
        outcomes.append(outcome)
        solo.append(timing)
        timings.append(timing)
        if not outcome[0]:
            return decide(workers, cpus, failed=True), outcomes
        if timing.own_ns < CHEAP_SECONDS * 1e9:
            return decide(workers, cpus, cheap=timing), outcomes
        if not checked:  # a call that is not cheap may want processes: can it be sent to one?
            checked = True
            from .pickling import dumps  # noqa: PLC0415

            sendable, exc = attempt(dumps, fn)
            if not sendable:
                return decide(workers, cpus, unpicklable=f"{type(exc).__name__}: {exc}"), outcomes
        if not bare:
            windows += 1
            seen = native_cpu / max(timing.cpu_ns, 1) if native_cpu is not None else 0.0
            helpers = seen if helpers is None else min(helpers, seen)
    helpers = helpers or 0.0

    # Each clock's least over the solo calls: a call that really waits (I/O) waits in every call, while
    # one preempted on a busy machine (its wait for a core booked late, as in a VM) is the exception.
    cpu = min(t.cpu_ns for t in solo) / 1e9
    wall = min(t.own_ns for t in solo) / 1e9
    if helpers > OWN_THREADS:
        return decide(workers, cpus, cpu_seconds=cpu, wall_seconds=wall, own_threads=helpers), outcomes
    fractions: list[float] = []
    speedups: list[float] = []  # per pair: two calls' solo time over the pair's time from its release
    if cpu >= MIN_PROCESS_CALL_SECONDS or cpu >= wall / 2:  # else it mostly waits: threads, no pair needed
        partner: _Partner | None = None
        try:
            solo_blocked = min(t.blocked_ns for t in solo)
            index = len(solo)
            while True:
                if index + 1 >= len(calls):
                    wanted = index + 2 - len(calls)
                    if more is None or (len(fractions) >= PAIRS and not _disagree(fractions)):
                        break
                    calls.extend(more(wanted))
                    if index + 1 >= len(calls):
                        break
                if partner is None:
                    partner = _Partner()
                results = _pair(calls[index], calls[index + 1], partner)
                index += 2
                outcomes.extend(outcome for outcome, _ in results)
                timings.extend(timing for _, timing in results)
                if not all(outcome[0] for outcome, _ in results):
                    return decide(workers, cpus, failed=True), outcomes
                fraction = gil_fraction(solo_blocked, [timing for _, timing in results])
                if fraction is not None:
                    fractions.append(fraction)
                # Less the time each waited for a core: another program on the cores is the
                # load's business (the trial measures it), not what the function lets two threads do.
                pair_ns = max(timing.own_ns for _, timing in results)
                speedups.append(2 * wall * 1e9 / max(pair_ns, 1))
                if len(fractions) >= MAX_PAIRS or (len(fractions) >= PAIRS and not _disagree(fractions)):
                    break
        finally:
            if partner is not None:
                partner.close()
    measured = sorted(fractions)[len(fractions) // 2] if len(fractions) >= PAIRS else None
    spread = (min(fractions), max(fractions)) if measured is not None and _disagree(fractions) else None
    move = transport_seconds([*inputs[:1], outcomes[0][1]]) if measured is not None else None
    choice = decide(
        workers,
        cpus,
        cpu_seconds=cpu,
        wall_seconds=wall,
        gil=measured,
        transport=move,
        gil_range=spread,
        pairs=len(fractions) or PAIRS,
        overlap=sorted(speedups)[len(speedups) // 2] if measured is not None else None,
    )
    return dataclasses.replace(choice, gil_range=spread), outcomes


def _disagree(fractions: list[float]) -> bool:
    """The pairs measured GIL shares too far apart to trust their median (a busy machine). From
    five pairs on, the least and the greatest are left out: one disturbed pair is out-voted."""
    if len(fractions) < 2:
        return False
    ordered = sorted(fractions)
    trim = (len(ordered) - 1) // 4
    return ordered[-1 - trim] - ordered[trim] > DISAGREE


def decide(
    workers: int,
    cpus: int,
    *,
    unpicklable: str | None = None,
    failed: bool = False,
    cpu_seconds: float | None = None,
    wall_seconds: float | None = None,
    gil: float | None = None,
    own_threads: float | None = None,
    transport: float | None = None,
    gil_range: tuple[float, float] | None = None,
    pairs: int = PAIRS,
    cheap: Timing | None = None,
    overlap: float | None = None,
) -> Choice:
    """The rule above, on measured seconds; ``cheap``: a solo call under :data:`CHEAP_SECONDS`;
    ``overlap``: how much faster two calls ran at once than one after the other (median pair).

    >>> decide(8, 8, cpu_seconds=0.001, wall_seconds=0.001, gil=0.98).kind
    'process'
    >>> decide(8, 8, cpu_seconds=0.001, wall_seconds=0.001, gil=0.05).reason
    'holds the GIL 5% of a call (median of 5 pairs): 8 threads reach ~8.0x one worker, processes ~7.6x'
    >>> print(decide(4, 4, cpu_seconds=0.002, wall_seconds=0.002, gil=0.3, gil_range=(0.0, 0.94), pairs=7).reason)
    holds the GIL 30% of a call (uncertain: 0-94% over 7 pairs, median 30%; the machine is busy): 4 threads reach ~3.2x one worker, processes ~3.9x
    >>> choice = decide(2, 2, cpu_seconds=0.0004, wall_seconds=0.0004, gil=0.9, transport=0.0004)
    >>> print(choice.kind, choice.reason)
    inline holds the GIL 90% of a call (median of 5 pairs): 2 threads reach ~1.1x one worker, processes ~0.5x (moving an element and its result costs 400 us, 100% of a call): one worker in the consumer's thread is faster
    """
    measured: Measured = {"cpu_seconds": cpu_seconds, "wall_seconds": wall_seconds, "gil_fraction": gil}
    share = (
        ""
        if gil is None
        else f"holds the GIL {100 * gil:.0f}% of a call (median of {pairs} pairs)"
        if gil_range is None
        else f"holds the GIL {100 * gil:.0f}% of a call (uncertain: {100 * gil_range[0]:.0f}-"
        f"{100 * gil_range[1]:.0f}% over {pairs} pairs, median {100 * gil:.0f}%; the machine is busy)"
    )
    if overlap is not None and share:
        share += f"; two calls at once ran {overlap:.2f}x as fast as one after the other"
    if workers < 2 or cpus < 2:
        return Choice("thread", f"{min(workers, cpus)} worker/CPU: processes could not run more at once")
    if unpicklable is not None:
        return Choice("thread", f"map_func cannot be pickled for a process ({unpicklable})")
    if failed:
        return Choice("thread", "map_func raised while measured: threads for now", final=False)
    if cheap is not None:
        wall = cheap.own_ns / 1e9
        return Choice(
            "inline",
            f"one call takes {wall * 1e6:,.0f} us: handing an element to a thread costs ~"
            f"{THREAD_COST_SECONDS * 1e6:.0f} us in the consumer, so no worker can gain; one worker in the "
            "consumer's thread is faster",
            cpu_seconds=cheap.cpu_ns / 1e9,
            wall_seconds=wall,
        )
    if cpu_seconds is None or wall_seconds is None:
        return Choice("thread", "too few elements to measure map_func", final=False)
    if cpu_seconds < MIN_PROCESS_CALL_SECONDS and gil is not None and cpu_seconds >= wall_seconds / 2:
        wall = max(wall_seconds, cpu_seconds)
        threads = _capped(_threads_gain(workers, wall, cpu_seconds, gil), overlap, workers, wall)
        numbers = (
            f"one call uses {cpu_seconds * 1e6:,.0f} us of CPU and {share}: "
            f"{workers} threads reach ~{threads:.1f}x one worker after hand-offs"
        )
        if threads < INLINE_GAIN:
            return Choice("inline", numbers + ": one worker in the consumer's thread is faster", **measured)
        return Choice("thread", numbers + "; too little CPU for a process round trip to pay off", **measured)
    if cpu_seconds < MIN_PROCESS_CALL_SECONDS:
        what = "it mostly waits, which releases the GIL" if cpu_seconds < wall_seconds / 2 else "cheap"
        return Choice(
            "thread",
            f"one call uses {cpu_seconds * 1e6:,.0f} us of CPU ({what}): too little for a process "
            "round trip to pay off",
            **measured,
        )
    if own_threads is not None:
        return Choice(
            "thread",
            f"while one call ran, native threads used {own_threads:.1f}x its CPU (map_func has its own "
            "threads, e.g. BLAS or a threaded decoder): processes would compete with them for the cores",
            **measured,
        )
    if gil is None:
        return Choice("thread", "too few elements to measure two calls at once", **measured, final=False)
    wall = max(wall_seconds, cpu_seconds)
    move = PROCESS_COST_SECONDS if transport is None else transport
    modelled = _threads_gain(workers, wall, cpu_seconds, gil)
    threads = _capped(modelled, overlap, workers, wall)
    processes = min(workers, cpus * wall / cpu_seconds, wall / move) * wall / (wall + move)
    reach = (
        f"~{threads:.1f}x"
        if threads >= modelled
        else f"~{threads:.1f}x as paired (~{modelled:.1f}x by the GIL share)"
    )
    numbers = f"{share}: {workers} threads reach {reach} one worker, processes ~{processes:.1f}x"
    if transport is not None and transport > 2 * PROCESS_COST_SECONDS:
        numbers += (
            f" (moving an element and its result costs {transport * 1e6:,.0f} us, "
            f"{100 * transport / wall:.0f}% of a call)"
        )
    if max(threads, processes) < INLINE_GAIN:
        return Choice("inline", numbers + ": one worker in the consumer's thread is faster", **measured)
    # Which workers: the GIL model, as the pairs' speed also drops when other programs keep the cores
    # busy (a hog beside a GIL-free call paired at ~1.0x), which slows processes as much.
    if processes >= PROCESS_GAIN * modelled:
        return Choice("process", numbers, **measured)
    return Choice("thread", numbers, **measured)


def _capped(threads: float, overlap: float | None, workers: int, wall: float) -> float:
    """Threads' estimate, held to what the pairs showed when they overlapped under
    :data:`OVERLAP_TRUSTED`: two calls at once ``overlap`` times as fast as
    one after the other means a share ``2 / overlap - 1`` of a call ran one at a time (Amdahl's law
    for two), which, with the consumer's hand-off, bounds ``workers`` threads. The GIL share alone
    missed this on the 2-core box: a JPEG decode-and-augment measured holding it 7-68% was estimated
    at 1.4-2.0x, paired at 0.6-1.3x and ran at 0.7x serial on 2 threads (waking threads and handing
    the GIL over cost more than the overlap)."""
    # Pairs that overlapped well leave the GIL model alone: a noisy two-worker figure extrapolated to
    # 16 workers would send GIL-free functions to processes.
    if overlap is None or overlap <= 0 or overlap >= OVERLAP_TRUSTED:
        return threads
    serial = min(1.0, max(0.0, 2 / overlap - 1))
    bound = wall / (serial * wall + THREAD_COST_SECONDS + (1 - serial) * wall / workers)
    return min(threads, bound)


def _threads_gain(workers: int, wall: float, cpu: float, gil: float) -> float:
    """Threads' estimated speed over one worker: capped by the workers, and by the part of each
    element that holds the GIL (the call's share plus the consumer's hand-off)."""
    return wall / max(wall / workers, gil * cpu + THREAD_COST_SECONDS)
