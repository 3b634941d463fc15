"""The parallel interleave iterator: ``interleave(..., num_parallel_calls=N)`` reads sub-datasets at once.

It is the serial interleave (same cycle, same blocks, same order of ``map_func`` calls) with every
open sub-iterator wrapped in a :class:`SlotReader`: a background thread reading that sub-dataset
ahead into a small bounded buffer. At most ``N`` threads read at the same time (a shared semaphore),
so ``N`` slow reads (files, network) overlap; with ``deterministic=True`` the output is exactly the
serial order. With ``deterministic=False``, when the current slot has nothing ready, an element
ready in another slot is taken instead.

Slots open one at a time, when the cycle reaches them (the serial order of ``map_func`` calls),
then read ahead concurrently. Checkpoints stay exact: each slot's state is its sub-iterator's state
after the last element handed out (plus, rarely, elements it read ahead but did not hand out).

Part of the interleave op, not of ``runtime/`` (which never imports ops): it extends the serial
interleave iterator, and ``ops/interleave_node.py`` imports it only when a parallel interleave is built.
"""

from __future__ import annotations

import os
import threading
from time import thread_time_ns
from typing import Any, cast

from ..core import counters
from ..core.errors import CheckpointError
from ..core.node import AUTOTUNE, Context, NodeIterator, perf_ns
from ..core.state import StateFields, encode_element
from ..runtime.producer import BufferedIterator
from .interleave import InterleaveIterator

OWED = "headrace_read_ahead"  # key of a slot state that carries elements read ahead


class Gate:
    """A semaphore whose number of permits can change: how many slots may read at once (the
    autotuner's knob for ``num_parallel_calls=AUTOTUNE``).

    >>> gate = Gate(1); gate.acquire(); gate.resize(2); gate.acquire(); gate.release(); gate.release()
    """

    def __init__(self, permits: int):
        self.cv = threading.Condition()
        self.permits = permits
        self.held = 0

    def acquire(self) -> None:
        with self.cv:
            while self.held >= self.permits:
                self.cv.wait()
            self.held += 1

    def release(self) -> None:
        with self.cv:
            self.held -= 1
            self.cv.notify()

    def resize(self, permits: int) -> None:
        with self.cv:
            self.permits = max(1, int(permits))
            self.cv.notify_all()


class ReadTally:
    """Wall and CPU time the slots spent reading, summed over every slot of one iterator (the tuner
    tells reads that wait on storage from reads that compute). While a recording runs
    (``record_calls``), each read is also a slice on its reader thread, booked to ``key`` (``id()``
    of the interleave's iterator); the slot's producer links it to the interleave call that hands
    the element on (see ``runtime.producer``)."""

    def __init__(self, key: int = 0) -> None:
        self.lock = threading.Lock()
        self.wall_ns = 0
        self.cpu_ns = 0
        self.key = key

    def add(self, start_ns: int, end_ns: int, cpu_ns: int, elements: int) -> int | None:
        """Book one read; while recording, log it and return its slice number."""
        with self.lock:
            self.wall_ns += end_ns - start_ns
            self.cpu_ns += cpu_ns
        log = counters.call_log
        if log is None:
            return None
        return log.add_chunk(self.key, os.getpid(), threading.get_ident(), start_ns, end_ns, elements)


class TimedReads:
    """A sub-iterator whose ``next`` calls are timed into a :class:`ReadTally`; all else forwards.
    ``last_slice`` is the number of its last read logged while recording: the slot's producer
    links the element to it."""

    def __init__(self, inner: NodeIterator, tally: ReadTally):
        self.inner, self.tally = inner, tally
        self.last_slice: int | None = None

    def __next__(self) -> Any:
        wall, cpu, elements = perf_ns(), thread_time_ns(), 0
        try:
            value = next(self.inner)
            elements = 1
            return value
        finally:
            number = self.tally.add(wall, perf_ns(), thread_time_ns() - cpu, elements)
            if number is not None:
                self.last_slice = number

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class SlotReader(BufferedIterator):
    """One open sub-iterator, read ahead in the background. Its state is the sub-iterator's own
    whenever nothing read ahead is owed, so it matches the serial interleave's slot state."""

    def get_state(self) -> dict:
        parent_state, values = self.producer.get_state()
        if not values:
            return parent_state
        return {OWED: [encode_element(v) for v in values], "state": parent_state}

    def set_state(self, state: dict) -> None:
        if isinstance(state, dict) and OWED in state:
            fields = StateFields(state, self.name, (OWED, "state"))
            values = fields.elements(OWED)
            self.producer.set_state(fields.dict("state"), values)
        elif isinstance(state, dict):
            self.producer.set_state(state, [])
        else:
            raise CheckpointError(f"{self.name}: a slot state must be a dict, got {type(state).__name__}")


