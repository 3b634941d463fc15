"""tf.train.Example and its parts (tfops/train.py): bytes equal to serialize_example's (whose bytes are
checked against TensorFlow's in the fixtures), round trips, proto semantics and TF's type errors."""

import numpy as np
import pytest

import headrace as tf
from headrace.io import FixedLenFeature, VarLenFeature


def _example(**features) -> tf.train.Example:
    return tf.train.Example(features=tf.train.Features(feature=features))


def test_bytes_equal_serialize_example_and_round_trip():
    example = _example(
        image=tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"\xff\xd8", "é"])),
        score=tf.train.Feature(float_list=tf.train.FloatList(value=[0.1, 2])),
        label=tf.train.Feature(int64_list=tf.train.Int64List(value=[np.int64(-3), 2**62, True])),
    )
    data = example.SerializeToString()
    expected = tf.io.serialize_example(
        {"image": [b"\xff\xd8", "é".encode()], "score": np.float32([0.1, 2]), "label": [-3, 2**62, 1]}
    )
    assert data == expected
    again = tf.train.Example.FromString(data)
    assert again == example and again.SerializeToString() == data
    assert again.features.feature["score"].float_list.value == [float(np.float32(0.1)), 2.0]
    parsed = tf.io.parse_single_example(
        data, {"label": VarLenFeature(tf.int64), "score": FixedLenFeature([2], tf.float32)}
    )
    assert parsed["label"].tolist() == [-3, 2**62, 1] and parsed["score"].tolist() == [np.float32(0.1), 2.0]


def test_empty_parts_serialize_as_protobuf_does():
    assert tf.train.Example().SerializeToString() == b""
    assert tf.train.Example(features=tf.train.Features()).SerializeToString() == b"\n\x00"
    empty_lists = _example(
        b=tf.train.Feature(bytes_list=tf.train.BytesList()),
        f=tf.train.Feature(float_list=tf.train.FloatList()),
        i=tf.train.Feature(int64_list=tf.train.Int64List()),
        none=tf.train.Feature(),
    )
    again = tf.train.Example.FromString(empty_lists.SerializeToString())
    kinds = {key: f.WhichOneof("kind") for key, f in again.features.feature.items()}
    assert kinds == {"b": "bytes_list", "f": "float_list", "i": "int64_list", "none": None}


def test_an_unset_list_reads_empty_and_one_feature_holds_one_list():
    feature = tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))
    assert feature.bytes_list.value == [] and feature.WhichOneof("kind") == "int64_list"
    with pytest.raises(ValueError, match="one list"):
        tf.train.Feature(bytes_list=tf.train.BytesList(), int64_list=tf.train.Int64List())
    with pytest.raises(TypeError, match="Int64List"):
        tf.train.Feature(int64_list=tf.train.FloatList(value=[1.0]))


@pytest.mark.parametrize(
    "make",
    [
        lambda: tf.train.Int64List(value=[1.5]),
        lambda: tf.train.Int64List(value=["1"]),
        lambda: tf.train.BytesList(value=[1]),
        lambda: tf.train.FloatList(value=["x"]),
        lambda: tf.train.Features(feature={"x": [1]}),
    ],
)
def test_wrong_value_types_are_type_errors_as_in_tf(make):
    with pytest.raises(TypeError):
        make()


def test_int64_out_of_range_and_garbage_bytes_are_refused():
    with pytest.raises(ValueError, match="out of range"):
        tf.train.Int64List(value=[2**63])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Error parsing message"):
        tf.train.Example.FromString(b"\x0a\x05ab")


def test_examples_written_with_the_protos_read_back(tmp_path):
    path = str(tmp_path / "x.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(5):
            feature = tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))
            writer.write(_example(i=feature).SerializeToString())
    spec = {"i": FixedLenFeature([], tf.int64)}
    got = [int(tf.io.parse_single_example(r, spec)["i"]) for r in tf.data.TFRecordDataset(path)]
    assert got == list(range(5))
