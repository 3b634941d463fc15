from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import headrace as hr
from headrace.io import FixedLenFeature, VarLenFeature, serialize_example, write_shards
from headrace.io.storage.publish import (
    ShardSetError,
    begin_set,
    check_shard_files,
    file_crc32c,
    manifest_path,
    publish_file,
    read_manifest,
    temporary_path,
    temporary_writer_is_dead,
    write_manifest,
)
from headrace.ray import datasource, read_tfrecords, write_tfrecords

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")

SPEC = {
    "id": FixedLenFeature([], "int64"),
    "x": FixedLenFeature([2], "float32"),
    "name": FixedLenFeature([], "string"),
    "tags": VarLenFeature("int64"),
}


def _example(i: int) -> bytes:
    return serialize_example(
        {"id": i, "x": np.array([i, -i], np.float32), "name": f"n{i}".encode(), "tags": np.arange(i % 3)}
    )


@pytest.fixture
def shards(tmp_path):
    return write_shards((_example(i) for i in range(50)), str(tmp_path / "data"), num_shards=3)


def test_reads_every_record_parsed_across_nodes(cluster, shards):
    ds = read_tfrecords(shards, SPEC)
    rows = sorted(ds.take_all(), key=lambda row: row["id"])
    assert [row["id"] for row in rows] == list(range(50))
    assert rows[7]["x"].tolist() == [7.0, -7.0]
    assert rows[7]["name"] == b"n7"
    assert list(rows[5]["tags"]) == [0, 1]
    assert ds.materialize().num_blocks() >= 3  # one read task per file


def test_raw_records_without_features(cluster, shards):
    records = [row["record"] for row in read_tfrecords(shards).take_all()]
    assert sorted(records) == sorted(_example(i) for i in range(50))


def test_glob_and_compression(cluster, tmp_path):
    paths = write_shards(
        (_example(i) for i in range(20)), str(tmp_path / "z"), num_shards=2, compression_type="GZIP"
    )
    ds = read_tfrecords(str(tmp_path / "z-*"), SPEC, compression_type="GZIP")
    assert sorted(row["id"] for row in ds.take_all()) == list(range(20))
    assert len(paths) == 2


def test_missing_file_is_named_on_the_caller(cluster, tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.tfrecord"):
        read_tfrecords([str(tmp_path / "nope.tfrecord")], SPEC)
    with pytest.raises(FileNotFoundError, match="no file matches"):
        read_tfrecords(str(tmp_path / "none-*"), SPEC)


def test_corrupt_records_follow_the_policy(cluster, tmp_path):
    path = str(tmp_path / "bad.tfrecord")
    with hr.io.TFRecordWriter(path) as writer:
        for i in range(10):
            writer.write(_example(i))
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0xFF  # inside a record's payload: its data CRC fails
    open(path, "wb").write(bytes(data))
    with pytest.raises(Exception, match="bad.tfrecord"):
        read_tfrecords(path, SPEC).take_all()
    kept = sorted(row["id"] for row in read_tfrecords(path, SPEC, on_corrupt="skip_record").take_all())
    assert len(kept) == 9 and set(kept) < set(range(10))


def test_write_then_read_round_trip(cluster, tmp_path):
    ds = ray.data.from_items(
        [{"id": i, "name": f"n{i}", "x": np.array([i, 2 * i], np.float32)} for i in range(30)]
    )
    write_tfrecords(ds, str(tmp_path / "out" / "part"), num_shards=3)
    back = read_tfrecords(
        str(tmp_path / "out" / "part-*.tfrecord"),
        {
            "id": FixedLenFeature([], "int64"),
            "name": FixedLenFeature([], "string"),
            "x": FixedLenFeature([2], "float32"),
        },
    )
    rows = sorted(back.take_all(), key=lambda row: row["id"])
    assert [row["id"] for row in rows] == list(range(30))
    assert rows[4]["name"] == b"n4" and rows[4]["x"].tolist() == [4.0, 8.0]
    assert not list((tmp_path / "out").glob("*incomplete*"))


def test_bad_arguments_fail_before_ray_runs(tmp_path, shards):
    with pytest.raises(hr.InvalidArgumentError, match="on_corrupt"):
        read_tfrecords(shards, SPEC, on_corrupt="ignore")


# --- write_tfrecords publishes a shard set (io/storage/publish.py), as write_shards does ---------------------
def _ids(n: int, start: int = 0):
    return ray.data.from_items([{"id": start + i, "name": f"n{start + i}"} for i in range(n)])


def _read_ids(pattern: str, storage_options=None) -> list[int]:
    files = [
        f.decode()
        for f in hr.Dataset.list_files(
            pattern, shuffle=False, storage_options=storage_options
        ).as_numpy_iterator()
    ]
    records = hr.TFRecordDataset(files, storage_options=storage_options)
    return [int(hr.io.parse_example(bytes(r), {"id": FixedLenFeature([], "int64")})["id"]) for r in records]


def test_a_small_dataset_is_one_shard_however_many_blocks_it_has(cluster, tmp_path):
    # Issue 24: 400 rows in 200 blocks were written as 200 shards of 2 records.
    prefix = str(tmp_path / "part")
    paths = write_tfrecords(_ids(400).repartition(200), prefix)
    assert paths == [prefix + "-00000-of-00001.tfrecord"]
    assert sorted(_read_ids(prefix + "-*")) == list(range(400))


def test_shards_by_count_or_by_size(cluster, tmp_path):
    counted = write_tfrecords(_ids(400).repartition(200), str(tmp_path / "four"), num_shards=4)
    assert len(counted) == 4 and counted[3].endswith("four-00003-of-00004.tfrecord")
    assert sorted(_read_ids(str(tmp_path / "four-*"))) == list(range(400))
    # Shards of at least shard_bytes of rows (in memory), the last one with what is left.
    blob = "x" * 1000
    rows = ray.data.from_items([{"id": i, "name": blob} for i in range(60)]).repartition(30)
    sized = write_tfrecords(rows, str(tmp_path / "sized"), shard_bytes=10_000)
    assert 2 <= len(sized) <= 6, sized
    sizes = sorted(os.path.getsize(p) for p in sized)
    assert all(size >= 10_000 for size in sizes[1:]), sizes  # all but the smallest hold the target
    assert sorted(_read_ids(str(tmp_path / "sized-*"))) == list(range(60))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_shards": 0}, "num_shards=0"),
        ({"shard_bytes": -5}, "shard_bytes=-5"),
        ({"num_shards": 2, "shard_bytes": 100}, "one of num_shards and shard_bytes"),
    ],
)
def test_bad_shard_options_are_named(tmp_path, kwargs, match):
    with pytest.raises(hr.InvalidArgumentError, match=match):
        write_tfrecords(None, str(tmp_path / "part"), **kwargs)


