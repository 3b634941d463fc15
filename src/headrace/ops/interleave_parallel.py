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
in the consumer's thread, as the serial interleave does). What each slot costs the consumer's thread
(opening, waiting for or reading its elements, closing) is booked to its kind; once each kind gave
``TRIAL_ELEMENTS`` elements (``TRIAL_EARLY_ELEMENTS`` when one costs over ``TRIAL_CLEAR`` times the
other), the cheaper kind per element reads every later slot (inline only when it costs under
``TRIAL_INLINE`` of a reader, and never when inline reads mostly wait: ``TRIAL_WAITS`` of the time
they were not queued for a core on the CPU, unless they cost under half a reader's), and when
readers win the trial's inline slots get readers at once. Many
small files that compute (a page-cached read of a few records) are read fastest inline: a thread
per file costs more in start-up and hand-offs than the overlap saves; slow storage gets readers.
The report and ``counters()`` say which and why.

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
from ..runtime.choose import run_delay_ns
from ..runtime.producer import BufferedIterator
from .interleave import OWED, InterleaveIterator

TRY_INLINE = True  # False: every slot gets a reader thread, no trial (tests of the readers themselves)
TRIAL_ELEMENTS = 32  # elements of each kind (from at least TRIAL_MIN_SLOTS slots each) before deciding
TRIAL_EARLY_ELEMENTS = 16  # ... or this many, when one kind costs over TRIAL_CLEAR times the other
TRIAL_MIN_SLOTS = 2
TRIAL_CLEAR = 2.0
# Inline only when its elements cost the consumer under this share of a reader's: the risk is lopsided
# (readers lose a little on small computing reads, inline loses up to N x on reads that wait).
TRIAL_INLINE = 0.8
TRIAL_WAITS = 0.25  # inline reads using under this share of their time on the CPU wait: readers (GIL
# waits beside the trial's readers and a busy machine's run queue took computing reads to 37-41%)


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


def _zero() -> int:
    return 0


class ConsumerTimed:
    """A slot's sub-iterator (reader or inline) during the trial: books what each call costs the
    consumer's thread, and the elements it gave, to its kind (``books[kind]``: ns, elements, slots
    opened, CPU ns of the reads, ns the thread sat waiting for a core during inline reads)."""

    def __init__(
        self, inner: NodeIterator, kind: str, opened: tuple[int, int, int], books: dict[str, list[int]]
    ):
        self.inner, self.kind, self.book = inner, kind, books[kind]
        # Waiting for a core is computing delayed, not waiting on storage: inline reads ask the
        # kernel how long (about 10 us a read, during the trial only); readers' time is not split.
        self.queued = run_delay_ns if kind == "inline" else _zero
        self._book(*opened)  # opening the slot (map_func, the sub-iterator) costs the consumer too
        self.book[2] += 1

    def __next__(self) -> Any:
        start, cpu, queued = perf_ns(), thread_time_ns(), self.queued()
        try:
            value = next(self.inner)
        finally:
            self._book(start, cpu, queued)
        self.book[1] += 1
        return value

    def next_chunk(self, n: int) -> list:
        start, cpu, queued = perf_ns(), thread_time_ns(), self.queued()
        try:
            chunk = self.inner.next_chunk(n)
        finally:
            self._book(start, cpu, queued)
        self.book[1] += len(chunk)
        return chunk

    def _book(self, start: int, cpu: int, queued: int) -> None:
        book = self.book
        book[0] += perf_ns() - start
        book[3] += thread_time_ns() - cpu
        book[4] += self.queued() - queued

    def close(self) -> None:
        start, cpu, queued = perf_ns(), thread_time_ns(), self.queued()
        try:
            self.inner.close()
        finally:
            self._book(start, cpu, queued)

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
        # kind [consumer ns, elements, slots opened, CPU ns]; None once decided.
        self.trial: dict[str, list[int]] | None = (
            {"reader": [0, 0, 0, 0, 0], "inline": [0, 0, 0, 0, 0]} if TRY_INLINE else None
        )
        self.opens = 0
        # The consumer's clock and run-queue delay when the trial's first slot opened (in its thread):
        # what share of its time it waited for a core meanwhile (a busy machine), not for its reads.
        self.inline = False  # decided: new slots are read in the consumer's thread
        self.readers_gone = False  # inline, and every reader of the trial has closed
        self.executor_reason = (
            "trying reader threads against inline reads (too few elements read yet)"
            if TRY_INLINE
            else "a reader thread per slot (no trial)"
        )

    def _open(self, element: Any, position: int) -> NodeIterator:
        self.opens += 1
        trial = self.trial
        inline = self.inline or (trial is not None and self.opens % 2 == 0)
        kind = "reader" if not inline else "inline"
        # what opening costs the consumer (ConsumerTimed books it); the kernel is asked for the
        # run-queue delay only where the trial books it: inline slots
        start = (perf_ns(), thread_time_ns(), run_delay_ns() if trial is not None and kind == "inline" else 0)
        sub = super()._open(element, position)
        if kind == "reader":
            sub = self._read_ahead(sub)
        elif self.gate is not None and (trial is not None or self._readers_left()):
            sub = cast(NodeIterator, GatedReads(sub, self.gate))
        if trial is None:
            return sub
        return cast(NodeIterator, ConsumerTimed(sub, kind, start, trial))

    def _open_saved(self, element: Any, position: int) -> NodeIterator:
        """A saved slot reopens as a reader, outside the trial: its state may owe elements its reader had
        read ahead, which a reader takes back."""
        self.opens += 1
        return self._read_ahead(super()._open(element, position))

    def _restored(self, sub: NodeIterator, state: dict) -> NodeIterator:
        sub.set_state(state)  # restoring opens readers, which take their elements read ahead back
        return sub

    def _readers_left(self) -> bool:
        """Whether a reader still runs beside inline slots (after an inline verdict no new one starts,
        so once none is left the scan stops)."""
        if self.inline and self.readers_gone:
            return False
        left = any(_reader(slot) is not None for slot in self.slots)
        self.readers_gone = self.inline and not left
        return left

    def _read_ahead(self, sub: NodeIterator) -> SlotReader:
        timed_sub = cast(NodeIterator, TimedReads(sub, self.reads))  # forwards all but next() to sub
        reader = SlotReader(sub.node, timed_sub, self.capacity, self.gate)
        reader.producer.owner = id(self)  # this stage's calls hand the slot's elements on (the trace)
        reader.producer.start()  # reads ahead from now on, while the cycle visits other slots
        return reader

    def _decide(self, trial: dict[str, list[int]]) -> None:
        """Once each kind gave enough elements: the one that cost the consumer less per element reads
        every later slot; open slots read inline get readers when readers win."""
        (reader_ns, reader_n, reader_slots, _, _), (inline_ns, inline_n, inline_slots, inline_cpu, queued) = (
            trial["reader"],
            trial["inline"],
        )
        if (
            min(reader_n, inline_n) < TRIAL_EARLY_ELEMENTS
            or min(reader_slots, inline_slots) < TRIAL_MIN_SLOTS
        ):
            return
        per_reader, per_inline = reader_ns / reader_n / 1e3, inline_ns / inline_n / 1e3
        # Inline reads mostly wait (storage, network): off the CPU for most of the time they were not
        # queued for a core (on a busy machine reads that compute, and reads woken from a wait, sit
        # in the run queue: that time says nothing either way). Waits for the GIL, which the trial's
        # readers hold, look like storage, so reads that cost the consumer under half a reader's
        # are not called waiting.
        ran = max(1, inline_ns - queued)
        waits = inline_cpu < TRIAL_WAITS * ran and per_reader <= TRIAL_CLEAR * per_inline
        clear = waits or max(per_reader, per_inline) > TRIAL_CLEAR * min(per_reader, per_inline)
        if min(reader_n, inline_n) < TRIAL_ELEMENTS and not clear:
            return
        figures = (
            f"over {reader_n} + {inline_n} elements of {reader_slots} + {inline_slots} slots, an element "
            f"cost the consumer's thread {per_reader:,.1f} us with a reader thread per slot (opening, "
            f"waiting, closing), {per_inline:,.1f} us read inline"
        )
        self.trial = None
        if waits or per_inline > TRIAL_INLINE * per_reader:
            why = (
                f"inline reads waited {100 - 100 * inline_cpu / ran:.0f}% of their time off the run queue"
                if waits
                else ""
            )
            self.executor_reason = f"{figures}: reader threads{' (' + why + ')' if why else ''}"
            for index, slot in enumerate(self.slots):  # the trial's inline slots read ahead from here on
                if slot is not None and _reader(slot) is None:
                    sub: Any = slot[2]
                    while isinstance(sub, (ConsumerTimed, GatedReads)):
                        sub = sub.inner
                    self.slots[index] = (slot[0], slot[1], self._read_ahead(sub))
        else:
            self.inline = True
            self.executor_reason = (
                f"{figures}: new slots are read inline (each read computes briefly: a thread per slot "
                "costs more in start-up and hand-offs than reading at once saves)"
            )

    def __next__(self) -> Any:
        if self.trial is not None:
            self._decide(self.trial)  # between calls: no inline read is in progress
        if not self.deterministic:
            ready, value = self._any_ready()
            if ready:
                self.produced += 1
                return value
        return super().__next__()

    def next_chunk(self, n: int) -> list:
        if not self.deterministic:
            return [self.__next__()]
        if self.trial is not None:
            self._decide(self.trial)
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
