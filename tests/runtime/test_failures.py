"""Failures: user exceptions cross as themselves; dead workers are a clear WorkerError naming stage, pid
and signal, with the other workers stopped; a full /dev/shm is a clear message.

Detection is checked as behaviour, not speed: the work left in flight would otherwise never end (an
hour's sleep), so only the failure can end the wait, and the pytest timeout guards against a hang."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import sys
import threading
import time
import traceback
import types

import cloudpickle
import numpy as np
import pytest

import headrace as hr
from headrace import WorkerError
from headrace.runtime import pool, shm

from .conftest import all_gone, own_segments, wait_until

pytestmark = pytest.mark.timeout(60)
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture
def workers_never_retire(monkeypatch):
    """Idle workers stay in the pool for an hour: a worker that is gone was stopped, not retired."""
    monkeypatch.setattr(pool, "IDLE_SECONDS", 3600.0)
    yield
    pool.get_pool().shutdown()  # nothing is left idle behind the test


class Unpicklable(Exception):
    def __init__(self, message, *, code):  # keyword-only: pickle cannot re-create it
        super().__init__(message)
        self.code = code


def raise_unpicklable(x):
    if x == 2:
        raise Unpicklable("odd one", code=7)
    return x


@pytest.mark.parametrize("executor", ["thread", "process"])
def test_user_exception_reaches_the_consumer_as_itself(executor):
    def parse(x):
        if x == 4:
            return {}["missing key"]
        return x

    it = iter(hr.Dataset.range(6).map(parse, num_parallel_calls=2, executor=executor, name="parse"))
    assert [int(next(it)) for _ in range(4)] == [0, 1, 2, 3]
    with pytest.raises(KeyError) as info:
        next(it)
    text = "".join(traceback.format_exception(info.value))
    assert 'return {}["missing key"]' in text  # the original traceback, down to the user's line
    assert "raised in stage map(parse) on input element 4" in text
    if executor == "process":
        assert f"traceback in worker process {it.root.counters()['worker_pids'][0]}" in text or (
            "traceback in worker process" in text
        )
    assert [int(x) for x in it] == [5]
    it.close()


def test_an_exception_that_cannot_be_recreated_still_reports_type_message_and_traceback():
    it = iter(hr.Dataset.range(4).map(raise_unpicklable, num_parallel_calls=2, executor="process"))
    assert [int(next(it)) for _ in range(2)] == [0, 1]
    with pytest.raises(WorkerError) as info:
        next(it)
    message = str(info.value)
    assert "Unpicklable: odd one" in message and "could not be re-created" in message
    text = "".join(traceback.format_exception(info.value))
    assert "raise Unpicklable(" in text and "on input element 2" in text
    assert [int(x) for x in it] == [3]
    it.close()


def kill_self_on_3(x):
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.01)
    return x


def segfault_on_3(x):
    if x == 3:
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    time.sleep(0.01)
    return x


def exit_on_3(x):
    if x == 3:
        os._exit(3)
    time.sleep(0.01)
    return x


@pytest.mark.parametrize(
    "fn, expected",
    [
        (kill_self_on_3, r"killed by signal 9 \(SIGKILL\).*out-of-memory"),
        (segfault_on_3, r"killed by signal 11 \(SIGSEGV\).*native code"),
        (exit_on_3, r"exited unexpectedly with code 3"),
    ],
    ids=["sigkill", "segfault", "exit"],
)
def test_a_worker_that_dies_is_a_clear_error_and_the_others_stop(fn, expected, workers_never_retire):
    ds = hr.Dataset.range(50).map(fn, num_parallel_calls=2, executor="process", name="decode")
    it = iter(ds)
    got = []
    with pytest.raises(WorkerError, match=expected) as info:
        for x in it:
            got.append(int(x))
    message = str(info.value)
    pids = it.root.counters()["worker_pids"]
    assert message.startswith("map(decode): worker process ")
    assert any(str(pid) in message for pid in pids) and "input element(s) [3" in message
    assert got == list(range(len(got))) and len(got) <= 3  # in order, up to the failure
    wait_until(lambda: all_gone(pids) and not own_segments())
    # The iterator stays failed, and says so.
    with pytest.raises(WorkerError, match="stopped after a worker failure"):
        next(it)


def slow_on_5_in_a_worker():
    # A closure carries the test's pid by value. A module-level pid would be re-evaluated in a worker
    # that imports this module afresh, and then be the worker's own pid.
    test_pid = os.getpid()

    def slow_on_5(x):
        time.sleep(3600 if x == 5 and os.getpid() != test_pid else 0.001)  # only a kill ends element 5
        return int(x)

    return slow_on_5


def test_a_worker_killed_from_outside_is_reported_and_its_elements_can_be_recomputed(workers_never_retire):
    slow_on_5 = slow_on_5_in_a_worker()
    it = iter(hr.Dataset.range(12).map(slow_on_5, num_parallel_calls=2, executor="process", name="slow"))
    got = [int(next(it))]  # the workers are up
    victim = None
    killed: list[int] = []

    def kill_the_worker_busy_on_5():
        # Elements travel in chunks, so which worker gets element 5, and when, depends on timing: wait
        # until a worker holds it, give it time to start on it, then kill that worker.
        nonlocal victim
        executor, deadline = it.root.executor, time.monotonic() + 20
        while victim is None and time.monotonic() < deadline:
            try:
                positions = dict(it.root.tasks)
                owners = [
                    i
                    for i, tasks in enumerate(executor.outstanding)
                    if 5 in {positions.get(t) for t in tasks}
                ]
            except RuntimeError:  # changed while copied: look again
                owners = []
            if owners:
                time.sleep(0.3)
                victim = executor.pids()[owners[0]]
            else:
                time.sleep(0.01)
        killed.append(victim)
        os.kill(victim, signal.SIGKILL)

    threading.Thread(target=kill_the_worker_busy_on_5).start()
    with pytest.raises(WorkerError, match=r"SIGKILL") as info:
        for x in it:
            got.append(int(x))
    # Element 5 never ends on its own: the error came from detecting the kill, of that worker.
    assert killed == [victim] and f"worker process {victim} " in str(info.value) and "5" in str(info.value)
    assert got == list(range(len(got))) and len(got) <= 5  # in order, up to the lost element
    pids = it.root.counters()["worker_pids"]
    wait_until(lambda: all_gone(pids))
    # The state after the failure still owes element 5 and the rest: a restore recomputes them.
    state = json.loads(json.dumps(it.get_state()))
    fresh = iter(hr.Dataset.range(12).map(slow_on_5, 2, name="slow", executor="thread"))
    fresh.root.set_state(state["state"])  # the stage's state (the executor is part of the identity)
    assert got + [int(x) for x in fresh] == list(range(12))


def test_full_shared_memory_when_sending_inputs_is_a_clear_error(monkeypatch):
    def full(fd, size):
        raise OSError(errno.ENOSPC, "No space left on device")

    rows = np.zeros((4, 100_000))
    it = iter(hr.Dataset.from_tensor_slices(rows).map(lambda r: r.sum(), 2, executor="process"))
    monkeypatch.setattr(shm, "_allocate", full)
    with pytest.raises(
        WorkerError, match=r"not enough shared memory.*/dev/shm|not enough shared memory"
    ) as info:
        next(it)
    assert "on input element 0" in "\n".join(info.value.__notes__)
    it.close()


def fill_shared_memory_then_return_a_big_array(x):
    from headrace.runtime import shm as worker_shm

    def full(fd, size):
        raise OSError(errno.ENOSPC, "No space left on device")

    worker_shm._allocate = full  # this worker's /dev/shm is now "full"
    return np.zeros(1_000_000)


def test_full_shared_memory_in_a_worker_is_a_clear_error():
    it = iter(hr.Dataset.range(2).map(fill_shared_memory_then_return_a_big_array, 1, executor="process"))
    with pytest.raises(WorkerError, match="not enough shared memory") as info:
        next(it)
    assert "executor='thread'" in str(info.value)
    assert "on input element 0" in "\n".join(info.value.__notes__)
    it.close()


def test_a_function_the_worker_cannot_load_is_a_clear_error():
    module = types.ModuleType("headrace_test_only_here")  # importable here, not in a worker
    exec("def double(x):\n    return x * 2\n", module.__dict__)
    sys.modules[module.__name__] = module
    try:
        it = iter(hr.Dataset.range(3).map(module.double, 2, executor="process"))
        with pytest.raises(
            WorkerError, match=r"could not load map_func.*ModuleNotFoundError.*executor='thread'"
        ):
            next(it)
        it.close()
    finally:
        del sys.modules[module.__name__]
