"""The parallel map runtime: workers' life cycle, backpressure, transport, executor choice, counters."""

from __future__ import annotations

import os
import sys
import threading
import time

import cloudpickle
import numpy as np
import pytest

import headrace as hr
from headrace.runtime.pool import get_pool
from headrace.runtime.processes import ProcessExecutor
from headrace.runtime.threads import ThreadExecutor

# the runtime tests' guard: every test leaves no headrace thread, worker process or shared memory behind
from ..runtime.conftest import leaves_nothing_behind, process_state, wait_until  # noqa: F401

pytestmark = pytest.mark.timeout(60)
# Process workers get this module's functions by value instead of importing it (and pytest) each.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def worker_pid(x):
    return os.getpid()


def test_process_workers_start_once_and_persist_across_epochs():
    it = iter(hr.Dataset.range(6).map(worker_pid, num_parallel_calls=2, executor="process").repeat(3))
    pids = [int(x) for x in it]
    workers = set(it.stages()[1].counters()["worker_pids"])
    assert len(workers) == 2 and os.getpid() not in workers
    assert set(pids) <= workers  # all three epochs ran on the same two processes
    it.close()


def test_reset_does_not_restart_workers():
    it = iter(hr.Dataset.range(4).map(worker_pid, num_parallel_calls=2, executor="process"))
    list(it)
    stage = it.root
    before = stage.counters()["worker_pids"]
    stage.reset()
    assert sorted({int(x) for x in it}) <= sorted(before)
    assert stage.counters()["worker_pids"] == before
    it.close()


def test_workers_get_elements_never_the_pipeline():
    # The upstream holds something that cannot be pickled: a process map still works, because only
    # elements travel to workers (no per-worker copy of the source either).
    lock = threading.Lock()
    upstream = hr.Dataset.range(8).filter(lambda x: lock is not None)
    ds = upstream.map(lambda x: x * 10, num_parallel_calls=2, executor="process")
    assert [int(x) for x in ds] == list(range(0, 80, 10))


def test_arrays_cross_through_shared_memory_both_ways():
    big = np.arange(50_000, dtype=np.float64)

    def scale(row):
        return row * 2, np.full((100, 100), row[0] * 2)

    ds = hr.Dataset.from_tensor_slices(np.stack([big, big + 1])).map(scale, 2, executor="process")
    with iter(ds) as it:
        out = list(it)
        stage = it.root.executor
        assert stage.writer.created >= 2  # inputs went by name, not through the pipe
        assert stage.received_segments >= 2  # and so did the outputs
    assert np.array_equal(out[1][0], (big + 1) * 2) and out[1][1][0, 0] == 2.0
    assert out[0][0].flags.writeable and out[0][1].flags.writeable


def test_in_flight_elements_are_bounded():
    started = []
    gate = threading.Event()

    def blocked(x):
        started.append(int(x))
        gate.wait(5)
        return x

    it = iter(hr.Dataset.range(100).map(blocked, num_parallel_calls=2, executor="thread"))
    first = threading.Thread(target=lambda: next(it))
    first.start()
    wait_until(lambda: len(started) == 2)
    time.sleep(0.1)  # were the pipeline unbounded, it would keep pulling now
    assert it.root.counters()["buffered"] == 4  # two per worker: 4 taken from the parent
    assert it.root.position == 4 and len(started) == 2
    gate.set()
    first.join(5)
    wait_until(lambda: it.root.position == 5)  # one handed out: one more taken
    time.sleep(0.1)
    assert it.root.position == 5
    it.close()


def test_counters_describe_the_stage():
    with iter(hr.Dataset.range(10).map(lambda x: time.sleep(0.001) or x, 2, executor="thread")) as it:
        list(it)
        c = it.root.counters()
    assert c["executor"] == "thread" and c["parallelism"] == 2 and c["produced"] == 10
    assert c["busy_seconds"] >= 0.009  # time inside the function, summed over workers
    assert c["buffer_capacity"] == 4 and c["in_flight"] == 0 and c["worker_pids"] == []
    for key in ("input_wait_seconds", "output_wait_seconds", "buffered", "deterministic"):
        assert key in c


