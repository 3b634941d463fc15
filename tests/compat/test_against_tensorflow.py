"""The same pipelines through tf.data and headrace, compared value by value (skipped without TF)."""

import numpy as np
import pytest

import headrace as hr

tf = pytest.importorskip("tensorflow", exc_type=ImportError)


def tf_values(ds) -> list:
    return [np.asarray(x).tolist() for x in ds.as_numpy_iterator()]


def hr_values(ds) -> list:
    return [np.asarray(x).tolist() for x in ds]


@pytest.mark.parametrize(
    "build",
    [
        lambda d: d.Dataset.range(11).window(3, 2, 2).flat_map(lambda w: w.batch(3)),
        lambda d: d.Dataset.range(7).window(4, 3, 1, True).flat_map(lambda w: w.batch(4)),
        lambda d: d.Dataset.from_tensor_slices([3, 1, 3, 2, 1, 5]).unique(),
        lambda d: d.Dataset.counter(4, 3).take(5),
        lambda d: d.Dataset.range(1, 4).interleave(
            lambda x: d.Dataset.from_tensors(x).repeat(x), cycle_length=2
        ),
        lambda d: d.Dataset.range(10).batch(3).rebatch(2),
        # default cycle_length: tf's rule depends on num_parallel_calls (and the CPUs)
        lambda d: d.Dataset.range(6).interleave(lambda x: d.Dataset.range(x * 10, x * 10 + 3)),
        lambda d: d.Dataset.range(6).interleave(
            lambda x: d.Dataset.range(x * 10, x * 10 + 3), num_parallel_calls=-1
        ),
        lambda d: d.Dataset.range(6).interleave(
            lambda x: d.Dataset.range(x * 10, x * 10 + 3), num_parallel_calls=1
        ),
    ],
)
def test_same_values(build):
    assert hr_values(build(hr.data)) == tf_values(build(tf.data))


def test_text_and_csv_readers(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b'a,b\r\n1,"x,y"\n3,\n7,"q""r"\n')
    assert hr_values(hr.data.TextLineDataset(str(path))) == tf_values(tf.data.TextLineDataset(str(path)))
    defaults = [[0], [""]]
    ours = [
        tuple(np.asarray(v).tolist() for v in row)
        for row in hr.data.experimental.CsvDataset(str(path), defaults, header=True)
    ]
    theirs = [
        tuple(np.asarray(v).tolist() for v in row)
        for row in tf.data.experimental.CsvDataset(str(path), defaults, header=True).as_numpy_iterator()
    ]
    assert ours == theirs
    single = tmp_path / "s.csv"
    single.write_bytes(b"1\n\n2\n")  # a blank line is one empty field: the default
    ours = [int(x) for (x,) in hr.data.experimental.CsvDataset(str(single), [[-1]])]
    assert ours == [
        int(x) for (x,) in tf.data.experimental.CsvDataset(str(single), [[-1]]).as_numpy_iterator()
    ]


def test_serialize_tensor_bytes():
    for value in (
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array([b"a", b"bc"], dtype=object),
        np.array(3),
    ):
        assert hr.io.serialize_tensor(value) == tf.io.serialize_tensor(value).numpy()


def test_tfrecord_num_parallel_reads_autotune_order(tmp_path):
    paths = []
    for k in range(5):
        paths.append(str(tmp_path / f"f{k}.tfrecord"))
        with hr.io.TFRecordWriter(paths[-1]) as writer:
            for i in range(3):
                writer.write(b"%d-%d" % (k, i))
    theirs = list(tf.data.TFRecordDataset(paths, num_parallel_reads=tf.data.AUTOTUNE).as_numpy_iterator())
    assert list(hr.data.TFRecordDataset(paths, num_parallel_reads=hr.data.AUTOTUNE)) == theirs


def test_text_lines_drop_every_carriage_return(tmp_path):
    path = tmp_path / "r.txt"
    path.write_bytes(b"a\rb\r\nc\n\nd")
    assert hr_values(hr.data.TextLineDataset(str(path))) == tf_values(tf.data.TextLineDataset(str(path)))


def test_cardinalities_of_infinite_inputs():
    def pipelines(d, fill, length):
        inf = d.Dataset.range(1, 4).repeat()
        return [
            inf.filter(lambda x: x > 0),
            inf.window(2),
            inf.unique(),
            inf.batch(2).rebatch(3),
            inf.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), 2),
            inf.map(fill).bucket_by_sequence_length(length, [2], [2, 2]),
            d.Dataset.random(seed=1),
            d.Dataset.counter(),
        ]

    ours = [ds.cardinality() for ds in pipelines(hr.data, lambda n: np.full(n, n), len)]
    theirs = [
        int(ds.cardinality())
        for ds in pipelines(tf.data, lambda n: tf.fill([n], n), lambda x: tf.shape(x)[0])
    ]
    assert ours == theirs


def test_random_range_sparse_batch_and_io_functions():
    assert max(int(x) for x in hr.data.Dataset.random(seed=3).take(2000)) < 2**32
    ours = next(iter(hr.data.Dataset.range(1, 3).map(lambda n: np.full(n, 7)).sparse_batch(2, [3])))
    theirs = next(iter(tf.data.Dataset.range(1, 3).map(lambda n: tf.fill([n], 7)).sparse_batch(2, [3])))
    assert ours.indices.tolist() == theirs.indices.numpy().tolist()
    assert (
        ours.values.tolist() == theirs.values.numpy().tolist()
        and list(ours.shape) == theirs.dense_shape.numpy().tolist()
    )
    records = np.array([b"1,x,2.5", b"3,,"], dtype=object)
    defaults = [[0], ["d"], [1.0]]
    for a, b in zip(hr.io.decode_csv(records, defaults), tf.io.decode_csv(records, defaults)):
        assert a.tolist() == b.numpy().tolist() and a.dtype == b.numpy().dtype
    raw = np.array([b"\x01\x02\x03\x04"], dtype=object)
    assert hr.io.decode_raw(raw, "int16").tolist() == tf.io.decode_raw(raw, tf.int16).numpy().tolist()
    tf_bytes = tf.io.serialize_tensor(tf.constant([[b"a"], [b"bc"]])).numpy()
    assert hr.io.parse_tensor(tf_bytes, "string").tolist() == [[b"a"], [b"bc"]]


def test_sparse_feature_matches_tf():
    records = [
        hr.io.serialize_example({"ix": [3, 0], "val": [0.5, 2.0]}),
        hr.io.serialize_example({}),
        hr.io.serialize_example({"ix": [1], "val": [7.0]}),
    ]
    ours = hr.io.parse_example(records, {"s": hr.io.SparseFeature("ix", "val", "float32", 5)})["s"]
    theirs = tf.io.parse_example(records, {"s": tf.io.SparseFeature("ix", "val", tf.float32, 5)})["s"]
    assert ours.indices.tolist() == theirs.indices.numpy().tolist()
    assert ours.values.tolist() == theirs.values.numpy().tolist()
    assert list(ours.shape) == theirs.dense_shape.numpy().tolist()
