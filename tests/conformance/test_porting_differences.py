"""Small tf.data differences found by porting public pipelines (issue 23 item 4), each checked against
what TensorFlow 2.21 does (recorded with tensorflow-cpu 2.21.0)."""

import gzip

import numpy as np
import pytest

import headrace as hr

D = hr.Dataset


def test_tfrecordwriter_takes_tfrecordoptions_as_options(tmp_path):
    # tf.io.TFRecordWriter(path, options=tf.io.TFRecordOptions("GZIP")) writes a GZIP file
    path = str(tmp_path / "x.tfrecord.gz")
    with hr.io.TFRecordWriter(path, options=hr.io.TFRecordOptions("GZIP")) as writer:
        writer.write(b"abc")
    with open(path, "rb") as f:
        assert gzip.decompress(f.read())[12:15] == b"abc"
    assert list(hr.TFRecordDataset(path, compression_type="GZIP")) == [b"abc"]
    with hr.io.TFRecordWriter(str(tmp_path / "y.tfrecord"), options="ZLIB") as writer:  # a string, as tf
        writer.write(b"z")
    assert list(hr.TFRecordDataset(str(tmp_path / "y.tfrecord"), compression_type="ZLIB")) == [b"z"]
    with pytest.raises(hr.InvalidArgumentError, match="not both"):
        hr.io.TFRecordWriter(str(tmp_path / "z"), "GZIP", options="GZIP")


def test_image_pad_takes_tf_pad_paddings():
    # tf.pad(image, [[top, bottom], [left, right], [0, 0]]) pads an image; a batch has one more row
    image = np.arange(6, dtype=np.uint8).reshape(2, 3, 1)
    assert np.array_equal(
        hr.image.pad(image, [[1, 0], [0, 2], [0, 0]]), np.pad(image, [[1, 0], [0, 2], [0, 0]])
    )
    batch = image[None]
    assert hr.image.pad(batch, [[0, 0], [1, 1], [1, 1], [0, 0]]).shape == (1, 4, 5, 1)
    with pytest.raises(hr.InvalidArgumentError, match="other than height and width"):
        hr.image.pad(image, [[0, 0], [0, 0], [1, 0]])


@pytest.mark.parametrize("count", [-1, -2, -5])
def test_negative_take_skip_repeat_counts_mean_minus_one(count):
    # tf.data: take(-5) takes all, skip(-5) skips all, repeat(-3) repeats forever
    assert [int(x) for x in D.range(3).take(count)] == [0, 1, 2]
    assert list(D.range(3).skip(count)) == []
    assert [int(x) for x in D.range(2).repeat(count).take(5)] == [0, 1, 0, 1, 0]
    assert D.range(2).repeat(count).cardinality() == hr.INFINITE_CARDINALITY


def test_from_tensor_slices_of_a_numpy_bytes_array_yields_bytes():
    # tf.data gives tf.string scalars; as_numpy_iterator() yields Python bytes
    ds = D.from_tensor_slices(np.array([b"ab", b"c"]))
    values = list(ds)
    assert values == [b"ab", b"c"] and all(type(v) is bytes for v in values)
    assert ds.element_spec == hr.TensorSpec((), hr.string)
    batch = next(iter(D.from_tensors(np.array([b"x", b"yz"]))))
    assert batch.dtype == object and batch.tolist() == [b"x", b"yz"]


def test_cardinality_infinite_where_tf_says_infinite():
    # TF 2.21: filter(...).repeat() -> INFINITE; a parallel interleave over an infinite input -> INFINITE;
    # the sequential interleave and flat_map stay UNKNOWN
    assert D.range(3).filter(lambda x: x > 0).repeat().cardinality() == hr.INFINITE_CARDINALITY
    assert D.range(3).filter(lambda x: x > 0).repeat(2).cardinality() == hr.UNKNOWN_CARDINALITY
    endless = D.range(3).repeat()
    inner = lambda x: D.range(2)  # noqa: E731
    assert (
        endless.interleave(inner, cycle_length=2, num_parallel_calls=2).cardinality()
        == hr.INFINITE_CARDINALITY
    )
    assert endless.interleave(inner, cycle_length=2).cardinality() == hr.UNKNOWN_CARDINALITY
    assert endless.flat_map(inner).cardinality() == hr.UNKNOWN_CARDINALITY
    assert (
        D.range(3).interleave(inner, cycle_length=2, num_parallel_calls=2).cardinality()
        == hr.UNKNOWN_CARDINALITY
    )
