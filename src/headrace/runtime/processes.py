"""The process executor: worker processes for map functions that hold the GIL (pure Python).

- Workers come from this process's kept :mod:`.pool` (forked by a clean :mod:`.launcher`, so the
  user's ``__main__`` is never imported: no ``if __name__ == "__main__":`` guard is needed). A later
  epoch, or a new pipeline, reuses them.
- The function is cloudpickled once per worker (lambdas and closures work). Workers receive input
  elements only, never the pipeline, so the upstream dataset is not copied into them.
- Elements travel in *chunks*: sized from the measured time per element so that one chunk is about
  :data:`CHUNK_SECONDS` of work, which spreads the parent's per-message cost over many elements.
  Results come back a chunk at a time, each element encoded on its own, so an element whose result
  cannot cross is an error for that element only.
- The parent waits on every worker's socket at once; a worker that dies closes its socket, so its
  death is noticed at once and reported with its pid and signal (from the launcher, which reaps it).
- Elements cross in both directions through :mod:`headrace.runtime.shm`.
- Each answer carries its chunk's start and end (``perf_counter_ns``, one clock for every process on
  Linux): while ``headrace.profile.record_calls`` records, the chunk becomes a slice on the worker
  process's track in the trace, and ``firsts`` maps the chunk's first task to that slice's number
  (the owner links it to the call that hands the element on).
"""

from __future__ import annotations

import itertools
import os
import pickle
import selectors
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from ..core.counters import StageCounters
from ..core.errors import WorkerError, add_note, attempt
from ..core.node import perf_ns
from ..core.process import PROCESS
from . import shutdown as registry
from .launcher import EXIT_STATUS_SECONDS
from .messages import BadMessage, Done, InitFailed, MapJob, PackedError, Tasks, pack, unpack
from .pool import WorkerProcess, get_pool
from .shm import SegmentWriter, cleanup, discard, dump, load, segment_prefix
from .worker import where

CHUNK_SECONDS = 0.004  # work per chunk: enough to amortise a message, small enough to balance
MAX_CHUNK = 256
DRAIN_SECONDS = (
    0.05  # close()'s deadline: how long the workers may take to return their chunks (else: killed)
)
_serials = itertools.count()


class WorkerDied(Exception):
    """Internal: a worker process exited; the owner turns this into a WorkerError naming elements."""

    def __init__(self, pid: int, exitcode: int | None, tasks: list[int]):
        super().__init__(pid, exitcode, tasks)
        self.pid, self.exitcode, self.tasks = pid, exitcode, tasks

    def describe(self) -> str:
        code = self.exitcode
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = "unknown signal"
            how = f"was killed by signal {-code} ({name})"
            if -code == signal.SIGKILL:
                how += "; the kernel's out-of-memory killer sends SIGKILL, so check memory use (dmesg)"
            elif -code in (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT):
                how += "; native code called by map_func crashed (its Python stack is on stderr)"
        elif code is None:
            how = "exited (its exit status is unknown)"
        else:
            how = f"exited unexpectedly with code {code}"
        return f"worker process {self.pid} {how}"


def unpack_error(payload: PackedError, pid: int) -> BaseException:
    """Re-create a worker's exception as its own type, with the worker's traceback as a note."""
    data, type_name, message, text = payload
    exc: BaseException | None = None
    reason = "it could not be pickled"
    if data is not None:
        loaded, value = attempt(pickle.loads, data)  # unpickling runs the exception class's code
        if loaded:
            exc = value
        else:
            reason = f"it could not be re-created here ({type(value).__name__}: {value})"
    if exc is None:
        exc = WorkerError(f"map_func raised {type_name}: {message} in worker process {pid}, and {reason}")
    add_note(exc, f"traceback in worker process {pid} (most recent call last):\n{text.rstrip()}")
    return exc


