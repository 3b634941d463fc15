"""The machinery of ``parallelize``: copies of a pipeline in worker processes, merged round-robin.

Worker ``k`` runs the pipeline above with every source sharded ``k`` of ``N`` (built by the node).
It computes *chunks* on request: elements for about :data:`CHUNK_SECONDS`, then its pipeline's
state after them; the parent keeps :data:`CHUNKS_AHEAD` requests in flight per worker, so workers
compute while the consumer works, and memory stays bounded. Output ``i`` is worker ``i % N``'s next
element (a worker whose share ended is skipped), so the order is fixed whatever the timing.

Checkpoints are exact: each worker's share is a :class:`~headrace.runtime.snapshots.Ledger` of the
states its chunks ended with, so a checkpoint holds, per worker, the state sent with the first chunk
that ends at or after the last element handed on, plus the elements of that chunk still owed
(encoded like any buffered element), plus whose turn it is. Restoring sends each worker its state.

While ``headrace.profile.record_calls`` records, each chunk is a slice on its worker's process track,
and the call that hands the chunk's first element on reports it (the share's ledger ``marks``,
``Ledger.handed_out``): the trace's arrow from the chunk lands on that call.
"""

from __future__ import annotations

import itertools
import os
import pickle
import selectors
import warnings
import weakref
from typing import Any, NoReturn

from ..core.counters import StageCounters
from ..core.errors import CheckpointError, WorkerError, add_note, attempt, user_stacklevel
from ..core.node import Context, NodeIterator, note_stage, perf_ns
from ..core.process import PROCESS
from ..core.state import ERROR, OUTPUT, encode_element
from ..runtime import shutdown as registry
from ..runtime.launcher import EXIT_STATUS_SECONDS
from ..runtime.messages import (
    BadMessage,
    Chunk,
    InitFailed,
    Message,
    PipelineJob,
    Pull,
    Reset,
    SetState,
    pack,
    unpack,
)
from ..runtime.pool import WorkerProcess, get_pool, processes_unavailable
from ..runtime.processes import WorkerDied, decode_result, unpack_error
from ..runtime.shm import cleanup, segment_prefix
from ..runtime.snapshots import Ledger
from ..runtime.worker import where

CHUNK_SECONDS = 0.005  # work per chunk: a message and a state snapshot spread over this much
MAX_CHUNK = 512
CHUNKS_AHEAD = 2  # requests in flight per worker: one computing, one queued
WAIT_SLICE_SECONDS = 0.5
DRAIN_SECONDS = 0.1  # at close, how long in-flight chunks may take to arrive (else: kill)
_serials = itertools.count()
_warned: list[bool] = []


