"""tensorflow/python/data/kernel_tests/group_by_window_test.py, translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import HeadraceError

from .support import plain, produces

D = hr.Dataset


def _fill3(v):
    return v, np.full([v], v), np.array([str(int(v)).encode()] * 3, dtype=object)


def _dynamic_pad(key, window):
    return D.zip(
        (
            D.from_tensors(key),
            window.padded_batch(32, (hr.TensorShape([]), hr.TensorShape([None]), hr.TensorShape([3]))),
        )
    )


def test_single_bucket():
    ds = D.from_tensor_slices(np.arange(32)).map(_fill3)
    ds = ds.group_by_window(key_func=lambda x, y, z: 0, reduce_func=_dynamic_pad, window_size=32)
    which, values = next(iter(ds))
    assert int(which) == 0
    expected_unk = np.zeros((32, 31), np.int64)
    for i in range(32):
        expected_unk[i, :i] = i
    assert values[0].tolist() == list(range(32))
    assert values[1].tolist() == expected_unk.tolist()
    assert values[2].tolist() == [[str(i).encode()] * 3 for i in range(32)]


def test_even_odd_buckets():
    ds = D.from_tensor_slices(np.arange(64)).map(_fill3)
    ds = ds.group_by_window(
        key_func=lambda x, y, z: np.int64(x % 2), reduce_func=_dynamic_pad, window_size=32
    )
    it = iter(ds)
    for parity in (0, 1):
        which, values = next(it)
        assert int(which) == parity and len(values) == 3
        numbers = list(range(parity, 64, 2))
        assert values[0].tolist() == numbers
        expected = np.zeros((32, 62 + parity), np.int64)
        for row, n in enumerate(numbers):
            expected[row, :n] = n
        assert values[1].tolist() == expected.tolist()
        assert values[2].tolist() == [[str(n).encode()] * 3 for n in numbers]


def test_even_odd_buckets_filter_out_all_odd():
    def as_dict(v):
        x, y, z = _fill3(v)
        return {"x": x, "y": y, "z": z}

    def pad(key, window):
        shapes = {"x": hr.TensorShape([]), "y": hr.TensorShape([None]), "z": hr.TensorShape([3])}
        return D.zip((D.from_tensors(key), window.padded_batch(32, shapes)))

    ds = D.from_tensor_slices(np.arange(128)).map(as_dict).filter(lambda d: d["x"] % 2 == 0)
    ds = ds.group_by_window(key_func=lambda d: np.int64(d["x"] % 2), reduce_func=pad, window_size=32)
    (k0, v0), (k1, v1) = list(ds)
    assert int(k0) == int(k1) == 0
    assert v0["x"].tolist() == list(range(0, 64, 2)) and v1["x"].tolist() == list(range(64, 128, 2))


def test_dynamic_window_size():
    ds = D.from_tensor_slices(np.arange(100, dtype=np.int64)).group_by_window(
        key_func=lambda x: x % 2,
        reduce_func=lambda _, xs: xs.batch(20),
        window_size=None,
        window_size_func=lambda key: np.array([5, 10], dtype=np.int64)[key],
    )
    batches = list(ds)
    for b in batches:
        even = all(x % 2 == 0 for x in b)
        assert even or all(x % 2 == 1 for x in b)
        assert b.shape[0] == (5 if even else 10)
    assert len(batches) == 15


def test_simple():
    components = np.random.default_rng(0).integers(100, size=200).astype(np.int64)
    ds = D.from_tensor_slices(components).map(lambda x: x * x)
    ds = ds.group_by_window(key_func=lambda x: x % 2, reduce_func=lambda _, xs: xs.batch(4), window_size=4)
    counts = []
    for result in ds:
        assert all(x % 2 == 0 for x in result) or all(x % 2 == 1 for x in result)
        counts.append(result.shape[0])
    assert sum(counts) == len(components)
    full = len([c for c in counts if c == 4])
    assert full >= 24
    assert all(c == 4 for c in counts[:full])


def test_immediate_output():
    components = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 0, 0, 2, 2, 0, 0], dtype=np.int64)
    ds = D.from_tensor_slices(components).repeat(-1)
    ds = ds.group_by_window(key_func=lambda x: x % 3, reduce_func=lambda _, xs: xs.batch(4), window_size=4)
    it = iter(ds)
    for _ in range(3):
        for value in (0, 1, 2, 0):
            assert next(it).tolist() == [value] * 4


def test_small_groups():
    components = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0], dtype=np.int64)
    ds = D.from_tensor_slices(components).group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda _, xs: xs.batch(4), window_size=4
    )
    assert plain(ds) == [[0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0], [1]]


def test_empty():
    with pytest.raises(HeadraceError, match="window_size"):
        list(D.range(4).group_by_window(key_func=lambda _: 0, reduce_func=lambda _, xs: xs, window_size=0))


def test_reduce_func_error():
    components = np.random.default_rng(1).integers(100, size=200).astype(np.int64)

    def reduce_func(_, xs):
        return xs.padded_batch(4, padded_shapes=(hr.TensorShape([]), np.array([5], dtype=np.int64) * -1))

    ds = D.from_tensor_slices(components).map(lambda x: (x, np.array([x * x])))
    ds = ds.group_by_window(key_func=lambda x, _: x % 2, reduce_func=reduce_func, window_size=32)
    with pytest.raises(HeadraceError):
        next(iter(ds))


def test_consume_window_dataset_more_than_once():
    components = np.random.default_rng(2).integers(50, size=200).astype(np.int64)

    def reduce_func(key, window):
        return D.zip(
            (
                window.padded_batch(4, padded_shapes=hr.TensorShape([None])),
                window.padded_batch(4, padded_shapes=np.array([(key + 1) * 10])),
            )
        )

    ds = D.from_tensor_slices(components).map(lambda x: np.full([x], x))
    ds = ds.group_by_window(
        key_func=lambda x: np.int64(x.shape[0] // 10), reduce_func=reduce_func, window_size=4
    )
    counts = []
    for tight, quantized in ds:
        assert quantized.shape[1] % 10 == 0
        assert tight.tolist() == quantized[:, : tight.shape[1]].tolist()
        counts.append(tight.shape[0])
    assert sum(counts) == len(components)


def test_short_circuit():
    ds = D.range(10).group_by_window(
        key_func=lambda x: x, reduce_func=lambda _, window: window.batch(1), window_size=1
    )
    produces(ds, [np.array([i]) for i in range(10)])
