"""headrace.io against TensorFlow's recorded results (tests/data/tf_fixtures/io.*, written by
tools/record_tf_fixtures.py), without TensorFlow: the files headrace wrote that tf.data read back, the
bytes of tf.train.Example, and tf.io.parse_example / parse_sequence_example / SparseFeature outputs.
The live versions (test_writer.py, test_example.py, ...) still run where TensorFlow is installed."""

from __future__ import annotations

import gzip
import hashlib
import zlib

import numpy as np
import pytest

import headrace as hr
from headrace.io import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    TFRecordWriter,
    VarLenFeature,
    parse_example,
    parse_sequence_example,
    serialize_example,
    tf_record_iterator,
    write_shards,
)
from tests.helpers.tf_fixtures import example_entries, load_json, load_npz, uncanon, unpack

RECORDED = load_json("io.json")
ARRAYS = load_npz("io.npz")
META = load_json("meta.json")


def sha(record: bytes) -> str:
    return hashlib.sha256(record).hexdigest()


def decompress(data: bytes, compression: str) -> bytes:
    return {"": lambda b: b, "GZIP": gzip.decompress, "ZLIB": zlib.decompress}[compression](data)


def records_for_tf(golden_dir) -> list[bytes]:
    golden = list(tf_record_iterator(f"{golden_dir}/examples.tfrecord"))
    return golden + unpack(ARRAYS["writer/extra/data"], ARRAYS["writer/extra/ends"])


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_files_tensorflow_read_are_what_headrace_writes(tmp_path, golden_dir, compression):
    records = records_for_tf(golden_dir)
    accepted = ARRAYS[f"writer/{compression or 'NONE'}"].tobytes()  # the bytes tf.data read back
    read_by_tf = RECORDED["writer"]["files"][compression or "NONE"]
    assert read_by_tf == [sha(r) for r in records]
    path = tmp_path / "for_tf.tfrecord"
    with TFRecordWriter(path, compression) as writer:
        for record in records:
            writer.write(record)
    ours = path.read_bytes()
    # The framing inside the compression is byte for byte what TensorFlow accepted; the container
    # (gzip / zlib header) is the same kind; the compressed bytes are identical under the recorder's zlib.
    assert (
        decompress(ours, compression) == decompress(accepted, compression) == ARRAYS["writer/NONE"].tobytes()
    )
    assert ours[:2] == accepted[:2]
    if compression == "" or zlib.ZLIB_RUNTIME_VERSION == META["zlib"]:
        assert ours == accepted
    accepted_path = tmp_path / "accepted.tfrecord"
    accepted_path.write_bytes(accepted)
    assert [sha(r) for r in tf_record_iterator(str(accepted_path), compression)] == read_by_tf


def test_gzip_shards_and_their_parallel_read_order(tmp_path, golden_dir):
    records = records_for_tf(golden_dir)
    paths = write_shards(records, str(tmp_path / "tfshards"), num_shards=3, compression_type="GZIP")
    assert len(paths) == RECORDED["shards"]["count"]
    for k, path in enumerate(paths):
        with open(path, "rb") as f:
            assert gzip.decompress(f.read()) == gzip.decompress(ARRAYS[f"shards/{k}"].tobytes()), k
    ours = hr.TFRecordDataset(paths, compression_type="GZIP", num_parallel_reads=3)
    assert [sha(bytes(r)) for r in ours] == RECORDED["shards"]["order"]


def test_parse_example_equals_recorded_tensorflow():
    records = unpack(ARRAYS["example/records/data"], ARRAYS["example/records/ends"])
    ours = parse_example(
        records,
        {
            "dense": FixedLenFeature([4], "float32"),
            "label": FixedLenFeature([], "int64"),
            "tags": VarLenFeature("string"),
            "ints": RaggedFeature("int64"),
            "seq": FixedLenSequenceFeature([2], "float32", allow_missing=True),
            "opt": FixedLenFeature([2], "int64", default_value=[7, 8]),
        },
    )
    for key in ("dense", "label", "seq", "opt"):
        theirs = ARRAYS[f"example/{key}"]
        assert ours[key].dtype == theirs.dtype, key
        np.testing.assert_array_equal(ours[key], theirs, err_msg=key)
    indices, values, shape = ours["tags"].to_sparse()
    np.testing.assert_array_equal(indices, ARRAYS["example/tags/indices"])
    assert [bytes(v) for v in values] == unpack(ARRAYS["example/tags/data"], ARRAYS["example/tags/ends"])
    np.testing.assert_array_equal(shape, ARRAYS["example/tags/dense_shape"])
    np.testing.assert_array_equal(ours["ints"].row_splits, ARRAYS["example/ints/row_splits"])
    np.testing.assert_array_equal(ours["ints"].values, ARRAYS["example/ints/values"])


@pytest.mark.parametrize("k", range(len(RECORDED["serialize_example"])))
def test_serialize_example_gives_tensorflows_bytes(k):
    case = RECORDED["serialize_example"][k]
    features = uncanon(case["features"])
    ours, theirs = serialize_example(features), bytes.fromhex(case["bytes"])
    if len(features) == 1:
        assert ours == theirs
    # several features: a protobuf map's order is the serializer's choice; the entries are the same
    assert example_entries(ours) == example_entries(theirs)


def test_parse_sequence_example_equals_recorded_tensorflow():
    records = unpack(ARRAYS["sequence/records/data"], ARRAYS["sequence/records/ends"])
    context, sequences, lengths = parse_sequence_example(
        records,
        {"id": FixedLenFeature([], "int64")},
        {"tok": FixedLenSequenceFeature([2], "int64"), "var": RaggedFeature("float32")},
    )
    np.testing.assert_array_equal(context["id"], ARRAYS["sequence/id"])
    np.testing.assert_array_equal(sequences["tok"], ARRAYS["sequence/tok"])
    np.testing.assert_array_equal(lengths["tok"], ARRAYS["sequence/tok_lengths"])
    np.testing.assert_array_equal(sequences["var"].row_splits, ARRAYS["sequence/var/row_splits"])
    np.testing.assert_array_equal(sequences["var"].values.row_splits, ARRAYS["sequence/var/inner_row_splits"])
    np.testing.assert_array_equal(sequences["var"].flat_values, ARRAYS["sequence/var/flat_values"])
    assert sequences["var"].flat_values.dtype == ARRAYS["sequence/var/flat_values"].dtype


def test_sparse_feature_equals_recorded_tensorflow():
    recorded = RECORDED["sparse_feature"]
    records = [bytes.fromhex(r) for r in recorded["records"]]
    assert records[0] == serialize_example({"ix": [3, 0], "val": [0.5, 2.0]})
    ours = parse_example(records, {"s": SparseFeature("ix", "val", "float32", 5)})["s"]
    np.testing.assert_array_equal(ours.indices, uncanon(recorded["indices"]))
    np.testing.assert_array_equal(ours.values, uncanon(recorded["values"]))
    assert ours.values.dtype == np.float32
    assert list(ours.shape) == uncanon(recorded["dense_shape"]).tolist()
