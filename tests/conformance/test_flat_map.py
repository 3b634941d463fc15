"""tensorflow/python/data/kernel_tests/flat_map_test.py, translated."""

import numpy as np

import headrace as hr

from .support import plain, produces, verify_checkpoints

D = hr.Dataset


def test_flat_map_dataset():
    repeats = [1, 2, 3, 4, 5, 0, 1]
    ds = D.from_tensor_slices(np.array(repeats, dtype=np.int64)).flat_map(
        lambda x: D.from_tensors([x]).repeat(x)
    )
    produces(ds, [np.array([i]) for i in repeats for _ in range(i)])


def test_nested_flat_map_dataset():
    repeats = [[1, 2], [3, 4], [5, 0], [1, 7]]
    ds = D.from_tensor_slices(np.array(repeats, dtype=np.int64)).flat_map(
        lambda x: D.from_tensor_slices(x).flat_map(lambda y: D.from_tensors(y).repeat(y))
    )
    assert plain(ds) == [i for row in repeats for i in row for _ in range(i)]


def test_map_dict():
    ds = (
        D.range(10)
        .map(lambda x: {"foo": x * 2, "bar": x**2})
        .flat_map(lambda d: D.from_tensors(d["foo"]).repeat(d["bar"]))
    )
    assert plain(ds) == [i * 2 for i in range(10) for _ in range(i**2)]


def test_sparse():
    # The SparseTensor of tf's test, densified: what the flat_map function works on.
    ds = D.range(10).map(lambda i: np.array([[i, 0], [0, -i]])).flat_map(D.from_tensor_slices)
    assert plain(ds) == [row for i in range(10) for row in ([i, 0], [0, -i])]


def test_tensor_array():
    # tf's TensorArray element is a list of tensors; a numpy array stands in for it.
    ds = D.range(10).map(lambda i: np.arange(i, dtype=np.int32)).flat_map(D.from_tensor_slices)
    assert plain(ds) == [j for i in range(10) for j in range(i)]


def test_ragged():
    ds = D.range(10).map(lambda i: i * np.array([[1], [-1]])).flat_map(D.from_tensor_slices)
    assert plain(ds) == [row for i in range(10) for row in ([i], [-i])]


def test_checkpoint_core():
    verify_checkpoints(lambda: D.range(0, 25, 5).flat_map(lambda x: D.range(x, x + 5)), 25)


def test_checkpoint_map_then_flat_map():
    def make():
        return D.range(5).flat_map(lambda _: D.range(100).map(lambda y: 10 * np.int32(y)))

    verify_checkpoints(make, 500, max_elements=120)


def test_checkpoint_capture_function_in_map_fn():
    def make():
        def plus_thousand(x):
            return 1000 + np.int32(x)

        return D.range(100).flat_map(lambda x: D.from_tensor_slices([plus_thousand(x)]))

    verify_checkpoints(make, 100, max_elements=40)


def test_checkpoint_sparse_core():
    verify_checkpoints(
        lambda: D.range(10).map(lambda i: np.array([[i, 0], [0, -i]])).flat_map(D.from_tensor_slices), 20
    )
