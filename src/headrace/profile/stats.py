"""``it.stats()``: a snapshot of every stage's counters, with the report and exports built on it."""

from __future__ import annotations

import copy
import json
import os
import warnings
from dataclasses import asdict, dataclass, field, fields
from typing import Any, NamedTuple

from ..core.counters import CHUNK, COUNTER_KEYS, EXTRA_KEYS, StageCounters, busy_seconds
from .advice import Diagnosis, diagnose
from .export import html_page, trace_events
from .record import current_log
from .tensorboard import write_tensorboard
from .text import render_report
from .timeline import Sample, Timeline


@dataclass
class StageStats:
    """One stage's numbers. ``busy_seconds`` is time spent in the stage itself, its inputs excluded
    (summed over workers), less ``one_time_seconds`` (the first call's excess over a steady call:
    JIT compile, opening files, filling buffers); ``utilisation`` is busy time over the wall time
    it could have used (parallelism x elapsed)."""

    index: int
    name: str
    op: str
    depth: int
    inputs: list[int]
    produced: int
    busy_seconds: float
    parallelism: int = 1
    executor: str = "inline"
    input_wait_seconds: float = 0.0
    buffered: int = 0
    buffer_capacity: int = 0
    bytes_in_per_element: float | None = None
    bytes_out_per_element: float | None = None
    buffer_bytes: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    utilisation: float = 0.0
    one_time_seconds: float = 0.0
    cpu_seconds: float | None = None
    gil_held_fraction: float | None = None
    calls_user_function: bool = False
    reorders: bool = False
    reads_input: bool = False
    executor_reason: str = ""
    gil_range: tuple[float, float] | None = None
    run_delay_seconds: float | None = None
    vectorised_map: str = ""
    #: what the autotuner chose for this stage and why ("" when it tuned nothing here)
    tuned: str = ""

    @property
    def seconds_per_element(self) -> float:
        return self.busy_seconds / self.produced if self.produced else 0.0


#: The declared counters StageStats reads into a field; the others (``EXTRA_KEYS``) and any a stage
#: reports without declaring them go to ``extra``.
_KNOWN = COUNTER_KEYS - EXTRA_KEYS
#: The fields read from a counter of the same name as it is (absent or None: the field's default);
#: the others are derived (busy and one-time seconds from the timing counters, the stage's place).
_AS_IS = frozenset(f.name for f in fields(StageStats)) & COUNTER_KEYS - {
    "name",
    "op",
    "produced",
    "busy_seconds",
    "parallelism",
}


class Slice(NamedTuple):
    """One recorded slice of the trace (``record_calls``)."""

    stage: int  #: index in ``Stats.stages``
    pid: int  #: the process it ran in: ``Stats.pid``, or a worker process
    thread: int  #: the thread (``threading.get_ident()``); a worker process's own pid
    start: float  #: seconds since ``iter()``
    end: float  #: seconds since ``iter()``
    elements: int | None  #: produced by the call, or computed in the chunk; None if not known
    worker: bool  #: True: a chunk a worker did for the stage; False: a call of the stage
    number: int = -1  #: the slice's identity in the recording (``CallLog``)
    #: a call's links: numbers of the slices (on other threads or processes) whose first element it handed on
    delivered: tuple[int, ...] = ()


#: a first call counts as one-time cost only when it exceeds this and several steady calls
_ONE_TIME_MIN_SECONDS = 0.005


def _one_time_seconds(counters: StageCounters) -> float:
    """The first call's excess over what its elements cost later: compile, open, start, fill."""
    first = counters.get("first_call_seconds", 0.0)
    first_produced = counters.get("first_call_produced", 0)
    produced = counters.get("produced", 0)
    later = counters.get("exclusive_seconds", 0.0) - first
    if produced <= first_produced or first < _ONE_TIME_MIN_SECONDS:
        return 0.0
    steady = later / (produced - first_produced)
    return max(0.0, first - steady * max(first_produced, 1))


def _first_task_excess(counters: dict, busy: float) -> float:
    """A parallel map's first call of its function (made by the executor probe) beyond what a later
    call cost: compiling, loading, first use. Kept out of its per-element figures, as an inline
    stage's first call is."""
    first = float(counters.get("first_task_seconds") or 0.0)
    produced = int(counters.get("produced", 0))
    if first < _ONE_TIME_MIN_SECONDS or produced < 2:
        return 0.0
    steady = max(0.0, busy - first) / (produced - 1)
    return max(0.0, min(first - steady, busy))


