"""Which executor a parallel map runs on, why, and the trial that confirms it against inline.

:class:`MapExecutor` is the parallel map's executor concern in one object, kept apart from its ordered
window (``ops/map_parallel.py``): the running executor (inline, threads or processes), the reason
``explain()`` and the report give, what the executor probe measured (``runtime/choose.py``), and the
trial of the probe's choice against inline while the map runs. The map asks it to start, adopt a
choice and step the trial; the trial's moves that touch the window (collect what is in flight, start
workers again) are the map's, through :class:`TrialHost`.

The trial: the probe's numbers cannot see hand-offs, transport or a loaded machine, so a measured
choice of threads or processes runs against inline for real. After a warm window, each side runs for
at least ``TRIAL_SECONDS`` of the consumer's time in this stage and ``TRIAL_ELEMENTS`` elements, judged
by the consumer's time inside the stage per element delivered (waiting, pulling, computing inline);
the workers stay only when they cost under ``TRIAL_KEEP`` of inline's. Threads that cost the consumer
under ``TRIAL_CLEAR_WIN`` of an element's CPU time are kept without an inline phase. The verdict is
kept for the pipeline's later iterations (``core.run.Session``) and for pipelines built again with the
same stages (``run.process.verdicts``, ``core.process.PROCESS``).
"""

from __future__ import annotations

import warnings
from typing import Protocol

from ..core.counters import StageCounters
from ..core.errors import WorkerError, user_stacklevel
from ..core.node import AUTOTUNE, Node
from ..core.run import Run
from ..runtime import choose
from ..runtime.defaults import available_cpus
from ..runtime.executors import Executor
from ..runtime.inline import InlineExecutor
from ..runtime.pool import processes_unavailable
from ..runtime.processes import ProcessExecutor, describe_unavailable
from ..runtime.threads import ThreadExecutor

# Threads an AUTOTUNE map may grow to. Threads waiting on I/O use no CPU, so an I/O-bound stage may
# have many more than the cores; the tuner's model keeps CPU-bound stages at the cores.
MAX_AUTOTUNE_THREADS = 128
IO_LIKE = 4  # a call whose wall time is this many times its CPU time mostly waits (storage, network)
IO_START_PER_CPU = 4  # threads per CPU an I/O-like AUTOTUNE map starts with
TRIAL_SECONDS = 0.2
TRIAL_ELEMENTS = 64
TRIAL_KEEP = 0.9
# Threads that cost the consumer under this share of the CPU time an element takes (measured in the
# workers) beat inline by a margin no measurement noise explains: kept without the inline side, whose
# elements would run at one worker's speed.
TRIAL_CLEAR_WIN = 0.7
_warned_daemonic: list[bool] = []  # the fallback to threads in a daemonic process warns once


class TrialHost(Protocol):
    """What the trial reads of its map, and the one move it asks of it."""

    produced: int  # elements handed on
    in_call_ns: int  # the consumer's time inside the stage's calls

    @property
    def window(self) -> int: ...

    def drain(self, wait: bool) -> None:
        """Collect the results of work in flight into the window (``wait``: until none is left)."""


class _Handle:
    """Owns the executor; the map's finalizer holds this, never the map."""

    executor: Executor | None = None

    def shutdown(self) -> None:
        if self.executor is not None:
            self.executor.shutdown()


