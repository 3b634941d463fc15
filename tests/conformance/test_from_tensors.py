"""tensorflow/python/data/kernel_tests/from_tensor_slices_test.py and from_tensors_test.py, translated."""

import collections

import numpy as np
import pytest

import headrace as hr

from .support import plain, produces

D = hr.Dataset
COMPONENTS = (
    np.tile(np.array([[1], [2], [3], [4]]), 20),
    np.tile(np.array([[12], [13], [14], [15]]), 22),
    np.array([37.0, 38.0, 39.0, 40.0]),
)


def test_from_tensor_slices_empty_component():
    with pytest.raises(ValueError):
        D.from_tensor_slices(())


def test_from_tensor_slices():
    ds = D.from_tensor_slices(COMPONENTS)
    assert [tuple(s.shape) for s in ds.element_spec] == [c.shape[1:] for c in COMPONENTS]
    produces(ds, [tuple(c[i] for c in COMPONENTS) for i in range(4)])


def test_from_tensor_slices_dataset():
    ds = D.from_tensor_slices([D.range(10) for _ in range(10)]).flat_map(lambda x: x)
    assert plain(ds) == list(range(10)) * 10


def test_from_tensor_slices_dataset_of_ordered_dict():
    dss = [D.range(10).map(lambda x: collections.OrderedDict([("x", x)])) for _ in range(10)]
    out = list(D.from_tensor_slices(dss).flat_map(lambda x: x))
    assert [int(e["x"]) for e in out] == list(range(10)) * 10
    assert all(isinstance(e, dict) for e in out)


def test_from_tensor_slices_dataset_in_function():
    ds = D.from_tensors([D.range(10) for _ in range(10)]).flat_map(D.from_tensor_slices).flat_map(lambda x: x)
    assert plain(ds) == list(range(10)) * 10


def test_from_tensor_slices_with_dict():
    components = {"foo": [1, 2, 3], "bar": [[4.0], [5.0], [6.0]]}
    ds = D.from_tensor_slices(components)
    # tf: int32 / float32 for Python lists; headrace: int64 for Python ints (docs/porting.md).
    assert ds.element_spec["foo"].dtype == np.int64
    assert ds.element_spec["bar"].dtype == np.float32
    assert tuple(ds.element_spec["foo"].shape) == () and tuple(ds.element_spec["bar"].shape) == (1,)
    produces(
        ds,
        [{"foo": components["foo"][i], "bar": np.array(components["bar"][i], np.float32)} for i in range(3)],
    )


def test_from_tensor_slices_ragged():
    a = hr.io.Ragged.from_row_lengths(np.array([[0], [1], [2]]), np.array([1, 1, 1]))
    b = hr.io.Ragged.from_row_lengths(np.array([[3], [4], [5]]), np.array([1, 1, 1]))
    out = list(D.from_tensor_slices((a, b)))
    assert [tuple(np.asarray(x).tolist() for x in e) for e in out] == [
        ([[0]], [[3]]),
        ([[1]], [[4]]),
        ([[2]], [[5]]),
    ]


def test_from_tensor_slices_with_uint_dtypes():
    components = (
        np.tile(np.array([[0], [1]], dtype=np.uint8), 2),
        np.tile(np.array([[2], [256]], dtype=np.uint16), 2),
        np.tile(np.array([[4], [65536]], dtype=np.uint32), 2),
        np.tile(np.array([[8], [4294967296]], dtype=np.uint64), 2),
    )
    ds = D.from_tensor_slices(components)
    assert [s.dtype for s in ds.element_spec] == [np.uint8, np.uint16, np.uint32, np.uint64]
    produces(ds, [tuple(c[i] for c in components) for i in range(2)])


def test_random_access():
    tensor = [[1, 2], [3, 4]]
    ds = D.from_tensor_slices(tensor)
    assert [plain(ds.skip(i).take(1))[0] for i in range(2)] == tensor
    assert plain(ds.skip(2)) == []
    assert ds.node.random_access_length() == 2


def test_from_tensors():
    components = (np.array(1), np.array([1, 2, 3]), np.array(37.0))
    ds = D.from_tensors(components)
    assert [tuple(s.shape) for s in ds.element_spec] == [c.shape for c in components]
    produces(ds, [components])


def specs(ds):
    """(dtype, shape) leaves of the element spec, nested as the elements are."""

    def walk(spec):
        if isinstance(spec, tuple):
            return tuple(walk(s) for s in spec)
        if isinstance(spec, dict):
            return {k: walk(v) for k, v in spec.items()}
        return (np.dtype(spec.dtype), list(spec.shape))

    return walk(ds.element_spec)


def test_nested_structure():
    i64, f64 = np.dtype(np.int64), np.dtype(np.float64)
    components = (
        np.array([1, 2, 3], dtype=np.int64),
        (np.array([4.0, 5.0]), np.array([6.0, 7.0])),
        np.array([8, 9, 10], dtype=np.int64),
    )
    nested = ((i64, [3]), ((f64, [2]), (f64, [2])), (i64, [3]))
    ds = D.from_tensors(components)
    assert specs(ds) == nested
    for step in (
        lambda d: d.shuffle(10, 10),
        lambda d: d.repeat(-1),
        lambda d: d.filter(lambda x, y, z: True),
        lambda d: d.take(5),
    ):
        ds = step(ds)
        assert specs(ds) == nested
    ds = ds.map(lambda x, y, z: ((x, z), (y[0], y[1])))
    assert specs(ds) == (((i64, [3]), (i64, [3])), ((f64, [2]), (f64, [2])))
    ds = ds.flat_map(lambda x, y: D.from_tensors(((x[0], x[1]), (y[0], y[1]))))
    assert specs(ds) == (((i64, [3]), (i64, [3])), ((f64, [2]), (f64, [2])))
    ds = ds.batch(32)
    assert specs(ds) == (((i64, [None, 3]), (i64, [None, 3])), ((f64, [None, 2]), (f64, [None, 2])))
    slices = (
        np.array([1, 2, 3], dtype=np.int64),
        (np.array([4.0, 5.0, 6.0]), np.array([7.0, 8.0, 9.0])),
        np.array([10, 11, 12], dtype=np.int64),
    )
    assert specs(D.from_tensor_slices(slices)) == ((i64, []), ((f64, []), (f64, [])), (i64, []))