def _temporaries(directory) -> list[str]:
    return sorted(name for name in os.listdir(directory) if ".incomplete-" in name)


def test_write_publishes_a_set_with_a_manifest_read_exactly_once(cluster, tmp_path):
    prefix = str(tmp_path / "out" / "part")
    paths = write_tfrecords(_ids(40), prefix, num_shards=4)
    assert paths == [f"{prefix}-{k:05d}-of-00004.tfrecord" for k in range(4)]
    assert sorted(_read_ids(prefix + "-*")) == list(range(40))  # each record exactly once
    manifest = read_manifest(manifest_path(prefix))
    assert manifest["state"] == "complete" and manifest["tool"] == "write_tfrecords"
    assert [s["file"] for s in manifest["shards"]] == [os.path.basename(p) for p in paths]
    assert sum(s["records"] for s in manifest["shards"]) == 40
    for shard, path in zip(manifest["shards"], paths):
        assert shard["bytes"] == os.path.getsize(path) and shard["crc32c"] == file_crc32c(path)
    assert _temporaries(tmp_path / "out") == []
    check_shard_files(paths)  # the readers' rule holds for the whole set


def test_a_failing_task_publishes_nothing_and_keeps_the_earlier_set(cluster, tmp_path):
    prefix = str(tmp_path / "part")
    earlier = write_tfrecords(_ids(20), prefix, num_shards=2)
    rows = [{"id": i, "name": None if i == 33 else f"n{i}"} for i in range(40)]  # None: not serialisable
    with pytest.raises(Exception, match="(?s)column 'name' holds 1 null.*write task"):
        write_tfrecords(ray.data.from_items(rows), prefix, num_shards=4)
    assert _temporaries(tmp_path) == []  # the failed run's temporaries are gone
    assert sorted(p.name for p in tmp_path.glob("part-*")) == [os.path.basename(p) for p in earlier]
    assert sorted(_read_ids(prefix + "-*")) == list(range(20))  # the earlier set, whole, and only it


def test_a_first_write_that_fails_leaves_nothing_readable(cluster, tmp_path):
    rows = [{"id": i, "name": None if i == 5 else f"n{i}"} for i in range(40)]
    with pytest.raises(Exception, match="column 'name' holds 1 null"):
        write_tfrecords(ray.data.from_items(rows), str(tmp_path / "part"), num_shards=4)
    assert os.listdir(tmp_path) == []
    with pytest.raises(FileNotFoundError):
        read_tfrecords(str(tmp_path / "part-*"))


