import os

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError
from headrace.io import (
    ExampleParseError,
    FixedLenFeature,
    FixedLenSequenceFeature,
    Ragged,
    RaggedFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
    serialize_example,
    tf_record_iterator,
)
from headrace.io.codec.example import encode_feature
from tests.io.conftest import golden_records, golden_spec


@pytest.mark.parametrize("name", ["examples.tfrecord", "examples_gzip.tfrecord", "examples_zlib.tfrecord"])
def test_golden_examples_parse_to_the_manifest_values(golden_dir, manifest, name):
    info = manifest["files"][name]
    records = list(tf_record_iterator(os.path.join(golden_dir, name), info["compression"]))
    parsed = parse_example(records, golden_spec(info["feature_spec"]))
    expected = golden_records(manifest, name)
    assert parsed["fixed_f"].dtype == np.float32 and parsed["fixed_f"].shape == (120, 3)
    assert parsed["fixed_f"].tolist() == [np.float32(r["fixed_f"]).tolist() for r in expected]
    assert parsed["label"].tolist() == [r["label"][0] for r in expected]
    assert parsed["name"].tolist() == [bytes.fromhex(r["name"][0]) for r in expected]
    assert parsed["var_i"].to_list() == [r["var_i"] for r in expected]
    assert parsed["var_s"].to_list() == [[bytes.fromhex(v) for v in r["var_s"]] for r in expected]
    assert parsed["opt_f"].tolist() == [np.float32(r.get("opt_f", [-1.0])[0]).item() for r in expected]
    single = parse_single_example(records[1], golden_spec(info["feature_spec"]))
    assert single["label"] == expected[1]["label"][0] and single["var_i"].tolist() == expected[1]["var_i"]


def test_round_trip_of_every_value_kind():
    record = serialize_example(
        {
            "f": np.arange(6, dtype=np.float64).reshape(2, 3),  # stored as float32
            "i": [-1, 0, 2**62, -(2**63)],
            "b": True,
            "s": "text",
            "bl": [b"a", b"", "c"],
            "empty_i": np.array([], dtype=np.int64),
            "u8": np.array([255, 1], dtype=np.uint8),
        }
    )
    parsed = parse_single_example(
        record,
        {
            "f": FixedLenFeature([2, 3], "float32"),
            "i": VarLenFeature("int64"),
            "b": FixedLenFeature([], "int64"),
            "s": FixedLenFeature([], "string"),
            "bl": VarLenFeature("string"),
            "empty_i": VarLenFeature("int64"),
            "u8": FixedLenFeature([2], np.int64),
        },
    )
    assert parsed["f"].tolist() == [[0, 1, 2], [3, 4, 5]] and parsed["f"].dtype == np.float32
    assert parsed["i"].tolist() == [-1, 0, 2**62, -(2**63)]
    assert parsed["b"] == 1 and parsed["s"] == b"text" and parsed["bl"].tolist() == [b"a", b"", b"c"]
    assert parsed["empty_i"].tolist() == [] and parsed["u8"].tolist() == [255, 1]


def test_many_varints_take_the_vectorised_encoder():
    values = np.array([0, 1, 127, 128, 300, -1, 2**40, -(2**40), 2**63 - 1] * 3, dtype=np.int64)
    parsed = parse_single_example(serialize_example({"v": values}), {"v": VarLenFeature("int64")})
    assert parsed["v"].tolist() == values.tolist()


def test_missing_features_and_defaults():
    records = [serialize_example({"a": 1.5}), serialize_example({})]
    spec = {
        "a": FixedLenFeature([], "float32", default_value=-1),
        "s": FixedLenFeature([2], "string", ["x", "y"]),
    }
    parsed = parse_example(records, spec)
    assert parsed["a"].tolist() == [1.5, -1.0]
    assert parsed["s"].tolist() == [[b"x", b"y"], [b"x", b"y"]]
    with pytest.raises(
        ExampleParseError,
        match="feature 'a' of record 1 is missing and the FixedLenFeature has no default_value",
    ):
        parse_example(records, {"a": FixedLenFeature([], "float32")})
    # a Feature with no list at all reads as missing (as in tf.io); an empty list does not
    no_list = b"\n\x07\n\x05\n\x01a\x12\x00"
    assert parse_example([no_list], {"a": FixedLenFeature([], "float32", default_value=2.0)})[
        "a"
    ].tolist() == [2.0]
    with pytest.raises(ExampleParseError, match="has 0 values"):
        parse_example(
            [serialize_example({"a": np.array([], np.float32)})], {"a": FixedLenFeature([], "float32", 2.0)}
        )


