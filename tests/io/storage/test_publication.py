"""Safe publication (io/storage/publish.py): temporaries, reclaim, shard-set manifests and the readers' rule."""

import json
import logging
import os
import socket
import subprocess
import sys
import warnings

import pytest

import headrace as hr
from headrace.io.records.writer import TFRecordWriter, write_shards
from headrace.io.storage.publish import (
    ShardSetError,
    begin_set,
    check_shard_files,
    file_crc32c,
    manifest_path,
    read_manifest,
    reclaim_temporaries,
    temporary_path,
    temporary_writer_is_dead,
    write_manifest,
)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def dead_temporary(final: str) -> str:
    """The name a temporary of ``final`` would have had in a process that is now dead."""
    name = temporary_path(final)
    head, _, tail = name.rpartition(".incomplete-")
    host, _pid, _started, token = tail.split("-")
    return f"{head}.incomplete-{host}-{dead_pid()}-0-{token}"


def names(directory) -> list[str]:
    return sorted(os.listdir(directory))


def records(paths) -> list[bytes]:
    return [bytes(r) for r in hr.TFRecordDataset(paths)]


# --- temporaries and reclaim ------------------------------------------------------------------------
def test_temporary_names_record_a_live_writer(tmp_path):
    final = str(tmp_path / "a.tfrecord")
    mine = temporary_path(final)
    assert mine.startswith(final + ".incomplete-") and mine != temporary_path(final)
    assert not temporary_writer_is_dead(mine)
    assert temporary_writer_is_dead(dead_temporary(final))
    assert not temporary_writer_is_dead(final)  # not a temporary at all


def test_reclaim_removes_only_dead_writers_temporaries_of_the_stem(tmp_path):
    dead = dead_temporary(str(tmp_path / "train-00000.tfrecord"))
    live = temporary_path(str(tmp_path / "train-00001.tfrecord"))
    other_stem = dead_temporary(str(tmp_path / "eval-00000.tfrecord"))
    head, _, tail = dead.rpartition(".incomplete-")
    elsewhere = f"{head}.incomplete-{'0' * 8 if tail[:8] != '0' * 8 else '1' * 8}{tail[8:]}"  # another host
    legacy = str(tmp_path / "train-00002.tfrecord.incomplete-abcd")  # writer unknown: never guessed at
    for path in (dead, live, other_stem, elsewhere, legacy):
        open(path, "wb").close()
    assert reclaim_temporaries(str(tmp_path), "train") == [dead]
    assert names(tmp_path) == sorted(os.path.basename(p) for p in (live, other_stem, elsewhere, legacy))
    assert reclaim_temporaries(str(tmp_path / "missing"), "train") == []
    assert reclaim_temporaries("memory://bucket", "train") == []


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="process start times come from /proc")
def test_a_temporary_whose_pid_was_reused_is_reclaimed(tmp_path):
    name = temporary_path(str(tmp_path / "x"))
    head, _, tail = name.rpartition(".incomplete-")
    host, pid, started, token = tail.split("-")
    reused = f"{head}.incomplete-{host}-{pid}-{int(started) + 1}-{token}"  # our pid, another start time
    open(reused, "wb").close()
    assert reclaim_temporaries(str(tmp_path), "x") == [reused]


# --- write_shards publishes a set ---------------------------------------------------------------------
def test_write_shards_publishes_a_complete_manifest_with_checksums(tmp_path):
    data = [b"r%d" % i for i in range(10)]
    paths = write_shards(data, tmp_path / "train", num_shards=3, compression_type="GZIP", index=True)
    manifest = read_manifest(manifest_path(str(tmp_path / "train")))
    assert manifest["state"] == "complete" and manifest["tool"] == "write_shards"
    assert manifest["settings"] == {"compression": "GZIP", "index": True}
    for path, entry in zip(paths, manifest["shards"]):
        assert entry["file"] == os.path.basename(path)
        assert entry["bytes"] == os.path.getsize(path) and entry["crc32c"] == file_crc32c(path)
    assert [e["records"] for e in manifest["shards"]] == [4, 3, 3]
    assert not [n for n in names(tmp_path) if "incomplete" in n]
    assert sorted(bytes(r) for r in hr.TFRecordDataset(paths, "GZIP")) == sorted(data)


