"""``Dataset.parallelize``: whole-pipeline workers, sharded sources, round-robin order, exact checkpoints."""

from __future__ import annotations

import json
import os
import sys
import time

import cloudpickle
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from headrace import InvalidArgumentError, WorkerError

from ..helpers.checkpoint import check_checkpoints

# the runtime tests' guard: every test leaves no headrace thread, worker process or shared memory behind
from ..runtime.conftest import all_gone, leaves_nothing_behind, wait_until  # noqa: F401

pytestmark = pytest.mark.timeout(120)
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def square(x):
    return int(x) * int(x)


def test_one_to_one_pipelines_keep_the_serial_order():
    ds = hr.Dataset.range(103).map(square).parallelize(3)
    assert [int(x) for x in ds] == [i * i for i in range(103)]


def test_each_worker_reads_its_own_share_of_the_source():
    ds = hr.Dataset.range(40).map(lambda x: (int(x), os.getpid())).parallelize(4)
    out = list(ds)
    assert [v for v, _ in out] == list(range(40))
    by_worker: dict[int, list[int]] = {}
    for value, pid in out:
        by_worker.setdefault(pid, []).append(value)
    assert len(by_worker) == 4 and os.getpid() not in by_worker
    assert sorted(values[0] % 4 for values in by_worker.values()) == [0, 1, 2, 3]
    assert all(len({v % 4 for v in values}) == 1 for values in by_worker.values())  # every 4th element


def test_files_are_shared_out_by_file(tmp_path):
    paths = []
    for index in range(5):
        path = tmp_path / f"part{index}.txt"
        path.write_text("\n".join(f"{index}-{line}" for line in range(3)))
        paths.append(str(path))
    ds = hr.Dataset.from_tensor_slices(paths).flat_map(
        lambda p: hr.Dataset.from_tensor_slices(open(p.decode()).read().split("\n"))
    )
    serial = [x.decode() for x in ds]
    parallel = [x.decode() for x in ds.parallelize(2)]
    assert sorted(parallel) == sorted(serial)
    # Round-robin over the workers' outputs: worker 0 reads files 0, 2, 4; worker 1 files 1, 3.
    assert parallel[:4] == ["0-0", "1-0", "0-1", "1-1"]


def test_many_to_one_stages_give_a_fixed_order():
    ds = hr.Dataset.range(50).filter(lambda x: x % 3 != 0).batch(4).parallelize(2)
    first = [b.tolist() for b in ds]
    assert first == [b.tolist() for b in ds]  # deterministic
    assert sorted(v for b in first for v in b) == [i for i in range(50) if i % 3]


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 40), st.integers(1, 4))
def test_any_worker_count_gives_the_serial_order(size, workers):
    ds = hr.Dataset.range(size).map(lambda x: x * 2).parallelize(workers)
    assert [int(x) for x in ds] == [2 * i for i in range(size)]


def test_checkpoints_are_exact():
    check_checkpoints(lambda: hr.Dataset.range(23).map(square).parallelize(3), max_elements=30, stride=4)


def test_checkpoints_with_a_shuffle_and_batch_above():
    def make():
        return hr.Dataset.range(60).shuffle(8, seed=3).batch(5).parallelize(2)

    check_checkpoints(make, max_elements=20, stride=3)


def test_a_checkpoint_needs_the_same_worker_count():
    it = iter(hr.Dataset.range(10).parallelize(2))
    next(it)
    state = json.loads(json.dumps(it.get_state()))
    it.close()
    other = iter(hr.Dataset.range(10).parallelize(3))
    with pytest.raises(hr.CheckpointError, match="num_workers"):
        other.root.set_state(state["state"])
    other.close()


def test_repeat_above_runs_epochs_on_the_same_workers():
    it = iter(hr.Dataset.range(6).map(lambda x: (int(x), os.getpid())).parallelize(2).repeat(3))
    out = list(it)
    assert [v for v, _ in out] == list(range(6)) * 3
    assert len({pid for _, pid in out}) == 2


def test_a_user_error_loses_only_its_element():
    def fails_on_5(x):
        if x == 5:
            raise ValueError("five")
        return int(x)

    it = iter(hr.Dataset.range(10).map(fails_on_5).parallelize(2))
    got = []
    with pytest.raises(ValueError, match="five") as info:
        for x in it:
            got.append(x)
    notes = "\n".join(info.value.__notes__)
    assert "parallelize(2)" in notes and "on input element 5" in notes
    got.extend(it)
    assert got == [0, 1, 2, 3, 4, 6, 7, 8, 9]


def test_a_worker_that_dies_is_a_clear_error():
    def die_on_7(x):
        if x == 7:
            os._exit(3)
        return int(x)

    it = iter(hr.Dataset.range(20).map(die_on_7).parallelize(2))
    with pytest.raises(
        WorkerError, match=r"parallelize\(2\): worker process \d+ exited unexpectedly with code 3"
    ):
        list(it)
    pids = it.root.counters()["worker_pids"]
    wait_until(lambda: all_gone(pids))
    with pytest.raises(WorkerError, match="stopped after a worker failure"):
        next(it)


def test_arrays_cross_through_shared_memory():
    ds = hr.Dataset.range(6).map(lambda x: np.full((300, 300), x, np.float32)).parallelize(2)
    out = list(ds)
    assert [float(a[0, 0]) for a in out] == [float(i) for i in range(6)] and out[0].shape == (300, 300)


def test_closing_early_stops_or_returns_the_workers():
    it = iter(hr.Dataset.range(10**6).map(lambda x: time.sleep(0.001) or x).parallelize(2))
    next(it)
    pids = it.root.counters()["worker_pids"]
    it.close()
    wait_until(lambda: all_gone(pids))  # stopped, or kept and retired after pool.IDLE_SECONDS


def test_arguments_are_checked():
    with pytest.raises(InvalidArgumentError, match="num_workers=0"):
        hr.Dataset.range(3).parallelize(0)


def test_each_chunk_of_a_worker_is_logged_on_its_process_while_recording():
    from headrace.core.counters import CHUNK
    from headrace.profile import record_calls

    with record_calls() as log:
        before = time.perf_counter_ns()
        it = iter(hr.Dataset.range(50).map(square).parallelize(2))
        assert [int(x) for x in it] == [i * i for i in range(50)]
        after = time.perf_counter_ns()
    pids = it.root.counters()["worker_pids"]
    it.close()
    chunks = [entry for entry in log if entry[5] == CHUNK]
    assert {entry[0] for entry in chunks} == {id(it.root)}
    assert {entry[1] for entry in chunks} == {(pid, pid) for pid in pids} and len(pids) == 2
    assert sum(entry[4] for entry in chunks) == 50
    assert all(before <= entry[2] <= entry[3] <= after for entry in chunks)
