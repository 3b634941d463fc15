import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process


def lists(ds) -> list:
    return [b.tolist() for b in ds]


def test_remainder_is_kept_or_dropped():
    # tf.data's batch docstring examples.
    assert lists(hr.Dataset.range(8).batch(3)) == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert lists(hr.Dataset.range(8).batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert lists(hr.Dataset.range(6).batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert lists(hr.Dataset.range(2).batch(5)) == [[0, 1]]
    assert lists(hr.Dataset.range(2).batch(5, drop_remainder=True)) == []
    assert lists(hr.Dataset.range(0).batch(5)) == []


def test_shapes_and_dtypes():
    ds = hr.Dataset.range(5).map(lambda x: np.full((2, 3), x, np.float32)).batch(2)
    out = list(ds)
    assert [b.shape for b in out] == [(2, 2, 3), (2, 2, 3), (1, 2, 3)]
    assert all(b.dtype == np.float32 for b in out)
    # Python numbers follow TensorFlow's conversions: ints to int64, floats to float32.
    (ints,) = list(hr.Dataset.range(3).map(lambda x: int(x)).batch(3))
    (floats,) = list(hr.Dataset.range(3).map(lambda x: float(x) / 2).batch(3))
    (bools,) = list(hr.Dataset.range(3).map(lambda x: bool(x % 2)).batch(3))
    assert ints.dtype == np.int64 and floats.dtype == np.float32 and floats.tolist() == [0.0, 0.5, 1.0]
    assert bools.dtype == bool and bools.tolist() == [False, True, False]
    (narrow,) = list(hr.Dataset.range(3).map(lambda x: np.int16(x)).batch(3))
    assert narrow.dtype == np.int16


def test_strings_become_object_arrays_of_bytes():
    ds = hr.Dataset.from_tensor_slices(np.array([b"a", b"bb", b"ccc"], dtype=object)).batch(2)
    out = list(ds)
    assert out[0].dtype == object and out[0].tolist() == [b"a", b"bb"] and out[1].tolist() == [b"ccc"]
    assert all(type(x) is bytes for x in out[0])
    (texts,) = list(hr.Dataset.range(2).map(lambda x: f"t{int(x)}").batch(2))
    assert texts.tolist() == [b"t0", b"t1"]
    (rows,) = list(hr.Dataset.range(2).map(lambda x: np.array([b"x", b"y"], dtype=object)).batch(2))
    assert rows.shape == (2, 2) and rows.tolist() == [[b"x", b"y"], [b"x", b"y"]]


def test_tuple_and_dict_elements():
    ds = hr.Dataset.range(5).map(lambda x: (x, {"sq": x * x, "name": b"n"})).batch(2)
    first = next(iter(ds))
    assert isinstance(first, tuple) and set(first[1]) == {"sq", "name"}
    assert first[0].tolist() == [0, 1] and first[1]["sq"].tolist() == [0, 1]
    assert first[1]["name"].tolist() == [b"n", b"n"]


def test_mismatched_shapes_list_them_and_suggest_padded_batch():
    ds = hr.Dataset.range(1, 4).map(lambda x: np.zeros(int(x))).batch(3)
    with pytest.raises(hr.StructureError) as info:
        list(ds)
    message = str(info.value)
    assert "element 1 has shape (2,)" in message and "element 0 has (1,)" in message
    assert "(1,), (2,), (3,)" in message and "padded_batch" in message
    nested = hr.Dataset.range(1, 3).map(lambda x: (x, {"v": np.zeros(int(x))})).batch(2)
    with pytest.raises(hr.StructureError, match=r"element 1\[1\]\['v'\] has shape \(2,\)"):
        list(nested)
    strings = hr.Dataset.range(1, 3).map(lambda x: np.array([b"s"] * int(x), dtype=object)).batch(2)
    with pytest.raises(hr.StructureError, match="padded_batch"):
        list(strings)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"batch_size": 0}, "batch_size=0"),
        ({"batch_size": -2}, "batch_size=-2"),
        ({"batch_size": 2.0}, "batch_size=2.0"),
        ({"batch_size": True}, "batch_size=True"),
        ({"batch_size": 2, "drop_remainder": None}, "drop_remainder=None"),
        ({"batch_size": 2, "num_parallel_calls": 0}, "num_parallel_calls=0"),
    ],
)
def test_invalid_arguments(kwargs, match):
    with pytest.raises(hr.InvalidArgumentError, match=match):
        hr.Dataset.range(3).batch(**kwargs)


def test_cardinality():
    assert hr.Dataset.range(10).batch(3).cardinality() == 4
    assert hr.Dataset.range(10).batch(3, drop_remainder=True).cardinality() == 3
    assert hr.Dataset.range(9).batch(3).cardinality() == 3
    assert hr.Dataset.range(0).batch(3).cardinality() == 0
    assert hr.Dataset.range(3).repeat().batch(2).cardinality() == hr.INFINITE_CARDINALITY
    assert hr.Dataset.range(3).filter(lambda x: True).batch(2).cardinality() == hr.UNKNOWN_CARDINALITY


