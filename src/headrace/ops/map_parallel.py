"""The parallel map iterator: ``map(f, num_parallel_calls=N)`` on threads or processes.

The consumer's thread pulls inputs from the parent and hands them to an executor, keeping at most
``2 * N`` elements taken but not yet handed on (inputs in flight plus finished outputs waiting their
turn), so a slow consumer never makes memory grow. Results come back in the serial order
(``deterministic=True``) or as they finish. Workers compute while the consumer works on what it was
given; put ``prefetch`` before the map to also overlap a slow parent.

Inputs are pulled a chunk at a time (the executor's ``chunk_size``: a few milliseconds of work, one
element for slow functions), so the parent's call, a snapshot and the hand-off to the workers are
paid per chunk, not per element. Checkpoints are exact and small: the ordered window is a
:class:`~headrace.runtime.snapshots.Ledger`, which keeps a snapshot of the parent's state right after
each pull (on a budget). ``get_state`` returns the first snapshot at or after the last element handed
on, plus the elements before it that are still owed (at most the rest of that chunk, as inputs or
computed outputs, whenever the snapshot was affordable; none when the chunk was handed on whole). Its
format is the serial map's, so a checkpoint moves freely between serial and parallel, threads and
processes.

Which executor runs the function, why, and the trial of that choice against inline live in
:class:`~headrace.ops.map_executor.MapExecutor` (``self.ex``); this module is the ordered window
around it: pulling, submitting, handing on in order, failures and checkpoints.

While ``headrace.profile.record_calls`` records, the executor numbers each chunk it returns; the
position of a chunk's first element keeps that number in the ledger's ``marks`` until the element is
handed on, and the call handing it on reports it (``Ledger.handed_out``): the trace's arrow from the
chunk lands on that call, whatever order the chunks finished in.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from collections import deque
from collections.abc import Callable
from time import thread_time_ns
from typing import Any, cast

from ..core.counters import StageCounters
from ..core.errors import WorkerError
from ..core.node import AUTOTUNE, NodeIterator, note_stage, perf_ns
from ..core.results import CONVERTED, tf_result, tf_results
from ..core.run import Run
from ..core.state import ERROR, INPUT, NO_INPUT, OUTPUT
from ..runtime import choose
from ..runtime.calls import apply
from ..runtime.defaults import available_cpus, in_flight_window
from ..runtime.inline import InlineExecutor
from ..runtime.processes import WorkerDied
from ..runtime.snapshots import Ledger
from .map_executor import MAX_AUTOTUNE_THREADS, MapExecutor

WAIT_SLICE_SECONDS = 0.5  # a blocked consumer wakes this often to notice a close from elsewhere


class ParallelMapIterator(NodeIterator):
    state_keys = ("parent", "position", "pending", "iteration", "epoch")

    def __init__(
        self,
        node: Any,
        parent: NodeIterator,
        *,
        workers: int,
        deterministic: bool,
        executor: str | None,
        iteration: int,
        run: Run,
    ):
        super().__init__(node, parent)
        self.parent = parent
        self.fn = node.map_func
        self.seed = node.seed
        self.deterministic = deterministic
        # the executor: which, why, the probe's figures and the trial against inline
        self.ex = MapExecutor(node, run, self.name, executor, workers, key=id(self))
        self.active = workers  # workers that may compute at once (the autotuner lowers it for cheap stages)
        self.iteration = iteration
        self.epoch = 0
        self.position = 0  # inputs taken from the parent
        # The ordered window, the entries of a ledger that keeps the parent's snapshots beside them:
        # taken but not handed on, ascending, position -> (kind, value), the kinds of the base's
        # ``owed`` entries: INPUT (the input, not computed yet or in flight), OUTPUT (computed) or
        # ERROR (``(exception, input)``: the input is kept for a state saved meanwhile). An error of
        # the parent is owed (``self.owed``) behind the whole window.
        self.ledger = Ledger()
        self.records = self.ledger.entries
        self.marks = self.ledger.marks  # while recording: a chunk's first position -> its slice
        self.arrivals: deque[int] = deque()  # computed positions in finishing order (non-deterministic)
        self.tasks: dict[int, int] = {}  # task id in flight -> position
        self.queued: deque[int] = deque()  # restored inputs not yet submitted
        self.exhausted = False
        # The failure's message only: an exception object would keep the consumer's frames (and so
        # this iterator's owner) alive through its traceback.
        self.failure: str | None = None
        self.input_wait_ns = 0
        self.output_wait_ns = 0
        self.in_call_ns = 0  # the consumer's time inside this stage's next / next_chunk
        self._task_ids = itertools.count()
        self._finalizer = weakref.finalize(self, self.ex.handle.shutdown)

    @property
    def executor(self) -> Any:
        return self.ex.executor

    # --- starting -----------------------------------------------------------------------------
    def _start(self) -> None:
        if self.ex.kind is None:
            self._choose()
        self.ex.start()

    def _choose(self) -> None:
        # Once per stage per pipeline: a later epoch or iter() reuses the first measurement, so a
        # busy moment can never flip the executor between epochs.
        choice = self.ex.recall()
        if choice is not None:
            self.ex.adopt(choice, measured=False)
        else:
            self.ex.adopt(self._probe(), measured=True)
        self.active = max(self.active, self.ex.workers)  # an I/O-like AUTOTUNE map starts high

    def _probe(self) -> choose.Choice:
        """Measure the function on the first inputs (``runtime.choose.probe``); its outputs are kept."""
        workers = self.ex.workers
        positions: list[int] = []
        while workers > 1 and available_cpus() > 1 and len(positions) < choose.PROBE_ELEMENTS:
            pulled = self._pull(choose.PROBE_ELEMENTS - len(positions))  # a chunk may be short
            if not pulled:
                break
            positions += pulled
        calls = [functools.partial(apply, self.fn, self.records[p][1], self._rng_key(p)) for p in positions]
        inputs = [self.records[p][1] for p in positions[:1]]

        def more(count: int) -> list[Callable[[], Any]]:
            # The pairs disagreed (a busy machine): the next elements measure more pairs.
            pulled: list[int] = []
            while len(pulled) < count:
                chunk = self._pull(count - len(pulled))  # a chunk may be short
                if not chunk:
                    break
                pulled += chunk
            positions.extend(pulled)
            return [functools.partial(apply, self.fn, self.records[p][1], self._rng_key(p)) for p in pulled]

        choice, outcomes = choose.probe(self.fn, calls, workers, available_cpus(), inputs, more)
        for position, (ok, value) in zip(positions, outcomes):
            self._mark_ready(position, ok, value)
        self.queued.extend(positions[len(outcomes) :])
        return choice

    # --- pulling and submitting ---------------------------------------------------------------
    def _rng_key(self, position: int) -> tuple[int, int, int, int] | None:
        return None if self.seed is None else (self.seed, self.iteration, self.epoch, position)

    def _pull(self, count: int) -> list[int]:
        """Take up to ``count`` inputs from the parent into ``records``; their positions."""
        start = perf_ns()
        try:
            chunk = self.parent.next_chunk(count)
        except StopIteration:
            self.exhausted = True
            return []
        except Exception as exc:
            # Raised after the elements taken before it, as the serial map would.
            self.owed.append((self.position, ERROR, (exc, NO_INPUT)))
            return []
        finally:
            self.input_wait_ns += perf_ns() - start
        first = self.position
        self.position += len(chunk)
        self.ledger.keep(self.position, self.ledger.policy.take(self.parent.get_state))
        for offset, element in enumerate(chunk):
            self.records[first + offset] = (INPUT, element)
        return list(range(first, self.position))

    def _submit(self, position: int) -> None:
        task = next(self._task_ids)
        self.tasks[task] = position
        try:
            self.ex.running.submit(task, self.records[position][1], self._rng_key(position))
        except WorkerDied as died:
            self._fail(died)
        except Exception as exc:  # e.g. /dev/shm full: this element fails, clearly
            del self.tasks[task]
            self._mark_ready(position, False, exc)

    @property
    def window(self) -> int:
        """Elements taken but not handed on, at most: two per active worker (memory stays bounded),
        counted in chunks for process workers (a chunk is a few milliseconds of work)."""
        return in_flight_window(self.active) * self.ex.chunk_size

    @property
    def task_limit(self) -> int:
        # A process pool cannot shrink: below its size, tasks in flight are the parallelism itself.
        # Otherwise a queued task per worker keeps every worker busy while the consumer is away.
        if self.ex.kind == "process" and self.active < self.ex.workers:
            return self.active * self.ex.chunk_size
        return self.window

    def _fill(self) -> None:
        limit = self.task_limit
        while self.queued and len(self.tasks) < limit:
            self._submit(self.queued.popleft())
        if self.ex.kind == "inline":
            return  # nothing to keep busy: once what is owed is handed on, the fast path takes chunks
        window = self.window
        # Pull a chunk's worth at a time: one parent call, snapshot and message per chunk instead of
        # per element (a checkpoint then owes up to a chunk of inputs, encoded). A thread pool's chunk
        # follows the function's measured time (one element for slow ones: nothing owed then).
        refill = self.ex.chunk_size
        while (
            not self.queued and not self.exhausted and not self.owed and len(self.records) <= window - refill
        ):
            for position in self._pull(min(window - len(self.records), refill)):
                if len(self.tasks) < limit:
                    self._submit(position)
                else:
                    self.queued.append(position)

    def tunable_knobs(self) -> dict[str, tuple[int, int]]:
        """``num_parallel_calls=AUTOTUNE`` lets the autotuner choose how many workers compute at once
        (up to the pool started for the CPU budget); a given number is left alone."""
        if self.node.num_parallel_calls != AUTOTUNE:
            return {}
        kind, workers = self.ex.kind, self.ex.workers
        if kind == "inline":
            return {}  # measured: one worker here beats more (see runtime/choose.py)
        # Threads waiting on I/O use no CPU, so a thread pool may grow past the cores; processes may not.
        maximum = workers if kind == "process" else max(workers, MAX_AUTOTUNE_THREADS)
        return {"parallelism": (self.active, maximum)}

    def set_knob(self, name: str, value: int) -> None:
        if self.ex.kind == "inline":
            return  # no knob any more: the trial found one worker here fastest
        self.active = max(1, min(self.tunable_knobs()["parallelism"][1], int(value)))
        if self.ex.kind == "process":
            return  # a process pool keeps its size; task_limit holds it to `active`
        self.ex.workers = self.active  # a thread pool (or one not started yet) takes the new size
        if self.executor is not None:
            self.executor.resize(self.active)

    # --- waiting and handing on ---------------------------------------------------------------
    def _collect(self, timeout: float) -> None:
        start = perf_ns()
        try:
            results = self.ex.running.wait(timeout)
        except WorkerDied as died:
            self._fail(died)
        except OSError as exc:
            if self.closed:
                raise WorkerError(f"{self.name}: the iterator was closed while waiting") from exc
            raise
        finally:
            self.output_wait_ns += perf_ns() - start
        firsts = self.ex.running.firsts
        if firsts:  # recording: where each returned chunk starts (its tasks are still in flight)
            for task, number in firsts.items():
                position = self.tasks.get(task)
                if position is not None:
                    self.marks[position] = number
            firsts.clear()
        for task, ok, value in results:
            position = self.tasks.pop(task, None)
            if position is not None:  # else computed for an epoch or state that was left since
                self._mark_ready(position, ok, value)

    def _mark_ready(self, position: int, ok: bool, value: Any) -> None:
        records = self.records
        records[position] = (OUTPUT, value) if ok else (ERROR, (value, records[position][1]))
        if not self.deterministic:
            self.arrivals.append(position)

    def _peek(self) -> int | None:
        """The position to hand on next, if it is ready."""
        if self.deterministic:
            head = next(iter(self.records), None)
            return head if head is not None and self.records[head][0] != INPUT else None
        while self.arrivals:
            if self.arrivals[0] in self.records:  # else handed on already, or forgotten
                return self.arrivals[0]
            self.arrivals.popleft()
        return None

    def _hand_on(self, position: int, fill: bool = True) -> Any:
        kind, value = self.records.pop(position)
        if self.marks:  # recording: the first element of a chunk reports its hand-out
            self.ledger.handed_out(position, id(self))
        if self.arrivals and self.arrivals[0] == position:
            self.arrivals.popleft()
        if position >= self.ledger.high:
            self.ledger.high = position + 1
        if fill:
            self._fill()  # keep the workers busy while the consumer works on this one
        if kind == ERROR:
            note_stage(value[0], self.name, position)
            raise value[0]
        self.produced += 1
        return tf_result(value) if type(value) in CONVERTED else value

    def _next(self) -> Any:
        if self.failure is not None:
            raise WorkerError(
                f"this iterator stopped after a worker failure ({self.failure}); "
                "create a new iterator, or restore a checkpoint saved after the failure to recompute "
                "the lost elements"
            )
        if self.closed:
            raise WorkerError(f"{self.name}: the iterator is closed")
        if self.executor is None:
            self._start()
        elif self.ex.kind == "process" and self.executor.closed:
            self.ex.restart_processes()
        self._fill()
        while True:
            position = self._peek()
            if position is not None:
                return self._hand_on(position)
            if not self.records:
                if self.owed:  # the parent's error, behind the elements taken before it
                    raise self.owed.popleft()[2][0]
                if self.exhausted:
                    if self.ex.kind == "process" and not self.tasks:
                        # Idle until a reset, if ever: the workers go back to the pool, where a new
                        # iterator of this pipeline (the next epoch of a training loop) finds them.
                        self.ex.shutdown()
                    raise StopIteration
                if self.ex.kind == "inline":  # nothing owed any more: compute the next input here
                    return self._inline_chunk(1)[0]
                self._fill()
                continue
            if self.closed:  # closed from another thread while this one waited
                raise WorkerError(f"{self.name}: the iterator was closed while waiting")
            self._collect(WAIT_SLICE_SECONDS)

    def drain(self, wait: bool) -> None:
        """Collect what is in flight into the window (the trial's move, ``MapExecutor.trial_step``)."""
        while self.tasks and self.failure is None:
            self._collect(WAIT_SLICE_SECONDS if wait else 0)

    def __next__(self) -> Any:
        return self.next_chunk(1)[0]

    def _inline_chunk(self, n: int) -> list:
        """Inline, nothing owed: take a chunk and compute it here, as the serial map does. A failure
        leaves the failing element and the rest owed (handed on in order by the usual path)."""
        chunk = self.parent.next_chunk(n)
        first = self.position
        self.position += len(chunk)
        executor = cast(InlineExecutor, self.executor)  # this path runs inline only
        fn, out, key = self.fn, [], self._rng_key
        start, cpu = perf_ns(), thread_time_ns()
        try:
            if self.seed is not None:
                for offset, element in enumerate(chunk):
                    out.append(apply(fn, element, key(first + offset)))
            else:  # the serial map's loop, in C (a failure leaves the outputs before it in `out`)
                out.extend(itertools.starmap(fn, chunk) if type(chunk[0]) is tuple else map(fn, chunk))
                if len(out) != len(chunk):  # map_func raised StopIteration, which ends extend() quietly
                    raise StopIteration(f"map_func raised StopIteration on input element {first + len(out)}")
        except Exception as exc:  # noqa: BLE001 (handed on in its place, after the outputs before it)
            at = first + len(out)
            self.records[at] = (INPUT, chunk[len(out)])
            self._mark_ready(at, False, exc)
            for position, rest in enumerate(chunk[len(out) + 1 :], start=at + 1):
                self.records[position] = (INPUT, rest)
                self.queued.append(position)
        out = tf_results(out)
        executor.busy_ns += perf_ns() - start
        executor.cpu_ns += thread_time_ns() - cpu
        self.ledger.high = first + len(out)
        self.produced += len(out)
        return out if out else [self._next()]

    def _inline_ready(self) -> bool:
        return (
            self.ex.kind == "inline"
            and self.executor is not None
            and not self.records
            and not self.owed
            and self.failure is None
            and not self.closed
        )

    def next_chunk(self, n: int) -> list:
        start = perf_ns()
        try:
            if self.ex.trial is not None:
                self.ex.trial_step(self)
            if self.executor is None and not self.closed and self.failure is None:
                self._start()  # measures and chooses first: an inline choice then takes the fast path
            if self._inline_ready():
                return self._inline_chunk(n)
            return self._next_chunk(n)
        except KeyboardInterrupt:
            self.close()  # a Ctrl-C while waiting stops the workers; get_state still works
            raise
        finally:
            self.in_call_ns += perf_ns() - start

    def _next_chunk(self, n: int) -> list:
        out = [self._next()]
        while len(out) < n:
            position = self._peek()
            if position is None and self.records and self.failure is None:
                self._collect(0)
                position = self._peek()
            if position is None or self.records[position][0] != OUTPUT:
                break  # an error is raised by the next call, after these outputs
            out.append(self._hand_on(position, fill=False))  # refilled once, below
        if len(out) > 1:
            self._fill()
        return out

    # --- failure ------------------------------------------------------------------------------
    def _fail(self, died: WorkerDied) -> None:
        positions = sorted(self.tasks[task] for task in died.tasks if task in self.tasks)
        what = f"input element(s) {positions}" if positions else "no element (it was idle)"
        self.failure = (
            f"{self.name}: {died.describe()} while computing {what}; the stage's other workers were stopped"
        )
        self.ex.shutdown()
        raise WorkerError(self.failure) from None

    # --- epochs and checkpoints ---------------------------------------------------------------
    def start_at(self, position: int, epoch: int, produced: int, inputs: list | tuple = ()) -> None:
        """Go on where a serial run of the same map stopped: its parent has given ``position`` inputs
        in ``epoch``, the last ones ``inputs`` (``(position, element)`` pairs, still to compute) and
        the outputs of the others went on (a vectorised map that runs per element after all,
        ``ops/vectorize.py``); as ``set_state`` restores pending inputs."""
        self.position = self.ledger.high = position
        self.epoch, self.produced = epoch, produced
        for at, value in inputs:
            self.records[at] = (INPUT, value)
            self.queued.append(at)

    def _forget_in_flight(self) -> None:
        self.tasks.clear()  # their results are dropped when they arrive
        self.ledger.restart()
        self.owed.clear()  # a held error of the parent
        self.arrivals.clear()
        self.queued.clear()
        self.exhausted = False

    def reset(self) -> None:
        self._forget_in_flight()
        self.parent.reset()
        self.position = 0
        self.epoch += 1

    def get_state(self) -> dict:
        cut, parent_state = self.ledger.cut() or (self.position, self.parent.get_state())
        # A computed output is saved as it is; an input, or an input whose call failed, to compute again.
        return {
            "parent": parent_state,
            "position": cut,
            "pending": self.ledger.rows(cut),
            "iteration": self.iteration,
            "epoch": self.epoch,
        }

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        cut, iteration, epoch = fields.int("position"), fields.int("iteration"), fields.int("epoch")
        pending = [
            (
                fields.check_int(position, f"pending[{i}][0]", high=cut - 1),
                fields.check_bool(is_output, f"pending[{i}][1]"),
                fields.check_element(value, f"pending[{i}][2]"),
            )
            for i, (position, is_output, value) in enumerate(fields.rows("pending", 3, max_length=cut))
        ]
        parent_state = fields.dict("parent")
        self._forget_in_flight()
        self.parent.set_state(parent_state)
        self.position = self.ledger.high = cut
        self.ledger.keep(cut, parent_state)
        self.iteration, self.epoch = iteration, epoch
        for position, is_output, value in pending:
            self.records[position] = (INPUT, value)
            if is_output:
                self._mark_ready(position, True, value)
            else:
                self.queued.append(position)

    def close(self) -> None:
        if self.closed:
            return
        self.ex.shutdown()
        super().close()

    def counters(self) -> StageCounters:
        out = super().counters()
        out.update(
            {
                **self.ex.counters(),
                "parallelism": self.active,
                "deterministic": self.deterministic,
                "in_flight": len(self.tasks),
                "ready": sum(1 for kind, _ in self.records.values() if kind != INPUT),
                "buffered": len(self.records),
                "buffer_capacity": self.window,
                "input_wait_seconds": self.input_wait_ns / 1e9,
                "output_wait_seconds": self.output_wait_ns / 1e9,
                "snapshots_taken": self.ledger.policy.taken,
            }
        )
        return out