def test_errors_name_feature_record_and_what_was_found():
    records = [serialize_example({"x": [1.0, 2.0]}), serialize_example({"x": [1, 2]})]
    with pytest.raises(
        ExampleParseError, match=r"feature 'x' of record 1 holds int64 values but the spec's dtype is float32"
    ):
        parse_example(records, {"x": FixedLenFeature([2], "float32")})
    with pytest.raises(
        ExampleParseError,
        match=r"feature 'x' of record 0 has 2 values but FixedLenFeature shape \(3,\) needs 3",
    ):
        parse_example(records[:1], {"x": FixedLenFeature([3], "float32")})
    with pytest.raises(ExampleParseError, match="record 1 \\('second'\\)"):
        parse_example(records, {"x": VarLenFeature("float32")}, example_names=["first", "second"])
    with pytest.raises(ExampleParseError, match="holds float values but the spec's dtype is string"):
        parse_example(records[:1], {"x": FixedLenFeature([2], "string")})
    with pytest.raises(ExampleParseError, match="record 1 is not a valid serialized tf.train.Example"):
        parse_example([records[0], b"\xff\xff\xff"], {"x": VarLenFeature("float32")})


def test_argument_errors():
    record = serialize_example({"x": 1})
    with pytest.raises(InvalidArgumentError, match="drops trailing zero bytes"):
        parse_example(np.array([record]), {"x": FixedLenFeature([], "int64")})
    with pytest.raises(InvalidArgumentError, match="record 0 is int"):
        parse_example([3], {"x": FixedLenFeature([], "int64")})
    with pytest.raises(InvalidArgumentError, match="non-empty dict"):
        parse_example([record], {})
    with pytest.raises(InvalidArgumentError, match="allow_missing=True"):
        parse_example([record], {"x": FixedLenSequenceFeature([], "int64")})
    with pytest.raises(InvalidArgumentError, match="float32', 'int64' and 'string'"):
        FixedLenFeature([], "float64")
    with pytest.raises(InvalidArgumentError, match="needs 3"):
        FixedLenFeature([3], "int64", default_value=[1, 2])
    with pytest.raises(InvalidArgumentError, match="serialize_example"):
        serialize_example({"x": [object()]})
    with pytest.raises(InvalidArgumentError, match="mixes"):
        encode_feature("x", [b"a", 1])


def test_batches_of_object_arrays_from_a_pipeline(tmp_path):
    path = str(tmp_path / "p.tfrecord")
    with hr.io.TFRecordWriter(path) as writer:
        for i in range(10):
            writer.write(serialize_example({"i": i, "v": [float(i)] * (i % 3)}))
    spec = {"i": FixedLenFeature([], "int64"), "v": VarLenFeature("float32")}
    batches = list(hr.TFRecordDataset(path).batch(4).map(lambda b: parse_example(b, spec)))
    assert [b["i"].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0]["v"].to_list() == [[], [1.0], [2.0, 2.0], []]


def test_fixed_len_sequence_feature_in_an_example():
    records = [
        serialize_example({"x": [1, 2, 3, 4]}),
        serialize_example({"x": [5, 6]}),
        serialize_example({}),
    ]
    parsed = parse_example(
        records, {"x": FixedLenSequenceFeature([2], "int64", allow_missing=True, default_value=-1)}
    )
    assert parsed["x"].tolist() == [[[1, 2], [3, 4]], [[5, 6], [-1, -1]], [[-1, -1], [-1, -1]]]
    strings = parse_example(
        [serialize_example({"s": ["a", "b"]}), serialize_example({})],
        {"s": FixedLenSequenceFeature([], "string", True)},
    )
    assert strings["s"].tolist() == [[b"a", b"b"], [b"", b""]]
    with pytest.raises(ExampleParseError, match="not a multiple"):
        parse_example(records[:1], {"x": FixedLenSequenceFeature([3], "int64", allow_missing=True)})


