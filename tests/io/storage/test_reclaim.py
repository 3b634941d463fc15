"""Reclaiming what interrupted writers left (io/storage/reclaim.py), on ``protocol://`` prefixes above all.

``local://`` is fsspec's filesystem over local files: it takes the remote code path (listings,
moves, a manifest written under a temporary name and moved) yet is shared with forked children, so a
writer can be SIGKILLed there and the rerun checked. (memory:// is per process; S3: test_s3.py.)
"""

import functools
import os
import random
import socket
import tempfile
import time
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from headrace.core.errors import InvalidArgumentError
from headrace.io import ShardSetError, ShardSetWarning, reclaim_shards, write_shards
from headrace.io.records import writer as writer_module
from headrace.io.storage import fs as fs_module
from headrace.io.storage import publish as publish_module
from headrace.io.storage.publish import (
    host_tag,
    is_alive,
    manifest_path,
    process_identity,
    read_manifest,
    temporary_path,
    temporary_writer,
)
from headrace.io.storage.reclaim import set_temporaries
from headrace.tools import convert as convert_module
from tests.io.storage.test_publication import dead_pid, dead_temporary
from tests.io.storage.test_publication_kill import check_readers_after_kill, die_at, read_set, run_and_kill

pytest.importorskip("fsspec")
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the faults are injected in forked children")


def temporaries(directory) -> list[str]:
    return sorted(n for n in os.listdir(directory) if ".incomplete-" in n)


def other_host(path: str) -> str:
    """``path`` (a temporary name) as a writer on another host would have named it."""
    tag = host_tag()
    return path.replace(tag, "0" * 8 if tag != "0" * 8 else "1" * 8)


def as_other_host(step, function, *args, **kwargs) -> None:
    """In a forked child: run ``function`` as a process of host ``worker-a``, SIGKILLed at ``step``."""
    socket.gethostname = lambda: "worker-a"
    die_at(step, function, *args, **kwargs)


def exactly_once(paths, data) -> None:
    assert sorted(bytes(r) for r in hr.TFRecordDataset(paths)) == sorted(data)


# --- SIGKILL at random points, then the rerun ---------------------------------------------------------
def test_remote_write_shards_killed_anywhere_is_reclaimed_by_the_rerun(tmp_path):
    rng = random.Random(21)
    prefix = f"local://{tmp_path}/train"
    complete_sets = [[]]  # what a reader may see: nothing yet, or a whole set (an earlier or this one)
    start = time.monotonic()
    write_shards([b"warm-up"], f"local://{tmp_path}/warm", index=True)
    unit = max(time.monotonic() - start, 0.005)
    os.remove(tmp_path / ".warm.manifest.json")
    for name in os.listdir(tmp_path):
        if name.startswith("warm"):
            os.remove(tmp_path / name)
    outcomes = {"refused": 0, "whole": 0, "nothing": 0}
    left_behind = 0
    for trial in range(16):
        shards, index = (8, True) if trial % 2 else (5, trial % 4 == 0)
        data = [b"trial %d record %d " % (trial, i) + b"x" * rng.randrange(200) for i in range(600)]
        write = functools.partial(write_shards, data, prefix, num_shards=shards, index=index)
        if trial % 2:  # just before a random publication step: a manifest write, its move, a rename
            steps = [(publish_module, "write_manifest", k) for k in (1, 2)]
            steps += [(fs_module, "replace", 1)]  # the publishing manifest written, not yet moved
            steps += [(writer_module, "publish_file", k) for k in range(1, 2 * shards + 1)]
            run_and_kill(functools.partial(die_at, rng.choice(steps), write), None)
        else:  # at a random time
            run_and_kill(write, rng.uniform(0, 30 * unit))
        left_behind += bool(temporaries(tmp_path))
        check_readers_after_kill(prefix, [*complete_sets, data], outcomes, trial)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a dead writer on this host: reclaimed without a word
            paths = write()  # the rerun
        assert not temporaries(tmp_path), f"trial {trial}: the rerun left {temporaries(tmp_path)}"
        exactly_once(paths, data)
        assert read_set(prefix + "-*") == sorted(data)
        complete_sets.append(data)
    assert outcomes["refused"] > 0 and left_behind > 0  # the kills did land in the interesting windows