def test_a_publication_cut_short_is_refused_by_every_reader(cluster, tmp_path, monkeypatch):
    prefix = str(tmp_path / "part")
    earlier = write_tfrecords(_ids(10), prefix, num_shards=1)
    published = []

    def fail_after_two(temporary, final, storage_options=None):  # the driver dies half-way
        if len(published) == 2:
            raise OSError(28, "No space left on device", final)
        publish_file(temporary, final, storage_options)
        published.append(final)

    monkeypatch.setattr(datasource, "publish_file", fail_after_two)
    with pytest.raises(OSError, match="No space left"):
        write_tfrecords(_ids(40), prefix, num_shards=4)
    manifest = read_manifest(manifest_path(prefix))
    assert manifest["state"] == "publishing" and manifest["writer"]["abandoned"]
    assert _temporaries(tmp_path) == []
    left = sorted(str(p) for p in tmp_path.glob("part-*"))
    assert left == sorted(earlier + published)  # the earlier shard goes when a set is complete
    incomplete = "(?s)shard set .*part-\\* is incomplete: write_tfrecords .* 2 of 4 shards in place"
    with pytest.raises(ShardSetError, match=incomplete):
        hr.TFRecordDataset(published)
    with pytest.raises(ShardSetError, match=incomplete):
        hr.TFRecordDataset(earlier)
    with pytest.raises(ShardSetError, match=incomplete):
        hr.Dataset.list_files(prefix + "-*")
    with pytest.raises(ShardSetError, match=incomplete):
        hr.shuffled_records(prefix + "-*", buffer_size=4, seed=0)
    with pytest.raises(ShardSetError, match=incomplete):
        read_tfrecords(prefix + "-*")  # on the caller, before Ray runs
    monkeypatch.undo()
    paths = write_tfrecords(_ids(6), prefix, num_shards=3)  # a rerun takes the abandoned set over
    assert sorted(p.name for p in tmp_path.glob("part-*")) == [os.path.basename(p) for p in paths]
    assert sorted(_read_ids(prefix + "-*")) == list(range(6))


def test_a_rerun_with_fewer_tasks_leaves_no_stale_shard_readable(cluster, tmp_path):
    prefix = str(tmp_path / "part")
    first = write_tfrecords(_ids(40), prefix, num_shards=4)
    kept = open(first[3], "rb").read()
    second = write_tfrecords(_ids(10, start=100), prefix, num_shards=2)
    assert sorted(str(p) for p in tmp_path.glob("part-*")) == second  # the 4 earlier shards are gone
    assert sorted(_read_ids(prefix + "-*")) == list(range(100, 110))
    stale = tmp_path / os.path.basename(first[3])
    stale.write_bytes(kept)  # an old shard put back (a sync tool, a restore from backup)
    with pytest.raises(ShardSetError, match=f"{stale.name} is not one of the shards"):
        hr.TFRecordDataset(sorted(str(p) for p in tmp_path.glob("part-*")))
    with pytest.raises(ShardSetError, match=f"{stale.name} is not one of the shards"):
        read_tfrecords(prefix + "-*")


def test_an_empty_dataset_publishes_a_complete_set_of_empty_shards(cluster, tmp_path):
    prefix = str(tmp_path / "part")
    write_tfrecords(_ids(5), prefix)
    paths = write_tfrecords(_ids(5).filter(lambda row: row["id"] < 0), prefix)
    assert len(paths) >= 1 and sorted(str(p) for p in tmp_path.glob("part-*")) == paths
    assert _read_ids(prefix + "-*") == []
    assert read_manifest(manifest_path(prefix))["state"] == "complete"


def test_no_write_task_at_all_still_publishes_one_empty_shard(tmp_path):
    prefix = str(tmp_path / "part")
    paths = datasource.publish_task_shards(prefix, "0a1b2c3d", [], None, None)
    assert paths == [prefix + "-00000-of-00001.tfrecord"] and os.path.getsize(paths[0]) == 0
    assert read_manifest(manifest_path(prefix))["shards"][0]["records"] == 0
    assert _temporaries(tmp_path) == []


