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

Whatever ``num_parallel_calls`` (AUTOTUNE or a number: a parallel ``map`` measures its function
too), slots are tried both ways first: they open alternately with a reader thread and *inline* (read
in the consumer's thread, as the serial interleave does). Each finished slot books what it cost the
consumer's thread (opening, waiting for or reading its elements, closing) per element; once
``TRIAL_SLOTS`` slots of each kind have finished, later slots open the cheaper way (readers only when
they cost under ``TRIAL_KEEP`` of inline). Many small files that compute (a page-cached read of a few
records) are read fastest inline: a thread per file costs more in start-up and hand-offs than the
overlap saves; slow storage keeps its readers. Sub-datasets that never finish during the trial (a
few large files) keep their readers. The report and ``counters()`` say which and why.

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
TRY_INLINE = True  # False: every slot gets a reader thread, no trial (tests of the readers themselves)
TRIAL_SLOTS = 4  # finished slots of each kind (reader, inline) before AUTOTUNE decides
TRIAL_EARLY_SLOTS = 2  # ... or this many, when one kind costs over TRIAL_CLEAR times the other
TRIAL_CLEAR = 2.0
TRIAL_KEEP = 0.9  # readers stay when a finished slot's element cost the consumer under this of inline's


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


class GatedReads:
    """An inline slot's sub-iterator while reader threads run beside it: each read takes a permit of
    the gate too, so reads at once never exceed ``num_parallel_calls``; all else forwards."""

    def __init__(self, inner: NodeIterator, gate: Gate):
        self.inner, self.gate = inner, gate

    def __next__(self) -> Any:
        self.gate.acquire()
        try:
            return next(self.inner)
        finally:
            self.gate.release()

    def next_chunk(self, n: int) -> list:
        self.gate.acquire()
        try:
            return self.inner.next_chunk(n)
        finally:
            self.gate.release()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class ConsumerTimed:
    """A slot's sub-iterator (reader or inline) during the AUTOTUNE trial: times what each call costs
    the consumer's thread and books the slot's total and its elements when it closes after its end
    (a slot closed mid-way, by ``reset`` or ``close``, says nothing about its kind)."""

    def __init__(self, inner: NodeIterator, kind: str, open_ns: int, books: dict[str, list[int]]):
        self.inner, self.kind, self.books = inner, kind, books
        self.ns, self.elements, self.finished = open_ns, 0, False

    def __next__(self) -> Any:
        start = perf_ns()
        try:
            value = next(self.inner)
        except StopIteration:
            self.finished = True
            raise
        finally:
            self.ns += perf_ns() - start
        self.elements += 1
        return value

    def next_chunk(self, n: int) -> list:
        start = perf_ns()
        try:
            chunk = self.inner.next_chunk(n)
        except StopIteration:
            self.finished = True
            raise
        finally:
            self.ns += perf_ns() - start
        self.elements += len(chunk)
        return chunk

    def close(self) -> None:
        start = perf_ns()
        self.inner.close()
        if self.finished and self.elements:
            book = self.books[self.kind]
            book[0] += self.ns + perf_ns() - start
            book[1] += self.elements
            book[2] += 1
            self.finished = False

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


def _reader(slot: tuple[Any, int, NodeIterator] | None) -> SlotReader | None:
    """The reader of an open slot, or None for a free slot or one read inline (AUTOTUNE's choice)."""
    if slot is None:
        return None
    sub: Any = slot[2]
    if isinstance(sub, ConsumerTimed):
        sub = sub.inner  # a reader is never gated by GatedReads (its producer takes the permits)
    return sub if isinstance(sub, SlotReader) else None


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
        # The trial of reader threads against inline reads (module docstring): opens so far, and per
        # kind [consumer ns, elements, finished slots]; None once decided.
        self.trial: dict[str, list[int]] | None = (
            {"reader": [0, 0, 0], "inline": [0, 0, 0]} if TRY_INLINE else None
        )
        self.opens = 0
        self.inline = False  # decided: new slots are read in the consumer's thread
        self.restoring = False  # set_state reopens slots as readers: a saved slot may owe read-ahead
        self.executor_reason = (
            "trying reader threads against inline reads (no slot has finished yet)"
            if TRY_INLINE
            else "a reader thread per slot (no trial)"
        )

    def _open(self, element: Any, position: int) -> NodeIterator:
        start = perf_ns()
        self.opens += 1
        trial = self.trial
        if trial is not None:
            self._decide(trial)
            trial = self.trial
        inline = self.inline or (trial is not None and self.opens % 2 == 0)
        kind = "reader" if self.restoring or not inline else "inline"
        sub = super()._open(element, position)
        if kind == "reader":
            sub = self._read_ahead(sub)
        elif self.gate is not None and (trial is not None or any(_reader(slot) for slot in self.slots)):
            sub = cast(NodeIterator, GatedReads(sub, self.gate))
        if trial is None or self.restoring:
            return sub
        return cast(NodeIterator, ConsumerTimed(sub, kind, perf_ns() - start, trial))

    def _read_ahead(self, sub: NodeIterator) -> SlotReader:
        timed_sub = cast(NodeIterator, TimedReads(sub, self.reads))  # forwards all but next() to sub
        reader = SlotReader(sub.node, timed_sub, self.capacity, self.gate)
        reader.producer.owner = id(self)  # this stage's calls hand the slot's elements on (the trace)
        reader.producer.start()  # reads ahead from now on, while the cycle visits other slots
        return reader

    def _decide(self, trial: dict[str, list[int]]) -> None:
        """Once enough slots of each kind finished: the cheaper kind for the consumer opens from now on."""
        (reader_ns, reader_n, reader_slots), (inline_ns, inline_n, inline_slots) = (
            trial["reader"],
            trial["inline"],
        )
        if min(reader_slots, inline_slots) < TRIAL_EARLY_SLOTS or not reader_n or not inline_n:
            return
        per_reader, per_inline = reader_ns / reader_n / 1e3, inline_ns / inline_n / 1e3
        clear = max(per_reader, per_inline) > TRIAL_CLEAR * min(per_reader, per_inline)
        if min(reader_slots, inline_slots) < TRIAL_SLOTS and not clear:
            return
        figures = (
            f"over {reader_slots} + {inline_slots} finished slots, an element cost the consumer's thread "
            f"{per_reader:,.1f} us with a reader thread per slot, {per_inline:,.1f} us read inline"
        )
        self.trial = None
        if per_reader < TRIAL_KEEP * per_inline:
            self.executor_reason = f"{figures}: reader threads kept"
        else:
            self.inline = True
            self.executor_reason = (
                f"{figures}: new slots are read inline (each read computes briefly: a thread per slot "
                "costs more in start-up and hand-offs than reading at once saves)"
            )

    def set_state(self, state: dict) -> None:
        self.restoring = True
        try:
            super().set_state(state)
        finally:
            self.restoring = False

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
        current = _reader(self.slots[self.cycle_index])
        if current is None or current.producer.items:
            return False, None  # opening or inline, an element, an error or the end: the serial path
        for step in range(1, length):
            reader = _reader(self.slots[(self.cycle_index + step) % length])
            if reader is not None:
                ready, value = reader.take_ready()
                if ready:
                    return True, value
        return False, None

    def tunable_knobs(self) -> dict[str, tuple[int, int]]:
        """``num_parallel_calls=AUTOTUNE``: how many slots read at once, up to ``cycle_length``."""
        return (
            {"parallelism": (self.parallelism, self.node.cycle_length)}
            if self.tunable and not self.inline
            else {}
        )

    def set_knob(self, name: str, value: int) -> None:
        if self.gate is None:  # not tunable: no knobs
            return super().set_knob(name, value)
        self.parallelism = max(1, min(self.node.cycle_length, int(value)))
        self.gate.resize(self.parallelism)

    def counters(self) -> dict:
        out = super().counters()
        readers = [reader for slot in self.slots if (reader := _reader(slot)) is not None]
        out.update(
            executor="inline" if self.inline else "thread",
            executor_reason=self.executor_reason,
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
