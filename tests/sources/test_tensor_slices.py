from collections import namedtuple

import numpy as np
import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints
from tests.helpers.elements import to_python

D = hr.Dataset


def test_slices_of_an_array_are_its_rows():
    array = np.arange(6, dtype=np.int16).reshape(3, 2)
    out = list(D.from_tensor_slices(array))
    assert [x.tolist() for x in out] == [[0, 1], [2, 3], [4, 5]] and out[0].dtype == np.int16
    assert D.from_tensor_slices(array).element_spec == hr.TensorSpec((2,), "int16")
    assert D.from_tensor_slices(array).cardinality() == 3
    scalars = list(D.from_tensor_slices(np.array([1.5, 2.5])))
    assert all(type(x) is np.float64 for x in scalars)


def test_python_values_convert_as_documented():
    # Python floats become float32 (as TensorFlow), ints int64, str and bytes bytes.
    assert [type(x) for x in D.from_tensor_slices([1.5, 2.5])] == [np.float32, np.float32]
    assert [type(x) for x in D.from_tensor_slices([1, 2])] == [np.int64, np.int64]
    assert list(D.from_tensor_slices(["a", "bc"])) == [b"a", b"bc"]
    assert list(D.from_tensor_slices([b"a", b"bc"])) == [b"a", b"bc"]
    assert D.from_tensor_slices(["a"]).element_spec == hr.TensorSpec((), "string")
    assert [bool(x) for x in D.from_tensor_slices([True, False])] == [True, False]
    empty = D.from_tensor_slices([])
    assert (
        list(empty) == [] and empty.element_spec == hr.TensorSpec((), "float32") and empty.cardinality() == 0
    )


def test_tuples_dicts_and_namedtuples_slice_leaf_wise():
    ds = D.from_tensor_slices({"a": [1, 2], "b": (["x", "y"], np.array([[1.0], [2.0]], np.float32))})
    assert [to_python(e) for e in ds] == [
        {"a": ("scalar", "int64", 1), "b": (b"x", ("array", "float32", (1,), [1.0]))},
        {"a": ("scalar", "int64", 2), "b": (b"y", ("array", "float32", (1,), [2.0]))},
    ]
    assert ds.element_spec == {
        "a": hr.TensorSpec((), "int64"),
        "b": (hr.TensorSpec((), "string"), hr.TensorSpec((1,), "float32")),
    }
    assert [to_python(e) for e in D.from_tensor_slices(([1, 2],))] == [
        (("scalar", "int64", 1),),
        (("scalar", "int64", 2),),
    ]
    Pair = namedtuple("Pair", "image label")
    pairs = list(D.from_tensor_slices(Pair(np.zeros((2, 3)), [0, 1])))
    assert isinstance(pairs[1], Pair) and pairs[1].label == 1 and pairs[1].image.shape == (3,)


def test_dicts_keep_their_key_order_and_str_objects_become_bytes():
    # As tf.data: an element's dict has the input's key order; an object array of str is tf.string.
    ds = D.from_tensor_slices({"thal": np.array(["fixed", "normal"], dtype=object), "age": [63, 41]})
    first = next(iter(ds))
    assert list(first) == ["thal", "age"] and first["thal"] == b"fixed"
    assert [list(b) for b in ds.batch(2)] == [["thal", "age"]]
    assert next(iter(ds.batch(2)))["thal"].tolist() == [b"fixed", b"normal"]
    assert list(ds.element_spec) == ["thal", "age"] and ds.element_spec["thal"] == hr.TensorSpec((), "string")
    whole = D.from_tensors(np.array([["a"], [b"b"]], dtype=object))
    assert next(iter(whole)).tolist() == [[b"a"], [b"b"]]


