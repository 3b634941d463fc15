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
too), slots are tried both ways first, one way at a time so neither disturbs the other's figures
(a reader thread holding the GIL slows an inline read beside it, which then looks dear): the first
slots are read *inline*, in the consumer's thread as the serial interleave does, then every open
slot gets a reader thread. Each phase books what the consumer's thread pays per element read
(waiting for or reading it) and per slot opened (``map_func``, a thread start, closing), over at
least ``TRIAL_ELEMENTS`` elements and ``TRIAL_MIN_SLOTS`` slots (a phase of long sub-datasets,
which rarely open, also ends after ``TRIAL_MAX_ELEMENTS``); an element then costs its read plus its
share of a slot's opening. Inline reads that mostly wait (off the CPU for all but ``TRIAL_WAITS`` of
the time they were not queued for a core: storage, network) get readers at once. Reads that compute
go on inline until a slot has ended (how long slots are is then known); when the input's cardinality
says the rest of the job is too short for a losing reader phase to cost under ``TRIAL_SHARE`` of it,
slots stay inline with no reader phase. A reader phase ends once it has cost what ``TRIAL_ELEMENTS``
elements at ``TRIAL_HOPELESS`` times inline's cost would. Otherwise readers
stay only when they cost the consumer under ``TRIAL_READERS`` of inline's: reads that compute and
hold the GIL (a page-cached read of a few records) gain nothing from a thread per slot, which costs
start-up and hand-offs, while reads that release it (decompression, decoding) overlap. On an inline
verdict the readers hand back what they read ahead and their slots go on inline. The report and
``counters()`` say which and why. A pipeline built again with the same stages (a new iterator each
epoch, as ``for x in ds`` makes) starts from the verdict an earlier one reached
(``PROCESS.verdicts``, :class:`~headrace.runtime.choose.Verdicts`, as the parallel map does): no second trial.

Part of the interleave op, not of ``runtime/`` (which never imports ops): it extends the serial
interleave iterator, and ``ops/interleave_node.py`` imports it only when a parallel interleave is built.
"""

from __future__ import annotations

import os
import threading
from time import thread_time_ns
from typing import Any, cast

from ..core.counters import Probe, StageCounters
from ..core.node import AUTOTUNE, Context, NodeIterator, perf_ns
from ..core.process import PROCESS
from ..runtime.choose import Choice, run_delay_ns
from ..runtime.producer import BufferedIterator
from .interleave import InterleaveIterator, OwedFirst, slot_state, split_slot_state

TRY_INLINE = True  # False: every slot gets a reader thread, no trial (tests of the readers themselves)
TRIAL_ELEMENTS = 32  # elements booked in each phase before it ends
TRIAL_MIN_SLOTS = 2  # ... and slots opened in it (the inline phase's first slot, cold, is not booked)
TRIAL_MAX_ELEMENTS = 512  # ... unless this many elements came without them (long sub-datasets)
TRIAL_EARLY_ELEMENTS = 8  # inline reads that wait get readers after this many (each may take long)
# Readers stay only when an element costs the consumer under this share of inline's: ties go to
# inline (no threads, nothing read ahead held), and reads that wait never reach the comparison.
TRIAL_READERS = 0.8
TRIAL_HOPELESS = 2.0  # a reader phase ends once it cost TRIAL_ELEMENTS elements at this many times inline's
# What a reader phase costs the consumer per slot it converts when readers lose (the 2-core box, 200
# files of 5 records: 2.7 ms to start 8 threads, 6.2 ms for the next 8 elements while the new threads
# take turns at the GIL), and the share of the job's rest, read inline, that it may cost: a shorter rest
# (a known input cardinality says how long) stays inline without one.
TRIAL_SLOT_NS = 1_000_000
TRIAL_SHARE = 0.02
TRIAL_WAITS = 0.25  # inline reads using under this share of their unqueued time on the CPU wait: readers

# A phase's book: what the consumer's thread paid for reads and opens (ns), how many, and the CPU
# time and run-queue delay of the inline phase's reads and opens.
READ_NS, ELEMENTS, OPENS, OPEN_NS, CPU_NS, QUEUED_NS = range(6)


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
        log = PROCESS.recorder
        if log is None:
            return None
        return log.add_chunk(self.key, os.getpid(), threading.get_ident(), start_ns, end_ns, elements)


class AroundReads:
    """A slot's sub-iterator, ``inner``, with something done around each read: :meth:`begin` before,
    :meth:`end` after (given what ``begin`` returned and the number of elements read, 0 when the read
    raised); all else forwards."""

    def __init__(self, inner: NodeIterator):
        self.inner = inner

    def __next__(self) -> Any:
        token, elements = self.begin(), 0
        try:
            value = next(self.inner)
            elements = 1
        finally:
            self.end(token, elements)
        return value

    def next_chunk(self, n: int) -> list:
        token, elements = self.begin(), 0
        try:
            chunk = self.inner.next_chunk(n)
            elements = len(chunk)
        finally:
            self.end(token, elements)
        return chunk

    def begin(self) -> Any:
        raise NotImplementedError

    def end(self, token: Any, elements: int) -> None:
        raise NotImplementedError

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class TimedReads(AroundReads):
    """A reader's sub-iterator, its reads timed into a :class:`ReadTally`. ``probe.last_slice`` is the
    number of its last read logged while recording: the slot's producer links the element to it."""

    def __init__(self, inner: NodeIterator, tally: ReadTally):
        super().__init__(inner)
        self.tally = tally
        self.probe = Probe()  # its own: the producer links elements to its reads (probe.last_slice)

    def begin(self) -> tuple[int, int]:
        return perf_ns(), thread_time_ns()

    def end(self, token: tuple[int, int], elements: int) -> None:
        number = self.tally.add(token[0], perf_ns(), thread_time_ns() - token[1], elements)
        if number is not None:
            self.probe.last_slice = number