def test_nested_structure_values():
    components = (
        np.array([1, 2, 3], dtype=np.int64),
        (np.array([4.0, 5.0]), np.array([6.0, 7.0])),
        np.array([8, 9, 10], dtype=np.int64),
    )
    ds = D.from_tensors(components).map(lambda x, y, z: ((x, z), (y[0], y[1])))
    ds = ds.flat_map(lambda x, y: D.from_tensors(((x[0], x[1]), (y[0], y[1])))).batch(32)
    for _ in range(2):
        (w, x), (y, z) = next(iter(ds))
        assert (w.dtype, x.dtype, y.dtype, z.dtype) == (np.int64, np.int64, np.float64, np.float64)
        assert (w.shape, x.shape, y.shape, z.shape) == ((1, 3), (1, 3), (1, 2), (1, 2))


def test_nested_dict():
    ds = D.from_tensors({"a": {"aa": 1, "ab": [2.0, 2.0]}, "b": [3, 3, 3]})
    # tf: int32 for Python ints; headrace: int64 (docs/porting.md).
    assert specs(ds) == {
        "a": {"aa": (np.dtype(np.int64), []), "ab": (np.dtype(np.float32), [2])},
        "b": (np.dtype(np.int64), [3]),
    }


def test_non_sequence_nested_structure():
    components = np.array([1, 2, 3], dtype=np.int64)
    ds = D.from_tensors(components)
    assert specs(ds) == (np.dtype(np.int64), [3])
    ds = ds.filter(lambda x: bool(np.all(x == components)))
    assert specs(ds) == (np.dtype(np.int64), [3])
    ds = ds.map(lambda x: np.stack([x, x]))
    assert specs(ds) == (np.dtype(np.int64), [2, 3])
    ds = ds.flat_map(D.from_tensor_slices)
    assert specs(ds) == (np.dtype(np.int64), [3])
    first = next(iter(ds))
    assert first.dtype == np.int64 and first.shape == (3,)


def test_from_tensor_slices_of_unicode_array_yields_bytes():
    # Not from tf's tests: a numpy unicode array is a tf.string tensor in tf, so its slices are bytes.
    assert list(D.from_tensor_slices(np.array(["a.jpg", "b.jpg"]))) == [b"a.jpg", b"b.jpg"]


def test_random_access_multiple_components_dict_and_numpy():
    at = hr.data.experimental.at
    assert plain([at(D.from_tensor_slices(([1, 2], [3, 4], [5, 6])), 0)]) == [(1, 3, 5)]
    assert plain([at(D.from_tensor_slices({"a": [1, 2], "b": [3, 4]}), 1)]) == [{"a": 2, "b": 4}]
    components = (
        np.tile(np.array([[0], [1]], dtype=np.uint8), 2),
        np.tile(np.array([[8], [4294967296]], dtype=np.uint64), 2),
    )
    produces(D.from_tensor_slices(components).take(1), [tuple(c[0] for c in components)])
    assert plain([at(D.from_tensor_slices(components), 1)]) == [tuple(c[1].tolist() for c in components)]


def test_from_tensor_slices_name():
    produces(D.from_tensor_slices([42], name="from_tensor_slices"), [42])


def test_from_tensor_slices_checkpoint():
    from .support import verify_checkpoints

    verify_checkpoints(lambda: D.from_tensor_slices(COMPONENTS), 4)
    verify_checkpoints(lambda: D.from_tensor_slices({"foo": [1, 2, 3], "bar": [[4.0], [5.0], [6.0]]}), 3)


@pytest.mark.parametrize("dataset_range", [10, 100])
@pytest.mark.parametrize("repetitions", [1, 3])
@pytest.mark.parametrize("seed", [None, 19])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_global_shuffle_tensor_slices_dataset(dataset_range, repetitions, seed, reshuffle):
    ds = D.from_tensor_slices(list(range(dataset_range)))
    if repetitions > 1:
        ds = ds.repeat(repetitions)
    ds = ds.global_shuffle(seed=seed, reshuffle_each_iteration=reshuffle)
    out = plain(ds)
    expected = list(range(dataset_range)) * repetitions
    assert sorted(out) == sorted(expected) and out != expected
    assert ds.cardinality() == len(expected)


@pytest.mark.parametrize("repetitions", [1, 3])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_global_shuffle_tensor_slices_checkpoint(repetitions, reshuffle):
    from .support import verify_checkpoints

    def make():
        ds = D.from_tensor_slices(list(range(10)))
        if repetitions > 1:
            ds = ds.repeat(repetitions)
        return ds.global_shuffle(seed=42, reshuffle_each_iteration=reshuffle)

    verify_checkpoints(make, 10 * repetitions)