def test_ragged_feature_partitions():
    record = serialize_example(
        {
            "v": [1, 2, 3, 4],
            "lengths": [2, 0, 2],
            "splits": [0, 1, 4],
            "ids": [0, 0, 2, 2],
            "limits": [3, 4],
            "starts": [0, 1],
        }
    )

    def parse(partitions, key="v"):
        return parse_example(
            [
                record,
                serialize_example(
                    {"v": [9], "lengths": [1], "splits": [0, 1], "ids": [0], "limits": [1], "starts": [0]}
                ),
            ],
            {"out": RaggedFeature("int64", value_key=key, partitions=partitions)},
        )["out"]

    assert parse([]).to_list() == [[1, 2, 3, 4], [9]]
    assert parse([RaggedFeature.RowLengths("lengths")]).to_list() == [[[1, 2], [], [3, 4]], [[9]]]
    assert parse([RaggedFeature.RowSplits("splits")]).to_list() == [[[1], [2, 3, 4]], [[9]]]
    assert parse([RaggedFeature.ValueRowIds("ids")]).to_list() == [[[1, 2], [], [3, 4]], [[9]]]
    assert parse([RaggedFeature.RowLimits("limits")]).to_list() == [[[1, 2, 3], [4]], [[9]]]
    assert parse([RaggedFeature.RowStarts("starts")]).to_list() == [[[1], [2, 3, 4]], [[9]]]
    nested = parse([RaggedFeature.UniformRowLength(1), RaggedFeature.RowLengths("lengths")])
    assert nested.to_list() == [[[[1, 2]], [[]], [[3, 4]]], [[[9]]]] and nested.ragged_rank == 3
    with pytest.raises(ExampleParseError, match="describes 5 values as RowLengths but there are 4"):
        parse_example(
            [serialize_example({"v": [1, 2, 3, 4], "l": [2, 3]})],
            {"v": RaggedFeature("int64", partitions=[RaggedFeature.RowLengths("l")])},
        )
    with pytest.raises(ExampleParseError, match="UniformRowLength"):
        parse([RaggedFeature.UniformRowLength(3)])


def test_parse_single_example_input_check():
    with pytest.raises(InvalidArgumentError, match="for a batch use parse_example"):
        parse_single_example([b""], {"x": VarLenFeature("int64")})
    assert isinstance(parse_example([b""], {"x": VarLenFeature("int64")})["x"], Ragged)


