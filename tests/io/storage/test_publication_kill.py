"""SIGKILL fault tests: kill write_shards, convert and build_index at random points, 20 trials each.

After every kill, no reader may take a partial set for a complete one (it reads a whole set or
refuses), and the rerun finishes the job and leaves no temporary file behind.
"""

import functools
import os
import random
import signal
import time

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError
from headrace.io.records import index as index_module
from headrace.io.records import writer as writer_module
from headrace.io.records.index import build_index, check_index, index_path
from headrace.io.records.writer import TFRecordWriter, write_shards
from headrace.io.storage import publish as publish_module
from headrace.io.storage.publish import ShardSetError
from headrace.tools import convert as convert_module
from tests.helpers.processes import children_of, gone

TRIALS = 20
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the faults are injected in forked children")


def run_and_kill(work, delay: float | None) -> list[int]:
    """Run ``work()`` in a forked child; SIGKILL it after ``delay`` seconds (None: ``work`` kills
    itself). Returns the child's own children seen just before the kill."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            work()
        finally:
            os._exit(0)
    seen: list[int] = []
    if delay is not None:
        end = time.monotonic() + delay
        while time.monotonic() < end:
            seen = children_of(pid) or seen
            time.sleep(0.002)
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return seen


def kill_me_on_call(module, name: str, calls: int) -> None:
    """In the child: SIGKILL this process at the ``calls``-th call of ``module.name``."""
    real = getattr(module, name)
    count = [0]

    def wrapper(*args, **kwargs):
        count[0] += 1
        if count[0] == calls:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)

    setattr(module, name, wrapper)


def die_at(step: tuple, function, *args, **kwargs) -> None:
    """In the child: run ``function``, SIGKILLed at ``step`` (module, function name, call number)."""
    kill_me_on_call(*step)
    function(*args, **kwargs)


def read_set(pattern: str) -> list[bytes] | None:
    """The records of the shards matching ``pattern``, None where the readers refuse them."""
    try:
        names = [os.fsdecode(n) for n in hr.Dataset.list_files(pattern, shuffle=False)]
    except ShardSetError:
        return None
    except InvalidArgumentError as exc:
        assert "No files matched" in str(exc)
        return []
    try:
        dataset = hr.TFRecordDataset(names)
    except ShardSetError:
        raise AssertionError("list_files accepted a set that TFRecordDataset refuses") from None
    return sorted(bytes(r) for r in dataset)


def check_readers_after_kill(prefix: str, allowed: list, outcomes: dict, trial: int) -> None:
    """Read the set both ways a user would (a loose glob, the set's own pattern): each read is
    refused, empty, or one of the ``allowed`` whole sets, never a partial one; counted in
    ``outcomes`` (``refused``, ``whole``, ``nothing``)."""
    for pattern in (prefix + "-*", prefix + "-*-of-*.tfrecord"):
        seen = read_set(pattern)
        if seen is None:
            outcomes["refused"] += 1
        else:
            assert seen in [sorted(s) for s in allowed], f"trial {trial}: a partial set was readable"
            outcomes["whole" if seen else "nothing"] += 1


def temporaries(directory) -> list[str]:
    return [n for n in os.listdir(directory) if ".incomplete-" in n]


def test_write_shards_killed_anywhere_never_publishes_a_partial_set(tmp_path):
    rng = random.Random(11)
    prefix = str(tmp_path / "train")
    complete_sets = [[]]  # what a reader may see: nothing yet, or a whole set (an earlier or this one)
    clean_start = time.monotonic()
    write_shards([b"warm-up"], str(tmp_path / "warm"))
    unit = max(time.monotonic() - clean_start, 0.005)
    outcomes = {"refused": 0, "whole": 0, "nothing": 0}
    for trial in range(TRIALS):
        shards = 8 if trial % 2 else 5
        data = [b"trial %d record %d " % (trial, i) + b"x" * rng.randrange(200) for i in range(600)]
        if trial % 2:  # just before a random publication step: a manifest write or a rename
            steps = [(publish_module, "write_manifest", 1), (publish_module, "write_manifest", 2)]
            steps += [(writer_module, "publish_file", k) for k in range(1, shards + 1)]
            work = functools.partial(die_at, rng.choice(steps), write_shards, data, prefix, num_shards=shards)
            run_and_kill(work, None)
        else:  # at a random time
            work = functools.partial(write_shards, data, prefix, num_shards=shards)
            run_and_kill(work, rng.uniform(0, 30 * unit))
        check_readers_after_kill(prefix, [*complete_sets, data], outcomes, trial)
        paths = write_shards(data, prefix, num_shards=shards)  # the rerun
        assert not temporaries(tmp_path), f"trial {trial}: the rerun left {temporaries(tmp_path)}"
        assert sorted(bytes(r) for r in hr.TFRecordDataset(paths)) == sorted(data)
        assert read_set(prefix + "-*") == sorted(data)
        complete_sets.append(data)
    assert outcomes["refused"] > 0  # the kills did land in the publication window


@pytest.fixture
def array_source(tmp_path):
    path = tmp_path / "features.npy"
    np.save(path, np.arange(6000 * 16, dtype=np.float32).reshape(6000, 16))
    return str(path)


def test_convert_killed_anywhere_never_publishes_a_partial_set_and_its_workers_die(tmp_path, array_source):
    rng = random.Random(12)
    prefix = str(tmp_path / "out" / "feat")
    start = time.monotonic()
    expected_paths = convert_module.convert(
        array_source, str(tmp_path / "ref" / "feat"), num_shards=6, workers=1
    )
    unit = max(time.monotonic() - start, 0.01)
    expected = sorted(bytes(r) for r in hr.TFRecordDataset(expected_paths))
    orphans = []
    refused = 0
    for trial in range(TRIALS):
        if trial % 2:  # in the serial writer, just before a random rename or manifest update
            step = rng.choice(
                [("publish_file", k) for k in range(1, 7)] + [("record_shard", k) for k in range(1, 7)]
            )
            work = functools.partial(
                die_at,
                (convert_module, *step),
                convert_module.convert,
                array_source,
                prefix,
                num_shards=6,
                workers=1,
            )
            run_and_kill(work, None)
        else:  # with worker processes, at a random time
            work = functools.partial(convert_module.convert, array_source, prefix, num_shards=6, workers=2)
            orphans.extend(run_and_kill(work, rng.uniform(0, 4 * unit)))
        seen = read_set(prefix + "-*")
        if seen is None:
            refused += 1
        else:
            assert seen in ([], expected), f"trial {trial}: a partial conversion was readable"
        # A worker of the killed run takes a moment to notice its parent died; a temporary it is still
        # writing is reclaimed by the first run that starts after it has gone (this one, once it has).
        exiting = time.monotonic() + 5
        while time.monotonic() < exiting and not all(gone(p) for p in orphans):
            time.sleep(0.02)
        paths = convert_module.convert(array_source, prefix, num_shards=6, workers=2)  # resume
        assert sorted(bytes(r) for r in hr.TFRecordDataset(paths)) == expected
        assert not temporaries(tmp_path / "out"), f"trial {trial}: left {temporaries(tmp_path / 'out')}"
        for name in os.listdir(tmp_path / "out"):  # the next trial starts from scratch
            os.remove(tmp_path / "out" / name)
    assert refused > 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(gone(p) for p in orphans):
        time.sleep(0.05)
    assert all(gone(p) for p in orphans), "convert workers outlived their SIGKILLed parent"


def test_build_index_killed_anywhere_leaves_no_half_index_and_the_rerun_cleans_up(tmp_path):
    rng = random.Random(13)
    path = str(tmp_path / "big.tfrecord")
    with TFRecordWriter(path) as writer:
        for i in range(20000):
            writer.write(b"record %d " % i + b"y" * (i % 300))
    start = time.monotonic()
    expected = build_index(path).offsets.tolist()
    unit = max(time.monotonic() - start, 0.005)
    os.remove(index_path(path))
    for trial in range(TRIALS):
        if trial % 2:  # just before the sidecar is renamed into place
            run_and_kill(functools.partial(die_at, (index_module, "replace", 1), build_index, path), None)
        else:
            run_and_kill(functools.partial(build_index, path), rng.uniform(0, 2 * unit))
        index, status = check_index(path)
        assert status in ("missing", "fresh"), f"trial {trial}: {status}"
        assert index is None or index.offsets.tolist() == expected
        assert build_index(path).offsets.tolist() == expected  # the rerun
        assert not temporaries(tmp_path), f"trial {trial}: the rerun left {temporaries(tmp_path)}"
        os.remove(index_path(path))


def test_killed_after_3_of_8_renames_the_set_is_refused_then_finished(tmp_path):
    """Issue 11's case: a SIGKILL between write_shards' renames published 3 of 8 shards."""
    prefix = str(tmp_path / "train")
    data = [b"record %d" % i for i in range(80)]
    run_and_kill(
        functools.partial(
            die_at, (writer_module, "publish_file", 4), write_shards, data, prefix, num_shards=8
        ),
        None,
    )
    published = sorted(n for n in os.listdir(tmp_path) if n.endswith(".tfrecord"))
    assert published == [f"train-0000{k}-of-00008.tfrecord" for k in range(3)]
    with pytest.raises(
        ShardSetError, match=r"incomplete: write_shards \(pid \d+ on .*\) stopped with 3 of 8 shards in place"
    ):
        hr.Dataset.list_files(prefix + "-*.tfrecord")
    with pytest.raises(ShardSetError, match="incomplete"):
        hr.TFRecordDataset([os.path.join(tmp_path, n) for n in published])
    paths = write_shards(data, prefix, num_shards=8)
    assert not temporaries(tmp_path)
    assert sorted(bytes(r) for r in hr.TFRecordDataset(paths)) == sorted(data)