def test_remote_convert_killed_anywhere_is_reclaimed_by_the_rerun(tmp_path, monkeypatch):
    np = pytest.importorskip("numpy")
    source = str(tmp_path / "features.npy")
    np.save(source, np.arange(3000 * 16, dtype=np.float32).reshape(3000, 16))
    staging = tmp_path / "staging"  # where convert stages a remote conversion (tempfile.gettempdir())
    staging.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(staging))
    out = tmp_path / "out"
    prefix = f"local://{out}/feat"
    start = time.monotonic()
    expected = sorted(
        bytes(r) for r in hr.TFRecordDataset(convert_module.convert(source, prefix, num_shards=4))
    )
    unit = max(time.monotonic() - start, 0.01)
    rng = random.Random(22)
    convert = functools.partial(convert_module.convert, source, prefix, num_shards=4, workers=1)
    refused = 0
    for trial in range(8):
        if trial % 2:  # just before a random upload, or the manifest's
            step = rng.choice(
                [(convert_module, "upload", k) for k in range(1, 5)]
                # the staged local set's manifest (calls 1-6), then the remote one's (7, 8)
                + [(publish_module, "write_manifest", k) for k in (1, 3, 7, 8)]
            )
            run_and_kill(functools.partial(die_at, step, convert), None)
        else:
            run_and_kill(convert, rng.uniform(0, 3 * unit))
        seen = read_set(prefix + "-*")
        refused += seen is None
        assert seen in (None, [], expected), f"trial {trial}: a partial conversion was readable"
        exactly_once(convert(), expected)  # the rerun
        assert not temporaries(out), f"trial {trial}: the rerun left {temporaries(out)}"
        assert os.listdir(staging) == [], "a killed conversion's staging folder outlived the rerun"
    assert refused > 0