def test_a_smaller_rerun_retires_the_earlier_sets_extra_shards(tmp_path):
    prefix = str(tmp_path / "train")
    old = write_shards([b"x"] * 8, prefix, num_shards=8, index=True)
    new = write_shards([b"y"] * 4, prefix, num_shards=4)
    assert not any(os.path.exists(p) or os.path.exists(p + ".hridx") for p in old)
    listed = hr.Dataset.list_files(prefix + "-*", shuffle=False)
    assert [os.fsdecode(n) for n in listed] == new
    assert records(new) == [b"y"] * 4


def test_retired_names_are_never_trusted_outside_the_prefix(tmp_path):
    prefix = str(tmp_path / "train")
    victim = tmp_path / "precious.txt"
    victim.write_text("keep")
    write_manifest(
        prefix,
        {
            "state": "complete",
            "tool": "write_shards",
            "writer": {},
            "shards": [{"file": "../precious.txt", "bytes": 4}, {"file": "precious.txt", "bytes": 4}],
            "retired": ["precious.txt", "../precious.txt"],
        },
    )
    write_shards([b"a"], prefix)
    assert victim.read_text() == "keep"


def test_a_live_writer_of_the_same_prefix_is_refused(tmp_path):
    prefix = str(tmp_path / "train")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        body = {"pid": sleeper.pid, "host": socket.gethostname(), "boot": "", "started": None}
        write_manifest(
            prefix, {"state": "publishing", "tool": "write_shards", "writer": body, "shards": [None]}
        )
        with pytest.raises(ShardSetError, match=rf"pid {sleeper.pid}.*writing the shard set.*right now"):
            write_shards([b"a"], prefix)
        assert not [n for n in names(tmp_path) if "incomplete" in n]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert records(write_shards([b"a"], prefix)) == [b"a"]  # once it is gone, its set is taken over


# --- what readers accept ----------------------------------------------------------------------------
def tensorflow_style_set(directory, count=3) -> list[str]:
    """Shards named as TensorFlow names them, with no manifest."""
    paths = []
    for k in range(count):
        path = str(directory / f"tf-{k:05d}-of-{count:05d}.tfrecord")
        with TFRecordWriter(path) as writer:
            writer.write(b"tf %d" % k)
        paths.append(path)
    return paths


def test_shards_without_a_manifest_read_without_noise(tmp_path, caplog):
    paths = tensorflow_style_set(tmp_path)
    os.remove(paths[1])  # even a partial TensorFlow set: it was never headrace's to judge
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with caplog.at_level(logging.DEBUG):
            listed = list(hr.Dataset.list_files(str(tmp_path / "tf-*"), shuffle=False))
            assert records([os.fsdecode(n) for n in listed]) == [b"tf 0", b"tf 2"]
    assert not caplog.records


def refusals(pattern: str, paths: list[str], match: str) -> None:
    """Both readers refuse, naming what is wrong."""
    with pytest.raises(ShardSetError, match=match):
        hr.Dataset.list_files(pattern)
    with pytest.raises(ShardSetError, match=match):
        hr.TFRecordDataset(paths)


def test_readers_refuse_a_set_whose_writer_died_while_publishing(tmp_path):
    prefix = str(tmp_path / "train")
    paths = write_shards([b"a", b"b", b"c", b"d"], prefix, num_shards=4)
    manifest = read_manifest(manifest_path(prefix))
    manifest["state"] = "publishing"
    manifest["writer"] = {**manifest["writer"], "pid": dead_pid()}
    manifest["shards"][3] = None
    write_manifest(prefix, manifest)
    refusals(
        prefix + "-*", paths, r"incomplete: write_shards \(pid \d+ .*stopped with 3 of 4 shards in place"
    )
    with pytest.raises(ShardSetError, match="incomplete"):  # one shard alone is refused too
        hr.TFRecordDataset(paths[0])