def test_element_spec():
    assert hr.Dataset.range(10).batch(3).element_spec == hr.TensorSpec((None,), "int64")
    assert hr.Dataset.range(10).batch(3, drop_remainder=True).element_spec == hr.TensorSpec((3,), "int64")
    spec = (
        hr.Dataset.range(4)
        .map(lambda x: (np.zeros(2, np.float32), b"s"))
        .batch(2, drop_remainder=True)
        .element_spec
    )
    assert spec == (hr.TensorSpec((2, 2), "float32"), hr.TensorSpec((2,), hr.string))


@given(n=st.integers(0, 60), batch_size=st.integers(1, 13), drop=st.booleans())
@settings(max_examples=60, deadline=None)
def test_batches_partition_the_input(n, batch_size, drop):
    out = lists(hr.Dataset.range(n).batch(batch_size, drop_remainder=drop))
    assert [x for b in out for x in b] == list(range(n - (n % batch_size if drop else 0)))
    assert all(len(b) == batch_size for b in out[:-1])
    assert len(out) == hr.Dataset.range(n).batch(batch_size, drop_remainder=drop).cardinality()


def test_upstream_error_keeps_the_partial_batch():
    it = iter(hr.Dataset.range(7).map(lambda x: x if x != 4 else 1 // 0).batch(3))
    assert next(it).tolist() == [0, 1, 2]
    with pytest.raises(ZeroDivisionError):
        next(it)
    assert lists(it) == [[3, 5, 6]]


def make():
    return hr.Dataset.range(17).map(lambda x: (x, np.full(2, x, np.float32), b"s")).batch(4)


def test_checkpoints():
    check_checkpoints(make)
    check_checkpoints(lambda: make().repeat(2))
    check_checkpoints(lambda: hr.Dataset.range(11).shuffle(5, seed=2).batch(3, drop_remainder=True).repeat(2))


def test_checkpoint_holds_a_partial_batch_after_an_error():
    def build():
        # The filter returns 2 of the 3 elements asked for, so batch asks again and that pull fails.
        return hr.Dataset.range(9).filter(lambda x: x != 4).map(lambda x: x if x != 6 else 1 // 0).batch(3)

    it = iter(build())
    assert next(it).tolist() == [0, 1, 2]
    with pytest.raises(ZeroDivisionError):
        next(it)
    state = it.get_state()
    assert len(state["state"]["owed"]) == 2
    fresh = iter(build())
    fresh.set_state(state)
    assert lists(fresh) == [[3, 5, 7], [8]]


def test_checkpoint_in_a_fresh_process():
    check_fresh_process("tests.ops.test_batch:make", after=2)


# --- every element's structure and kind of values is checked ------------------------------------------
def from_list(values):
    """A dataset yielding ``values`` as given (Python types kept as they are)."""
    return hr.Dataset.range(len(values)).map(lambda i: values[int(i)])


def test_a_2_tuple_then_a_3_tuple_is_refused_not_dropping_a_component():
    ds = from_list([(1, 2), (1, 2), (3, 4, 5)]).batch(3)
    with pytest.raises(
        hr.StructureError,
        match=r"batch: element 2 has structure \(leaf, leaf, leaf\) but element 0 has \(leaf, leaf\)",
    ):
        list(ds)


def test_dicts_with_different_keys_are_refused_not_misplaced():
    ds = from_list([{"a": 1, "b": 2}, {"a": 1, "c": 2}]).batch(2)
    with pytest.raises(
        hr.StructureError,
        match=r"element 1 has structure \{'a': leaf, 'c': leaf\} but element 0 has \{'a': leaf, 'b': leaf\}",
    ):
        list(ds)


def test_mixed_int_float_and_str_are_refused_not_turned_into_strings():
    with pytest.raises(hr.StructureError, match=r"element 1 is a float \(float\) but element 0 is an int"):
        list(from_list([1, 2.5, "s"]).batch(3))
    with pytest.raises(
        hr.StructureError, match=r"element 2\[1\] is a string \(str\) but element 0\[1\] is an int"
    ):
        list(from_list([(0, 1), (0, 2), (0, "s")]).batch(3))
    arrays = from_list([np.zeros(2, np.int64), np.zeros(2, np.float64)]).batch(2)
    with pytest.raises(hr.StructureError, match="ndarray of dtype float64"):
        list(arrays)


def test_scalars_mixed_with_arrays_are_a_structure_error():
    with pytest.raises(hr.StructureError):
        list(from_list([np.int64(1), np.arange(2)]).batch(2))


def test_a_namedtuple_and_a_plain_tuple_do_not_batch_together():
    import collections

    Point = collections.namedtuple("Point", "x y")
    with pytest.raises(hr.StructureError, match=r"Point\(leaf, leaf\)"):
        list(from_list([(1, 2), Point(1, 2)]).batch(2))


def test_compatible_kinds_still_batch():
    # int widths and float widths batch as numpy combines them; bools and bytes stay themselves.
    (ints,) = list(from_list([np.int32(1), np.int64(2)]).batch(2))
    assert ints.tolist() == [1, 2]
    (flags,) = list(from_list([True, np.bool_(False)]).batch(2))
    assert flags.dtype == bool
    (mixed_strings,) = list(from_list([b"a", "b"]).batch(2))
    assert mixed_strings.tolist() == [b"a", b"b"]
