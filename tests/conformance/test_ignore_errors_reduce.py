"""tensorflow/python/data/kernel_tests/ignore_errors_test.py, reduce_test.py and
get_single_element_test.py, translated."""

import logging
import os

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError

from .support import plain, produces, verify_checkpoints

D = hr.Dataset
NAN_INPUT = np.array([1.0, 2.0, 3.0, np.nan, 5.0], dtype=np.float32)


def check_numerics(x):
    if np.isnan(x):
        raise ValueError("message: Tensor had NaN values")
    return x


def test_map_ignore_error():
    produces(D.from_tensor_slices(NAN_INPUT).map(check_numerics).ignore_errors(), [1.0, 2.0, 3.0, 5.0])


def test_ignore_error_with_log_warning(caplog):
    ds = D.from_tensor_slices(NAN_INPUT).map(check_numerics).ignore_errors(log_warning=True)
    with caplog.at_level(logging.WARNING):
        out = plain(ds)
    assert out == [1.0, 2.0, 3.0, 5.0]
    assert "Tensor had NaN values" in caplog.text


def test_parallel_map_ignore_error():
    ds = D.from_tensor_slices(NAN_INPUT).map(check_numerics, num_parallel_calls=2).prefetch(2).ignore_errors()
    produces(ds, [1.0, 2.0, 3.0, 5.0])


def test_read_file_ignore_error(tmp_path):
    names = [str(tmp_path / f"file_{i}.txt") for i in range(5)]
    for name in names:
        with open(name, "w") as f:
            f.write(name)
    ds = D.from_tensor_slices(names).map(hr.io.read_file, num_parallel_calls=2).prefetch(2).ignore_errors()
    produces(ds, [n.encode() for n in names])
    os.remove(names[0])
    produces(ds, [n.encode() for n in names[1:]])


def test_tfrecord_dataset_ignore_error(tmp_path):
    names = []
    for i in range(5):
        name = str(tmp_path / f"tf_record.{i}.txt")
        with hr.io.TFRecordWriter(name) as writer:
            for _ in range(10):
                writer.write(b"record")
        with open(name, "a") as f:
            f.write("corrupted data")
        names.append(name)
    produces(hr.TFRecordDataset(names).ignore_errors(), [b"record"] * 50)


def test_zip_ignore_error():
    a = D.from_tensor_slices(np.array([1.0, 2.0, 0.0, 4.0], np.float32))

    def reciprocal(x):
        if x == 0:
            raise ZeroDivisionError("error")
        return 1.0 / x

    ds = D.zip((a.map(reciprocal), a)).ignore_errors()
    assert plain(ds) == [(1.0 / x, x) for x in (1.0, 2.0, 4.0)]


def test_ignore_errors_cardinality():
    assert D.range(10).ignore_errors().cardinality() == hr.UNKNOWN_CARDINALITY


def test_ignore_errors_checkpoint():
    verify_checkpoints(lambda: D.from_tensor_slices(NAN_INPUT).map(check_numerics).ignore_errors(), 4)


@pytest.mark.parametrize("i", range(10))
def test_reduce_sum(i):
    assert int(D.range(1, i + 1).reduce(np.int64(0), lambda x, y: x + y)) == (i + 1) * i // 2


@pytest.mark.parametrize("i", range(10))
def test_reduce_sum_tuple(i):
    ds = D.range(1, i + 1)
    assert (
        int(D.zip((ds, ds)).reduce(np.int64(0), lambda state, value: state + value[0] + value[1]))
        == (i + 1) * i
    )


@pytest.mark.parametrize("i", range(10))
def test_reduce_sum_and_count(i):
    s, c = D.range(1, i + 1).reduce(
        (np.int64(0), np.int64(0)), lambda state, value: (state[0] + value, state[1] + 1)
    )
    assert (int(s), int(c)) == ((i + 1) * i // 2, i)


@pytest.mark.parametrize("i", range(10))
def test_reduce_square_using_captured_value(i):
    delta = np.int64(i)
    assert int(D.range(1, i + 1).reduce(np.int64(0), lambda state, _: state + delta)) == i * i


@pytest.mark.parametrize("i", range(10))
def test_reduce_nested(i):
    def reduce_fn(state, value):
        return {"dense": state["dense"] + value["dense"], "last": value["last"]}

    def map_fn(x):
        return {"dense": np.int64(x), "last": np.array([x])}

    result = D.range(1, i + 1).map(map_fn).reduce(map_fn(0), reduce_fn)
    assert int(result["dense"]) == (i + 1) * i // 2
    assert result["last"].tolist() == [i]


@pytest.mark.parametrize(
    ("skip", "take", "error"),
    [(0, 1, None), (5, 1, None), (10, 1, None), (100, 1, "empty"), (0, 2, "more than one")],
)
def test_get_single_element_basic(skip, take, error):
    ds = D.range(100).skip(skip).map(lambda x: (x * x, np.array([x]))).take(take)
    if error is None:
        dense, vector = ds.get_single_element()
        assert int(dense) == skip * skip and vector.tolist() == [skip]
    else:
        with pytest.raises(InvalidArgumentError, match=error):
            ds.get_single_element()


def test_get_single_element_window():
    ds = D.range(10).window(2).flat_map(lambda w: D.from_tensors(w.batch(2).get_single_element()))
    assert plain(ds) == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]


def test_get_single_element_side_effect():
    counter = [0]

    def increment(x):
        counter[0] += 1
        return x

    D.range(1).map(increment).get_single_element()
    assert counter == [1]


def test_get_single_element_name():
    assert int(D.from_tensors(42).get_single_element(name="get_single_element")) == 42
