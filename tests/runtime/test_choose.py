"""runtime/choose.py: the executor rule, the GIL measurement, and one choice per stage per pipeline."""

from __future__ import annotations

import functools
import gc
import hashlib
import itertools
import re
import subprocess
import sys
import threading
import time
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from headrace.core.node import session_of
from headrace.runtime import choose
from headrace.runtime.choose import Timing

pytestmark = pytest.mark.timeout(120)

BIG = b"x" * 2_000_000


def releases_gil(x):
    return hashlib.sha256(BIG).digest()[:4]  # hashlib lets go of the GIL for large inputs


def pure_python(x):
    total = 0
    for i in range(60_000):
        total += i % 7
    return total + int(x)


@pytest.fixture
def cpu_hog():
    """A second process spinning on a core for the test's duration."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield hog
    finally:
        hog.kill()
        hog.wait()


# --- the rule -------------------------------------------------------------------------------------
def test_rule_pure_python_on_several_cores_gets_processes():
    choice = choose.decide(2, 2, cpu_seconds=0.001, wall_seconds=0.001, gil=0.97)
    assert choice.kind == "process" and "holds the GIL 97%" in choice.reason


def test_rule_releasing_the_gil_gets_threads():
    assert choose.decide(16, 16, cpu_seconds=0.01, wall_seconds=0.01, gil=0.02).kind == "thread"


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"cpu_seconds": 50e-6, "wall_seconds": 3e-3, "gil": None}, "mostly waits"),
        ({"cpu_seconds": 50e-6, "wall_seconds": 50e-6, "gil": None}, "cheap"),
        ({"unpicklable": "TypeError: cannot pickle '_thread.lock'"}, "cannot be pickled"),
        ({"cpu_seconds": 0.01, "wall_seconds": 0.01, "own_threads": 3.0}, "its own threads"),
        ({"cpu_seconds": 0.01, "wall_seconds": 0.01, "gil": None}, "too few elements"),
    ],
)
def test_rule_threads_and_why(kwargs, why):
    choice = choose.decide(4, 4, **kwargs)
    assert choice.kind == "thread" and why in choice.reason, choice.reason


def test_rule_one_worker_or_one_cpu_gets_threads():
    assert choose.decide(1, 8, cpu_seconds=0.01, wall_seconds=0.01, gil=1.0).kind == "thread"
    assert choose.decide(8, 1, cpu_seconds=0.01, wall_seconds=0.01, gil=1.0).kind == "thread"


def test_unmeasured_choices_are_not_final():
    assert not choose.decide(4, 4, failed=True).final
    assert not choose.decide(4, 4).final
    assert choose.decide(4, 4, cpu_seconds=0.01, wall_seconds=0.01, gil=1.0).final


@settings(max_examples=300, deadline=None)
@given(
    workers=st.integers(1, 64),
    cpus=st.integers(1, 64),
    cpu=st.floats(1e-6, 1.0),
    waiting=st.floats(0.0, 10.0),
    gil=st.floats(0.0, 1.0),
)
def test_processes_only_for_a_large_gain(workers, cpus, cpu, waiting, gil):
    choice = choose.decide(workers, cpus, cpu_seconds=cpu, wall_seconds=cpu * (1 + waiting), gil=gil)
    if gil * workers <= 1.0:  # threads can already run every worker at once: processes never pay
        assert choice.kind in ("thread", "inline"), choice.reason
    if choice.kind == "process":
        assert workers >= 2 and cpus >= 2 and cpu >= choose.MIN_PROCESS_CALL_SECONDS


# --- the measurement ------------------------------------------------------------------------------
def test_gil_fraction_of_a_pair_that_took_turns():
    # The helper waited for the whole of the other call: the GIL was held throughout.
    pair = [Timing(wall_ns=8_000_000, cpu_ns=4_000_000, delay_ns=0), Timing(4_000_000, 4_000_000, 0)]
    assert choose.gil_fraction(0, pair) == pytest.approx(1.0)


def test_gil_fraction_of_a_pair_that_ran_at_once():
    pair = [Timing(4_100_000, 4_000_000, 0), Timing(4_000_000, 4_000_000, 0)]
    assert choose.gil_fraction(0, pair) == pytest.approx(0.025)


def test_waiting_for_a_core_is_not_waiting_for_the_gil():
    # A busy machine: both calls sat 4 ms runnable without a core. That is load, not the GIL.
    pair = [Timing(8_000_000, 4_000_000, 4_000_000), Timing(8_000_000, 4_000_000, 4_000_000)]
    assert choose.gil_fraction(0, pair) == 0.0


def test_io_waits_seen_alone_are_not_counted():
    pair = [Timing(9_000_000, 1_000_000, 0), Timing(9_000_000, 1_000_000, 0)]
    assert choose.gil_fraction(8_000_000, pair) == 0.0


def test_probe_computes_each_element_once_and_in_order():
    # As the parallel map calls it: PROBE_ELEMENTS elements, and more(n) for further ones. How many it
    # computes depends on the box (a window that sees other threads busy, here the suite's leftover
    # threads, asks for a third solo call; disagreeing pairs ask for more pairs): each once, in order,
    # every one computed handed back, the outcomes in element order.
    made = []

    def element(i):
        return lambda: made.append(i) or pure_python(i)

    given = [choose.PROBE_ELEMENTS]

    def more(count):
        start, given[0] = given[0], given[0] + count
        return [element(i) for i in range(start, start + count)]

    calls = [element(i) for i in range(choose.PROBE_ELEMENTS)]
    choice, outcomes = choose.probe(pure_python, calls, workers=2, cpus=2, more=more)
    assert [value for _, value in outcomes] == [pure_python(i) for i in range(len(outcomes))]
    assert sorted(made) == list(range(len(outcomes)))  # a pair's two calls run at once: any order
    assert choice.cpu_seconds > 0
    assert choice.gil_fraction is not None or "native threads used" in choice.reason, choice.reason
    if choice.gil_fraction is not None:  # decided by pairs: the solo calls and at least five pairs
        assert len(outcomes) >= choose.SOLO_CALLS + 2 * choose.PAIRS


def test_probe_keeps_an_exception_as_an_outcome():
    def fails():
        raise ValueError("bad element")

    choice, outcomes = choose.probe(pure_python, [fails, fails], workers=2, cpus=2)
    assert choice.kind == "thread" and not choice.final
    assert not outcomes[0][0] and isinstance(outcomes[0][1], ValueError) and len(outcomes) == 1


def test_unpicklable_function_gets_threads_after_the_calls_that_tell_it_is_not_cheap():
    # Cheapness is measured first (pickling a closure over a large array can cost more than a cheap
    # call): the calls made are handed on, none computed twice.
    lock = threading.Lock()
    choice, outcomes = choose.probe(lambda x: lock, [lambda: time.sleep(0.001) or 1] * 8, workers=2, cpus=2)
    assert choice.kind == "thread" and "pickled" in choice.reason
    assert outcomes == [(True, 1)]  # one call told it is not cheap


def test_a_call_cheaper_than_a_hand_off_runs_inline_after_one_call_with_no_window(monkeypatch):
    windows = []
    monkeypatch.setattr(choose, "_background_rate", lambda: windows.append(1) or 0.0)
    lock = threading.Lock()  # unpicklable too: a cheap call never needs a process, nor the pickle test
    choice, outcomes = choose.probe(lambda x: lock, [lambda: 1] * choose.PROBE_ELEMENTS, workers=2, cpus=2)
    assert choice.kind == "inline" and "handing an element to a thread" in choice.reason
    assert outcomes == [(True, 1)] and windows == []
    assert choice.wall_seconds is not None and choice.wall_seconds < choose.CHEAP_SECONDS


@pytest.mark.parametrize("hog", [False, True])
def test_a_gil_releasing_function_gets_threads_even_beside_a_cpu_hog(hog, request):
    if hog:
        request.getfixturevalue("cpu_hog")
    for _ in range(3):
        choice, _ = choose.probe(releases_gil, [lambda: releases_gil(0)] * 8, workers=2, cpus=2)
        assert choice.kind == "thread", choice.reason


# --- one choice per stage per pipeline ----------------------------------------------------------
def _kinds_over_epochs(ds: hr.Dataset, epochs: int) -> list[tuple[str, str]]:
    out = []
    for _ in range(epochs):
        with iter(ds) as it:
            assert len(list(it)) == 12
            counters = it.root.counters()
            out.append((counters["executor"], counters["executor_reason"]))
    return out


@pytest.mark.parametrize("hog", [False, True])
@pytest.mark.parametrize("fn", [releases_gil, pure_python])
def test_the_choice_is_the_same_every_epoch(fn, hog, request, monkeypatch):
    if hog:
        request.getfixturevalue("cpu_hog")
    probes = []
    real_probe = choose.probe
    monkeypatch.setattr(choose, "probe", lambda *a, **k: probes.append(1) or real_probe(*a, **k))
    ds = hr.Dataset.range(12).map(fn, num_parallel_calls=2)
    kinds = _kinds_over_epochs(ds, 3)
    assert len(set(kinds)) == 1, kinds
    assert len(probes) == (1 if hr.tune.budget.cpu_budget() > 1 else 0)
    if fn is releases_gil:
        assert kinds[0][0] == "thread", kinds[0]


def test_repeat_epochs_keep_the_choice():
    ds = hr.Dataset.range(10).map(releases_gil, num_parallel_calls=2).repeat(3)
    with iter(ds) as it:
        assert len(list(it)) == 30


def test_the_choice_lives_in_the_pipelines_session_not_on_the_node():
    node_ds = hr.Dataset.range(12).map(releases_gil, num_parallel_calls=2)
    arguments = node_ds.node.arguments()
    it = iter(node_ds)
    list(it)
    # The immutable description holds no choice: its arguments are what it was built with.
    assert node_ds.node.executor is None
    assert node_ds.node.arguments() == arguments
    session = session_of(node_ds.node)
    assert it.run.session is session
    stage = next(n for n in it.node.walk() if getattr(n, "op", "") == "map")
    assert session.choice(stage) is not None
    assert it.run.choice(stage) is session.choice(stage)
    # Another pipeline sharing the stage has a session of its own (a session is per pipeline).
    assert session_of(node_ds.take(3).node).choice(stage) is None
    stage_ref = weakref.ref(stage)
    del node_ds, stage, it
    gc.collect()
    assert stage_ref() is None  # the session kept no stage alive: it goes with the pipeline


def test_two_iterations_at_once_keep_their_own_choices():
    ds = hr.Dataset.range(12).map(releases_gil, num_parallel_calls=2)
    first, second = iter(ds), iter(ds)
    stage = next(n for n in first.node.walk() if getattr(n, "op", "") == "map")
    assert len(list(first)) == 12
    made = first.run.choice(stage)
    assert made is not None and second.run.choice(stage) is made  # the session hands it on
    revised = choose.Choice("inline", "revised by the first iteration")
    first.run.remember(stage, revised, revised=True)
    assert first.run.choice(stage) is revised
    assert second.run.choice(stage) is made  # the other iteration keeps acting on its own
    assert iter(ds).run.choice(stage) is revised  # a later iteration starts from the revised one
    first.close(), second.close()


def test_a_short_first_epoch_measures_again_next_time():
    ds = hr.Dataset.range(3).map(pure_python, num_parallel_calls=2)
    assert [int(x) for x in ds] == [pure_python(i) for i in range(3)]
    stage = next(n for n in hr.tune.rewrite.optimise(ds.node, ds.options()).optimised.walk() if n.op == "map")
    assert session_of(ds.node).choice(stage) is None


def test_a_given_executor_skips_the_probe(monkeypatch):
    monkeypatch.setattr(choose, "probe", lambda *a, **k: pytest.fail("probed although executor= was given"))
    ds = hr.Dataset.range(8).map(releases_gil, num_parallel_calls=2, executor="thread")
    with iter(ds) as it:
        list(it)
        assert it.root.counters()["executor_reason"] == "executor='thread' was given"


def test_explain_and_report_give_the_reason():
    ds = hr.Dataset.range(12).map(releases_gil, num_parallel_calls=2, name="digest")
    assert "map(digest): threads or processes, chosen by measuring" in ds.explain()
    with iter(ds) as it:
        list(it)
        report = it.stats().report()
        reason = it.root.counters()["executor_reason"]
    assert f"map(digest): thread: {reason}" in report
    assert f"map(digest): threads, chosen at the first iteration: {reason}" in ds.explain()
    given = hr.Dataset.range(3).map(releases_gil, num_parallel_calls=2, executor="thread", name="d")
    assert "map(d): threads (executor='thread' was given)" in given.explain()


def test_the_probe_gathers_its_elements_from_short_chunks():
    # prefetch hands on one element per chunk: the probe must still measure its pairs.
    ds = hr.Dataset.range(20).prefetch(1).map(pure_python, num_parallel_calls=2)
    with iter(ds) as it:
        assert [int(x) for x in it] == [pure_python(i) for i in range(20)]
        reason = it.root.counters()["executor_reason"]
    if hr.tune.budget.cpu_budget() > 1:  # 5 pairs, up to 9 where they disagreed (a busy machine)
        assert re.search(r"over [5-9] pairs|median of [5-9] pairs", reason), reason


# --- transport costs and the check after a switch (issue: AUTOTUNE chose processes at 0.43x serial) ------
def test_rule_elements_that_cost_more_to_move_than_to_compute_get_threads():
    # Pure Python (GIL held) would get processes, but moving each element costs as much as a call.
    cheap_to_move = choose.decide(2, 2, cpu_seconds=0.0004, wall_seconds=0.0004, gil=0.95, transport=50e-6)
    costly = choose.decide(2, 2, cpu_seconds=0.0004, wall_seconds=0.0004, gil=0.95, transport=0.0004)
    assert cheap_to_move.kind == "process"
    assert costly.kind == "inline"  # neither threads (GIL) nor processes (transport) beat one worker
    assert "moving an element and its result costs 400 us" in costly.reason


def test_transport_grows_with_the_bytes_moved():
    small = choose.transport_seconds([b"x" * 10, 1])
    large = choose.transport_seconds([np.zeros(4_000_000, np.uint8), np.zeros(4_000_000, np.uint8)])
    assert small >= choose.PROCESS_COST_SECONDS
    assert large > small + 8_000_000 * choose.COPY_SECONDS_PER_BYTE * 0.99


def _double_in_python(x):
    total = 0
    for i in range(2_000):
        total += i
    return int(x) * 2 + (total - total)


def _big(x):
    return np.full(32_768, x, dtype=np.int64)  # 256 KB: made in ~10 us, moved in far more


def _told_processes(fn, calls, workers, cpus, inputs=(), more=None):
    """A probe that says processes win, measuring nothing: the trial against inline must judge."""
    return choose.Choice("process", "told so", cpu_seconds=1e-9, wall_seconds=1e-9, gil_fraction=1.0), []


def test_processes_slower_than_inline_give_way_to_inline(monkeypatch):
    # The probe is told processes win; running, each element costs far more to move (256 KB through
    # shared memory, copied out in the consumer) than to compute, so the trial against inline must
    # keep inline, say why, keep every element in order, and keep the verdict for the next epoch.
    # (A ~1 us function with small results was tried first: chunked transport made processes cost the
    # consumer 1.6 us an element against inline's 2.2 us on a busy machine, and they were rightly kept.)
    monkeypatch.setattr(choose, "probe", _told_processes)
    monkeypatch.setattr("headrace.ops.map_executor.TRIAL_SECONDS", 0.0)
    ds = hr.Dataset.range(3_000).map(_big, num_parallel_calls=2).batch(10)
    it = iter(ds)
    got = [int(row[0]) for batch in it for row in batch]
    assert got == list(range(3_000))
    stage = it.stats().to_dict()["stages"]
    reasons = [s["executor_reason"] for s in stage if s["op"] == "map"]
    assert any("tried against inline: processes cost the consumer" in r for r in reasons), reasons
    assert any("inline kept" in r for r in reasons), reasons
    assert "inline kept" in ds.explain()
    again = iter(ds)
    assert [int(row[0]) for row in next(again)][:3] == [0, 1, 2]
    mapped = next(s for s in again.stats().to_dict()["stages"] if s["op"] == "map")
    assert mapped["executor"] == "inline"  # the later epoch keeps the trial's verdict


def test_a_pipeline_built_again_starts_from_the_trials_verdict(monkeypatch):
    # A new Dataset with the same stages (a pipeline rebuilt each epoch, a benchmark's runs) reuses the
    # verdict the first one tried: no probe and no trial again, each element computed once; a changed
    # captured value or another num_parallel_calls is another stage and measures again.
    monkeypatch.setattr(choose, "probe", _told_processes)
    monkeypatch.setattr("headrace.ops.map_executor.TRIAL_SECONDS", 0.0)

    def build(scale: int = 1, calls: int = 2) -> hr.Dataset:
        return hr.Dataset.range(3_000).map(lambda x: _big(x * scale), num_parallel_calls=calls)

    first = iter(build())
    assert [int(row[0]) for row in first] == list(range(3_000))
    assert "inline kept" in first.root.counters()["executor_reason"]
    probes = []
    monkeypatch.setattr(choose, "probe", lambda *args, **kwargs: probes.append(1) or _told_processes(*args))
    again = iter(build())
    assert [int(row[0]) for row in again] == list(range(3_000))
    counters = again.root.counters()
    assert counters["executor"] == "inline" and not probes
    assert counters["executor_reason"].startswith("as an earlier pipeline with the same stages tried: ")
    for other in (build(scale=2), build(calls=3)):
        it = iter(other)
        next(it)
        it.close()
    assert len(probes) == 2


def test_pairs_that_barely_overlap_hold_threads_to_what_they_showed():
    # The GIL share says threads would gain; two calls at once ran no faster than one after the other
    # (waking threads and handing the GIL over cost the overlap): inline, and the reason says why.
    told = choose.decide(2, 2, cpu_seconds=1.5e-4, wall_seconds=1.5e-4, gil=0.05)
    assert told.kind == "thread", told.reason
    held = choose.decide(2, 2, cpu_seconds=1.5e-4, wall_seconds=1.5e-4, gil=0.05, overlap=0.95)
    assert held.kind == "inline" and "two calls at once ran 0.95x" in held.reason, held.reason
    # pairs that overlapped well leave the GIL model alone (16 threads, not processes, for a GIL-free call)
    overlapped = choose.decide(16, 16, cpu_seconds=1.5e-3, wall_seconds=1.5e-3, gil=0.05, overlap=1.9)
    assert overlapped.kind == "thread" and "16 threads reach ~15.8x" in overlapped.reason, overlapped.reason
    # a middling pair bounds them by Amdahl's law for two: 1.3x means ~54% ran one at a time
    assert 1.5 < choose._capped(99.0, 1.3, 16, 1.5e-3) < 1.9


def test_a_run_that_ends_mid_trial_says_inline_is_being_tried(monkeypatch):
    # Between the switch to inline and the verdict the executor reads inline; the reason must say so
    # (it kept the probe's "processes" reason), and the verdict then replaces it.
    monkeypatch.setattr(choose, "probe", _told_processes)
    monkeypatch.setattr("headrace.ops.map_executor.TRIAL_SECONDS", 0.0)
    ds = hr.Dataset.range(3_000).map(_big, num_parallel_calls=2)
    it = iter(ds)
    seen, got = [], []
    for row in it:
        got.append(int(row[0]))
        counters = it.root.counters()
        seen.append((counters["executor"], counters["executor_reason"]))
    assert got == list(range(3_000))
    during = [reason for kind, reason in seen if kind == "inline" and "trying inline" in reason]
    assert during and all("trying inline against processes" in r and "told so" in r for r in during), seen[-1]
    assert not any(kind == "inline" and reason == "told so" for kind, reason in seen)  # never stale
    final = seen[-1][1]
    assert "inline kept" in final and "trying inline" not in final and final.endswith("told so"), final


def test_a_checkpoint_across_the_switch_resumes_exactly(monkeypatch):
    monkeypatch.setattr(choose, "probe", _told_processes)
    monkeypatch.setattr("headrace.ops.map_executor.TRIAL_SECONDS", 0.0)
    ds = hr.Dataset.range(1_000).map(_double_in_python, num_parallel_calls=2)
    it = iter(ds)
    head = [int(next(it)) for _ in range(400)]
    state = it.get_state()
    rest = [int(x) for x in it]
    fresh = iter(ds)
    fresh.set_state(state)
    assert head + [int(x) for x in fresh] == [2 * i for i in range(1_000)]
    assert head + rest == [2 * i for i in range(1_000)]


def _cheap_python(x):
    return sum(range(50)) + int(x)


def test_cheap_calls_that_hold_the_gil_run_inline_with_the_same_outputs_and_checkpoints():
    assert choose.decide(2, 2, cpu_seconds=17e-6, wall_seconds=17e-6, gil=0.95).kind == "inline"
    ds = hr.Dataset.range(3_000).map(_cheap_python, num_parallel_calls=2, executor=None)
    expected = [sum(range(50)) + i for i in range(3_000)]
    forced = choose.Choice("inline", "test", cpu_seconds=1e-5, wall_seconds=1e-5, gil_fraction=1.0)
    session_of(ds.node).remember(ds.node, forced, revised=True)
    it = iter(ds)
    head = [int(x) for x in itertools.islice(it, 1_000)]
    state = it.get_state()
    assert it.root.counters()["executor"] == "inline"
    fresh = iter(ds)
    fresh.set_state(state)
    assert head + [int(x) for x in fresh] == expected
    assert [int(x) for x in ds.batch(7).unbatch()] == expected


def _fails_on_7(x):
    if int(x) == 7:
        raise ValueError("seven")
    return int(x)


def test_inline_errors_arrive_in_element_order_and_lose_only_their_element():
    ds = hr.Dataset.range(20).map(_fails_on_7, num_parallel_calls=2)
    session_of(ds.node).remember(
        ds.node, choose.Choice("inline", "test", cpu_seconds=1e-5, wall_seconds=1e-5, gil_fraction=1)
    )
    it = iter(ds)
    got = list(it._root.next_chunk(20))
    assert got == list(range(7))
    with pytest.raises(ValueError, match="seven"):
        it._root.next_chunk(20)
    assert [int(x) for x in it] == list(range(8, 20))


def _waits(x):
    time.sleep(0.002)  # releases the GIL: two threads deliver about twice one worker
    return int(x)


def _told_threads(monkeypatch, **measured):
    """The probe says threads, with these measurements (no real timing)."""
    choice = choose.Choice("thread", "told so", cpu_seconds=1e-5, **measured)
    monkeypatch.setattr(choose, "probe", lambda fn, calls, workers, cpus, inputs=(), more=None: (choice, []))


def test_a_trial_keeps_threads_when_they_win(monkeypatch):
    monkeypatch.setattr("headrace.ops.map_executor.TRIAL_SECONDS", 0.05)
    monkeypatch.setattr("headrace.ops.map_executor.TRIAL_ELEMENTS", 16)

    _told_threads(monkeypatch, wall_seconds=2e-3, gil_fraction=0.01)
    ds = hr.Dataset.range(200).map(_waits, num_parallel_calls=4)
    it = iter(ds)
    assert [int(x) for x in it] == list(range(200))
    reason = it.root.counters()["executor_reason"]
    assert "tried against inline: threads cost the consumer" in reason and "kept threads" in reason
    assert it.root.counters()["executor"] == "thread"


def test_threads_that_clearly_win_are_kept_without_trying_inline(monkeypatch):
    # Threads costing the consumer under TRIAL_CLEAR_WIN of an element's CPU time (measured in the
    # workers) are kept at once: inline would pay at least that CPU per element. Here every run counts
    # as a clear win; the reason gives both figures, and no element runs inline.
    monkeypatch.setattr("headrace.ops.map_executor.TRIAL_SECONDS", 0.0)
    monkeypatch.setattr("headrace.ops.map_executor.TRIAL_ELEMENTS", 16)
    monkeypatch.setattr("headrace.ops.map_executor.TRIAL_CLEAR_WIN", 1e9)

    _told_threads(monkeypatch, wall_seconds=2e-3, gil_fraction=0.01)
    ds = hr.Dataset.range(300).map(_waits, num_parallel_calls=2)
    it = iter(ds)
    assert [int(x) for x in it] == list(range(300))
    counters = it.root.counters()
    assert counters["executor"] == "thread", counters["executor_reason"]
    assert "an element" in counters["executor_reason"] and "kept threads" in counters["executor_reason"]
    assert "tried against inline" not in counters["executor_reason"]
    assert session_of(ds.node).choice(ds.node).tried  # later iterations keep it without a trial


def test_the_autotuner_copes_with_a_map_that_went_inline(monkeypatch):
    # The tuner may be trying more workers on a stage when its trial keeps inline (no knob any more).
    _told_threads(monkeypatch, wall_seconds=1e-5, gil_fraction=1.0)
    monkeypatch.setattr("headrace.ops.map_executor.TRIAL_SECONDS", 0.3)
    ds = hr.Dataset.range(400_000).map(_cheap_python, num_parallel_calls=hr.AUTOTUNE).batch(64)
    it = iter(ds)
    assert sum(len(b) for b in it) == 400_000
    assert it.root.parent.counters()["executor"] in ("inline", "thread")


# --- a busy machine: pairs that disagree are measured again, then called uncertain -------------------
def _injected(monkeypatch, shares):
    """The probe's pairs measure ``shares`` in turn (the GIL share is injected: no real timing)."""
    given = iter(shares)
    monkeypatch.setattr(choose, "gil_fraction", lambda solo, pair: next(given))
    monkeypatch.setattr(
        choose, "_solo", lambda call, native=True: (choose._run(call), Timing(2_000_000, 2_000_000, 0), 0)
    )


