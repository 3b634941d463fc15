"""Stopping: break, del, garbage collection, KeyboardInterrupt and interpreter exit stop every thread
and process, leave no zombie and no shared memory file (checked in /dev/shm).

What is asserted is that everything stops, not how fast: work left in flight in a process sleeps for
an hour, so only being stopped ends it; the waits give up after a generous hang guard
(conftest.HANG_GUARD_SECONDS) and the pytest timeout stops anything else."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import cloudpickle
import pytest

import headrace as hr
from headrace.runtime import shm

from .conftest import (
    HANG_GUARD_SECONDS,
    all_exited,
    all_gone,
    descendants,
    headrace_threads,
    own_segments,
    wait_until,
)

pytestmark = pytest.mark.timeout(60)
# Process workers get this module's functions by value instead of importing it (and pytest) each.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

EXECUTORS = ["thread", "process"]


def slow(x):
    time.sleep(0.002)
    return x


def pipeline(executor: str, fn=slow) -> hr.Dataset:
    # Arrays large enough to travel through shared memory, so leaks would show in /dev/shm.
    import numpy as np

    return (
        hr.Dataset.range(10**6)
        .map(lambda x: np.full(20_000, x), num_parallel_calls=2, executor=executor)
        .map(fn)
        .prefetch(2)
    )


def stopped(pids) -> None:
    """Wait until every worker, headrace thread and shared memory file of this process is gone."""

    def clean() -> bool:
        """workers, threads and segments are gone"""
        return all_gone(pids) and not headrace_threads() and not own_segments()

    wait_until(clean)


def workers_of(it) -> list[int]:
    return [pid for stage in it.stages() for pid in stage.counters().get("worker_pids", [])]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_breaking_out_of_a_loop(executor):
    import numpy as np

    ds = hr.Dataset.range(10**6).map(lambda x: (os.getpid(), np.full(20_000, x)), 2, executor=executor)
    pids = set()
    for count, (pid, _) in enumerate(ds.prefetch(2)):
        pids.add(int(pid))
        if count == 20:
            break
    pids.discard(os.getpid())
    assert len(pids) == (2 if executor == "process" else 0)
    # The loop's iterator went with the loop; its finalizer stopped everything.
    stopped(sorted(pids))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_deleting_the_iterator(executor):
    it = iter(pipeline(executor))
    [next(it) for _ in range(5)]
    pids = workers_of(it)
    assert len(pids) == (2 if executor == "process" else 0)
    del it
    stopped(pids)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_garbage_collection_of_a_cycle(executor):
    it = iter(pipeline(executor))
    next(it)
    pids = workers_of(it)
    cycle: list = [it]
    cycle.append(cycle)
    del it, cycle
    gc.collect()
    stopped(pids)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_close_and_context_manager(executor):
    with iter(pipeline(executor)) as it:
        next(it)
        pids = workers_of(it)
    stopped(pids)


#: Modules the interrupt must not land in: CPython 3.11's ast constructor, interrupted by an exception,
#: leaves its recursion counter wrong, and every later ``ast.parse`` in the process raises "AST
#: constructor recursion depth mismatch" (gh-106905); tracebacks parse source lines with ``ast``.
_FRAGILE = {"ast.py", "traceback.py", "linecache.py", "tokenize.py"}


def interrupt_main(delay: float) -> threading.Thread:
    """SIGINT to the main thread after ``delay`` seconds, at a moment it is not in :data:`_FRAGILE`
    code (a busy machine had it land while the test process formatted a traceback; the suite's last
    test then failed in ``ast.parse``)."""
    main = threading.main_thread().ident

    def fire() -> None:
        time.sleep(delay)
        for _ in range(6000):  # ~30 s at most
            frame, files = sys._current_frames().get(main), set()
            while frame is not None:
                files.add(os.path.basename(frame.f_code.co_filename))
                frame = frame.f_back
            if not files & _FRAGILE:
                signal.pthread_kill(main, signal.SIGINT)
                return
            time.sleep(0.005)

    thread = threading.Thread(target=fire, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("executor", [*EXECUTORS, "prefetch"])
def test_keyboard_interrupt_while_waiting(executor):
    # A thread cannot be stopped inside a user call, so the thread cases use 1 s calls: the workers
    # take no new task after the interrupt (counted) and stop when the call in progress returns. A
    # process is killed: its calls never end on their own.
    seconds = 3600.0 if executor == "process" else 1.0
    started: list[int] = []  # calls begun in this process (threads, prefetch's thread)

    def wait(x):
        started.append(int(x))
        time.sleep(seconds)
        return x

    if executor == "prefetch":
        ds = hr.Dataset.range(10).map(wait).prefetch(2)
    else:
        ds = hr.Dataset.range(10).map(wait, num_parallel_calls=2, executor=executor)
    if executor == "process":  # the interrupt must find workers computing, not the launcher starting
        list(hr.Dataset.range(2).map(lambda x: x, num_parallel_calls=2, executor="process"))
    it = iter(ds)
    interrupt_main(0.3)
    with pytest.raises(KeyboardInterrupt):
        next(it)
    begun = len(started)  # the interrupt closed the pipeline before it reached here
    pids = workers_of(it)
    assert len(pids) == (2 if executor == "process" else 0)
    stopped(pids)
    assert len(started) == begun, f"{len(started) - begun} calls began after the interrupt"
    with pytest.raises(hr.WorkerError, match="closed"):
        next(it)
    if executor != "prefetch":
        state = it.get_state()  # a checkpoint can still be saved after Ctrl-C: nothing was handed out
        owed = [p[0] for p in state["state"]["pending"]]
        assert owed == list(range(len(owed))) and state["state"]["position"] == len(owed) >= 1


SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    import numpy as np
    import headrace as hr

    def work(x):
        time.sleep(0.001 if int(x) < 3 else 3600)  # never ends: the exit must not wait for it
        return np.full(20_000, x)

    if __name__ == "__main__":
        # A thread pipeline and a process pipeline, both with work in flight that never finishes.
        its = [
            iter(hr.Dataset.range(100).map(work, num_parallel_calls=2, executor=kind).prefetch(2))
            for kind in ("thread", "process")
        ]
        for it in its:
            next(it)
        pids = [p for it in its for s in it.stages() for p in s.counters().get("worker_pids", [])]
        print(json.dumps({"pid": os.getpid(), "workers": pids}), flush=True)
        sys.stdin.readline()  # the test has looked at the processes: go
        mode = sys.argv[1]
        if mode == "sys.exit":
            sys.exit(0)
        if mode == "raise":
            raise RuntimeError("uncaught")
        if mode == "wait":
            list(its[1])  # blocks on an endless element until interrupted
        # mode "end": fall off the end with both iterators alive
    """
)


