import json
import os

import numpy as np
import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints
from tests.helpers.elements import assert_elements_equal

D = hr.Dataset


def test_save_load_round_trip_keeps_values_dtypes_and_spec(tmp_path):
    ds = D.range(5).map(lambda x: {"x": x, "v": np.full(3, x, np.float32), "s": b"r%d" % x, "t": (x, x)})
    ds.save(str(tmp_path / "a"))
    loaded = D.load(str(tmp_path / "a"))
    assert_elements_equal(list(loaded), list(ds))
    assert loaded.element_spec == ds.element_spec


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_save_compressed_and_sharded(tmp_path, compression):
    path = str(tmp_path / "b")
    D.range(10).save(path, compression=compression, shard_func=lambda x: x % 3)
    assert sorted(os.listdir(path)) == ["dataset_spec.json"] + [f"shard-0000{k}.tfrecord" for k in range(3)]
    assert sorted(int(x) for x in D.load(path)) == list(range(10))
    assert [int(x) for x in D.load(path)][:4] == [0, 3, 6, 9]
    with pytest.raises(hr.InvalidArgumentError, match="compression"):
        D.load(path, compression="GZIP" if compression == "ZLIB" else "ZLIB")


def test_save_replaces_an_earlier_save_and_empty_datasets_load(tmp_path):
    path = str(tmp_path / "c")
    D.range(10).save(path, shard_func=lambda x: x % 4)
    D.range(2).save(path)
    assert [int(x) for x in D.load(path)] == [0, 1]
    D.range(0).save(path)
    assert list(D.load(path)) == []


def test_load_refuses_interrupted_and_foreign_directories(tmp_path):
    path = str(tmp_path / "d")
    with pytest.raises(hr.InvalidArgumentError, match="not a directory"):
        D.load(path)
    with pytest.raises(ZeroDivisionError):
        D.range(5).map(lambda x: 1 // (int(x) - 3)).save(path)
    with pytest.raises(hr.DataLossError, match="interrupted"):
        D.load(path)
    D.range(1).save(path)
    spec = os.path.join(path, "dataset_spec.json")
    meta = json.load(open(spec))
    meta["version"] = 99
    json.dump(meta, open(spec, "w"))
    with pytest.raises(hr.InvalidArgumentError, match="version"):
        D.load(path)


def test_shard_func_must_return_a_shard_index(tmp_path):
    with pytest.raises(hr.InvalidArgumentError, match="shard_func"):
        D.range(3).save(str(tmp_path / "e"), shard_func=lambda x: -1)


def test_loaded_dataset_checkpoints(tmp_path):
    path = str(tmp_path / "f")
    D.range(20).map(lambda x: (x, b"v")).save(path, shard_func=lambda x, v: x % 2)
    check_checkpoints(lambda: D.load(path))


def test_snapshot_writes_once_and_reads_after(tmp_path):
    calls = []
    ds = D.range(4).map(lambda x: calls.append(1) or x).snapshot(str(tmp_path / "snap"))
    assert [int(x) for x in ds] == [0, 1, 2, 3]
    assert [int(x) for x in ds] == [0, 1, 2, 3]
    assert len(calls) == 4


def test_get_single_element_and_fingerprint():
    assert int(D.range(1).get_single_element()) == 0
    with pytest.raises(hr.InvalidArgumentError, match="empty"):
        D.range(0).get_single_element()
    with pytest.raises(hr.InvalidArgumentError, match="more than one"):
        D.range(2).get_single_element()
    assert isinstance(D.range(3).fingerprint(), np.uint64)
    assert D.range(3).fingerprint() != D.range(4).fingerprint()