class GatedReads(AroundReads):
    """An inline slot's sub-iterator while reader threads run beside it: each read takes a permit of
    the gate too, so reads at once never exceed ``num_parallel_calls``."""

    def __init__(self, inner: NodeIterator, gate: Gate):
        super().__init__(inner)
        self.gate = gate

    def begin(self) -> None:
        self.gate.acquire()

    def end(self, token: None, elements: int) -> None:
        self.gate.release()


class ConsumerTimed(AroundReads):
    """A slot's sub-iterator (reader or inline) during its phase of the trial: books what each read
    costs the consumer's thread (wall and CPU time), and the elements it gave, to the phase's book
    (see ``READ_NS``); ``opened`` (the clocks when the slot began to open) books the opening too."""

    def __init__(self, inner: NodeIterator, book: list[int], opened: tuple[int, int] | None):
        super().__init__(inner)
        self.book = book
        if opened is not None:
            self.book[OPEN_NS] += self._book(*opened)
            self.book[OPENS] += 1

    def begin(self) -> tuple[int, int]:
        return perf_ns(), thread_time_ns()

    def end(self, token: tuple[int, int], elements: int) -> None:
        self.book[READ_NS] += self._book(*token)
        self.book[ELEMENTS] += elements

    def _book(self, start: int, cpu: int) -> int:
        """Book the CPU time since ``cpu``; return the wall time since ``start``."""
        self.book[CPU_NS] += thread_time_ns() - cpu
        return perf_ns() - start

    def close(self) -> None:  # closing is part of a slot's cost: booked with its opening
        start, cpu = perf_ns(), thread_time_ns()
        try:
            self.inner.close()
        finally:
            self.book[OPEN_NS] += self._book(start, cpu)


class SlotReader(BufferedIterator):
    """One open sub-iterator, read ahead in the background. Its state is the sub-iterator's own
    whenever nothing read ahead is owed, so it matches the serial interleave's slot state."""

    def get_state(self) -> dict:
        return slot_state(*self.producer.get_state())

    def set_state(self, state: dict) -> None:
        self.producer.set_state(*split_slot_state(state, self.name))

    def inline(self) -> NodeIterator | None:
        """Stop reading ahead: the sub-iterator, serving what was read ahead first, for the consumer's
        thread to read on; None (the thread reads on) when an error or the end is buffered."""
        values = self.producer.take_back()
        if values is None:
            return None
        self.closed = True  # the sub-iterator lives on in the slot; closing this would close it
        sub = cast(TimedReads, self.parent).inner
        return OwedFirst(sub, values) if values else sub


def _unwrapped(sub: Any) -> Any:
    """A slot's sub-iterator without the trial's timing and the gate's permits."""
    while isinstance(sub, (ConsumerTimed, GatedReads)):
        sub = sub.inner
    return sub


