"""runtime/threads.py: the chunked thread executor."""

from __future__ import annotations

import threading
import time

import pytest

from headrace.runtime import threads
from headrace.runtime.calls import element_rng
from headrace.runtime.threads import ThreadExecutor

from .conftest import HANG_GUARD_SECONDS, wait_until

pytestmark = pytest.mark.timeout(60)


def collect(executor, count):
    results = {}
    deadline = time.monotonic() + HANG_GUARD_SECONDS  # a hang guard, not a speed bound
    while len(results) < count:
        assert time.monotonic() < deadline, f"only {len(results)} of {count} results (hang guard)"
        for task, ok, value in executor.wait(0.5):
            assert task not in results, f"task {task} answered twice"
            results[task] = (ok, value)
    return results


def test_cheap_functions_travel_in_chunks_and_every_task_is_answered_once():
    executor = ThreadExecutor(lambda x: x + 1, workers=2, stage="cheap")
    try:
        for task in range(50):
            executor.submit(task, task, None)
        assert collect(executor, 50) == {t: (True, t + 1) for t in range(50)}
        assert executor.chunk_size > 1  # measured as cheap: one hand-off per chunk from now on
        size = executor.chunk_size
        for task in range(50, 50 + 3 * size):
            executor.submit(task, task, None)
        assert collect(executor, 3 * size) == {t: (True, t + 1) for t in range(50, 50 + 3 * size)}
    finally:
        executor.shutdown()


def test_slow_functions_keep_chunks_of_one():
    executor = ThreadExecutor(lambda x: time.sleep(0.002) or x, workers=4, stage="slow")
    try:
        for task in range(8):
            executor.submit(task, task, None)
        collect(executor, 8)
        assert executor.chunk_size == 1
    finally:
        executor.shutdown()


def test_an_error_fails_its_element_only():
    def half(x):
        if x == 3:
            raise ValueError("three")
        return x / 2

    executor = ThreadExecutor(half, workers=2, stage="half")
    executor.chunk_size = 8  # all in one chunk
    try:
        for task in range(8):
            executor.submit(task, task, None)
        results = collect(executor, 8)
    finally:
        executor.shutdown()
    assert not results[3][0] and isinstance(results[3][1], ValueError)
    assert all(results[t] == (True, t / 2) for t in range(8) if t != 3)


def test_seeded_tasks_get_their_own_generator():
    executor = ThreadExecutor(lambda x, rng: int(rng.integers(1 << 30)), workers=2, stage="rng")
    executor.chunk_size = 4
    try:
        for task in range(8):
            executor.submit(task, task, (9, 0, 0, task))
        results = collect(executor, 8)
    finally:
        executor.shutdown()
    assert results == {t: (True, int(element_rng(9, 0, 0, t).integers(1 << 30))) for t in range(8)}


def test_resize_grows_and_shrinks_the_pool():
    gate = threading.Event()
    executor = ThreadExecutor(lambda x: gate.wait(5) and x, workers=1, stage="resize")
    try:
        executor.submit(0, 0, None)
        executor.flush()
        executor.resize(3)
        for task in range(1, 3):
            executor.submit(task, task, None)
        executor.flush()
        wait_until(lambda: sum(t.is_alive() for t in executor.threads) == 3)
        gate.set()
        collect(executor, 3)
        executor.resize(1)
        wait_until(lambda: sum(t.is_alive() for t in executor.threads) == 1)
    finally:
        executor.shutdown()


def test_shutdown_drops_tasks_not_started():
    executor = ThreadExecutor(lambda x: x, workers=1, stage="drop")
    executor.chunk_size = 100
    for task in range(10):
        executor.submit(task, task, None)  # still collected, not queued
    executor.shutdown()
    assert executor.pending == [] and executor.wait(0.05) == []
    executor.flush()  # after shutdown: nothing is queued any more
    assert executor.tasks.empty() or executor.tasks.get_nowait() is threads._STOP


def test_each_chunk_is_logged_on_its_thread_while_recording_and_never_otherwise():
    from headrace.core.counters import CHUNK
    from headrace.profile import record_calls

    executor = ThreadExecutor(lambda x: x, workers=2, stage="logged", key=1234)
    executor.chunk_size = 5
    try:
        for task in range(10):
            executor.submit(task, task, None)
        collect(executor, 10)  # not recording: nothing to log into
        with record_calls() as log:
            for task in range(10, 30):
                executor.submit(task, task, None)
            collect(executor, 20)
    finally:
        executor.shutdown()
    assert {entry[0] for entry in log} == {1234} and {entry[5] for entry in log} == {CHUNK}
    assert sum(entry[4] for entry in log) == 20 and all(entry[4] >= 1 for entry in log)
    threads = {t.ident for t in executor.threads}
    assert all(entry[1][1] in threads and entry[2] <= entry[3] for entry in log)