def test_pandas_columns_keep_their_dtypes():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"age": [63, 41], "oldpeak": [2.3, 0.0], "thal": ["fixed", "normal"]})
    row = next(iter(D.from_tensor_slices(dict(frame))))
    assert list(row) == ["age", "oldpeak", "thal"] and row["thal"] == b"fixed"
    assert row["oldpeak"].dtype == np.float64 and row["age"].dtype == np.int64
    assert next(iter(D.from_tensor_slices(frame[["age", "oldpeak"]]))).dtype == np.float64


def test_slices_invalid_inputs():
    with pytest.raises(hr.InvalidArgumentError, match="scalar.*use from_tensors"):
        D.from_tensor_slices(5)
    with pytest.raises(hr.InvalidArgumentError, match=r"same leading dimension, got \[2, 3\]"):
        D.from_tensor_slices(([1, 2], [1, 2, 3]))
    with pytest.raises(hr.InvalidArgumentError, match="from_tensor_slices.*ragged"):
        D.from_tensor_slices([[1], [1, 2]])


def test_elements_are_read_only_views():
    # An element is a view of the dataset's array: writing to it would change later epochs.
    array = np.arange(6).reshape(3, 2)
    ds = D.from_tensor_slices(array)
    row = next(iter(ds))
    with pytest.raises(ValueError, match="read-only"):
        row += 100
    assert array.flags.writeable  # the caller's own array is left alone
    single = next(iter(D.from_tensors(np.zeros(3))))
    with pytest.raises(ValueError, match="read-only"):
        single[0] = 1


def test_chunks_match_single_steps():
    ds = D.from_tensor_slices({"x": np.arange(10), "y": np.arange(10) * 2.0})
    single = [to_python(e) for e in ds]
    it = iter(ds).root
    chunked = []
    while True:
        try:
            chunked.extend(it.next_chunk(4))
        except StopIteration:
            break
    assert [to_python(e) for e in chunked] == single
    assert [b["x"].tolist() for b in ds.batch(4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_from_tensors_is_one_element():
    ds = D.from_tensors({"a": 1, "b": "s", "c": [1.0, 2.0]})
    (element,) = list(ds)
    assert to_python(element) == {
        "a": ("scalar", "int64", 1),
        "b": b"s",
        "c": ("array", "float32", (2,), [1.0, 2.0]),
    }
    assert ds.cardinality() == 1
    assert ds.element_spec == {
        "a": hr.TensorSpec((), "int64"),
        "b": hr.TensorSpec((), "string"),
        "c": hr.TensorSpec((2,), "float32"),
    }
    assert [x.tolist() for x in D.from_tensors([[1, 2], [3, 4]])] == [[[1, 2], [3, 4]]]
    assert [x.tolist() for x in D.from_tensors([1, 2]).repeat(3)] == [[1, 2]] * 3


def make():
    return D.from_tensor_slices((np.arange(8, dtype=np.int32), [f"s{i}" for i in range(8)]))


def test_tensor_slices_checkpoints():
    assert len(check_checkpoints(make)) == 8
    assert len(check_checkpoints(lambda: make().repeat(2))) == 16
    assert len(check_checkpoints(lambda: D.from_tensors({"v": np.ones(2)}).repeat(3))) == 3


def test_writable_input_is_copied_read_only_input_used_in_place(tmp_path):
    # As tf.data: the dataset holds a copy, so changing the caller's array afterwards changes nothing.
    array = np.arange(6).reshape(3, 2)
    ds = D.from_tensor_slices(array)
    array += 100
    assert [row.tolist() for row in ds] == [[0, 1], [2, 3], [4, 5]]
    assert not any(np.shares_memory(row, array) for row in ds)
    frozen = np.arange(4)
    frozen.flags.writeable = False  # nobody can write it: no copy needed
    assert np.shares_memory(next(iter(D.from_tensor_slices(frozen.reshape(2, 2)))), frozen)
    np.save(tmp_path / "big.npy", np.arange(8).reshape(4, 2))
    mapped = np.load(tmp_path / "big.npy", mmap_mode="r+")  # a memory map is read in place, never loaded
    assert np.shares_memory(next(iter(D.from_tensor_slices(mapped))), mapped)
