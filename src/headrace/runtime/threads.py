"""The thread executor: worker threads calling a map function, for functions that release the GIL.

Tasks travel in *chunks*: ``submit`` collects them and a chunk goes to the task queue once it holds
``chunk_size`` tasks (or at ``flush``/``wait``); a worker computes the whole chunk and returns its
results in one message. ``chunk_size`` follows the measured time per element so that a chunk is
about :data:`CHUNK_SECONDS` of work: cheap functions pay one queue hand-off (and GIL switch) per
chunk instead of per element, while slow ones (I/O) keep chunks of one and full parallelism.

While ``headrace.profile.record_calls`` records, each chunk is also a slice of the owning stage on
the worker's thread (``core.counters.CallLog``), and ``firsts`` maps each returned chunk's first
task to the chunk's slice number (the owner links the chunk to the call that hands that element
on); otherwise a worker pays one check per chunk.

The owner (a parallel map) bounds how many tasks are in flight, so neither queue grows without
limit. Worker threads hold no reference to their owner, so an abandoned iterator is garbage
collected and stops them.

>>> executor = ThreadExecutor(lambda x: x * 2, workers=2, stage="doctest")
>>> executor.submit(0, 5, None); executor.submit(1, 7, None)
>>> results = []
>>> while len(results) < 2:
...     results += executor.wait(1.0)
>>> sorted((task, value) for task, ok, value in results)
[(0, 10), (1, 14)]
>>> executor.shutdown()
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from time import thread_time_ns
from typing import Any

from ..core.counters import StageCounters
from ..core.node import perf_ns
from ..core.process import PROCESS
from . import shutdown as registry
from .calls import apply

_STOP = None
CHUNK_SECONDS = (
    0.002  # work per chunk: amortises hand-offs (wake-ups cost ~10-50 us in a VM), short enough to balance
)
MAX_CHUNK = 64


class ThreadExecutor:
    kind = "thread"

    def __init__(self, fn: Callable, workers: int, stage: str, key: int = 0):
        self.fn = fn
        self.workers = workers
        self.stage = stage
        self.key = key  # id() of the owning iterator: what recorded chunks are booked to (no reference)
        self.tasks: queue.SimpleQueue = queue.SimpleQueue()
        self.results: queue.SimpleQueue = queue.SimpleQueue()
        self.busy_ns = [0] * workers  # time each worker spent in the function
        self.cpu_ns = [0] * workers  # CPU time of those calls (less than busy when waiting on I/O)
        # Per worker thread: (native id, its run-queue delay when it started), read back in
        # delay_seconds(): a busy machine's share of the busy time, told apart from the GIL's.
        self.delay_from: list[tuple[int, int]] = []
        self.threads: list[threading.Thread] = []
        self.pending: list[tuple[int, Any, Any]] = []  # submitted, not yet queued
        self.chunk_size = 1  # the first chunks measure the function
        self.element_ns = 0.0  # measured time per element, moving average
        self.computed = 0  # elements whose results came back, and the CPU time they took
        self.computed_cpu_ns = 0
        # While recording: first task of each chunk returned -> the chunk's slice number (the
        # owner takes them after each wait; empty otherwise).
        self.firsts: dict[int, int] = {}
        self.closed = False

    def _start(self) -> None:
        for _ in range(self.workers):
            self._add_thread()
        registry.register(self)

    def _add_thread(self) -> None:
        index = len(self.threads)
        if index >= len(self.busy_ns):
            self.busy_ns.append(0)
            self.cpu_ns.append(0)
        thread = threading.Thread(
            target=_work,
            args=(
                self.fn,
                self.tasks,
                self.results,
                self.busy_ns,
                self.cpu_ns,
                index,
                self.key,
                self.delay_from,
            ),
            name=f"headrace {self.stage} worker {index}",
            daemon=True,  # an interpreter exit must never wait for a user function
        )
        thread.start()
        self.threads.append(thread)

    def resize(self, workers: int) -> None:
        """Run ``workers`` threads from now on (the autotuner's knob). Extra threads leave after the
        chunk they are on; new ones start at once."""
        workers = max(1, int(workers))
        if self.closed or workers == self.workers:
            return
        if self.threads:
            for _ in range(workers - self.workers):
                self._add_thread()
            for _ in range(self.workers - workers):
                self.tasks.put(_STOP)  # queued behind waiting tasks: leaves when one of them would
        self.workers = workers

    def submit(self, task: int, element: Any, rng_key: tuple | None) -> None:
        if not self.threads:
            self._start()
        self.pending.append((task, element, rng_key))
        if len(self.pending) >= self.chunk_size:
            self.flush()

    def flush(self) -> None:
        """Queue what was submitted, in chunks of ``chunk_size``."""
        pending, size = self.pending, self.chunk_size
        if not pending or self.closed:
            return
        self.pending = []
        for start in range(0, len(pending), size):
            self.tasks.put(pending[start : start + size])

    def wait(self, timeout: float | None) -> list[tuple[int, bool, Any]]:
        """Results finished so far; blocks up to ``timeout`` seconds for the first chunk."""
        self.flush()
        try:
            first = self.results.get(timeout=timeout)
        except queue.Empty:
            return []
        out = self._unpack(first)
        while True:
            try:
                out.extend(self._unpack(self.results.get_nowait()))
            except queue.Empty:
                return out

    def _unpack(self, message: tuple[list, int, int | None, int]) -> list[tuple[int, bool, Any]]:
        results, busy_ns, number, cpu = message
        self.computed += len(results)
        self.computed_cpu_ns += cpu
        if results:
            if number is not None:
                self.firsts[results[0][0]] = number
            # Chunk size from the measured time per element: about CHUNK_SECONDS of work.
            element_ns = busy_ns / len(results)
            average = self.element_ns
            self.element_ns = element_ns if average == 0 else 0.8 * average + 0.2 * element_ns
            self.chunk_size = max(1, min(MAX_CHUNK, int(CHUNK_SECONDS * 1e9 / max(self.element_ns, 1.0))))
        return results

    def poll(self) -> list[tuple[int, bool, Any]]:
        self.flush()
        return self.wait(0) if not self.results.empty() else []

    def busy_seconds(self) -> float:
        return sum(self.busy_ns) / 1e9

    def cpu_seconds(self) -> float:
        return sum(self.cpu_ns) / 1e9

    def delay_seconds(self) -> float | None:
        """Time the worker threads sat runnable, waiting for a core that another program had (Linux
        only; None elsewhere). Read from /proc, which the kernel updates when a thread is switched,
        so it is right over a run, not over one call. Threads that left are not counted."""
        if not self.delay_from or not os.path.exists("/proc/thread-self/schedstat"):
            return None
        total = 0
        for native_id, start in list(self.delay_from):
            try:
                with open(f"/proc/self/task/{native_id}/schedstat", "rb") as f:
                    total += max(0, int(f.read().split()[1]) - start)
            except (OSError, ValueError, IndexError):
                continue  # the thread has left
        return total / 1e9

    def pids(self) -> list[int]:
        return []

    def counters(self) -> StageCounters:
        return {"chunk_size": self.chunk_size}

    def shutdown(self) -> None:
        """Stop taking tasks; idle workers exit at once, busy ones when their call returns (a
        thread cannot be interrupted inside user code). Does not wait for them."""
        if self.closed:
            return
        self.closed = True
        self.pending = []
        while True:  # tasks not started are dropped
            try:
                self.tasks.get_nowait()
            except queue.Empty:
                break
        for _ in self.threads:
            self.tasks.put(_STOP)
        registry.unregister(self)


def _work(
    fn: Callable,
    tasks: queue.SimpleQueue,
    results: queue.SimpleQueue,
    busy_ns: list,
    cpu_ns: list,
    index: int,
    key: int,
    delay_from: list,
) -> None:
    task = element = None
    pid, thread = os.getpid(), threading.get_ident()
    native_id = threading.get_native_id()
    try:
        with open(f"/proc/self/task/{native_id}/schedstat", "rb") as f:
            delay_from.append((native_id, int(f.read().split()[1])))
    except (OSError, ValueError, IndexError):
        pass  # not Linux: the GIL is judged without the run-queue delay
    while True:
        chunk = tasks.get()
        if chunk is _STOP:
            return
        out = []
        start, cpu_start = perf_ns(), thread_time_ns()
        for task, element, rng_key in chunk:
            try:
                out.append((task, True, apply(fn, element, rng_key)))
            except BaseException as exc:  # noqa: BLE001 (delivered to the consumer, who re-raises it)
                out.append((task, False, exc))
        end = perf_ns()
        busy = end - start
        busy_ns[index] += busy
        cpu = thread_time_ns() - cpu_start
        cpu_ns[index] += cpu
        log = PROCESS.recorder  # one check per chunk: a slice on this thread while recording
        number = None if log is None else log.add_chunk(key, pid, thread, start, end, len(out))
        chunk = task = element = None  # hold no element while waiting for the next chunk
        results.put((out, busy, number, cpu))
        del out