def test_pairs_that_agree_stop_at_the_first_round(monkeypatch):
    _injected(monkeypatch, [0.9, 0.95, 0.92, 0.93, 0.91])
    asked = []
    more = lambda n: asked.append(n) or [lambda: 1] * n  # noqa: E731
    choice, outcomes = choose.probe(pure_python, [lambda: 1] * choose.PROBE_ELEMENTS, 2, 2, [0], more)
    assert asked == [] and len(outcomes) == choose.PROBE_ELEMENTS
    assert choice.gil_fraction == 0.92 and choice.gil_range is None and "median of 5 pairs" in choice.reason


def test_pairs_that_disagree_are_measured_again_and_then_agree(monkeypatch):
    # Two disturbed pairs (0% and 10%): four more pairs out-vote them, and the choice is certain.
    _injected(monkeypatch, [0.0, 0.1, 0.9, 0.95, 0.92, 0.93, 0.94, 0.91, 0.96])
    more = lambda n: [functools.partial(int, i) for i in range(n)]  # noqa: E731
    choice, outcomes = choose.probe(pure_python, [lambda: 1] * choose.PROBE_ELEMENTS, 2, 2, [0], more)
    assert len(outcomes) == choose.SOLO_CALLS + 2 * 9
    assert choice.gil_fraction == 0.92 and choice.kind == "process" and choice.gil_range is None
    assert "median of 9 pairs" in choice.reason


