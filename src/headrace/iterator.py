"""The iterator users hold: wraps the root stage, measures the consumer's wait, saves checkpoints."""

from __future__ import annotations

import random
import threading
import weakref
from typing import Any

from .core import counters
from .core.counters import busy_seconds, sampled_stages, set_timed
from .core.errors import CheckpointError, attempt
from .core.fingerprint import pipeline_key
from .core.node import Node, NodeIterator, perf_ns, session_of
from .core.options import Options
from .core.process import PROCESS
from .core.run import Run
from .core.state import READABLE_VERSIONS, STATE_VERSION, StateFields
from .profile.stats import Stats
from .profile.timeline import Sample, Timeline
from .tune.tuner import Tuner

#: called with each new Iterator; ``headrace profile`` uses it to find the pipelines a script runs.
iterator_hooks: list = []


def _ended() -> Any:
    """``next`` of a closed iterator: ended, like a closed Python generator (whatever the executor)."""
    raise StopIteration


def _close_quietly(ref: Any) -> None:
    root = ref()
    if root is None:
        return
    attempt(root.close)  # closing at garbage collection must never raise


class Iterator:
    """One pass over a dataset (``iter(ds)``). Also a context manager that closes the pipeline.

    Safe to share between threads, as in tf.data: ``next``, ``get_state``, ``set_state`` and ``close``
    are serialised per iterator, so each element goes to exactly one caller. After ``close()``,
    ``next`` raises StopIteration (as a closed generator does).

    >>> import headrace as hr
    >>> it = iter(hr.Dataset.range(5))
    >>> next(it), next(it)
    (np.int64(0), np.int64(1))
    >>> state = it.get_state()
    >>> fresh = iter(hr.Dataset.range(5))
    >>> fresh.set_state(state)
    >>> [int(x) for x in fresh]
    [2, 3, 4]
    """

    def __init__(self, node: Node, options: Options | None = None, run: Run | None = None):
        self.node = node
        self.options = options if options is not None else Options()
        #: this iteration's run-time memory, handed to every stage as it is built (``core/run.py``)
        self.run = run if run is not None else Run(self.options, session=session_of(node))
        # Building stages starts workers and opens files: the run's clock starts before it, so the
        # profiler shows startup instead of hiding it.
        self.created_ns = perf_ns()
        # One lock per iterator: stages are single-consumer objects. Uncontended it costs ~50 ns a call.
        self._lock = threading.Lock()
        self._acquire, self._release = self._lock.acquire, self._lock.release
        self._root = node.iterator(self.run)
        self._next = self._root.__next__
        # Sampled stage timing (core/counters.py): every call is timed at first, then one call in
        # about sample_one_in + 1 (Options().profiling); between them the stages pass their calls straight through.
        self._sampled = sampled_stages(self._root)
        self._sample_one_in = self.options.profiling.sample_one_in
        self._timed_now = True
        self._until_switch = counters.WARMUP_CALLS
        self._wait_at_switch = 0
        self._gap = 0
        self._gaps = random.Random(id(self))
        self._signature = node.signature()
        # Taken before the first element, like the values a map captured: what a fresh process
        # rebuilding this pipeline would compute too.
        # An argument the hasher chokes on must not stop iteration: checkpoints then match by the
        # pipeline's signature, as version 1 did.
        hashed, key = attempt(pipeline_key, node)
        self._key: str | None = key if hashed else None
        self.produced = 0
        self.wait_ns = 0  # time the consumer spent inside next() (tf.data's IteratorGetNext)
        self.started_ns = perf_ns()
        self.build_ns = self.started_ns - self.created_ns  # the consumer waited for it in iter(ds)
        self.first_element_ns = 0  # when the first element reached the consumer
        self.finished_ns = 0  # when the end was reached: stats of a finished run stop the clock there
        self.timeline = Timeline()
        self.timeline.add(Sample(0.0, 0, 0.0, []))
        self.timeline.add(Sample(self.build_ns / 1e9, 0, self.build_ns / 1e9, []))
        self._next_sample_ns = self.started_ns
        self.tuner = Tuner(self.stages(), self.options)
        self._next_tune_ns = self.started_ns
        # A weak reference: a strong one would keep the stages reachable from the finalizer registry,
        # and through them anything they hold that refers back to this iterator (an error's traceback
        # holds the frames of the next() that computed it), so an abandoned iterator would never be
        # collected and its workers never stopped. Stages that own workers have finalizers of their own.
        self._finalizer = weakref.finalize(self, _close_quietly, weakref.ref(self._root))
        for hook in iterator_hooks:
            hook(self)

    @property
    def root(self) -> NodeIterator:
        return self._root

    @property
    def element_spec(self) -> Any:
        return self.node.element_spec

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        # Bound acquire/release in try/finally: cheaper than ``with`` (one C call each way).
        self._acquire()
        try:
            if self._until_switch:
                self._until_switch -= 1
            else:
                self._switch_timing()
            start = perf_ns()
            try:
                element = self._next()
            except StopIteration:
                if not self.finished_ns:
                    self.finished_ns = perf_ns()
                raise
            now = perf_ns()
            self.wait_ns += now - start
            self.produced += 1
            if now >= self._next_sample_ns:
                self._sample(now)
                if self.tuner.active and now >= self._next_tune_ns:
                    self.tuner.step(self.produced, self.wait_ns / 1e9, (now - self.started_ns) / 1e9, element)
                    self._next_tune_ns = now + int(self.tuner.next_interval() * 1e9)
            return element
        finally:
            self._release()

    def _switch_timing(self) -> None:
        """At the start of a call, after a timed one: stay timed if that call was slow (timing costs
        nothing there) or a trace is being recorded; else run untimed for a random gap. After the
        gap, time this call, counting it for the gap too."""
        every = self._sample_one_in
        if self._timed_now:
            last_call_ns = self.wait_ns - self._wait_at_switch
            self._wait_at_switch = self.wait_ns
            if every <= 0 or PROCESS.recorder is not None or last_call_ns >= counters.SLOW_CALL_NS:
                return  # check again at the next call
            set_timed(self._sampled, False)
            self._timed_now = False
            # A switch visits every stage: on thousands of stages the gaps grow so that it costs
            # at most about 32 stage updates per element.
            every = max(every, len(self._sampled) // 32)
            self._until_switch = self._gaps.randint(0, 2 * every - 2)  # this call and that many more
            self._gap = self._until_switch + 1
        else:
            set_timed(self._sampled, True, weight=self._gap + 1)
            self._timed_now = True  # this call is timed; the next one decides again
            self._wait_at_switch = self.wait_ns

    def _sample(self, now: int) -> None:
        """Record counters for the timeline; called from next() at most once per interval."""
        if not self.first_element_ns and self.produced:
            self.first_element_ns = now
        stages = []
        for stage in self.stages():
            stage.probe.sample_bytes = True  # its next timed call measures an output element's size
            counters = stage.counters()  # once per stage: parallel stages gather theirs from workers
            stages.append(
                (
                    stage.produced,
                    busy_seconds(counters),
                    counters.get("buffered", 0),
                    counters.get("parallelism", 1) or 1,
                )
            )
        wait_seconds = (self.wait_ns + self.build_ns) / 1e9
        self.timeline.add(Sample((now - self.created_ns) / 1e9, self.produced, wait_seconds, stages))
        # A sample visits every stage: on a pipeline of thousands it can take longer than the
        # interval, so the next one waits at least 20 times its cost (sampling stays under 5%).
        done = perf_ns()
        self._next_sample_ns = done + max(int(self.timeline.interval_seconds * 1e9), 20 * (done - now))

    def stats(self) -> Stats:
        """Per-stage statistics, the bottleneck report and exports (see ``headrace.profile``)."""
        now = self.finished_ns or perf_ns()
        if not self.timeline.samples:
            self._sample(now)
        return Stats(self, (now - self.created_ns) / 1e9, self.timeline)

    def get_next(self) -> Any:
        return next(self)

    def get_state(self) -> dict:
        """A small JSON-serialisable state; ``set_state`` on a fresh iterator of the same pipeline
        continues exactly after the last element this iterator returned (safe to call from another
        thread while one consumes: it waits for the ``next`` in progress)."""
        with self._lock:
            return self._state()

    def _state(self) -> dict:
        if self._next is _ended:
            raise CheckpointError("get_state() on a closed iterator: save the state before closing it")
        return {
            "headrace_state_version": STATE_VERSION,
            "pipeline": self._signature,  # for people and error messages; "identity" decides
            "identity": self._key,
            "produced": self.produced,
            "state": self._root.get_state(),
        }

    def set_state(self, state: dict) -> None:
        """Continue from ``state`` (from ``get_state`` of an iterator over the same pipeline).

        The pipeline must have the same identity (ops, arguments, functions' code and captured
        values: see ``headrace.core.fingerprint.pipeline_key``), and every saved value is checked;
        anything else raises CheckpointError naming the stage and field.
        """
        with self._lock:
            self._restore(state)

    def _restore(self, state: dict) -> None:
        if self._next is _ended:
            raise CheckpointError("set_state() on a closed iterator: restore into a fresh iter(dataset)")
        if not isinstance(state, dict) or "headrace_state_version" not in state:
            raise CheckpointError("not a headrace iterator state: expected the dict returned by get_state()")
        version = state["headrace_state_version"]
        if version not in READABLE_VERSIONS or type(version) is not int:
            raise CheckpointError(
                f"iterator state has version {version!r}, this headrace reads versions "
                f"{list(READABLE_VERSIONS)}; restore it with the headrace version that saved it"
            )
        fields = StateFields(state, "iterator", ("pipeline", "produced", "state"))
        saved = state["pipeline"] if isinstance(state["pipeline"], str) else repr(state["pipeline"])
        # Version 1 named pipelines by text holding each function's file:line.
        saved_key = state.get("identity") if version >= 2 else None
        same = saved_key == self._key if saved_key and self._key else saved == self._signature
        if not same:
            hint = (
                ""
                if saved != self._signature
                else "\n  (same stages: a function's code or a value it "
                "captures, or an argument's contents, differ)"
            )
            raise CheckpointError(
                "iterator state was saved from a different pipeline:\n"
                f"  saved:   {saved[:300]}\n  this one: {self._signature[:300]}{hint}"
            )
        produced = fields.int("produced")
        self._root.set_state(fields.dict("state"))
        self.produced = produced

    def stages(self) -> list[NodeIterator]:
        """Every stage's iterator, output first."""
        out, stack = [], [self._root]
        while stack:
            it = stack.pop()
            out.append(it)
            stack.extend(reversed(it.inputs))
        return out

    def counters(self) -> dict:
        return {
            "produced": self.produced,
            "consumer_wait_seconds": self.wait_ns / 1e9,
            "stages": [stage.counters() for stage in self.stages()],
        }

    def close(self) -> None:
        """Release the pipeline's threads, processes and files; later ``next`` calls raise StopIteration.

        Called while another thread is inside ``next`` (waiting on workers, say), it does not wait for
        that call: it closes the pipeline under it, so the waiting thread wakes up instead of hanging.
        """
        self._next = _ended
        if self._lock.acquire(blocking=False):
            try:
                self._finalizer()
            finally:
                self._lock.release()
        else:
            self._finalizer()

    def __enter__(self) -> Iterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<headrace.Iterator over {self.node!r}, {self.produced} elements so far>"