class MapExecutor:
    """The executor of one parallel map iterator (module docstring).

    ``kind`` is None until chosen (``executor=None``: the probe chooses); ``reason`` says why in words.
    """

    def __init__(self, node: Node, run: Run, stage: str, kind: str | None, workers: int, key: int):
        self.node, self.run, self.stage, self.key = node, run, stage, key
        self.fn = node.map_func  # type: ignore[attr-defined]
        self.kind = kind
        self.reason = f"executor={kind!r} was given" if kind else "not chosen yet"
        self.workers = workers  # the pool's size
        self.gil_fraction: float | None = None  # measured when executor=None (see runtime.choose)
        self.gil_range: tuple[float, float] | None = None  # when the probe's pairs disagreed
        self.solo_cpu_ns = 0  # CPU of one call alone (the probe's), 0 when not measured
        # The probe's calls: this stage's work too (see counters); its first call is a one-time cost.
        self.probe_busy_ns = self.probe_cpu_ns = self.first_task_ns = 0
        # The trial: [phase, start in_call_ns, start produced, workers' ns per element, probe's reason];
        # phase "warm" (first window), "workers", "switched", "inline"; None when decided or not tried.
        self.trial: list | None = None
        self.workers_kind = "thread"  # what the trial's inline side would go back to
        self.handle = _Handle()

    @property
    def executor(self) -> Executor | None:
        return self.handle.executor

    @property
    def running(self) -> Executor:
        executor = self.handle.executor
        if executor is None:  # never: every caller started it
            raise RuntimeError(f"{self.stage}: its executor is not started")
        return executor

    @property
    def chunk_size(self) -> int:
        executor = self.handle.executor
        return 1 if executor is None else executor.chunk_size

    # --- starting -----------------------------------------------------------------------------
    def recall(self) -> choose.Choice | None:
        """The choice an earlier iteration of this pipeline made, or one built with the same stages."""
        choice = self.run.choice(self.node)
        if choice is None:
            choice = self.run.process.verdicts.recall(self.node)
            if choice is not None:
                self.run.remember(self.node, choice)
        return choice

    def adopt(self, choice: choose.Choice, *, measured: bool) -> None:
        """Run on ``choice``; ``measured``: it is the probe's own (kept for later iterations when final)."""
        if measured:
            self.probe_busy_ns += int(choice.probe_busy_seconds * 1e9)
            self.probe_cpu_ns += int(choice.probe_cpu_seconds * 1e9)
            self.first_task_ns = int(choice.first_call_seconds * 1e9)
            if choice.final:  # else (a short first epoch, an error) the next iteration measures again
                self.run.remember(self.node, choice)
        self.kind, self.reason, self.gil_fraction = choice.kind, choice.reason, choice.gil_fraction
        self.solo_cpu_ns = int((choice.cpu_seconds or 0.0) * 1e9)  # a call alone, as the probe measured it
        self.gil_range = choice.gil_range
        if choice.kind in ("process", "thread") and choice.gil_fraction is not None and not choice.tried:
            self.trial = ["warm", 0, 0, 0.0]
        if (
            self.node.num_parallel_calls == AUTOTUNE  # type: ignore[attr-defined]
            and choice.kind == "thread"
            and choice.cpu_seconds is not None
            and choice.wall_seconds is not None
            and choice.wall_seconds >= IO_LIKE * choice.cpu_seconds
        ):
            # Mostly waiting (I/O): start high, as tf.data does; the tuner then climbs from there.
            self.workers = max(self.workers, min(MAX_AUTOTUNE_THREADS, IO_START_PER_CPU * available_cpus()))

    def start(self) -> None:
        """Start the executor of ``kind`` (threads where processes cannot start here, with a warning)."""
        if self.kind == "process":
            why = processes_unavailable()
            if why is not None:
                # One warning per process: inside a DataLoader worker this is every iterator.
                self.kind, self.reason = "thread", describe_unavailable(self.stage, why)
                if not _warned_daemonic and not self.run.process.inside_worker:
                    _warned_daemonic.append(True)
                    warnings.warn(self.reason, RuntimeWarning, stacklevel=user_stacklevel())
        if self.kind == "inline":
            self.handle.executor = InlineExecutor(self.fn)
        elif self.kind == "process":
            try:
                self.handle.executor = ProcessExecutor(self.fn, self.workers, self.stage, key=self.key)
            except Exception as exc:
                raise WorkerError(
                    f"{self.stage}: map_func cannot be sent to process workers ({type(exc).__name__}: {exc}); "
                    "make it picklable with cloudpickle or pass executor='thread'"
                ) from exc
        else:
            self.handle.executor = ThreadExecutor(self.fn, self.workers, self.stage, key=self.key)

    def restart_processes(self) -> None:
        """Process workers given back to the pool at the end of an epoch: take them again."""
        previous = self.executor if isinstance(self.executor, ProcessExecutor) else None
        self.handle.executor = ProcessExecutor(self.fn, self.workers, self.stage, previous, key=self.key)

    def shutdown(self) -> None:
        self.handle.shutdown()

    # --- the trial ----------------------------------------------------------------------------
    def trial_step(self, host: TrialHost) -> None:
        """Move the trial on by what ``host`` delivered since its last step (module docstring); the
        faster side stays, for this and every later epoch, and the reason gives both figures."""
        trial = self.trial
        if trial is None:
            return
        phase, since, produced, workers_ns = trial[:4]
        if phase == "warm":  # worker start and the first chunks are not judged
            if host.produced >= host.window:
                self.trial = ["workers", host.in_call_ns, host.produced, 0.0]
            return
        if phase == "switched":  # the call that drained the workers counts for neither side
            self.trial = ["inline", host.in_call_ns, host.produced, workers_ns, trial[4]]
            return
        count = host.produced - produced
        spent = host.in_call_ns - since
        if count < TRIAL_ELEMENTS or spent < TRIAL_SECONDS * 1e9:
            return
        per_element = spent / count
        if phase == "workers":
            if not self._clear_win(per_element):
                self._to_inline(host, per_element)
            return
        self._decide(host, workers_ns, per_element)

    def _to_inline(self, host: TrialHost, per_element: float) -> None:
        host.drain(wait=True)  # results of work in flight are kept, in order
        self.handle.shutdown()  # process workers go back to the pool, threads leave
        self.workers_kind = self.kind or "thread"
        # What explain() and the report say if the run ends before the verdict: the executor reads
        # inline from here on, and the reason says why (the probe's reason stays in the trial).
        self.trial = ["switched", 0, 0, per_element, self.reason]
        what = "processes" if self.workers_kind == "process" else "threads"
        self.kind = "inline"
        self.reason = (
            f"trying inline against {what} ({what} cost the consumer {per_element / 1e3:,.1f} us per "
            f"element); the probe had measured: {self.reason}"
        )
        self.handle.executor = InlineExecutor(self.fn)

    def _decide(self, host: TrialHost, workers_ns: float, per_element: float) -> None:
        assert self.trial is not None
        self.reason = self.trial[4]  # the probe's, kept while the trial's progress was shown
        self.trial = None
        kind = self.workers_kind
        what = "processes" if kind == "process" else "threads"
        figures = (
            f"{what} cost the consumer {workers_ns / 1e3:,.1f} us per element, one worker in the "
            f"consumer's thread {per_element / 1e3:,.1f} us"
        )
        if workers_ns < TRIAL_KEEP * per_element:
            host.drain(wait=False)  # inline results not collected yet
            self.kind = kind
            self.reason = f"{self.reason}; tried against inline: {figures}: kept {what}"
            self.start()
        else:
            self.reason = (
                f"tried against inline: {figures}: inline kept (hand-offs, transport or the load on the "
                f"cores cost more than the workers gained); the probe had measured: {self.reason}"
            )
        self._keep(self.kind or "inline")

    def _clear_win(self, per_element: float) -> bool:
        """Keep threads without trying inline when they cost the consumer well under what an element
        costs to compute: inline pays at least that per element, in the consumer's thread."""
        executor = self.executor
        if self.kind != "thread" or not isinstance(executor, ThreadExecutor):
            return False
        computed, cpu_ns = executor.computed, executor.computed_cpu_ns
        if computed < TRIAL_ELEMENTS:
            return False
        # What inline would pay per element: the workers' CPU per element, or a call alone as the probe
        # measured it when less. Threads on busy cores take more CPU per call (the JPEG function took
        # ~250 us in 2 threads on 2 cores against ~160 us alone) and must not look like a clear win.
        cost = cpu_ns / computed
        if self.solo_cpu_ns:
            cost = min(cost, self.solo_cpu_ns)
        if per_element >= TRIAL_CLEAR_WIN * cost:
            return False
        self.trial = None
        self.reason = (
            f"{self.reason}; running, threads cost the consumer {per_element / 1e3:,.1f} us per "
            f"element, an element {cost / 1e3:,.1f} us of CPU (what one worker in the consumer's thread "
            "would pay at least): kept threads"
        )
        self._keep("thread")
        return True

    def _keep(self, kind: str) -> None:
        """The trial's verdict, for this pipeline's later iterations and pipelines built alike."""
        choice = choose.Choice(
            kind, self.reason, gil_fraction=self.gil_fraction, tried=True, gil_range=self.gil_range
        )
        self.run.remember(self.node, choice, revised=True)
        self.run.process.verdicts.keep(self.node, choice)

    # --- reporting ----------------------------------------------------------------------------
    def counters(self) -> StageCounters:
        """The executor's part of the map's counters: its work (the probe's calls included), choice and workers."""
        executor = self.executor
        return {
            # In map_func, all workers, the executor probe's calls included (real elements too).
            "busy_seconds": (executor.busy_seconds() if executor is not None else 0.0)
            + self.probe_busy_ns / 1e9,
            "cpu_seconds": (executor.cpu_seconds() if executor is not None else 0.0)
            + self.probe_cpu_ns / 1e9,
            "first_task_seconds": self.first_task_ns / 1e9,
            "executor": self.kind or "undecided",
            "executor_reason": self.reason,
            "gil_held_fraction": self.gil_fraction,
            "gil_range": self.gil_range,
            "run_delay_seconds": executor.delay_seconds() if executor is not None else None,
            "pool_size": self.workers,
            "worker_pids": executor.pids() if executor is not None else [],
            **(executor.counters() if executor is not None else {}),
        }