def test_tasks_are_published_in_task_order_and_leftovers_of_the_run_removed(tmp_path):
    pyarrow = pytest.importorskip("pyarrow")
    prefix, run = str(tmp_path / "part"), "0a1b2c3d"
    results = [
        datasource.write_task_shard(
            [pyarrow.table({"record": [b"r%d" % task]})], task, prefix, run, None, None
        )
        for task in (4, 1)
    ]
    retried = temporary_path(datasource.staging_name(prefix, 1, run, ".tfrecord"))  # a killed attempt's
    other_run = temporary_path(datasource.staging_name(prefix, 1, "ffffffff", ".tfrecord"))  # live
    for path in (retried, other_run):
        open(path, "wb").close()
    paths = datasource.publish_task_shards(prefix, run, results, None, None)
    assert [[bytes(r) for r in hr.TFRecordDataset([p])] for p in paths] == [[b"r1"], [b"r4"]]
    assert _temporaries(tmp_path) == [os.path.basename(other_run)]  # another run's: not ours to remove


def test_remote_prefix_publishes_the_same_set(cluster, tmp_path):
    prefix = f"local://{tmp_path}/remote/part"  # the remote code path; every Ray worker sees it
    first = write_tfrecords(_ids(30), prefix, compression_type="GZIP", num_shards=3)
    assert first == [f"{prefix}-{k:05d}-of-00003.tfrecord" for k in range(3)]
    assert read_manifest(manifest_path(prefix))["state"] == "complete"
    second = write_tfrecords(_ids(8, start=50), prefix, compression_type="GZIP", num_shards=2)
    listed = sorted(str(p) for p in (tmp_path / "remote").glob("part-*"))
    assert listed == [p.removeprefix("local://") for p in second]
    files = [f.decode() for f in hr.Dataset.list_files(prefix + "-*", shuffle=False).as_numpy_iterator()]
    records = hr.TFRecordDataset(files, compression_type="GZIP")
    spec = {"id": FixedLenFeature([], "int64")}
    assert sorted(int(hr.io.parse_example(bytes(r), spec)["id"]) for r in records) == list(range(50, 58))
    rows = [{"id": i, "name": None if i == 2 else "x"} for i in range(8)]
    with pytest.raises(Exception, match="column 'name' holds 1 null"):
        write_tfrecords(ray.data.from_items(rows), prefix, compression_type="GZIP", num_shards=2)
    assert _temporaries(tmp_path / "remote") == []
    assert sorted(str(p) for p in (tmp_path / "remote").glob("part-*")) == listed


def test_a_live_writer_of_the_prefix_is_refused_before_ray_runs(tmp_path):
    prefix = str(tmp_path / "part")
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as other:
        try:
            body = begin_set(prefix, "write_shards", [None])
            body["writer"] = {**body["writer"], "pid": other.pid, "started": None}  # a live pid
            write_manifest(prefix, body)
            with pytest.raises(ShardSetError, match=f"pid {other.pid} .* is writing the shard set"):
                write_tfrecords(None, prefix)  # refused on the caller: no dataset is even touched
        finally:
            other.kill()


def test_staging_names_are_temporaries_of_the_set():
    name = temporary_path(datasource.staging_name("out/part", 7, "0a1b2c3d", ".tfrecord"))
    assert os.path.basename(name).startswith("part-00007.0a1b2c3d.tfrecord.incomplete-")
    with pytest.raises(ShardSetError, match="unfinished temporary file"):
        check_shard_files([name])


def test_a_worker_killed_mid_write_leaves_no_temporary_once_ray_retries(cluster, tmp_path):
    marker = tmp_path / "killed"

    def die_once(batch):  # fused with the write: runs while the task's temporary is open
        if batch["id"][0] == 25 and not marker.exists():
            marker.touch()
            os._exit(1)  # the worker process dies; Ray runs the task again elsewhere
        return batch

    prefix = str(tmp_path / "out" / "part")
    ds = _ids(40).repartition(4).map_batches(die_once, batch_size=5)
    paths = write_tfrecords(ds, prefix, shard_bytes=1)  # a task per block: the map stays fused
    assert marker.exists() and len(paths) == 4
    assert sorted(_read_ids(prefix + "-*")) == list(range(40))
    assert _temporaries(tmp_path / "out") == []  # the killed attempt's temporary went with the run


