"""The parallel map's executor concern: the trial of the probe's choice against inline, step by step.

Driven by a stand-in for the map (``TrialHost``) whose produced count and consumer time the test sets,
so each verdict follows from the figures given, not from this machine's speed.
"""

from __future__ import annotations

import pytest

import headrace as hr
from headrace.core.process import PROCESS
from headrace.core.run import Run
from headrace.ops import map_executor
from headrace.ops.map_executor import MapExecutor
from headrace.runtime import choose
from headrace.runtime.inline import InlineExecutor
from headrace.runtime.threads import ThreadExecutor

pytestmark = pytest.mark.timeout(60)


class Host:
    """The map as the trial sees it: elements handed on, the consumer's time in the stage, a window."""

    def __init__(self) -> None:
        self.produced = 0
        self.in_call_ns = 0
        self.window = 4
        self.drained: list[bool] = []

    def drain(self, wait: bool) -> None:
        self.drained.append(wait)

    def advance(self, elements: int, us_each: float) -> None:
        self.produced += elements
        self.in_call_ns += int(elements * us_each * 1e3)


def _executor(kind: str = "thread") -> tuple[MapExecutor, Run]:
    node = hr.Dataset.range(1000).map(lambda x: x + 1, num_parallel_calls=2).node
    run = Run()
    ex = MapExecutor(node, run, "map(test)", None, 2, key=1)
    probe = choose.Choice(kind, "the probe measured", cpu_seconds=1e-4, wall_seconds=1e-4, gil_fraction=0.5)
    ex.adopt(probe, measured=True)
    ex.start()
    return ex, run


@pytest.fixture(autouse=True)
def _short_trial(monkeypatch):
    monkeypatch.setattr(map_executor, "TRIAL_SECONDS", 0.0)
    monkeypatch.setattr(map_executor, "TRIAL_ELEMENTS", 8)
    monkeypatch.setattr(map_executor, "TRIAL_CLEAR_WIN", 0.0)  # no clear win: both sides are judged


def _run_trial(workers_us: float, inline_us: float) -> tuple[MapExecutor, Run, Host]:
    ex, run = _executor()
    host = Host()
    assert ex.trial is not None and ex.trial[0] == "warm"
    host.advance(host.window, 1000.0)  # the warm window is not judged, however slow
    ex.trial_step(host)
    assert ex.trial[0] == "workers"
    host.advance(8, workers_us)
    ex.trial_step(host)  # the workers' phase ends: inline is tried next
    assert ex.trial[0] == "switched" and ex.kind == "inline" and host.drained == [True]
    assert isinstance(ex.executor, InlineExecutor) and "trying inline against threads" in ex.reason
    host.advance(1, 5000.0)  # the call that drained the workers counts for neither side
    ex.trial_step(host)
    assert ex.trial[0] == "inline"
    host.advance(8, inline_us)
    ex.trial_step(host)
    assert ex.trial is None
    return ex, run, host


def test_workers_that_cost_the_consumer_less_are_kept():
    ex, run, host = _run_trial(workers_us=10.0, inline_us=100.0)
    try:
        assert ex.kind == "thread" and isinstance(ex.executor, ThreadExecutor)
        assert "kept threads" in ex.reason and "10.0 us" in ex.reason and "100.0 us" in ex.reason
        assert host.drained == [True, False]  # the inline results were collected before the switch back
        kept = run.choice(ex.node)
        assert kept.kind == "thread" and kept.tried
        assert PROCESS.verdicts.recall(ex.node).kind == "thread"  # a pipeline built again starts here
    finally:
        ex.shutdown()


def test_inline_is_kept_when_the_workers_do_not_pay():
    ex, run, host = _run_trial(workers_us=100.0, inline_us=100.0)  # a tie goes to inline
    assert ex.kind == "inline" and isinstance(ex.executor, InlineExecutor)
    assert ex.reason.startswith("tried against inline") and "inline kept" in ex.reason
    assert "the probe had measured: the probe measured" in ex.reason
    assert run.choice(ex.node).kind == "inline" and host.drained == [True]


def test_a_phase_is_not_judged_before_its_elements():
    ex, _ = _executor()
    host = Host()
    try:
        host.advance(host.window, 1.0)
        ex.trial_step(host)
        host.advance(7, 1.0)  # one short of TRIAL_ELEMENTS
        ex.trial_step(host)
        assert ex.trial[0] == "workers" and ex.kind == "thread"
    finally:
        ex.shutdown()


def test_a_choice_already_tried_is_not_tried_again():
    node = hr.Dataset.range(10).map(lambda x: x, num_parallel_calls=2).node
    ex = MapExecutor(node, Run(), "map(test)", None, 2, key=1)
    ex.adopt(choose.Choice("thread", "kept", gil_fraction=0.5, tried=True), measured=False)
    assert ex.trial is None and ex.kind == "thread"


def test_counters_include_the_probes_work():
    node = hr.Dataset.range(10).map(lambda x: x, num_parallel_calls=2).node
    ex = MapExecutor(node, Run(), "map(test)", None, 2, key=1)
    choice = choose.Choice(
        "inline", "cheap", gil_fraction=1.0, probe_busy_seconds=0.5, probe_cpu_seconds=0.25
    )
    ex.adopt(choice, measured=True)
    counters = ex.counters()
    assert counters["busy_seconds"] == pytest.approx(0.5) and counters["cpu_seconds"] == pytest.approx(0.25)
    assert counters["executor"] == "inline" and counters["executor_reason"] == "cheap"
    assert counters["worker_pids"] == [] and counters["run_delay_seconds"] is None


def test_verdicts_go_to_the_runs_process_object():
    # The ops reach the process's runtime through their run: a run given its own keeps the verdict there.
    from headrace.core.process import ProcessRuntime

    ex, run = _executor()
    own = ProcessRuntime()
    own.verdicts = choose.Verdicts(4)
    run.process = own
    host = Host()
    host.advance(host.window, 1.0)
    ex.trial_step(host)
    host.advance(8, 10.0)
    ex.trial_step(host)  # to inline
    host.advance(1, 1.0)
    ex.trial_step(host)
    host.advance(8, 100.0)
    ex.trial_step(host)  # threads kept
    try:
        assert own.verdicts.recall(ex.node).kind == "thread"
        assert PROCESS.verdicts.recall(ex.node) is None
        assert Run().process is PROCESS
    finally:
        ex.shutdown()