def test_pairs_that_keep_disagreeing_are_reported_uncertain(monkeypatch):
    _injected(monkeypatch, [0.0, 0.94, 0.1, 0.9, 0.05, 0.92, 0.3, 0.2, 0.8])
    more = lambda n: [functools.partial(int, i) for i in range(n)]  # noqa: E731
    choice, outcomes = choose.probe(pure_python, [lambda: 1] * choose.PROBE_ELEMENTS, 2, 2, [0], more)
    assert len(outcomes) == choose.SOLO_CALLS + 2 * choose.MAX_PAIRS
    assert choice.gil_fraction == 0.3 and choice.gil_range == (0.0, 0.94)
    assert "uncertain: 0-94% over 9 pairs, median 30%" in choice.reason


def test_without_more_elements_the_disagreement_is_still_reported(monkeypatch):
    _injected(monkeypatch, [0.0, 0.94, 0.3, 0.1, 0.9])
    choice, outcomes = choose.probe(pure_python, [lambda: 1] * choose.PROBE_ELEMENTS, 2, 2, [0])
    assert len(outcomes) == choose.PROBE_ELEMENTS
    assert choice.gil_fraction == 0.3 and choice.gil_range == (0.0, 0.94)
    assert "uncertain: 0-94% over 5 pairs, median 30%" in choice.reason


