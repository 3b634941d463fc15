"""headrace against TensorFlow's recorded outputs (tests/data/tf_fixtures, written by
tools/record_tf_fixtures.py): the comparisons of test_against_tensorflow.py and the ported public
pipelines, run without TensorFlow. The live tests stay; these run everywhere."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest

import headrace as hr
from headrace.core import cpus
from tests.helpers.tf_fixtures import (
    CPU_DEPENDENT,
    FIXTURES,
    SAME_VALUES,
    assert_matches,
    canon,
    infinite_pipelines,
    load_json,
    plain,
    uncanon,
)
from tests.helpers.tf_pipelines import NOT_RECORDED, PIPELINES, TOLERANCE, NumpyOps

DATASETS = load_json("datasets.json")
PIPELINE_RECORDS = load_json("pipelines.json")


def hr_list(ds) -> list:
    return [canon(x) for x in ds]


def test_meta_names_the_tensorflow_version_and_every_fixture_file():
    meta = load_json("meta.json")
    assert meta["tensorflow"].count(".") >= 2 and meta["recorded_by"] == "tools/record_tf_fixtures.py"
    files = sorted(n for n in os.listdir(FIXTURES) if n != "meta.json")
    assert sorted(meta["files"]) == files
    for name in files:  # a fixture edited by hand (not recorded) fails here
        with open(os.path.join(FIXTURES, name), "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == meta["files"][name], name


@pytest.mark.parametrize("name", sorted(SAME_VALUES))
def test_same_values(name):
    # values, as the live test compares them: Python ints are int64 in headrace, int32 in tf (docs/porting.md)
    assert plain(hr_list(SAME_VALUES[name](hr.data))) == plain(DATASETS["same_values"][name])


@pytest.mark.parametrize("count", sorted(DATASETS["cpu_dependent"]))
def test_orders_that_follow_the_cpu_count(monkeypatch, tmp_path, count):
    # tf.data's default cycle length comes from the schedulable CPUs: recorded under 1 and 2 CPUs
    monkeypatch.setattr(cpus, "schedulable_cpus", lambda: int(count))
    recorded = DATASETS["cpu_dependent"][count]
    for name, build in CPU_DEPENDENT.items():
        assert hr_list(build(hr.data)) == recorded[name], name
    paths = []
    for k in range(5):
        paths.append(str(tmp_path / f"f{k}.tfrecord"))
        with hr.io.TFRecordWriter(paths[-1]) as writer:
            for i in range(3):
                writer.write(b"%d-%d" % (k, i))
    ours = list(hr.data.TFRecordDataset(paths, num_parallel_reads=hr.data.AUTOTUNE))
    assert [r.hex() for r in ours] == recorded["tfrecord_autotune"]


def test_text_and_csv_readers(tmp_path):
    recorded = DATASETS["text_csv"]
    path, single, cr = tmp_path / "t.csv", tmp_path / "s.csv", tmp_path / "r.txt"
    path.write_bytes(bytes.fromhex(recorded["csv"]))
    single.write_bytes(bytes.fromhex(recorded["single"]))
    cr.write_bytes(bytes.fromhex(recorded["cr"]))
    assert hr_list(hr.data.TextLineDataset(str(path))) == recorded["lines"]
    assert hr_list(hr.data.experimental.CsvDataset(str(path), [[0], [""]], header=True)) == recorded["rows"]
    assert hr_list(hr.data.experimental.CsvDataset(str(single), [[-1]])) == recorded["single_rows"]
    assert hr_list(hr.data.TextLineDataset(str(cr))) == recorded["cr_lines"]


def test_cardinalities_of_infinite_inputs():
    ours = [ds.cardinality() for ds in infinite_pipelines(hr.data, lambda n: np.full(n, n), len)]
    assert ours == DATASETS["cardinalities"]


def test_sparse_batch_and_io_functions():
    recorded = DATASETS["sparse_batch"]
    ours = next(iter(hr.data.Dataset.range(1, 3).map(lambda n: np.full(n, 7)).sparse_batch(2, [3])))
    assert canon(ours.indices) == recorded["indices"]
    assert ours.values.tolist() == plain(recorded["values"])  # tf.fill(.., 7) is int32, np.full int64
    assert list(ours.shape) == recorded["dense_shape"]["values"]
    records = uncanon(DATASETS["decode_csv"]["records"])
    ours = hr.io.decode_csv(records, [[0], ["d"], [1.0]])
    assert [canon(np.asarray(a)) for a in ours] == DATASETS["decode_csv"]["outputs"]
    raw = uncanon(DATASETS["decode_raw_int16"]["input"])
    assert canon(hr.io.decode_raw(raw, "int16")) == DATASETS["decode_raw_int16"]["output"]
    tf_bytes = bytes.fromhex(DATASETS["parse_tensor_string"])
    assert hr.io.parse_tensor(tf_bytes, "string").tolist() == [[b"a"], [b"bc"]]


@pytest.mark.parametrize("k", range(len(DATASETS["serialize_tensor"])))
def test_serialize_tensor_bytes(k):
    case = DATASETS["serialize_tensor"][k]
    value = np.asarray(uncanon(case["value"]))
    assert hr.io.serialize_tensor(value).hex() == case["bytes"]
    back = hr.io.parse_tensor(
        bytes.fromhex(case["bytes"]), value.dtype if value.dtype != object else "string"
    )
    assert canon(np.asarray(back)) == canon(value)


@pytest.mark.parametrize("name", sorted(PIPELINE_RECORDS["pipelines"]))
def test_ported_pipeline_yields_what_tf_data_yields(tmp_path, name):
    ours = canon(PIPELINES[name](hr, NumpyOps, str(tmp_path)))
    assert_matches(ours, PIPELINE_RECORDS["pipelines"][name], TOLERANCE.get(name, 0.0), name)


def test_every_ported_pipeline_is_recorded_or_says_why_not():
    assert sorted(PIPELINE_RECORDS["pipelines"]) == sorted(PIPELINES)
    assert PIPELINE_RECORDS["not_recorded"] == NOT_RECORDED
