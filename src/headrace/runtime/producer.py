"""A background thread pulling from an iterator into a bounded buffer (``prefetch``, parallel reads).

The producer thread is the only one that touches the source while it runs; the owner pauses it
(waiting for the pull in progress to finish) before rewinding the source, restoring it, or asking
its current state. When the buffer is full the thread waits, so memory stays bounded however slow
the consumer is.

Checkpoints: the buffer is a :class:`.snapshots.Ledger`: after each pull the thread snapshots the
source's state when the budget allows, and ``get_state`` returns the ledger's cut (the first snapshot
at or after the last item handed out, plus the values before it), or else (after a pause) the
source's current state plus every buffered value.

While ``headrace.profile.record_calls`` records, each buffered item keeps the number of the slice
that made it (the source's ``probe.last_slice``: its call, or a parallel interleave's read), and ``get``
reports handing it on for the stage ``owner`` (``CallLog.deliver``), so the trace's arrow lands on
the call that really took it.

>>> from headrace.sources.range import RangeNode
>>> from headrace.core.node import Context
>>> producer = Producer(RangeNode(5).iterator(Context()), capacity=2, name="doctest")
>>> [int(producer.get()[1]) for _ in range(3)]
[0, 1, 2]
>>> state, ahead = producer.get_state()  # a snapshot, or the source's state plus values it is ahead by
>>> state["index"] - len(ahead), [int(v) for v in ahead] in ([], [3])
(3, True)
>>> producer.shutdown()
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Literal, Protocol, overload

from ..core.counters import StageCounters
from ..core.errors import WorkerError
from ..core.node import Node, NodeIterator, perf_ns
from ..core.process import PROCESS
from ..core.state import ERROR, OUTPUT, encode_element
from . import shutdown as registry
from .snapshots import Ledger

VALUE, END = OUTPUT, -1  # the kinds get() returns, with ERROR (the ledger's kinds)
JOIN_SECONDS = 0.2  # a short grace: a thread inside a long pull is a daemon and exits after it


class Permits(Protocol):
    """What a producer's ``gate`` needs: a semaphore, or the parallel interleave's resizable one."""

    def acquire(self) -> Any: ...

    def release(self) -> None: ...


class Producer:
    def __init__(self, source: NodeIterator, capacity: int, name: str, gate: Permits | None = None):
        self.source = source
        self.capacity = capacity
        self.name = name
        self.gate = gate  # shared by producers that may not all read at once (parallel interleave)
        self.cv = threading.Condition()
        self.ledger = Ledger()  # the buffer and the source's states after some items (under cv)
        #: position -> (kind, value, number of the slice that made it while recording), END last
        self.items = self.ledger.entries
        self.pulled = 0  # items taken from the source since the last reset or restore
        self.owner: int | None = None  # id() of the stage whose calls hand the items on (the trace)
        self.ended = False  # an END item is buffered: nothing more to pull this epoch
        self.paused = False
        self.busy = False  # the thread is inside a call on the source
        self.stopping = False
        self.thread: threading.Thread | None = None
        self.input_wait_ns = 0  # thread inside source.__next__
        self.full_wait_ns = 0  # thread waiting for room (the consumer is the bottleneck)
        self.empty_wait_ns = 0  # consumer waiting for an item (the source is the bottleneck)
        self.occupancy_sum = 0
        self.gets = 0

    # --- the thread ----------------------------------------------------------------------------
    def start(self) -> None:
        """Start reading now (``get`` also starts it)."""
        with self.cv:
            if self.thread is None and not self.stopping:
                self._start()

    def _start(self) -> None:
        self.thread = threading.Thread(target=self._run, name=f"headrace {self.name} producer", daemon=True)
        registry.register(self)
        self.thread.start()

    def _run(self) -> None:
        cv = self.cv
        while True:
            with cv:
                while not self.stopping and (self.paused or self.ended or len(self.items) >= self.capacity):
                    full = len(self.items) >= self.capacity
                    start = perf_ns()
                    cv.wait()
                    if full:
                        self.full_wait_ns += perf_ns() - start
                if self.stopping:
                    return
                self.busy = True
            kind, value, snapshot, origin = VALUE, None, None, None
            gate = self.gate
            if gate is not None:
                gate.acquire()
            try:
                source = self.source
                log = PROCESS.recorder  # one check per pull unless recording
                before = None if log is None else source.probe.last_slice
                start = perf_ns()
                try:
                    value = next(self.source)
                except StopIteration:
                    kind = END
                except BaseException as exc:  # noqa: BLE001 (handed to the consumer in order)
                    kind, value = ERROR, exc
                self.input_wait_ns += perf_ns() - start
                if log is not None and PROCESS.recorder is log:
                    # Unchanged: this pull's call was not logged (nothing to link the item to).
                    latest = source.probe.last_slice
                    origin = None if latest == before else latest
                if not self.stopping:
                    snapshot = self.ledger.policy.take(self.source.get_state)
            finally:
                if gate is not None:
                    gate.release()
                with cv:
                    self.busy = False
                    if not self.stopping:
                        self.items[self.pulled] = (kind, value, origin)
                        self.pulled += 1
                        self.ended = kind == END
                        self.ledger.keep(self.pulled, snapshot)
                    cv.notify_all()
            del kind, value, snapshot  # hold no element while waiting for room

    # --- the consumer side ---------------------------------------------------------------------
    @overload
    def get(self, wait: Literal[True] = True) -> tuple[int, Any]: ...
    @overload
    def get(self, wait: bool) -> tuple[int, Any] | None: ...
    def get(self, wait: bool = True) -> tuple[int, Any] | None:
        """The next ``(kind, value)``. With ``wait=False``: the next value if one is buffered, else
        None (errors and the end are left for a waiting call). An END item stays buffered, so every
        later call sees the end too."""
        with self.cv:
            if self.thread is None and not self.stopping:
                self._start()
            items, head = self.items, self.ledger.high
            item = items.get(head)
            if not wait and (item is None or item[0] != VALUE):
                return None
            if item is None:
                start = perf_ns()
                while (item := items.get(head)) is None:
                    if self.stopping:
                        raise WorkerError(f"{self.name}: the iterator is closed")
                    self.cv.wait()
                self.empty_wait_ns += perf_ns() - start
            kind, value, origin = item
            if kind == END:
                return END, None
            del items[head]
            self.ledger.high = head + 1
            self.occupancy_sum += len(items) + 1
            self.gets += 1
            self.cv.notify_all()
        if origin is not None and self.owner is not None:  # recording: outside the lock
            log = PROCESS.recorder
            if log is not None:
                log.deliver(self.owner, origin)
        return kind, value

    def _pause(self) -> None:
        with self.cv:
            self.paused = True
            while self.busy:
                self.cv.wait()

    def _resume(self) -> None:
        with self.cv:
            self.paused = False
            self.cv.notify_all()

    def get_state(self) -> tuple[dict, list]:
        """``(source state, values still owed before it)``: restoring the source to that state and
        serving those values first continues exactly after the last item handed out."""
        with self.cv:
            cut = self.ledger.cut()
            if cut is not None:  # an error buffered before it is not kept: a restore skips it
                return cut[1], self.ledger.elements(cut[0])
        self._pause()
        try:
            with self.cv:
                values = self.ledger.elements()
            return self.source.get_state(), values
        finally:
            self._resume()

    def set_state(self, source_state: dict, values: list) -> None:
        self._pause()
        try:
            self.source.set_state(source_state)
            with self.cv:
                self._restart()
                self.items.update((position, (VALUE, value, None)) for position, value in enumerate(values))
                self.pulled = len(values)
                self.ledger.keep(self.pulled, source_state)
        finally:
            self._resume()

    def reset(self) -> None:
        self._pause()
        try:
            self.source.reset()
            with self.cv:
                self._restart()
        finally:
            self._resume()

    def _restart(self) -> None:
        self.ledger.restart()
        self.pulled = 0
        self.ended = False

    def take_back(self) -> list | None:
        """Stop the thread and return the values it read ahead, for the caller to serve before
        reading the source itself; None, and the thread reads on, when an error or the end is
        buffered (the slot is about to end anyway). Not waiting for the thread to exit: paused, it is
        out of the source and, stopped before it resumes, never calls it again (it only returns)."""
        self._pause()
        with self.cv:
            if self.stopping or any(kind != VALUE for kind, _, _ in self.items.values()):
                self._resume()
                return None
            values = self.ledger.elements()
        self.stop()
        return values

    def occupancy(self) -> int:
        with self.cv:  # the thread appends the END item, then sets `ended`
            return len(self.items) - self.ended

    def stop(self) -> None:
        """Ask the thread to stop (it does once its pull in progress returns); does not wait."""
        with self.cv:
            self.stopping = True
            self.items.clear()
            self.cv.notify_all()
        registry.unregister(self)

    def join(self, seconds: float = JOIN_SECONDS) -> None:
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(seconds)

    def shutdown(self) -> None:
        self.stop()


class BufferedIterator(NodeIterator):
    """A NodeIterator served by a :class:`Producer` reading ``parent`` ahead in a background thread.

    ``prefetch`` is one; a parallel interleave wraps each open sub-iterator in one. Its state is
    ``{"parent": ..., "buffer": [...]}`` (the values owed before the parent state).
    """

    state_keys = ("parent", "buffer")
    inputs_on_other_threads = True  # the producer thread calls the parent

    def __init__(self, node: Node, parent: NodeIterator, capacity: int, gate: Permits | None = None) -> None:
        super().__init__(node, parent)
        self.parent = parent
        self.capacity = capacity
        self.producer = Producer(parent, capacity, self.name, gate)
        self.producer.owner = id(self)  # its calls hand the items on (no reference: an id)
        # Garbage collection of an abandoned iterator stops the thread (it holds no reference to us).
        self._finalizer = weakref.finalize(self, self.producer.shutdown)

    def resize(self, capacity: int) -> None:
        """Change how many elements the producer may run ahead (the autotuner's knob)."""
        with self.producer.cv:
            self.capacity = self.producer.capacity = max(1, int(capacity))
            self.producer.cv.notify_all()

    def __next__(self) -> Any:
        try:
            kind, value = self.producer.get()
        except KeyboardInterrupt:
            self.close()  # a Ctrl-C while waiting stops the thread; get_state still works
            raise
        if kind == END:
            raise StopIteration
        if kind == ERROR:
            raise value
        self.produced += 1
        return value

    def take_ready(self) -> tuple[bool, Any]:
        """``(True, value)`` if a value is buffered now, else ``(False, None)``; never waits."""
        item = self.producer.get(wait=False)
        if item is None:
            return False, None
        self.produced += 1
        return True, item[1]

    def next_chunk(self, n: int) -> list:
        out = [self.__next__()]
        while len(out) < n:
            ready, value = self.take_ready()
            if not ready:
                break  # an error or the end is left for the next call
            out.append(value)
        return out

    def reset(self) -> None:
        self.producer.reset()

    def get_state(self) -> dict:
        parent_state, values = self.producer.get_state()
        return {"parent": parent_state, "buffer": [encode_element(v) for v in values]}

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        values = fields.elements("buffer")
        self.producer.set_state(fields.dict("parent"), values)

    def close(self) -> None:
        if self.closed:
            return
        self.producer.stop()
        super().close()  # closing the input wakes a thread blocked in it
        self.producer.join()

    def counters(self) -> StageCounters:
        producer = self.producer
        out = super().counters()
        out.update(
            {
                "executor": "thread",
                "parallelism": 1,
                "buffer_capacity": self.capacity,
                "buffered": producer.occupancy(),
                "mean_buffered": producer.occupancy_sum / producer.gets if producer.gets else 0.0,
                "input_wait_seconds": producer.input_wait_ns / 1e9,
                "consumer_wait_seconds": producer.empty_wait_ns / 1e9,
                "producer_blocked_seconds": producer.full_wait_ns / 1e9,
                "snapshots_taken": producer.ledger.policy.taken,
            }
        )
        if "bytes_in_per_element" in out:  # elements held are the parent's: its measured mean size
            out["buffer_bytes"] = out["buffered"] * out["bytes_in_per_element"]
        return out