def decode_result(ok: bool, payload: bytes, pid: int, stage: str) -> tuple[bool, Any]:
    """One element's result from a worker; a value that cannot be re-created here is an error for
    that element, never a failure of the stage."""
    if not ok:
        read, error = attempt(_unpacked_error, payload, pid)
        if not read:
            error = WorkerError(f"{stage}: the error of worker process {pid} could not be read ({error})")
        return False, error
    try:  # not through attempt(): one call less per element
        return True, load(payload)
    except Exception as exc:  # noqa: BLE001 (e.g. an exception class whose __init__ needs 2 arguments)
        error = WorkerError(
            f"{stage}: the result computed in worker process {pid} cannot be unpickled here "
            f"({type(exc).__name__}: {exc}); return values whose classes pickle and unpickle "
            "(numpy arrays, Python containers), or pass executor='thread'"
        )
        return False, error


def _unpacked_error(payload: bytes, pid: int) -> BaseException:
    return unpack_error(pickle.loads(payload), pid)


def describe_unavailable(stage: str, why: str) -> str:
    return f"{stage}: process workers are not used because {why}; running on threads instead"


class ProcessExecutor:
    kind = "process"

    def __init__(
        self,
        fn: Callable,
        workers: int,
        stage: str,
        previous: ProcessExecutor | None = None,
        key: int = 0,
    ):
        from .pickling import dumps  # noqa: PLC0415 (only process executors need it)

        # A later epoch's executor (``previous``: the last one) starts from what that one learnt.
        self.payload: bytes = previous.payload if previous is not None else dumps(fn)
        self.workers = workers
        self.stage = stage
        self.key = key  # id() of the owning iterator: what recorded chunks are booked to
        self.owner = os.getpid()
        self.prefix = segment_prefix(self.owner, f"{next(_serials)}")
        self.writer = SegmentWriter(self.prefix + "in-")
        self.processes: list[WorkerProcess] = []
        self.outstanding: list[set[int]] = []  # per worker: tasks sent, not answered
        self.chunks: list[int] = []  # per worker: chunks sent, not answered
        self.pending: list[tuple[int, Any, Any]] = []  # submitted, not yet sent
        self.local: list[tuple[int, bool, Any]] = []  # failed here (could not be encoded)
        self.chunk_size: int = previous.chunk_size if previous is not None else 1
        self.element_ns: float = previous.element_ns if previous is not None else 0.0  # per element, averaged
        self.busy_ns = 0
        self.parent_ns = 0  # the consumer's time spent sending and receiving
        self.received_segments = 0  # outputs that came back through shared memory
        self.messages = 0
        self.firsts: dict[int, int] = {}  # while recording: a chunk's first task -> its slice number
        self.closed = False
        self.failed = False
        # One reader of the pipes at a time: close() drains them from the consumer's thread while a
        # prefetch thread may be inside wait(); two readers could both block on one message.
        self._reading = threading.Lock()
        # Held while a chunk is encoded and sent, and by shutdown while it marks the executor closed:
        # a prefetch thread sending while an abandoned iterator is garbage-collected (shutdown from
        # another thread) could otherwise send to a worker already drained and given back to the pool,
        # whose next job then read the stale answer ("sent an unexpected Done").
        self._sending = threading.Lock()
        self._selector: selectors.BaseSelector | None = None

    # --- life cycle --------------------------------------------------------------------------
    def _start(self) -> None:
        registry.register(self)
        self.processes = get_pool().acquire(self.workers)
        self.outstanding = [set() for _ in self.processes]
        self.chunks = [0] * len(self.processes)
        path = where()
        for index, worker in enumerate(self.processes):
            job = MapJob(self.payload, path, f"{self.prefix}w{index}-")
            try:
                worker.send(pack(job))
            except OSError:
                self._check_dead(index)
                raise
        self._selector = selectors.DefaultSelector()
        for index, worker in enumerate(self.processes):
            self._selector.register(worker.conn.fileno(), selectors.EVENT_READ, index)

    def delay_seconds(self) -> float | None:
        return None  # measured for thread workers only

    def pids(self) -> list[int]:
        return [worker.pid for worker in self.processes]

    def busy_seconds(self) -> float:
        return self.busy_ns / 1e9

    def cpu_seconds(self) -> float:
        # A process holds its own core: its time in the function is CPU time (waits included, which
        # overstates CPU for I/O-bound functions; those are better on threads anyway).
        return self.busy_ns / 1e9

    def shutdown(self) -> None:
        if self.closed or self.owner != os.getpid():
            return  # a forked child must never touch its parent's workers
        # No chunk is being sent from here on (a send in progress in another thread finishes first);
        # if one cannot finish in time, no worker goes back to the pool (their streams are unknown).
        quiet = self._sending.acquire(timeout=DRAIN_SECONDS)
        self.closed = True
        if quiet:
            self._sending.release()
        if self._selector is not None:
            self._selector.close()
        self.pending.clear()
        registry.unregister(self)
        if not self.processes:
            cleanup(self.prefix)
            return
        # Workers whose chunks come back soon (a chunk is a few milliseconds) go back to the pool;
        # the others are inside a long user call whose result nobody wants: they are killed, and
        # the files are removed once they are reaped.
        deadline = time.monotonic() + DRAIN_SECONDS  # one deadline for the whole close, not per worker
        keep = [
            quiet and not self.failed and not worker.mid_frame and self._drain(index, deadline)
            for index, worker in enumerate(self.processes)
        ]
        prefix = self.prefix
        get_pool().release(self.processes, keep, then=lambda: cleanup(prefix))

    def _drain(self, index: int, deadline: float) -> bool:
        """Read the answers still owed by worker ``index`` until ``deadline`` (dropping them); True
        when it owes nothing any more. A worker that owes more then is killed by the caller."""
        worker = self.processes[index]
        conn = worker.conn
        try:
            while self.outstanding[index]:
                left = deadline - time.monotonic()
                # A prefetch thread may be reading this pipe: wait for it no longer than the deadline.
                if left <= 0 or not self._reading.acquire(timeout=left):
                    return False
                try:
                    if not conn.poll(max(0.0, deadline - time.monotonic())):
                        return False
                    message = worker.recv()
                finally:
                    self._reading.release()
                reply = unpack(message)
                if not isinstance(reply, Done):
                    return False
                for task, ok, _, payload in reply.results:
                    self.outstanding[index].discard(task)
                    if ok:
                        discard(payload)
        except (EOFError, OSError):
            return False
        return True

    # --- tasks ---------------------------------------------------------------------------------
    def submit(self, task: int, element: Any, rng_key: tuple | None) -> None:
        if not self.processes:
            self._start()
        self.pending.append((task, rng_key, element))
        if len(self.pending) >= self.chunk_size:
            self.flush()

    def flush(self) -> None:
        """Send what was submitted, in chunks, each to the worker with the least work."""
        start = perf_ns()
        try:
            while self.pending:
                chunk, self.pending = self.pending[: self.chunk_size], self.pending[self.chunk_size :]
                index = min(range(len(self.processes)), key=lambda i: len(self.outstanding[i]))
                with self._sending:
                    if self.closed:
                        raise WorkerError(
                            f"{self.stage}: the process executor was closed (its iterator was closed)"
                        )
                    message = self._encode(chunk)
                    if message is None:
                        continue
                    # Owed before it is sent: a drain that starts meanwhile waits for its answer.
                    self.outstanding[index].update(task for task, _, _ in chunk)
                    try:
                        self.processes[index].send(message)
                    except OSError:
                        self._check_dead(index)
                        raise
                self.chunks[index] += 1
                self.messages += 1
        finally:
            self.parent_ns += perf_ns() - start

    def _encode(self, chunk: list) -> bytes | None:
        """The message of a chunk; elements that cannot be sent fail alone (returned by ``wait``)."""
        message, error = self._pack(chunk)
        if message is not None:
            return message
        if len(chunk) > 1:  # which elements cannot be sent?
            good = []
            for item in chunk:
                sendable, error_or_bytes = attempt(dump, item, None)
                if sendable:
                    good.append(item)
                else:
                    self.local.append((item[0], False, self._unsendable(error_or_bytes)))
            if good and len(good) < len(chunk):
                message, failed = self._pack(good)
                if message is not None:
                    return message
                error = failed
            chunk = good
        assert error is not None  # _pack gives a message or the error that stopped it
        for item in chunk:  # e.g. /dev/shm is full: each element gets its own error
            self.local.append((item[0], False, self._unsendable(error)))
        return None

    def _pack(self, chunk: list) -> tuple[bytes | None, Exception | None]:
        """``(message, None)``, or ``(None, the error)`` when the chunk cannot be sent (pickling user
        values can raise anything)."""
        packed, value = attempt(pack, Tasks(chunk), self.writer)
        return (value, None) if packed else (None, value)

    def _unsendable(self, exc: Exception) -> Exception:
        if isinstance(exc, WorkerError):
            copy = WorkerError(str(exc))
            copy.__cause__ = exc.__cause__
            return copy
        return WorkerError(
            f"{self.stage}: this input element cannot be sent to a worker process "
            f"({type(exc).__name__}: {exc}); pass executor='thread'"
        )

    def _check_dead(self, index: int) -> None:
        worker = self.processes[index]
        self.failed = True  # a death may be systemic (memory): the stage's other workers stop too
        raise WorkerDied(
            worker.pid, get_pool().exit_code(worker.pid, EXIT_STATUS_SECONDS), sorted(self.outstanding[index])
        )

    def _receive(self, index: int, results: list) -> None:
        worker = self.processes[index]
        conn, pid = worker.conn, worker.pid
        while True:
            with self._reading:
                if self.closed or not conn.poll():
                    return
                try:
                    message = worker.recv()
                except (EOFError, OSError):
                    message = None
            if message is None:
                self._check_dead(index)
                return
            reply = unpack(message)
            if not isinstance(reply, Done):
                if not isinstance(reply, (InitFailed, BadMessage)):  # never: a worker sends nothing else
                    raise WorkerError(f"{self.stage}: worker process {pid} sent an unexpected {reply!r}")
                error = unpack_error(reply.error, pid)
                what = "load map_func" if isinstance(reply, InitFailed) else "decode a message"
                raise WorkerError(
                    f"{self.stage}: worker process {pid} could not {what}: {type(error).__name__}: "
                    f"{error}. Functions for executor='process' must be picklable with cloudpickle "
                    "and importable in a fresh process (define them in a module, not a notebook "
                    "cell that imports unavailable names), or pass executor='thread'"
                ) from error
            self.chunks[index] -= 1
            busy = 0
            body = reply.results
            for task, ok, ns, payload in body:
                busy += ns
                if ok and payload[:1] == b"S":
                    self.received_segments += 1
                self.outstanding[index].discard(task)
                results.append((task, *decode_result(ok, payload, pid, self.stage)))
            self.busy_ns += busy
            if body:
                self._adapt(busy / len(body))
            log = PROCESS.recorder  # one check per chunk: a slice on the worker's process track
            if log is not None:
                start, end = reply.span
                number = log.add_chunk(self.key, pid, pid, start, end, len(body))
                if body:
                    self.firsts[body[0][0]] = number

    def _adapt(self, element_ns: float) -> None:
        """Chunk size from the measured time per element: about CHUNK_SECONDS of work."""
        average = self.element_ns
        self.element_ns = element_ns if average == 0 else 0.8 * average + 0.2 * element_ns
        self.chunk_size = max(1, min(MAX_CHUNK, int(CHUNK_SECONDS * 1e9 / max(self.element_ns, 1.0))))

    def wait(self, timeout: float | None) -> list[tuple[int, bool, Any]]:
        """Results finished so far; blocks up to ``timeout`` seconds for the first one. Raises
        :class:`WorkerDied` as soon as a worker process has exited."""
        if not self.processes or self._selector is None:
            return []
        self.flush()
        if self.local:
            results, self.local = self.local, []
            return results
        ready = self._selector.select(timeout)
        start = perf_ns()
        results = []
        try:
            for key, _ in ready:
                self._receive(key.data, results)
        finally:
            self.parent_ns += perf_ns() - start
        return results

    def poll(self) -> list[tuple[int, bool, Any]]:
        return self.wait(0)

    def resize(self, workers: int) -> None:
        """A process pool keeps its size: the map's task limit holds it to fewer workers."""

    def counters(self) -> StageCounters:
        return {
            "chunk_size": self.chunk_size,
            "messages": self.messages,
            "parent_seconds": self.parent_ns / 1e9,
        }


def wait_for_exit(pids: list[int], seconds: float) -> bool:
    """True once none of ``pids`` runs any more (for tests and benchmarks)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except OSError:
                pass
        if not alive:
            return True
        time.sleep(0.01)
    return False