def _reader(slot: tuple[Any, int, NodeIterator]) -> SlotReader:
    """The reader of an open slot: a parallel interleave opens every slot as one (``_open``)."""
    return cast(SlotReader, slot[2])


class ParallelInterleaveIterator(InterleaveIterator):
    def __init__(
        self, node: Any, parent: NodeIterator, ctx: Context, *, parallelism: int, deterministic: bool
    ):
        super().__init__(node, parent, ctx)
        self.parallelism = min(parallelism, node.cycle_length)
        self.deterministic = deterministic
        self.tunable = node.num_parallel_calls == AUTOTUNE
        # Every slot has a thread; the gate lets only `parallelism` of them read at once.
        self.gate = Gate(self.parallelism) if self.tunable or self.parallelism < node.cycle_length else None
        self.capacity = max(2, node.block_length)
        self.reads = ReadTally(id(self))

    def _open(self, element: Any, position: int) -> NodeIterator:
        sub = super()._open(element, position)
        timed_sub = cast(NodeIterator, TimedReads(sub, self.reads))  # forwards all but next() to sub
        reader = SlotReader(sub.node, timed_sub, self.capacity, self.gate)
        reader.producer.owner = id(self)  # this stage's calls hand the slot's elements on (the trace)
        reader.producer.start()  # reads ahead from now on, while the cycle visits other slots
        return reader

    def __next__(self) -> Any:
        if not self.deterministic:
            ready, value = self._any_ready()
            if ready:
                self.produced += 1
                return value
        return super().__next__()

    def next_chunk(self, n: int) -> list:
        if not self.deterministic:
            return [self.__next__()]
        return super().next_chunk(n)

    def _any_ready(self) -> tuple[bool, Any]:
        """An element already read by the current slot, else by any other open slot (in cycle order)."""
        length = self.node.cycle_length
        current = self.slots[self.cycle_index]
        if current is None or _reader(current).producer.items:
            return False, None  # opening a slot, an element, an error or the end: the serial path
        for step in range(1, length):
            slot = self.slots[(self.cycle_index + step) % length]
            if slot is not None:
                ready, value = _reader(slot).take_ready()
                if ready:
                    return True, value
        return False, None

    def tunable_knobs(self) -> dict[str, tuple[int, int]]:
        """``num_parallel_calls=AUTOTUNE``: how many slots read at once, up to ``cycle_length``."""
        return {"parallelism": (self.parallelism, self.node.cycle_length)} if self.tunable else {}

    def set_knob(self, name: str, value: int) -> None:
        if self.gate is None:  # not tunable: no knobs
            return super().set_knob(name, value)
        self.parallelism = max(1, min(self.node.cycle_length, int(value)))
        self.gate.resize(self.parallelism)

    def counters(self) -> dict:
        out = super().counters()
        readers = [_reader(slot) for slot in self.slots if slot is not None]
        out.update(
            executor="thread",
            parallelism=self.parallelism,
            deterministic=self.deterministic,
            open_slots=len(readers),
            buffer_capacity=self.capacity * self.node.cycle_length,
            buffered=sum(reader.producer.occupancy() for reader in readers),
            input_wait_seconds=sum(reader.producer.input_wait_ns for reader in readers) / 1e9,
            busy_seconds=self.reads.wall_ns / 1e9,  # reading, summed over slots
            cpu_seconds=self.reads.cpu_ns / 1e9,
        )
        return out