def test_readers_refuse_a_set_still_being_written(tmp_path):
    prefix = str(tmp_path / "train")
    paths = write_shards([b"a", b"b"], prefix, num_shards=2)
    manifest = read_manifest(manifest_path(prefix))
    write_manifest(prefix, {**manifest, "state": "publishing"})  # by this (live) process
    refusals(prefix + "-*", paths, "still being written by write_shards")


def test_readers_refuse_a_set_changed_after_publication(tmp_path):
    prefix = str(tmp_path / "train")
    paths = write_shards([b"a", b"b", b"c"], prefix, num_shards=3)
    os.remove(paths[2])
    refusals(prefix + "-*", paths[:2], r"train-00002-of-00003.tfrecord of the set .* is missing")
    assert records(paths[0]) == [b"a"]  # one file alone is checked alone (as interleave opens them)
    write_shards([b"a", b"b", b"c"], prefix, num_shards=3)
    with open(paths[1], "ab") as f:
        f.write(b"extra")
    refusals(prefix + "-*", paths, r"train-00001-of-00003.tfrecord has 22 bytes but .* says 17")


def test_readers_refuse_a_stray_shard_and_a_temporary(tmp_path):
    prefix = str(tmp_path / "train")
    paths = write_shards([b"a", b"b"], prefix, num_shards=2)
    stray = tensorflow_style_set(tmp_path, 3)[0].replace("tf-", "train-")
    os.rename(str(tmp_path / "tf-00000-of-00003.tfrecord"), stray)
    refusals(prefix + "-*", [*paths, stray], "train-00000-of-00003.tfrecord is not one of the shards")
    os.remove(stray)
    temporary = temporary_path(paths[0])
    open(temporary, "wb").close()
    refusals(
        prefix + "-*",
        [temporary],
        r"unfinished temporary file of a headrace writer \(its writer, pid \d+ on this host, is still running\)",
    )
    narrowed = hr.Dataset.list_files(prefix + "-*.tfrecord", shuffle=False)  # the way out it names
    assert [os.fsdecode(n) for n in narrowed] == paths


def test_readers_refuse_a_damaged_manifest(tmp_path):
    prefix = str(tmp_path / "train")
    paths = write_shards([b"a"], prefix)
    path = manifest_path(prefix)
    body = json.load(open(path))
    body["shards"][0]["bytes"] += 1  # tampered: the checksum no longer matches
    json.dump(body, open(path, "w"))
    refusals(prefix + "-*", paths, "manifest .* is damaged")
    open(path, "w").write("{not json")
    refusals(prefix + "-*", paths, r"manifest .* is damaged \(its JSON is not valid JSON")
    json.dump({"format": "something else"}, open(path, "w"))
    refusals(prefix + "-*", paths, "is not a headrace shard set manifest")
    os.remove(path)
    assert records(paths) == [b"a"]  # the way out the messages name: read unchecked


def test_check_shard_files_skips_other_names_and_unreachable_stores(tmp_path):
    # s3 without credentials: the manifest cannot be looked up here; reading will say why.
    check_shard_files([str(tmp_path / "plain.tfrecord"), "s3://bucket/x-00000-of-00001.tfrecord", b"a/b"])