# --- executor=None ------------------------------------------------------------------------------------
def test_a_function_that_releases_the_gil_gets_threads():
    ds = hr.Dataset.range(8).map(lambda x: time.sleep(0.02) or x, num_parallel_calls=2)
    with iter(ds) as it:
        assert [int(x) for x in it] == list(range(8))
        c = it.root.counters()
    assert c["executor"] == "thread", c["executor_reason"]
    assert "releases the GIL" in c["executor_reason"] or "1 worker/CPU" in c["executor_reason"]


def test_a_tiny_function_runs_inline_and_the_probe_results_are_kept():
    # One call cheaper than a hand-off to a thread decides (no pairs): a short epoch is enough.
    calls = []
    ds = hr.Dataset.range(6).map(lambda x: calls.append(int(x)) or x * 2, num_parallel_calls=2)
    with iter(ds) as it:
        assert [int(x) for x in it] == [0, 2, 4, 6, 8, 10]
        c = it.root.counters()
    if hr.tune.budget.cpu_budget() > 1:
        assert c["executor"] == "inline" and "handing an element to a thread" in c["executor_reason"], c
    else:
        assert c["executor"] == "thread", c
    assert sorted(calls) == list(range(6))  # measuring computed no element twice


# --- executors directly -------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [ThreadExecutor, ProcessExecutor], ids=["thread", "process"])
def test_executors_answer_every_task_with_its_id(make):
    executor = make(lambda x, rng=None: (int(x), None if rng is None else int(rng.integers(10**9))), 2, "t")
    try:
        for task in range(6):
            executor.submit(task, task * 10, (1, 0, 0, task) if task % 2 else None)
        results = {}
        while len(results) < 6:
            for task, ok, value in executor.wait(5):
                assert ok
                results[task] = value
        assert {t: v[0] for t, v in results.items()} == {t: t * 10 for t in range(6)}
        assert results[1][1] is not None and results[0][1] is None
        pids = executor.pids()
    finally:
        executor.shutdown()
    # Workers with nothing in flight go back to the pool, and leave it once idle long enough.
    assert set(pids) <= set(get_pool().pids())
    wait_until(lambda: all(process_state(pid) is None for pid in pids))  # retired after pool.IDLE_SECONDS


def _plus_one(x):
    return x + 1


@pytest.mark.parametrize("taken", [1, 37, 64, 100, 255])
def test_threads_pull_in_chunks_and_checkpoints_mid_chunk_stay_exact(taken):
    # A cheap function: the thread pool's chunks grow to many elements, and so do the pulls (one
    # parent call and snapshot per chunk). A checkpoint mid-chunk owes the rest of that chunk; each
    # executor resumes it exactly.
    build = lambda **kw: hr.Dataset.range(400).map(_plus_one, **kw)  # noqa: E731
    it = iter(build(num_parallel_calls=2, executor="thread"))
    head = [int(next(it)) for _ in range(taken)]
    state = it.get_state()
    counters = it.root.counters()
    assert counters["chunk_size"] > 1 or taken < 64  # grown once the first chunks were measured
    assert counters["snapshots_taken"] < taken or taken < 64  # per chunk, not per element
    inner = state["state"]
    owed = [entry[0] for entry in inner["pending"]]
    assert owed == list(range(taken, inner["position"]))
    for kwargs in ({}, {"num_parallel_calls": 2, "executor": "thread"}, {"num_parallel_calls": 2}):
        other = iter(build(**kwargs))
        other.set_state(state)
        assert head + [int(x) for x in other] == list(range(1, 401))
    assert head + [int(x) for x in it] == list(range(1, 401))