@pytest.mark.parametrize("mode", ["end", "sys.exit", "raise", "sigint"])
def test_interpreter_exit(tmp_path, mode):
    script = tmp_path / "pipeline.py"
    script.write_text(SCRIPT)
    child = subprocess.Popen(
        [sys.executable, str(script), "wait" if mode == "sigint" else mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C would signal
    )
    try:
        info = json.loads(child.stdout.readline())
        # Workers, the fork server they came from, multiprocessing's resource tracker. When the
        # script exits, those still running are orphans: once they exit, init reaps them.
        family = descendants(child.pid)
        assert len(info["workers"]) == 2 and set(info["workers"]) <= set(family)
        child.stdin.write("go\n")
        child.stdin.flush()
        if mode == "sigint":
            time.sleep(0.2)
            os.killpg(child.pid, signal.SIGINT)
        child.wait(HANG_GUARD_SECONDS)  # raises TimeoutExpired if the exit waits for the work
        wait_until(lambda: all_exited(family))
        leftovers = [n for n in os.listdir(shm.SHM_DIR) if n.startswith(f"{shm.PREFIX}{child.pid}-")]
        assert leftovers == []
        stderr = child.stderr.read()
        if mode == "sigint":
            assert "KeyboardInterrupt" in stderr
        elif mode == "raise":
            assert "uncaught" in stderr
        else:
            assert child.returncode == 0, stderr
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def hour_from_the_third(x):
    time.sleep(0.001 if int(x) < 2 else 3600)
    return x


@pytest.mark.parametrize("kind", ["process map", "parallelize"])
def test_close_has_a_deadline_and_kills_workers_that_do_not_answer(kind):
    # Issue 22, item 1: close() gives the workers one deadline (processes.DRAIN_SECONDS) for all of
    # them; those still inside a call then are killed, and close returns without waiting for them.
    ds = hr.Dataset.range(100)
    if kind == "process map":
        ds = ds.map(hour_from_the_third, num_parallel_calls=4, executor="process")
    else:
        ds = ds.map(hour_from_the_third).parallelize(4)
    it = iter(ds)
    assert [int(next(it)) for _ in range(2)] == [0, 1]
    pids = workers_of(it)
    assert pids
    closer = threading.Thread(target=it.close)
    closer.start()
    closer.join(HANG_GUARD_SECONDS)  # a hang guard only
    assert not closer.is_alive(), "close() waited for calls that last an hour"
    stopped(pids)
