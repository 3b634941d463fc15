from __future__ import annotations

import numpy as np
import pytest

import headrace as hr
from headrace.io import FixedLenFeature, VarLenFeature, serialize_example, write_shards
from headrace.ray import read_tfrecords, write_tfrecords

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
    write_tfrecords(ds.repartition(3), str(tmp_path / "out" / "part"))
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