def serial_fallback(node: Any, ctx: Context) -> NodeIterator | None:
    """Where processes cannot start (a daemonic process): the pipeline above, in this process."""
    why = processes_unavailable()
    if why is None:
        return None
    if not _warned:
        _warned.append(True)
        warnings.warn(
            f"{node!r}: worker processes are not used because {why}; running the pipeline in this "
            "process instead",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
    return node.parents[0].iterator(ctx)


class _Share(Ledger):
    """The parent's view of one worker: a ledger of its elements received and not handed on (OUTPUT
    or ERROR) by number since the last reset or restore (``high``: handed on), and the states its
    chunks ended with."""

    def __init__(self) -> None:
        super().__init__()
        self.received = 0  # elements received since the last restore
        self.in_flight = 0  # requests sent, not answered
        self.ended = False  # the worker said its share ended (this epoch)


class _Workers:
    """Owns the processes; the iterator's finalizer holds this, never the iterator."""

    def __init__(self) -> None:
        self.processes: list[WorkerProcess] = []
        self.shares: list[_Share] = []
        self.prefix = ""
        self.failed = False
        self.closed = False
        self.owner = os.getpid()

    def shutdown(self) -> None:
        if self.closed or self.owner != os.getpid():
            return  # a forked child must never touch its parent's workers
        self.closed = True
        registry.unregister(self)
        prefix = self.prefix
        if not self.processes:
            if prefix:
                cleanup(prefix)
            return
        deadline = perf_ns() + int(DRAIN_SECONDS * 1e9)  # one deadline for the whole close
        keep = [
            not self.failed and not w.mid_frame and _drain(w, s, deadline)
            for w, s in zip(self.processes, self.shares)
        ]
        get_pool().release(self.processes, keep, then=lambda: cleanup(prefix))


def _drain(worker: WorkerProcess, share: _Share, deadline: int) -> bool:
    """Read the answers still owed until ``deadline`` (perf_ns); True when the worker is idle and can
    be reused (else the caller kills it)."""
    try:
        while share.in_flight:
            left = (deadline - perf_ns()) / 1e9
            if left <= 0 or not worker.conn.poll(left):
                return False
            _discard(unpack(worker.recv()))
            share.in_flight -= 1
    except (EOFError, OSError):
        return False
    return True


def _discard(reply: Message | None) -> None:
    """Remove the shared memory files of a reply nobody will read."""
    from ..runtime.shm import discard  # noqa: PLC0415

    if isinstance(reply, Chunk):
        for ok, payload in reply.items:
            if ok:
                discard(payload)


class ParallelizeIterator(NodeIterator):
    state_keys = ("workers", "turn")

    def __init__(self, node: Any, ctx: Context, iteration: int):
        super().__init__(node)
        self.ctx = ctx
        self.iteration = iteration
        self.count = node.num_workers
        self.turn = 0
        self.generation = 0
        self.position = 0  # elements handed on this epoch
        self.chunk = 1  # elements asked per request; grows to CHUNK_SECONDS of work
        self.wait_ns = 0
        self.busy_ns = 0
        self._workers = _Workers()
        self._finalizer = weakref.finalize(self, self._workers.shutdown)
        self._selector: selectors.BaseSelector | None = None

    @property
    def shares(self) -> list[_Share]:
        return self._workers.shares

    # --- starting -----------------------------------------------------------------------------
    def _start(self) -> None:
        from ..runtime.pickling import dumps  # noqa: PLC0415

        workers = self._workers
        registry.register(workers)
        workers.prefix = segment_prefix(os.getpid(), f"p{next(_serials)}")
        path = where()
        jobs = []
        for index in range(self.count):
            pickled, payload = attempt(lambda i=index: dumps(self.node.worker_pipeline(i)))
            if not pickled:
                raise WorkerError(
                    f"{self.name}: the pipeline above cannot be sent to worker processes "
                    f"({type(payload).__name__}: {payload}); capture only picklable values in its functions"
                ) from payload
            jobs.append(
                PipelineJob(payload, self.ctx.options, self.iteration, path, f"{workers.prefix}w{index}-")
            )
        workers.processes = get_pool().acquire(self.count)
        workers.shares = [_Share() for _ in range(self.count)]
        self._selector = selectors.DefaultSelector()
        for index, (worker, job) in enumerate(zip(workers.processes, jobs)):
            self._send(index, job, expect_reply=False)
            self._selector.register(worker.conn.fileno(), selectors.EVENT_READ, index)

    def _send(self, index: int, message: Message, expect_reply: bool = True) -> None:
        try:
            self._workers.processes[index].send(pack(message))
        except OSError:
            self._died(index)
        if expect_reply:
            self.shares[index].in_flight += 1

    def _died(self, index: int) -> NoReturn:
        worker = self._workers.processes[index]
        self._workers.failed = True
        died = WorkerDied(worker.pid, get_pool().exit_code(worker.pid, EXIT_STATUS_SECONDS), [])
        self.close()
        raise WorkerError(
            f"{self.name}: {died.describe()} while computing worker {index}'s share of the pipeline; "
            "the stage's other workers were stopped. Restore a checkpoint to go on"
        ) from None

    # --- requests and replies ---------------------------------------------------------------------
    def _top_up(self) -> None:
        for index, share in enumerate(self.shares):
            while not share.ended and share.in_flight < CHUNKS_AHEAD:
                self._send(index, Pull(self.generation, self.chunk, CHUNK_SECONDS))

    def _receive(self, index: int) -> None:
        worker = self._workers.processes[index]
        reply = self._reply(index)
        share = self.shares[index]
        if isinstance(reply, (InitFailed, BadMessage)):
            self._workers.failed = True
            error = unpack_error(reply.error, worker.pid)
            self.close()
            raise WorkerError(
                f"{self.name}: worker process {worker.pid} could not load its copy of the pipeline: "
                f"{type(error).__name__}: {error}. Its functions must be picklable with cloudpickle "
                "and importable in a fresh process"
            ) from error
        share.in_flight -= 1
        if not isinstance(reply, Chunk):  # never: a worker sends nothing else
            raise WorkerError(f"{self.name}: worker process {worker.pid} sent an unexpected {reply!r}")
        generation, items, state, ended, (start, end) = reply
        if generation != self.generation:
            _discard(reply)
            return
        busy = end - start
        self.busy_ns += busy
        log = PROCESS.recorder  # one check per chunk: a slice on the worker's process track
        if log is not None:
            number = log.add_chunk(id(self), worker.pid, worker.pid, start, end, len(items))
            if items:
                share.marks[share.received] = number
        entries, received = share.entries, share.received
        for offset, (ok, payload) in enumerate(items, received):
            ok, value = decode_result(ok, payload, worker.pid, self.name)
            entries[offset] = (OUTPUT if ok else ERROR, value)
        share.received += len(items)
        share.keep(share.received, state)
        if ended:
            share.ended = True
        if items and busy:
            per_element = busy / len(items)
            self.chunk = max(1, min(MAX_CHUNK, int(CHUNK_SECONDS * 1e9 / per_element)))

    def _pump(self, timeout: float) -> None:
        self._top_up()
        selector = self._selector
        if selector is None:  # never: _start made it, and every caller started the workers
            raise RuntimeError(f"{self.name}: its worker processes are not started")
        start = perf_ns()
        ready = selector.select(timeout)
        self.wait_ns += perf_ns() - start
        for key, _ in ready:
            index = key.data
            while self._workers.processes[index].conn.poll():
                self._receive(index)
                if self.shares[index].in_flight == 0:
                    break

    def _reply(self, index: int) -> Message | None:
        """The next message from worker ``index`` (blocking); a closed socket is its death."""
        try:
            return unpack(self._workers.processes[index].recv())
        except (EOFError, OSError):
            self._died(index)

    def _receive_stale(self, index: int) -> None:
        reply = self._reply(index)
        self.shares[index].in_flight -= 1
        _discard(reply)

    # --- handing on ------------------------------------------------------------------------------
    def __next__(self) -> Any:
        if self._workers.failed:
            raise WorkerError(f"{self.name}: this iterator stopped after a worker failure")
        if self.closed:
            raise WorkerError(f"{self.name}: the iterator is closed")
        if not self._workers.processes:
            self._start()
        try:
            while True:
                share = self.shares[self.turn]
                if share.entries:
                    return self._hand_on(share)
                if share.ended:
                    if all(s.ended and not s.entries for s in self.shares):
                        raise StopIteration
                    self.turn = (self.turn + 1) % self.count
                    continue
                self._pump(WAIT_SLICE_SECONDS)
        except KeyboardInterrupt:
            self.close()
            raise

    def _hand_on(self, share: _Share) -> Any:
        handed = share.high
        kind, value = share.entries.pop(handed)
        if share.marks:  # recording: the first element of a chunk reports its hand-out
            share.handed_out(handed, id(self))
        share.high = handed + 1
        position = self.position
        self.position += 1
        self.turn = (self.turn + 1) % self.count
        if kind == ERROR:
            note_stage(value, self.name, position)
            raise value
        self.produced += 1
        if not share.entries and not share.ended and share.in_flight < CHUNKS_AHEAD:
            self._top_up()
        return value

    # --- epochs and checkpoints ---------------------------------------------------------------
    def reset(self) -> None:
        self.turn = 0
        self.position = 0
        if not self._workers.processes:
            return
        self.generation += 1
        for index in range(self.count):
            self._settle(index, Reset(self.generation))
            self.shares[index] = _Share()

    def _settle(self, index: int, message: Reset | SetState) -> None:
        share = self.shares[index]
        while share.in_flight:
            self._receive_stale(index)
        self._send(index, message)
        worker = self._workers.processes[index]
        reply = self._reply(index)
        share.in_flight -= 1
        if not isinstance(reply, Chunk):  # never: a worker answers these with a chunk
            raise WorkerError(f"{self.name}: worker process {worker.pid} sent an unexpected {reply!r}")
        if reply.items and not reply.items[0][0]:
            error = unpack_error(pickle.loads(reply.items[0][1]), worker.pid)
            add_note(error, f"headrace: in {self.name}, while worker {index} restored or reset its share")
            raise error

    def get_state(self) -> dict:
        if not self._workers.processes:
            self._start()
        workers = []
        for index, share in enumerate(self.shares):
            cut = share.cut()
            if cut is None:
                # No state received at or past the last element handed on: ask the worker where it is.
                self._send(index, Pull(self.generation, 0, 0.0))
                while (cut := share.cut()) is None:
                    self._pump(WAIT_SLICE_SECONDS)
            received, state = cut
            if "__unavailable__" in state:
                raise CheckpointError(
                    f"{self.name}: worker {index} cannot save its pipeline's state "
                    f"({state['__unavailable__']})"
                )
            # An error owed before the saved point is not raised again after a restore.
            workers.append({"state": state, "owed": [encode_element(v) for v in share.elements(received)]})
        return {"workers": workers, "turn": self.turn}

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        saved = state["workers"]
        if not isinstance(saved, list) or len(saved) != self.count:
            raise CheckpointError(
                f"{self.name}: the state holds {len(saved) if isinstance(saved, list) else saved!r} "
                f"worker states, this stage runs {self.count} workers; restore with the same num_workers"
            )
        turn = fields.int("turn", high=self.count - 1)
        entries = []
        for index, entry in enumerate(saved):
            worker = fields.record(entry, f"workers[{index}]", ("state", "owed"))
            entries.append((worker.dict("state"), worker.elements("owed")))
        self.turn = turn
        if not self._workers.processes:
            self._start()
        self.generation += 1
        for index, (worker_state, owed) in enumerate(entries):
            self._settle(index, SetState(self.generation, worker_state))
            share = self.shares[index] = _Share()
            share.entries.update((position, (OUTPUT, value)) for position, value in enumerate(owed))
            share.received = len(owed)
            share.keep(share.received, worker_state)

    # --- the rest ---------------------------------------------------------------------------------
    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._selector is not None:
            self._selector.close()
        self._workers.shutdown()

    def counters(self) -> StageCounters:
        out = super().counters()
        out.update(
            {
                "executor": "process",
                "parallelism": self.count,
                "busy_seconds": self.busy_ns / 1e9,
                "output_wait_seconds": self.wait_ns / 1e9,
                "buffered": sum(len(s.entries) for s in self.shares),
                "chunk_size": self.chunk,
                "worker_pids": [w.pid for w in self._workers.processes],
            }
        )
        return out