def test_a_pipeline_whose_pairs_disagree_says_so_in_the_report(monkeypatch):
    # The map pulls the extra elements itself; they are computed once, in order.
    _injected(monkeypatch, [0.0, 0.94, 0.1, 0.9, 0.05, 0.92, 0.0, 0.2, 0.8])
    ds = hr.Dataset.range(40).map(pure_python, num_parallel_calls=2, name="py").batch(4)
    with iter(ds) as it:
        got = [int(v) for batch in it for v in batch]
        stats = it.stats()
    assert got == [pure_python(i) for i in range(40)]
    assert "uncertain: 0-94% over 9 pairs" in stats.report(), stats.report()
    assert stats.stage("map(py)").gil_range == (0.0, 0.94)


def test_the_background_window_is_waited_once_when_the_first_call_shows_no_native_threads(monkeypatch):
    # Each window sleeps BACKGROUND_SECONDS; the least over the solo calls decides, so once one call
    # shows no native threads the next window cannot change the verdict. The native threads' CPU is
    # held still: in the suite, threads other tests left (Ray's client, BLAS pools) may be busy during
    # the first call, and a second window is then right (a clean clone failed on that once).
    windows = []
    real = choose._background_rate
    monkeypatch.setattr(choose, "_native_cpu_ns", lambda: 0)
    monkeypatch.setattr(choose, "_background_rate", lambda: windows.append(1) or real())
    choice, outcomes = choose.probe(pure_python, [lambda: pure_python(0)] * choose.PROBE_ELEMENTS, 2, 2, [0])
    assert len(windows) == 1 and outcomes[0][0]
    assert "native threads" not in choice.reason