def test_a_remote_set_has_a_manifest_and_missing_or_changed_shards_are_refused():
    import fsspec

    prefix = "memory://headrace-publication-test/p"
    fs = fsspec.filesystem("memory")
    try:
        paths = write_shards([b"r%d" % i for i in range(10)], prefix, num_shards=3)
        assert read_manifest(manifest_path(prefix))["state"] == "complete"
        assert sum(1 for _ in hr.data.TFRecordDataset(hr.Dataset.list_files(prefix + "-*"))) == 10
        with fs.open(paths[2], "ab") as f:  # a shard changed after publication
            f.write(b"x")
        with pytest.raises(ShardSetError, match="has .* bytes but"):
            hr.data.TFRecordDataset(paths)
        fs.rm(paths[1])  # a shard lost: the remaining ones alone would be read silently before
        with pytest.raises(ShardSetError, match="p-00001-of-00003.tfrecord of the set .* is missing"):
            hr.Dataset.list_files(prefix + "-*")
        assert sum(1 for _ in hr.data.TFRecordDataset(paths[0])) == 4  # one shard on its own is fine
    finally:
        fs.rm("/headrace-publication-test", recursive=True)


def test_an_interrupted_remote_publication_is_refused(monkeypatch):
    import fsspec

    from headrace.io.records import writer as writer_module

    prefix = "memory://headrace-publication-test2/p"
    fs = fsspec.filesystem("memory")
    calls = []

    def fail_on_second(temporary, final, storage_options=None):
        calls.append(final)
        if len(calls) == 2:
            raise OSError("connection reset")
        fsspec_replace(temporary, final, storage_options)

    from headrace.io.storage.publish import publish_file as fsspec_replace

    monkeypatch.setattr(writer_module, "publish_file", fail_on_second)
    try:
        with pytest.raises(OSError, match="connection reset"):
            write_shards([b"r%d" % i for i in range(6)], prefix, num_shards=3)
        assert read_manifest(manifest_path(prefix))["state"] == "publishing"
        with pytest.raises(ShardSetError, match="incomplete|still being written"):
            hr.Dataset.list_files(prefix + "-*")
        assert not [p for p in fs.ls("/headrace-publication-test2", detail=False) if "incomplete" in p]
    finally:
        fs.rm("/headrace-publication-test2", recursive=True)


def test_begin_set_rewrites_over_an_abandoned_manifest(tmp_path):
    prefix = str(tmp_path / "p")
    body = begin_set(prefix, "write_shards", [None])
    assert read_manifest(manifest_path(prefix))["state"] == "publishing" and body["shards"] == [None]
    assert records(write_shards([b"z"], prefix)) == [b"z"]


def test_interleave_over_a_set_opens_each_file_checked(tmp_path):
    prefix = str(tmp_path / "train")
    write_shards([b"r%d" % i for i in range(12)], prefix, num_shards=4)
    names = hr.Dataset.list_files(prefix + "-*", shuffle=False)
    dataset = names.interleave(hr.TFRecordDataset, cycle_length=4, block_length=1)
    assert [bytes(r) for r in dataset] == [b"r%d" % i for i in range(12)]
    manifest = read_manifest(manifest_path(prefix))
    write_manifest(prefix, {**manifest, "state": "publishing"})  # as if a rewrite had begun since
    with pytest.raises(ShardSetError, match="still being written"):
        list(dataset)


def test_the_usual_globs_list_only_the_shards(tmp_path):
    """The manifest is hidden beside the shards, so ``prefix*`` and ``dir/*.tfrecord`` still give
    exactly the shards (as for TensorFlow's)."""
    paths = write_shards([b"a", b"b"], tmp_path / "class07", num_shards=2)
    assert os.path.exists(tmp_path / ".class07.manifest.json")
    for pattern in ("class07*", "class*", "*.tfrecord", "class07-*-of-*.tfrecord"):
        assert [
            os.fsdecode(n) for n in hr.Dataset.list_files(str(tmp_path / pattern), shuffle=False)
        ] == paths


def test_a_dead_writers_manifest_temporary_is_reclaimed(tmp_path):
    stale = dead_temporary(manifest_path(str(tmp_path / "train")))
    open(stale, "wb").close()
    write_shards([b"a"], tmp_path / "train")
    assert not [n for n in names(tmp_path) if "incomplete" in n]