def _reader(slot: tuple[Any, int, NodeIterator] | None) -> SlotReader | None:
    """The reader of an open slot, or None for a free slot or one read inline (AUTOTUNE's choice)."""
    if slot is None:
        return None
    sub: Any = slot[2]
    if isinstance(sub, ConsumerTimed):
        sub = sub.inner  # a reader is never gated by GatedReads (its producer takes the permits)
    return sub if isinstance(sub, SlotReader) else None


def waited(inline: list[int]) -> str | None:
    """Why inline reads call for reader threads at once (they mostly wait: off the CPU for all but
    ``TRIAL_WAITS`` of the time they were not queued for a core), or None for reads that compute."""
    ran = max(1, inline[READ_NS] + inline[OPEN_NS] - inline[QUEUED_NS])
    if inline[CPU_NS] >= TRIAL_WAITS * ran:
        return None
    per_element = (inline[READ_NS] + inline[OPEN_NS]) / max(1, inline[ELEMENTS]) / 1e3
    return (
        f"over {inline[ELEMENTS]} elements of {inline[OPENS]} slots read inline, an element cost the "
        f"consumer's thread {per_element:,.1f} us: reader threads (inline reads waited "
        f"{100 - 100 * inline[CPU_NS] / ran:.0f}% of their time off the run queue: storage or network)"
    )


def costs(inline: list[int], reader: list[int], elements_per_slot: float) -> tuple[float, float]:
    """What an element cost the consumer's thread (us), ``(inline, with readers)``: its read plus
    ``1 / elements_per_slot`` of a slot's opening; a phase with no opening booked is charged the
    other's."""
    inline_open = inline[OPEN_NS] / inline[OPENS] if inline[OPENS] else None
    reader_open = reader[OPEN_NS] / reader[OPENS] if reader[OPENS] else None
    inline_open = inline_open if inline_open is not None else reader_open or 0.0
    reader_open = reader_open if reader_open is not None else inline_open
    slot = max(1.0, elements_per_slot)
    return (
        (inline[READ_NS] / max(1, inline[ELEMENTS]) + inline_open / slot) / 1e3,
        (reader[READ_NS] / max(1, reader[ELEMENTS]) + reader_open / slot) / 1e3,
    )


def too_short(
    inline: list[int], elements_per_slot: float, slots_left: float, cycle_length: int
) -> str | None:
    """Why the reader phase is skipped (the rest of the job, ``slots_left`` slots of
    ``elements_per_slot`` elements read inline, is too short for a phase giving ``cycle_length``
    open slots a reader, and new ones as they open, to pay: ``TRIAL_SHARE``), or None. The phase is
    reckoned as losing until its budget is spent: a thread start and turns at the GIL per slot
    (``TRIAL_SLOT_NS``), and ``TRIAL_ELEMENTS`` elements at ``TRIAL_HOPELESS`` times inline's cost (the
    excess over reading them inline).

    >>> too_short([160_000, 32, 4, 400_000, 560_000, 0], 5.0, 180, 8)[:36]
    'the rest of the job, about 22 ms rea'
    >>> too_short([160_000, 32, 4, 400_000, 560_000, 0], 20.0, 5000, 8) is None
    True
    """
    inline_us = costs(inline, inline, elements_per_slot)[0]
    rest_ms = slots_left * max(1.0, elements_per_slot) * inline_us / 1e3
    slots = cycle_length + TRIAL_ELEMENTS / max(1.0, elements_per_slot)  # converted, then opened
    extra = TRIAL_ELEMENTS * (TRIAL_HOPELESS - 1) * inline_us / 1e3  # over reading them inline
    phase_ms = slots * TRIAL_SLOT_NS / 1e6 + extra
    if rest_ms * TRIAL_SHARE >= phase_ms:
        return None
    return (
        f"the rest of the job, about {rest_ms:,.0f} ms read inline ({inline_us:,.1f} us an element, "
        f"{elements_per_slot:,.1f} elements a slot), is too short for a trial of reader threads to pay "
        f"(about {phase_ms:,.1f} ms if they lose): slots are read inline"
    )