# --- live writers and writers on other hosts ----------------------------------------------------------
def test_a_live_writers_temporaries_survive_a_second_writers_reclaim(tmp_path):
    prefix = f"local://{tmp_path}/train"
    go = tmp_path / "go"
    first = [b"first %d" % i for i in range(40)]

    def slow_records():
        for i, record in enumerate(first):
            if i == 20:
                while not go.exists():
                    time.sleep(0.01)
            yield record

    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child: the first writer, paused half-way)
        try:
            write_shards(slow_records(), prefix, num_shards=2)
        finally:
            os._exit(0)
    try:
        deadline = time.monotonic() + 30
        while len(temporaries(tmp_path)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        live = temporaries(tmp_path)
        assert len(live) == 2 and all(temporary_writer(n)[1] == pid for n in live)
        for force in (False, True):  # never a live writer's, whatever the caller says
            assert reclaim_shards(prefix, force=force) == []
        second = [b"second %d" % i for i in range(10)]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a live writer here is not another host's: no warning
            exactly_once(write_shards(second, prefix, num_shards=2), second)
        assert temporaries(tmp_path) == live  # the second writer left the first one's files alone
    finally:
        go.touch()
        os.waitpid(pid, 0)
    assert read_set(prefix + "-*") == sorted(first)  # the first writer finished and published
    assert not temporaries(tmp_path)


def test_another_hosts_killed_writer_is_named_and_reclaimed_only_when_forced(tmp_path):
    prefix = f"local://{tmp_path}/train"
    data = [b"r%d" % i for i in range(30)]
    # worker-a dies after renaming 1 of 3 shards: its manifest says "publishing", 2 temporaries left
    run_and_kill(
        functools.partial(
            as_other_host, (writer_module, "publish_file", 2), write_shards, data, prefix, num_shards=3
        ),
        None,
    )
    left = [f"local://{tmp_path}/{n}" for n in temporaries(tmp_path)]
    assert len(left) == 2
    with pytest.raises(
        ShardSetError, match=r"still being written by write_shards \(pid \d+ on worker-a\)"
    ) as info:
        hr.Dataset.list_files(prefix + "-*-of-*")
    assert "another host or container" in str(info.value)
    assert f"headrace.io.reclaim_shards({prefix!r}, force=True, storage_options=...)" in str(info.value)

    with pytest.warns(ShardSetWarning) as caught, pytest.raises(ShardSetError, match="right now") as refused:
        write_shards(data, prefix, num_shards=3)  # the rerun may not take a set it cannot tell is dead
    message = str(caught[0].message)
    assert all(path in message for path in left) and "by host worker-a" in message
    assert f"reclaim_shards({prefix!r}, force=True" in message and f"tag {host_tag()}" in message
    assert "reclaim_shards" in str(refused.value)
    assert [f"local://{tmp_path}/{n}" for n in temporaries(tmp_path)] == left  # and nothing of its own

    with pytest.warns(ShardSetWarning, match="worker-a"):
        assert reclaim_shards(prefix) == []
    assert sorted(reclaim_shards(prefix, force=True)) == sorted(left)
    assert not temporaries(tmp_path)
    assert read_manifest(manifest_path(prefix))["writer"]["abandoned"] is True
    with pytest.raises(
        ShardSetError, match=r"incomplete: write_shards \(pid \d+ on worker-a\) stopped with 1 of 3"
    ):
        hr.Dataset.list_files(prefix + "-*")
    exactly_once(write_shards(data, prefix, num_shards=3), data)  # the rerun takes the set over
    assert read_set(prefix + "-*") == sorted(data) and not temporaries(tmp_path)


def test_another_hosts_temporaries_without_a_manifest_leave_the_rerun_free(tmp_path):
    prefix = f"local://{tmp_path}/train"
    data = [b"r%d" % i for i in range(30)]
    # killed before publishing anything: temporaries only, and no manifest naming the host
    run_and_kill(
        functools.partial(
            as_other_host, (publish_module, "write_manifest", 1), write_shards, data, prefix, num_shards=2
        ),
        None,
    )
    left = temporaries(tmp_path)
    tag = temporary_writer(left[0])[0]
    with pytest.warns(
        ShardSetWarning, match=rf"2 by an unknown host \(every name holds '.incomplete-{tag}-'\)"
    ):
        paths = write_shards(data, prefix, num_shards=2)
    exactly_once(paths, data)  # the set itself is published and read
    assert temporaries(tmp_path) == left
    with pytest.raises(
        ShardSetError, match=r"written on another host or container \(host tag [0-9a-f]{8}"
    ) as info:
        hr.Dataset.list_files(prefix + "-*")  # a pattern that takes the temporaries in is refused
    assert f"reclaim_shards({prefix!r}, force=True" in str(info.value)
    assert read_set(prefix + "-*-of-*") == sorted(data)
    assert len(reclaim_shards(prefix, force=True)) == 2 and not temporaries(tmp_path)
    assert read_manifest(manifest_path(prefix))["state"] == "complete"  # a finished set is not touched


# --- what counts as the set's, and whose ------------------------------------------------------------
def test_only_the_sets_temporaries_are_considered(tmp_path):
    prefix = str(tmp_path / "train")
    mine = [
        dead_temporary(prefix + "-00000.tfrecord"),
        dead_temporary(prefix + "-00001-of-00002.tfrecord"),
        dead_temporary(manifest_path(prefix)),
        dead_temporary(prefix + "-00001.tfrecord") + ".hridx",  # the index of a temporary shard
    ]
    others = [
        dead_temporary(str(tmp_path / "training-00000.tfrecord")),  # another set sharing the stem
        dead_temporary(str(tmp_path / "train-a-00000.tfrecord")),
        str(tmp_path / "train-00002.tfrecord.incomplete-abcd"),  # writer unknown: never guessed at
        str(tmp_path / "train-00000-of-00002.tfrecord"),
    ]
    for path in mine + others:
        open(path, "wb").close()
    assert sorted(set_temporaries(prefix)) == sorted(mine)
    assert sorted(reclaim_shards(prefix)) == sorted(mine)
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(p) for p in others)
    assert reclaim_shards(str(tmp_path / "missing" / "train")) == []
    assert reclaim_shards("memory://reclaim-test-nothing/train") == []


a_dead_pid = functools.cache(dead_pid)
_FILES = st.tuples(
    st.sampled_from(
        ["train-00000.tfrecord", "train-00001-of-00002.tfrecord", ".train.manifest.json", "trains-00000"]
    ),
    st.sampled_from(["here", "elsewhere"]),
    st.booleans(),  # the writer is alive
    st.booleans(),  # a sidecar index of the temporary
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_FILES, max_size=8), st.booleans())
def test_reclaim_removes_exactly_the_dead_writers_files_of_the_set(files, force):
    """Whatever lies in the folder, reclaim removes the set's temporaries of dead writers on this
    host (and, forced, those of other hosts), and nothing else: never a live writer's."""
    with tempfile.TemporaryDirectory() as directory:
        expected_removed = set()
        for final, where, alive, index in files:
            name = temporary_path(os.path.join(directory, final))
            if not alive:
                head, _, tail = name.rpartition(".incomplete-")
                tag, _pid, _started, token = tail.split("-")
                name = f"{head}.incomplete-{tag}-{a_dead_pid()}-0-{token}"
            name = (other_host(name) if where == "elsewhere" else name) + (".hridx" if index else "")
            open(name, "wb").close()
            ours = not final.startswith("trains")
            if ours and ((where == "here" and not alive) or (where == "elsewhere" and force)):
                expected_removed.add(name)
        before = set(os.listdir(directory))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ShardSetWarning)
            removed = reclaim_shards(os.path.join(directory, "train"), force=force)
        assert set(removed) == expected_removed and len(removed) == len(expected_removed)
        assert set(os.listdir(directory)) == before - {os.path.basename(p) for p in expected_removed}