def test_s3_prefix_publishes_the_same_set(cluster):
    pytest.importorskip("s3fs")
    pytest.importorskip("moto.server")
    from tests.io.storage.test_s3 import _make_bucket, _server_options, _start_server  # noqa: PLC0415

    server, endpoint = _start_server()  # on 127.0.0.1: the Ray workers reach it too
    try:
        prefix, options = f"s3://{_make_bucket(endpoint)}/out/part", _server_options(endpoint)
        write_tfrecords(_ids(30), prefix, storage_options=options, num_shards=3)
        paths = write_tfrecords(_ids(8, start=50), prefix, storage_options=options, num_shards=2)
        assert paths == [f"{prefix}-{k:05d}-of-00002.tfrecord" for k in range(2)]
        assert sorted(hr.io.storage.fs.glob(prefix + "-*", options)) == paths  # no stale shard, no temporary
        assert read_manifest(manifest_path(prefix), options)["state"] == "complete"
        assert sorted(_read_ids(prefix + "-*", options)) == list(range(50, 58))
        rows = [{"id": i, "name": None if i == 2 else "x"} for i in range(8)]
        with pytest.raises(Exception, match="column 'name' holds 1 null"):
            write_tfrecords(ray.data.from_items(rows), prefix, storage_options=options, num_shards=2)
        assert sorted(hr.io.storage.fs.glob(prefix + "*", options)) == paths  # the failed run left nothing
    finally:
        server.stop()


_KILLED_DRIVER = """
import os, signal, sys
import ray
from headrace.ray import datasource
renamed = []
def publish_then_die(temporary, final, storage_options=None):
    if len(renamed) == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # the driver dies between two renames
    datasource.publish_file.__wrapped__(temporary, final, storage_options)
    renamed.append(final)
publish_then_die.__wrapped__ = datasource.publish_file
datasource.publish_file = publish_then_die
ray.init(address=sys.argv[1], log_to_driver=False)
datasource.write_tfrecords(ray.data.range(40), sys.argv[2], num_shards=4)
"""


def test_a_driver_killed_while_publishing_is_refused_then_taken_over(cluster, tmp_path):
    prefix = str(tmp_path / "part")
    driver = subprocess.run(
        [sys.executable, "-c", _KILLED_DRIVER, cluster.address, prefix], capture_output=True, timeout=240
    )
    assert driver.returncode == -signal.SIGKILL, driver.stderr.decode()[-2000:]
    incomplete = "(?s)part-\\* is incomplete: write_tfrecords \\(pid .*\\) stopped with 2 of 4 shards"
    with pytest.raises(ShardSetError, match=incomplete):
        hr.Dataset.list_files(prefix + "-*-of-*")
    with pytest.raises(ShardSetError, match=incomplete):
        read_tfrecords(prefix + "-*-of-*")
    left = [str(tmp_path / name) for name in _temporaries(tmp_path)]
    assert len(left) == 2  # the two shards not renamed yet
    with pytest.raises(ShardSetError, match="unfinished temporary file of a headrace writer"):
        hr.Dataset.list_files(prefix + "-*")
    deadline = time.monotonic() + 60  # Ray ends the dead driver's workers (the temporaries' writers)
    while not all(temporary_writer_is_dead(path) for path in left) and time.monotonic() < deadline:
        time.sleep(0.2)
    paths = write_tfrecords(_ids(6), prefix, num_shards=3)  # the rerun reclaims them, takes the set over
    assert sorted(str(p) for p in tmp_path.glob("part-*")) == paths
    assert sorted(_read_ids(prefix + "-*")) == list(range(6))


def test_shards_named_as_earlier_versions_named_them_are_warned_of(cluster, tmp_path):
    legacy = tmp_path / "part-00007.tfrecord"  # what write_tfrecords wrote before sets were published
    legacy.write_bytes(b"")
    (tmp_path / "part-1.tfrecord").write_bytes(b"")  # not that form: not named
    with pytest.warns(hr.io.ShardSetWarning, match=f"(?s)1 file.*{legacy}.*delete them") as caught:
        write_tfrecords(_ids(4), str(tmp_path / "part"), num_shards=1)
    assert "part-1.tfrecord" not in str(caught[0].message)
    assert legacy.exists()  # not ours to delete: no manifest says headrace wrote it


@pytest.mark.parametrize(
    "columns, named",
    [
        ({"s": [None, None], "x": [1, 2]}, "'s' holds 2 null"),  # arrow's null type: read back as NaN floats
        ({"s": ["a", "b"], "x": [1, None]}, "'x' holds 1 null(s) (the first at row 1"),  # int -> float NaN
        ({"s": ["a", None], "x": [1.5, 2.5]}, "'s' holds 1 null"),
    ],
)
def test_nulls_are_refused_not_written_as_nan(columns, named):
    # tf.train.Example has no null; numpy's view of an arrow column turns nulls into NaN, which
    # would be written as a float feature without a word.
    import pyarrow as pa

    with pytest.raises(ValueError, match=rf"column {re.escape(named)}.*cannot be null: fill them"):
        list(datasource._rows(pa.table(columns)))
    assert len(list(datasource._rows(pa.table({"s": ["a"], "x": [1]})))) == 1