class Stats:
    """Counters of a running or finished iterator.

    >>> import headrace as hr
    >>> it = iter(hr.Dataset.range(1000).map(lambda x: x * 2, name="double").batch(100))
    >>> _ = list(it)
    >>> stats = it.stats()
    >>> stats.produced, stats.stage("map(double)").produced
    (10, 1000)
    """

    def __init__(self, iterator: Any, elapsed_seconds: float, timeline: Timeline | None = None):
        self.produced = iterator.produced
        self.elapsed_seconds = elapsed_seconds
        #: building the stages in ``iter(ds)`` (opening files, starting workers); the consumer waits
        #: for it, so it counts in the wait and the elapsed time.
        self.startup_seconds = iterator.build_ns / 1e9
        self.consumer_wait_seconds = (iterator.wait_ns + iterator.build_ns) / 1e9
        first = iterator.first_element_ns
        #: from ``iter(ds)`` to the first element (None before it).
        self.first_element_seconds = (first - iterator.created_ns) / 1e9 if first else None
        self.timeline = timeline if timeline is not None else Timeline()
        self.pipeline = iterator.node.signature()
        #: how many runs (``iter(ds)``) these figures cover: more than one after :meth:`combine`
        self.epochs = 1
        self.stages: list[StageStats] = []
        index_of: dict[int, int] = {}
        walk = [(iterator.root, 0)]
        order: list[tuple[Any, int]] = []
        while walk:
            it, depth = walk.pop()
            index_of[id(it)] = len(order)
            order.append((it, depth))
            walk.extend((child, depth + 1) for child in reversed(it.inputs))
        for index, (it, depth) in enumerate(order):
            counters = it.counters()
            busy = busy_seconds(counters)
            inline = "busy_seconds" not in counters and counters.get("executor", "inline") == "inline"
            one_time = _one_time_seconds(counters) if inline else _first_task_excess(counters, busy)
            stage = StageStats(
                index=index,
                name=counters.get("name", it.name),
                op=counters.get("op", getattr(it.node, "op", "?")),
                depth=depth,
                inputs=[index_of[id(child)] for child in it.inputs],
                produced=int(counters.get("produced", 0)),
                busy_seconds=max(0.0, busy - one_time),
                one_time_seconds=one_time,
                parallelism=int(counters.get("parallelism", 1) or 1),
                extra={k: v for k, v in counters.items() if k not in _KNOWN},
                **{k: v for k, v in counters.items() if k in _AS_IS and v is not None},
            )
            wall = max(elapsed_seconds, 1e-9) * stage.parallelism
            stage.utilisation = min(1.0, stage.busy_seconds / wall)
            self.stages.append(stage)
        #: this process: the one the consumer and the stages' calls ran in
        self.pid = os.getpid()
        #: what ran when, while ``record_calls`` recorded: each call of a stage on the thread that
        #: made it, and each chunk of work a stage's worker thread or process did for it
        self.slices: list[Slice] = []
        log = current_log()
        if log is not None:
            origin = iterator.created_ns
            for key, (pid, thread), start, end, elements, kind, number, delivered in list(log):
                slot = index_of.get(key)
                if slot is not None and start >= origin:
                    self.slices.append(
                        Slice(
                            slot,
                            pid,
                            thread,
                            (start - origin) / 1e9,
                            (end - origin) / 1e9,
                            elements,
                            kind == CHUNK,
                            number,
                            delivered,
                        )
                    )
        self._diagnosis: Diagnosis | None = None
        tuner = getattr(iterator, "tuner", None)
        self._tuned_config = tuner.config() if tuner is not None and tuner.stages else {}
        for name, text in (tuner.explanation() if tuner is not None else {}).items():
            for stage in self.stages:
                if stage.name == name:
                    stage.tuned = text

    @classmethod
    def combine(cls, parts: list[Stats]) -> Stats:
        """One report over several runs of the same pipeline (the epochs of a training run, each an
        ``iter(ds)``), as if they had run back to back: counts, busy, CPU and wait times add up, the
        elapsed time is the sum of the runs' own (time between epochs is not the pipeline's),
        startup is the first run's, and the timeline and slices follow one another. Runs whose
        stages differ from the last one's are left out.

        >>> import headrace as hr
        >>> ds = hr.Dataset.range(100).map(lambda x: x * 2).batch(10)
        >>> runs = []
        >>> for epoch in range(3):
        ...     it = iter(ds)
        ...     _ = list(it)
        ...     runs.append(it.stats())
        >>> whole = hr.profile.Stats.combine(runs)
        >>> whole.produced, whole.epochs, whole.stage("map").produced
        (30, 3, 300)
        """
        if not parts:
            raise ValueError("Stats.combine: no runs to combine")
        last = parts[-1]
        names = [s.name for s in last.stages]
        parts = [p for p in parts if [s.name for s in p.stages] == names]
        whole = copy.copy(last)
        whole.epochs = len(parts)
        whole.produced = sum(p.produced for p in parts)
        whole.elapsed_seconds = sum(p.elapsed_seconds for p in parts)
        whole.startup_seconds = parts[0].startup_seconds
        whole.first_element_seconds = parts[0].first_element_seconds
        whole.consumer_wait_seconds = sum(p.consumer_wait_seconds for p in parts)
        whole._diagnosis = None
        whole.stages = []
        for index, stage in enumerate(last.stages):
            runs = [p.stages[index] for p in parts]
            merged = copy.copy(stage)
            merged.extra = dict(stage.extra)
            delays = [r.run_delay_seconds for r in runs if r.run_delay_seconds is not None]
            if len(delays) == len(runs):  # each run's own workers: the run's total
                merged.run_delay_seconds = sum(delays)
            merged.produced = sum(r.produced for r in runs)
            merged.busy_seconds = sum(r.busy_seconds for r in runs)
            merged.one_time_seconds = sum(r.one_time_seconds for r in runs)
            merged.input_wait_seconds = sum(r.input_wait_seconds for r in runs)
            cpu = [r.cpu_seconds for r in runs if r.cpu_seconds is not None]
            merged.cpu_seconds = sum(cpu) if cpu else None
            for name in (
                "gil_held_fraction",
                "bytes_in_per_element",
                "bytes_out_per_element",
                "buffer_bytes",
            ):
                known = [getattr(r, name) for r in runs if getattr(r, name) is not None]
                setattr(merged, name, known[-1] if known else None)
            capacity = sum(max(p.elapsed_seconds, 1e-9) * r.parallelism for p, r in zip(parts, runs))
            merged.utilisation = min(1.0, merged.busy_seconds / capacity)
            whole.stages.append(merged)
        whole.timeline = Timeline()
        whole.slices = []
        offset, produced, waited = 0.0, 0, 0.0
        busy_so_far = [0.0] * len(names)
        made_so_far = [0] * len(names)
        for part in parts:
            for sample in part.timeline.samples:
                stages = [
                    (made_so_far[i] + t[0], busy_so_far[i] + t[1], *t[2:]) if i < len(names) else t
                    for i, t in enumerate(sample.stages)
                ]
                whole.timeline.add(
                    Sample(
                        offset + sample.seconds,
                        produced + sample.produced,
                        waited + sample.wait_seconds,
                        stages,
                    )
                )
            whole.slices.extend(
                piece._replace(start=piece.start + offset, end=piece.end + offset) for piece in part.slices
            )
            for i, stage in enumerate(part.stages):  # the run's totals: its last sample may be older
                made_so_far[i] += stage.produced
                busy_so_far[i] += stage.busy_seconds + stage.one_time_seconds
            offset += part.elapsed_seconds
            produced += part.produced
            waited += part.consumer_wait_seconds
        return whole

    def tuned_config(self) -> dict:
        """The values the autotuner chose, to freeze them: ``options.autotune.tuned_config = config``."""
        return {name: dict(knobs) for name, knobs in self._tuned_config.items()}

    # --- questions users ask ---------------------------------------------------------------------
    @property
    def wait_fraction(self) -> float:
        """Share of the consumer's time spent waiting for input."""
        return (
            min(1.0, self.consumer_wait_seconds / self.elapsed_seconds) if self.elapsed_seconds > 0 else 0.0
        )

    @property
    def steady_wait_fraction(self) -> float:
        """Share of the time after the first element that the consumer spent waiting: the wait
        that more workers or buffers could remove (startup is reported on its own)."""
        start = self.first_element_seconds
        if start is None or self.elapsed_seconds <= start:
            return self.wait_fraction
        waited = self.consumer_wait_seconds - start  # until the first element the consumer waited
        return min(1.0, max(0.0, waited / (self.elapsed_seconds - start)))

    @property
    def input_bound(self) -> bool:
        return self.diagnosis.input_bound

    @property
    def bottleneck(self) -> str | None:
        """Readable name of the stage that limits throughput (None before any element)."""
        return self.diagnosis.bottleneck

    @property
    def diagnosis(self) -> Diagnosis:
        if self._diagnosis is None:
            self._diagnosis = diagnose(self)
        return self._diagnosis

    @property
    def elements_per_second(self) -> float:
        return self.produced / self.elapsed_seconds if self.elapsed_seconds > 0 else 0.0

    def runs_on(self, stage: StageStats) -> StageStats | None:
        """The nearest downstream stage with workers of its own (whose threads or processes call
        ``stage``), or None when the consumer's thread does."""
        parent_of = {child: s.index for s in self.stages for child in s.inputs}
        index = stage.index
        while index in parent_of:
            index = parent_of[index]
            if self.stages[index].executor != "inline":
                return self.stages[index]
        return None

    def stage(self, name: str) -> StageStats:
        for stage in self.stages:
            if stage.name == name or stage.name.startswith(name):
                return stage
        raise KeyError(f"no stage named {name!r}; stages: {[s.name for s in self.stages]}")

    def report(self) -> str:
        """A plain-words summary: input-bound or not, the bottleneck, and what to change."""
        return render_report(self)

    def to_dict(self) -> dict:
        diagnosis = self.diagnosis
        return {
            "produced": self.produced,
            "elapsed_seconds": self.elapsed_seconds,
            "elements_per_second": self.elements_per_second,
            "consumer_wait_seconds": self.consumer_wait_seconds,
            "wait_fraction": self.wait_fraction,
            "steady_wait_fraction": self.steady_wait_fraction,
            "startup_seconds": self.startup_seconds,
            "first_element_seconds": self.first_element_seconds,
            "input_bound": diagnosis.input_bound,
            "bottleneck": diagnosis.bottleneck,
            "advice": list(diagnosis.advice),
            "stages": [asdict(stage) for stage in self.stages],
        }

    def save_trace(self, path: str) -> str:
        """Write a Chrome/Perfetto trace (open in ui.perfetto.dev or chrome://tracing). Without
        ``hr.profile.record_calls()`` around the run, it holds startup and counters but no call
        slices: a warning says so, and so does a marker in the trace."""
        events = trace_events(self)
        slices = [e for e in events["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "startup"]
        if not slices:
            hint = (
                "no stage calls were recorded, so the trace shows startup and counters only: wrap the "
                "run in `with hr.profile.record_calls():` (or use `headrace profile script.py`) for a "
                "slice per stage call"
            )
            events["traceEvents"].append(
                {"ph": "i", "s": "g", "pid": self.pid, "tid": 1, "ts": 0, "name": hint}
            )
            warnings.warn(f"save_trace({path!r}): {hint}", RuntimeWarning, stacklevel=2)
        with open(path, "w") as f:
            json.dump(events, f)
        return path

    def save_tensorboard(self, logdir: str, run: str | None = None) -> dict[str, str]:
        """Write the trace under ``logdir/plugins/profile/<run>/`` and scalar summaries in an event
        file in ``logdir``; open with ``tensorboard --logdir logdir``. Returns both paths."""
        return write_tensorboard(self, logdir, run)

    def save_html(self, path: str) -> str:
        """Write one self-contained HTML page with the report and plots (no network needed)."""
        with open(path, "w") as f:
            f.write(html_page(self))
        return path

    def __repr__(self) -> str:
        return (
            f"<Stats {self.produced} elements in {self.elapsed_seconds:.2f} s, consumer waited "
            f"{100 * self.wait_fraction:.0f}%, bottleneck {self.bottleneck}>"
        )