def verdict(inline: list[int], reader: list[int], elements_per_slot: float) -> tuple[bool, str]:
    """``(readers win, why)`` from the two phases' books (``READ_NS``...; :func:`costs`). Readers win
    when inline reads mostly wait (:func:`waited`), or when they cost under ``TRIAL_READERS`` of
    inline's.

    >>> verdict([90_000, 32, 4, 4_000_000, 4_000_000, 0], [400_000, 32, 2, 2_200_000, 0, 0], 20)[0]
    False
    """
    why = waited(inline)
    if why is not None:
        return True, why
    inline_us, reader_us = costs(inline, reader, elements_per_slot)
    figures = (
        f"an element cost the consumer's thread {reader_us:,.1f} us with a reader thread per slot, "
        f"{inline_us:,.1f} us read inline (over {reader[ELEMENTS]} + {inline[ELEMENTS]} elements, "
        f"{reader[OPENS]} + {inline[OPENS]} slots opened, {elements_per_slot:,.1f} elements a slot)"
    )
    if reader_us < TRIAL_READERS * inline_us:
        return True, f"{figures}: reader threads"
    return False, (
        f"{figures}: slots are read inline (each read computes briefly: a thread per slot costs more in "
        "start-up and hand-offs than reading at once saves)"
    )


class ParallelInterleaveIterator(InterleaveIterator):
    def __init__(
        self, node: Any, parent: NodeIterator, ctx: Context, *, parallelism: int, deterministic: bool
    ):
        super().__init__(node, parent, ctx)
        self.parallelism = min(parallelism, node.cycle_length)
        self.deterministic = deterministic
        self.stepping = TRY_INLINE or not deterministic  # calls begin with _step (the trial, _any_ready)
        self.one_at_a_time = not deterministic
        self.tunable = node.num_parallel_calls == AUTOTUNE
        # Every slot has a thread; the gate lets only `parallelism` of them read at once.
        self.gate = Gate(self.parallelism) if self.tunable or self.parallelism < node.cycle_length else None
        self.capacity = max(2, node.block_length)
        self.reads = ReadTally(id(self))
        # The trial of inline reads, then reader threads (module docstring): the phase running (None
        # once decided) and each phase's book (READ_NS...).
        self.phase: str | None = "inline" if TRY_INLINE else None
        self.books = {"inline": [0] * 6, "reader": [0] * 6}
        # The consumer's thread, clock and run-queue delay when the inline phase's booked slots began to
        # open; the looks taken at whether its reads wait (1: after TRIAL_EARLY_ELEMENTS, 2: after
        # TRIAL_ELEMENTS).
        self.clocks: tuple[int, int, int] | None = None
        self.looked = 0
        self.opens = 0
        self.inline = TRY_INLINE  # new slots are read in the consumer's thread (the trial's first phase)
        self.readers_gone = False  # inline, and every reader of the trial has closed
        self.executor_reason = (
            "trying inline reads, then reader threads (too few elements read yet)"
            if TRY_INLINE
            else "a reader thread per slot (no trial)"
        )
        kept = ctx.process.verdicts.recall(node) if TRY_INLINE else None
        if kept is not None:  # a pipeline with the same stages tried already (a new Dataset per epoch)
            self.phase, self.inline, self.executor_reason = None, kept.kind == "inline", kept.reason
            self.stepping = not deterministic

    @property
    def trial(self) -> dict[str, list[int]] | None:
        """The trial's books while it runs, None once decided."""
        return self.books if self.phase is not None else None

    def _open(self, element: Any, position: int) -> NodeIterator:
        self.opens += 1
        phase = self.phase
        if phase is None:  # decided: no clocks read (a file's open is the per-slot cost here)
            sub = super()._open(element, position)
            if not self.inline:
                return self._read_ahead(sub)
            if self.gate is not None and self._readers_left():
                return cast(NodeIterator, GatedReads(sub, self.gate))
            return sub
        if phase == "inline" and self.opens == 1:  # the first open is cold: not booked
            return super()._open(element, position)
        if self.clocks is None:  # the inline phase's clocks start (see _queued)
            self.clocks = (threading.get_ident(), perf_ns(), run_delay_ns())
        start = (perf_ns(), thread_time_ns())  # what opening costs the consumer (ConsumerTimed books it)
        sub = super()._open(element, position)
        if not self.inline:
            sub = self._read_ahead(sub)
        return cast(NodeIterator, ConsumerTimed(sub, self.books[phase], start))

    def _open_saved(self, element: Any, position: int) -> NodeIterator:
        """A saved slot reopens as new slots open now (inline or with a reader), outside the trial's
        books; a reader takes back the elements its state says were read ahead."""
        self.opens += 1
        sub = InterleaveIterator._open(self, element, position)
        return sub if self.inline else self._read_ahead(sub)

    def _restored(self, sub: NodeIterator, state: dict) -> NodeIterator:
        if isinstance(sub, SlotReader):
            sub.set_state(state)  # restoring a reader: it serves the elements owed first
            return sub
        return super()._restored(sub, state)

    def _readers_left(self) -> bool:
        """Whether a reader still runs beside inline slots (after an inline verdict no new one starts,
        so once none is left the scan stops)."""
        if self.phase is None and self.readers_gone:
            return False
        left = any(_reader(slot) is not None for slot in self.slots)
        self.readers_gone = self.phase is None and not left
        return left

    def _read_ahead(self, sub: NodeIterator) -> SlotReader:
        owed: list = []
        if isinstance(sub, OwedFirst):  # a restored slot that owed elements: its reader serves them
            owed, sub = list(sub.values), sub.inner
        timed_sub = cast(NodeIterator, TimedReads(sub, self.reads))  # forwards all but next() to sub
        reader = SlotReader(sub.node, timed_sub, self.capacity, self.gate)
        if owed:
            reader.producer.set_state(sub.get_state(), owed)
        reader.producer.owner = id(self)  # this stage's calls hand the slot's elements on (the trace)
        reader.producer.start()  # reads ahead from now on, while the cycle visits other slots
        return reader

    def _all_read_ahead(self, book: list[int] | None) -> None:
        """Every open slot read inline gets a reader now (timed into ``book`` if given)."""
        for index, slot in enumerate(self.slots):
            if slot is not None and _reader(slot) is None:
                sub: NodeIterator = self._read_ahead(_unwrapped(slot[2]))
                if book is not None:
                    sub = cast(NodeIterator, ConsumerTimed(sub, book, None))
                self.slots[index] = (slot[0], slot[1], sub)

    def _all_inline(self) -> None:
        """Every open slot with a reader goes on inline, first serving what its reader read ahead
        (a reader with an error or the end buffered reads on: its slot is about to end)."""
        for index, slot in enumerate(self.slots):
            reader = _reader(slot)
            if slot is not None and reader is not None:
                sub = reader.inline()
                if sub is not None:
                    self.slots[index] = (slot[0], slot[1], sub)

    def _trial_step(self) -> None:
        """Between calls (no read in progress): end the running phase once it booked enough."""
        phase = self.phase
        book = self.books[cast(str, phase)]
        if phase == "inline" and book[ELEMENTS] < (TRIAL_ELEMENTS if self.looked else TRIAL_EARLY_ELEMENTS):
            return  # nothing to look at before then (this runs at every element of the phase)
        enough = book[ELEMENTS] >= TRIAL_ELEMENTS
        look = 2 if enough else int(book[ELEMENTS] >= TRIAL_EARLY_ELEMENTS)
        if phase == "inline" and book[OPENS] and look > self.looked:
            self.looked = look  # the kernel is asked twice at most (about 15 us each)
            why = waited(self._queued(book))
            if why is not None:  # reads that wait: readers at once
                self._settle(True, why)
                return
        per_slot = self.produced / max(1, self.opens)
        if phase == "reader":
            # A phase that spent what all of it may at TRIAL_HOPELESS x inline's cost ends: on tiny files
            # its thread starts and turns at the GIL would otherwise cost most of the job. A budget, not
            # a look at the first few elements, which pay the readers' start-up.
            inline_us = costs(self.books["inline"], book, per_slot)[0]
            if book[READ_NS] + book[OPEN_NS] >= TRIAL_HOPELESS * TRIAL_ELEMENTS * inline_us * 1e3:
                self._settle(*verdict(self.books["inline"], book, per_slot))
                return
        if enough and phase == "reader" and book[OPENS] < TRIAL_MIN_SLOTS:
            # Readers whose reads alone cost what loses cannot win on their openings: decided now
            # (small files would otherwise run with readers until their slots end).
            inline_us, _ = costs(self.books["inline"], book, per_slot)
            if book[READ_NS] / book[ELEMENTS] / 1e3 >= TRIAL_READERS * inline_us:
                self._settle(*verdict(self.books["inline"], book, per_slot))
                return
        if not enough or (book[OPENS] < TRIAL_MIN_SLOTS and book[ELEMENTS] < TRIAL_MAX_ELEMENTS):
            return
        if phase == "inline":  # reads that compute: now the same with a reader per slot, if it can pay
            ended = self.opens - self.open_count
            if not ended and book[ELEMENTS] < TRIAL_MAX_ELEMENTS:
                return  # no slot has ended: how long slots are (and the job's rest) is not known yet
            why = self._too_short(book, ended)
            if why is not None:
                self._settle(False, why)
                return
            self.phase, self.inline = "reader", False
            self._all_read_ahead(self.books["reader"])
            return
        self._settle(*verdict(self.books["inline"], book, per_slot))

    def _too_short(self, book: list[int], ended: int) -> str | None:
        """:func:`too_short` on this job: the input's cardinality, when known, says how many slots are
        left; elements a slot are reckoned high (as if every element came from an ended slot)."""
        inputs = self.node.parents[0].cardinality()
        if inputs < 0 or not ended:
            # Endless or unknown input, or no slot ended yet (long sub-datasets: how long is not
            # known, only that they are longer than what was read): the trial runs.
            return None
        per_slot = self.produced / max(1, ended)
        slots_left = inputs - self.position + self.open_count
        return too_short(book, per_slot, slots_left, self.node.cycle_length)

    def _queued(self, book: list[int]) -> list[int]:
        """``book`` with the time its reads and opens sat queued for a core (``QUEUED_NS``): the
        consumer thread's run-queue delay since the phase began, in the share of that time spent in
        them. Asking the kernel at every read would cost more than a small read; on another thread
        than the one that began (a prefetch thread took over), all of it: the reads count as computing
        and the reader phase decides."""
        ident, start, delay = cast(tuple, self.clocks)
        in_stage = book[READ_NS] + book[OPEN_NS]
        if threading.get_ident() != ident:
            book[QUEUED_NS] = in_stage
        else:
            share = min(1.0, in_stage / max(1, perf_ns() - start))
            book[QUEUED_NS] = int((run_delay_ns() - delay) * share)
        return book

    def _settle(self, readers: bool, why: str) -> None:
        """The trial's verdict: every slot, open or new, gets a reader, or is read inline."""
        self.phase, self.executor_reason = None, why
        self.inline = not readers
        self.ctx.process.verdicts.keep(self.node, Choice("thread" if readers else "inline", why, tried=True))
        if readers:
            self._all_read_ahead(None)
        else:
            self._all_inline()
        for index, slot in enumerate(self.slots):  # the trial's timing ends
            if slot is not None and isinstance(slot[2], ConsumerTimed):
                self.slots[index] = (slot[0], slot[1], slot[2].inner)

    def _step(self) -> tuple[bool, Any]:
        if self.phase is not None:
            self._trial_step()
            self.stepping = self.phase is not None or not self.deterministic
        return (False, None) if self.deterministic else self._any_ready()

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
            if self.tunable and (self.phase is not None or not self.inline)
            else {}
        )

    def set_knob(self, name: str, value: int) -> None:
        if self.gate is None:  # not tunable: no knobs
            return super().set_knob(name, value)
        self.parallelism = max(1, min(self.node.cycle_length, int(value)))
        self.gate.resize(self.parallelism)

    def counters(self) -> StageCounters:
        out = super().counters()
        readers = [reader for slot in self.slots if (reader := _reader(slot)) is not None]
        out.update(
            {
                "executor": "inline" if self.inline else "thread",
                "executor_reason": self.executor_reason,
                "parallelism": self.parallelism,
                "deterministic": self.deterministic,
                "open_slots": len(readers),
                "buffer_capacity": self.capacity * self.node.cycle_length,
                "buffered": sum(reader.producer.occupancy() for reader in readers),
                "input_wait_seconds": sum(reader.producer.input_wait_ns for reader in readers) / 1e9,
                "busy_seconds": self.reads.wall_ns / 1e9,  # reading, summed over slots
                "cpu_seconds": self.reads.cpu_ns / 1e9,
            }
        )
        return out
