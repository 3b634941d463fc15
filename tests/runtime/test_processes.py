"""Process workers as users run them: scripts without a main guard, scripts on stdin, inside
DataLoader workers; the kept pool; chunks; values that cannot cross; and a SIGKILLed parent, after
which no worker and no shared memory file is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import cloudpickle
import numpy as np
import pytest

import headrace as hr
from headrace import WorkerError
from headrace.runtime import pool, shm
from headrace.runtime.pool import get_pool

from .conftest import all_exited, descendants, wait_until

pytestmark = pytest.mark.timeout(120)
cloudpickle.register_pickle_by_value(sys.modules[__name__])

# Pure Python work, no main guard, a function defined in __main__: the workers never import it.
UNGUARDED = textwrap.dedent(
    """
    import os
    import headrace as hr

    def work(x):
        total = 0
        for i in range(2000):
            total += i
        return int(x) * 2, os.getpid()

    ds = hr.Dataset.range(300).map(work, num_parallel_calls=2, executor="process")
    out = list(ds)
    assert [v for v, _ in out] == [2 * i for i in range(300)], out[:5]
    pids = {pid for _, pid in out}
    assert os.getpid() not in pids and len(pids) <= 2, pids
    print("ok", len(out))
    """
)


def run_python(args: list[str], stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], input=stdin, capture_output=True, text=True, timeout=timeout
    )


def test_a_script_without_the_main_guard_works(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED)
    for _ in range(3):
        done = run_python([str(script)])
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "ok 300"


def test_a_script_on_stdin_works():
    done = run_python(["-"], stdin=UNGUARDED)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok 300"


def test_inside_dataloader_workers_it_falls_back_to_threads_with_one_warning(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "loader.py"
    script.write_text(
        textwrap.dedent(
            """
            import json
            import warnings
            import torch
            import headrace as hr

            class Pipelines(torch.utils.data.IterableDataset):
                def __iter__(self):
                    info = torch.utils.data.get_worker_info()
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        for epoch in range(2):
                            ds = hr.Dataset.range(20).shard(info.num_workers, info.id)
                            ds = ds.map(lambda x: int(x) * 3, num_parallel_calls=2, executor="process")
                            yield from (int(x) for x in ds)
                    headrace = [w for w in caught if "running on threads instead" in str(w.message)]
                    assert len(headrace) == 1, [str(w.message) for w in caught]

            loader = torch.utils.data.DataLoader(Pipelines(), num_workers=2, batch_size=None)
            print(json.dumps(sorted(int(x) for x in loader)))
            """
        )
    )
    done = run_python([str(script)], timeout=120)
    assert done.returncode == 0, done.stderr
    values = json.loads(done.stdout.strip().splitlines()[-1])
    assert values == sorted([3 * i for i in range(20)] * 2)


def test_the_pool_is_kept_across_iterators_and_pipelines_then_retired():
    ds = hr.Dataset.range(20).map(lambda x: os.getpid(), num_parallel_calls=2, executor="process")
    started = get_pool().started
    first = {int(x) for x in ds}
    second = {int(x) for x in ds}  # a new iterator: the next epoch of a training loop
    other = hr.Dataset.range(6).map(lambda x: os.getpid() + 0 * x, 2, executor="process")
    third = {int(x) for x in other}  # a new pipeline with the same worker count
    idle = get_pool().pids()
    assert get_pool().started - started <= 2, "workers were started again instead of reused"
    assert os.getpid() not in first and second <= first | second and third <= first | second
    assert set(idle) == first | second | third
    wait_until(lambda: not set(idle) & set(get_pool().pids()))  # retired after pool.IDLE_SECONDS
    wait_until(lambda: all_exited(idle))


def test_a_later_epoch_starts_no_worker(monkeypatch):
    # What makes a later epoch start fast: its workers are the kept ones, none is forked again.
    # (The time to its first element is measured in benchmarks/parallel_map.py.)
    monkeypatch.setattr(pool, "IDLE_SECONDS", 3600.0)  # kept between the epochs, however slow the box
    ds = hr.Dataset.range(50).map(lambda x: os.getpid(), num_parallel_calls=2, executor="process")
    first = {int(x) for x in ds}
    started = get_pool().started
    it = iter(ds)
    assert int(next(it)) in first
    assert get_pool().started == started
    it.close()
    get_pool().shutdown()  # nothing is left idle behind the test


def busy(x):
    total = 0
    for i in range(300):
        total += i
    return int(x) + total * 0


def test_chunks_grow_for_cheap_functions_and_keep_order_and_errors():
    def fails_on_7(x):
        if x == 7:
            raise ValueError("seven")
        return busy(x)

    it = iter(hr.Dataset.range(3000).map(fails_on_7, num_parallel_calls=2, executor="process"))
    out = []
    with pytest.raises(ValueError, match="seven") as info:
        for x in it:
            out.append(int(x))
    assert out == list(range(7))
    assert "on input element 7" in "\n".join(info.value.__notes__)
    out.extend(int(x) for x in it)  # only the failing element is lost
    assert out == [i for i in range(3000) if i != 7]
    counters = it.root.counters()
    assert counters["chunk_size"] > 1, counters
    assert counters["messages"] < 3000 / 2  # what the consumer pays per element is amortised over chunks
    it.close()


class TwoArguments(Exception):
    def __init__(self, a, b):  # pickle re-creates it with one argument: unpickling fails
        super().__init__(f"{a}-{b}")


def returns_unpicklable(x):
    if x == 3:
        return TwoArguments(1, 2)
    if x == 5:
        import threading

        return threading.Lock()  # cannot be pickled at all
    return int(x)


@pytest.mark.parametrize("chunked", [False, True])
def test_a_result_that_cannot_cross_is_an_error_for_its_element_and_never_a_hang(chunked):
    ds = hr.Dataset.range(9)
    if chunked:
        ds = ds.repeat(1)
    it = iter(ds.map(returns_unpicklable, num_parallel_calls=2, executor="process", name="odd"))
    got, errors = [], []
    while True:  # a hang here is stopped by the pytest timeout
        try:
            got.append(next(it))
        except StopIteration:
            break
        except WorkerError as exc:
            errors.append(exc)
    assert got == [0, 1, 2, 4, 6, 7, 8]
    assert len(errors) == 2
    first, second = ("\n".join([str(e), *getattr(e, "__notes__", [])]) for e in errors)
    assert "map(odd)" in first and "cannot be unpickled" in first and "input element 3" in first
    assert "cannot be sent" in second and "input element 5" in second
    it.close()


def test_an_input_element_that_cannot_be_sent_fails_alone():
    import threading

    lock = threading.Lock()
    ds = hr.Dataset.range(6).map(lambda x: lock if x == 2 else int(x))  # serial: stays in this process
    it = iter(ds.map(lambda v: v if isinstance(v, int) else 0, 2, executor="process", name="take"))
    got = []
    with pytest.raises(WorkerError, match="cannot be sent to a worker") as info:
        for x in it:
            got.append(x)
    assert "input element 2" in "\n".join(info.value.__notes__)
    got.extend(it)
    assert got == [0, 1, 3, 4, 5]
    it.close()


KILLED_PARENT = textwrap.dedent(
    """
    import json, os, sys, time
    import numpy as np
    import headrace as hr

    def work(x):
        time.sleep(0.001 if int(x[0]) < 4 else 30)
        return x * 2

    it = iter(hr.Dataset.range(100).map(lambda x: np.full(50_000, x)).map(work, 2, executor="process"))
    next(it)
    print(json.dumps({"workers": it.root.counters()["worker_pids"]}), flush=True)
    time.sleep(60)
    """
)


@pytest.mark.parametrize("group", [False, True], ids=["parent", "process-group"])
def test_workers_exit_when_the_parent_is_sigkilled_and_no_shared_memory_is_left(tmp_path, group):
    script = tmp_path / "killed.py"
    script.write_text(KILLED_PARENT)
    child = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        info = json.loads(child.stdout.readline())
        family = descendants(child.pid)
        assert set(info["workers"]) <= set(family) and len(family) >= 3  # launcher and 2 workers
        time.sleep(0.2)
        # Whatever was in flight, one file of the parent is surely there: as a segment never read.
        with open(os.path.join(shm.SHM_DIR, f"{shm.PREFIX}{child.pid}-0-in-999"), "wb") as f:
            f.write(b"unread")
        if group:
            os.killpg(child.pid, signal.SIGKILL)
        else:
            os.kill(child.pid, signal.SIGKILL)
        child.wait(5)
        wait_until(lambda: all_exited(family))
        if group:
            # Nobody was left to clean up: the next run that starts workers reclaims the files.
            list(hr.Dataset.range(2).map(lambda x: x, 2, executor="process"))
        wait_until(lambda: not _segments_of(child.pid))
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def _segments_of(pid: int) -> list[str]:
    return [n for n in os.listdir(shm.SHM_DIR) if n.startswith(f"{shm.PREFIX}{pid}-")]


def test_reclaim_removes_only_files_of_dead_owners(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    dead_pid = int(dead.stdout)
    names = [f"{shm.PREFIX}{dead_pid}-0-in-0", f"{shm.PREFIX}{os.getpid()}-9-in-0", "other-file"]
    for name in names:
        (tmp_path / name).write_bytes(b"x")
    assert shm.reclaim_dead(str(tmp_path)) == 1
    assert sorted(os.listdir(tmp_path)) == sorted(names[1:])


def test_large_arrays_still_travel_through_shared_memory_in_chunks():
    rows = np.arange(8 * 20_000, dtype=np.float64).reshape(8, 20_000)
    ds = hr.Dataset.from_tensor_slices(rows).map(lambda r: r * 2, 2, executor="process")
    with iter(ds) as it:
        out = list(it)
        assert it.root.executor.received_segments >= 4
    assert all(np.array_equal(o, r * 2) for o, r in zip(out, rows))


FORKED_CHILD = textwrap.dedent(
    """
    import os, sys
    import headrace as hr

    it = iter(hr.Dataset.range(200).map(lambda x: int(x) + 1, 2, executor="process"))
    head = [next(it) for _ in range(5)]
    child = os.fork()
    if child == 0:
        # The child exits normally: its exit handlers must leave the parent's workers alone.
        out = list(hr.Dataset.range(3).map(lambda x: int(x), 2, executor="process"))
        sys.exit(0 if out == [0, 1, 2] else 3)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status
    assert head + list(it) == list(range(1, 201))
    print("ok")
    """
)


def test_a_forked_child_gets_its_own_pool_and_leaves_the_parents_alone():
    done = run_python(["-c", FORKED_CHILD])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_each_chunk_comes_back_with_its_times_and_is_logged_on_its_worker_while_recording():
    from headrace.core.counters import CHUNK
    from headrace.profile import record_calls

    it = iter(hr.Dataset.range(400).map(busy, num_parallel_calls=2, executor="process"))
    assert next(it) == 0  # started before the recording: chunks then are not logged
    with record_calls() as log:
        before = time.perf_counter_ns()
        rest = [int(x) for x in it]
        after = time.perf_counter_ns()
    pids = it.root.counters()["worker_pids"]
    it.close()
    assert rest == list(range(1, 400))
    chunks = [entry for entry in log if entry[5] == CHUNK]
    assert chunks and {entry[0] for entry in chunks} == {id(it.root)}
    assert {entry[1] for entry in chunks} == {(pid, pid) for pid in pids}
    assert sum(entry[4] for entry in chunks) <= 400 and all(entry[4] >= 1 for entry in chunks)
    # the worker's clock is the parent's (CLOCK_MONOTONIC): its chunks lie inside the parent's run
    later = [entry for entry in chunks if entry[2] >= before]
    assert later and all(entry[2] <= entry[3] <= after for entry in later)