@pytest.mark.slow
def test_same_results_as_tensorflow(golden_dir):
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(7)
    records = []
    for i in range(200):
        features = {
            "dense": rng.standard_normal(4).astype(np.float32),
            "label": int(rng.integers(-(2**40), 2**40)),
        }
        if i % 3:
            features["tags"] = [b"t%d" % k for k in range(int(rng.integers(0, 4)))]
        if i % 4:
            features["ints"] = rng.integers(-1000, 1000, size=int(rng.integers(0, 5)))
        features["seq"] = rng.standard_normal(2 * int(rng.integers(0, 3))).astype(np.float32)
        records.append(serialize_example(features))
    ours_spec = {
        "dense": FixedLenFeature([4], "float32"),
        "label": FixedLenFeature([], "int64"),
        "tags": VarLenFeature("string"),
        "ints": RaggedFeature("int64"),
        "seq": FixedLenSequenceFeature([2], "float32", allow_missing=True),
        "opt": FixedLenFeature([2], "int64", default_value=[7, 8]),
    }
    tf_spec = {
        "dense": tf.io.FixedLenFeature([4], tf.float32),
        "label": tf.io.FixedLenFeature([], tf.int64),
        "tags": tf.io.VarLenFeature(tf.string),
        "ints": tf.io.RaggedFeature(tf.int64),
        "seq": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
        "opt": tf.io.FixedLenFeature([2], tf.int64, default_value=[7, 8]),
    }
    ours = parse_example(records, ours_spec)
    theirs = tf.io.parse_example(records, tf_spec)
    for key in ("dense", "label", "seq", "opt"):
        np.testing.assert_array_equal(ours[key], theirs[key].numpy())
    indices, values, shape = ours["tags"].to_sparse()
    np.testing.assert_array_equal(indices, theirs["tags"].indices.numpy())
    np.testing.assert_array_equal(values.astype(bytes), theirs["tags"].values.numpy())
    np.testing.assert_array_equal(shape, theirs["tags"].dense_shape.numpy())
    np.testing.assert_array_equal(ours["ints"].row_splits, theirs["ints"].row_splits.numpy())
    np.testing.assert_array_equal(ours["ints"].values, theirs["ints"].values.numpy())
    # TensorFlow parses what we serialize as the same Example it would build itself
    for features in ({"a": [1.5, 2.5]}, {"b": [-3, 2**62]}, {"c": [b"x", b""]}, {"d": 7}):
        key, value = next(iter(features.items()))
        if isinstance(value, list) and isinstance(value[0], bytes):
            feature = tf.train.Feature(bytes_list=tf.train.BytesList(value=value))
        elif isinstance(value, list) and isinstance(value[0], float):
            feature = tf.train.Feature(float_list=tf.train.FloatList(value=value))
        else:
            feature = tf.train.Feature(
                int64_list=tf.train.Int64List(value=value if isinstance(value, list) else [value])
            )
        expected = tf.train.Example(features=tf.train.Features(feature={key: feature})).SerializeToString()
        assert serialize_example(features) == expected


@pytest.mark.parametrize("scalar", ["bytes", "0-d array"])
def test_one_scalar_record_parses_without_a_batch_dimension_as_tf(scalar):
    # issue 12: tf.io.parse_example takes a scalar string and returns per-example shapes
    record = serialize_example({"x": [1.0, 2.0], "v": [1, 2, 3], "label": 4})
    serialized = record if scalar == "bytes" else np.array(record, dtype=object)
    spec = {
        "x": FixedLenFeature([2], "float32"),
        "v": VarLenFeature("int64"),
        "label": FixedLenFeature([], "int64"),
    }
    out = parse_example(serialized, spec)
    assert out["x"].shape == (2,) and out["x"].tolist() == [1.0, 2.0]
    assert out["v"].tolist() == [1, 2, 3] and out["label"].shape == () and int(out["label"]) == 4
    with pytest.raises(InvalidArgumentError, match="drops trailing zero bytes"):
        parse_example(np.array([record]), spec)  # a bytes-dtype batch is still refused


@pytest.mark.parametrize(
    "outer, inner, message",
    [
        (
            [3],
            [2, 1],
            "feature 'outer' of record 0 describes 3 rows of the partition inside it as RowLengths but there are 2",
        ),
        ([1], [2, 1], "describes 1 rows of the partition inside it"),
        ([2], [2, 2], "feature 'inner' of record 0 describes 4 values as RowLengths but there are 3"),
    ],
)
def test_misaligned_nested_ragged_partitions_are_clear_errors(outer, inner, message):
    # issue 12: a nested RaggedFeature whose partitions disagree names the partition and the counts
    spec = {
        "r": RaggedFeature(
            "int64",
            value_key="v",
            partitions=[RaggedFeature.RowLengths("outer"), RaggedFeature.RowLengths("inner")],
        )
    }
    record = serialize_example({"v": [1, 2, 3], "outer": outer, "inner": inner})
    with pytest.raises(ExampleParseError, match="misaligned partitions") as raised:
        parse_example([record], spec)
    assert message in str(raised.value)
    good = serialize_example({"v": [1, 2, 3], "outer": [2], "inner": [2, 1]})
    assert parse_example([good], spec)["r"].to_list() == [[[[1, 2], [3]]]]