def test_the_index_of_a_dead_writers_temporary_is_reclaimed_locally(tmp_path):
    prefix = str(tmp_path / "train")
    run_and_kill(
        functools.partial(
            die_at,
            (publish_module, "write_manifest", 1),
            write_shards,
            [b"a", b"b"],
            prefix,
            num_shards=2,
            index=True,
        ),
        None,
    )
    assert len(temporaries(tmp_path)) == 4  # two shards and their indexes
    write_shards([b"a", b"b"], prefix, num_shards=2, index=True)
    assert not temporaries(tmp_path)


def test_reclaim_shards_checks_its_arguments(tmp_path):
    with pytest.raises(InvalidArgumentError, match="force='yes' is not allowed"):
        reclaim_shards(str(tmp_path / "p"), force="yes")
    with pytest.raises(InvalidArgumentError, match="reclaim_shards: storage_options="):
        reclaim_shards(str(tmp_path / "p"), storage_options=["key"])
    with pytest.raises(InvalidArgumentError, match="prefix="):
        reclaim_shards("")


def test_a_writer_in_another_pid_namespace_is_never_judged_by_its_pid():
    dead = {**process_identity(), "pid": dead_pid()}
    assert not is_alive(dead)
    assert is_alive({**dead, "pid_namespace": "pid:[1]"})  # a container sharing this host name
    assert host_tag({**dead, "pid_namespace": "pid:[1]"}) != host_tag()
    assert host_tag() == host_tag(process_identity())


def test_whole_object_stores_and_fresh_listings(tmp_path):
    assert fs_module.writes_whole_objects("memory://b/x") and fs_module.writes_whole_objects("s3://b/x")
    assert not fs_module.writes_whole_objects(f"local://{tmp_path}/x")
    prefix = f"local://{tmp_path}/m"
    write_shards([b"a"], prefix)
    assert sorted(os.listdir(tmp_path)) == [".m.manifest.json", "m-00000-of-00001.tfrecord"]  # moved


def test_a_memory_set_of_a_dead_writer_is_reclaimed():
    import fsspec

    prefix = "memory://reclaim-test-memory/p"
    memory = fsspec.filesystem("memory")
    try:
        for final in (prefix + "-00000.tfrecord", manifest_path(prefix)):
            with memory.open(dead_temporary(final), "wb") as f:
                f.write(b"partial")
        live = temporary_path(prefix + "-00001.tfrecord")
        with memory.open(live, "wb") as f:
            f.write(b"being written")
        assert len(set_temporaries(prefix)) == 3
        exactly_once(write_shards([b"x", b"y"], prefix, num_shards=2), [b"x", b"y"])
        assert [p for p in memory.ls("/reclaim-test-memory", detail=False) if ".incomplete-" in p] == [
            "/" + live.split("://", 1)[1]
        ]
    finally:
        memory.rm("/reclaim-test-memory", recursive=True)


def test_the_reclaim_command(tmp_path, capsys):
    from headrace import cli

    prefix = str(tmp_path / "train")
    dead = dead_temporary(prefix + "-00000.tfrecord")
    elsewhere = other_host(dead_temporary(prefix + "-00001.tfrecord"))
    for path in (dead, elsewhere):
        open(path, "wb").close()
    assert cli.main(["reclaim", prefix]) == 0
    out, err = capsys.readouterr()
    assert out == f"removed {dead}\n1 temporary file removed\n"
    assert elsewhere in err and f"headrace reclaim {prefix} --force" in err
    assert cli.main(["reclaim", prefix, "--force"]) == 0
    assert capsys.readouterr().out == f"removed {elsewhere}\n1 temporary file removed\n"
    assert os.listdir(tmp_path) == []
    assert cli.main(["reclaim", ""]) == 1
    assert "headrace reclaim: error: prefix='' is not a file path" in capsys.readouterr().err
