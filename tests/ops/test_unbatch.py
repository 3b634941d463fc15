import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process
from tests.helpers.elements import assert_elements_equal


def test_documented_example():
    # tf.data: from_tensor_slices of ragged-free rows [[1,2,3],[4,5,6]]... here [[1, 2, 3], [4, 5, 6]]
    ds = hr.Dataset.from_tensors(np.array([[1, 2, 3], [4, 5, 6]])).unbatch()
    assert [x.tolist() for x in ds] == [[1, 2, 3], [4, 5, 6]]
    assert [int(x) for x in hr.Dataset.range(7).batch(3).unbatch()] == list(range(7))


def test_rows_keep_dtypes_and_structures():
    ds = (
        hr.Dataset.range(5)
        .map(lambda x: {"x": x, "pair": (x.astype(np.float32), np.array([b"s"], dtype=object))})
        .batch(2)
    )
    rows = list(ds.unbatch())
    expected = list(
        hr.Dataset.range(5).map(
            lambda x: {"x": x, "pair": (x.astype(np.float32), np.array([b"s"], dtype=object))}
        )
    )
    assert_elements_equal(rows, expected)
    strings = list(hr.Dataset.from_tensor_slices(np.array([b"a", b"b", b"c"], object)).batch(2).unbatch())
    assert strings == [b"a", b"b", b"c"]
    pairs = list(hr.Dataset.range(3).map(lambda x: (x, -x)).batch(2).unbatch())
    assert [(int(a), int(b)) for a, b in pairs] == [(0, 0), (1, -1), (2, -2)]


def test_rows_keep_the_dicts_key_order():
    # As tf.data: a dict element comes back with its own key order, flat or nested.
    flat = next(iter(hr.Dataset.from_tensor_slices({"z": [1, 2], "a": [3, 4]}).batch(2).unbatch()))
    nested = next(iter(hr.Dataset.from_tensor_slices({"z": [1, 2], "a": ([3, 4],)}).batch(2).unbatch()))
    assert list(flat) == ["z", "a"] and flat == {"z": 1, "a": 3}
    assert list(nested) == ["z", "a"] and nested["a"] == (3,)


def test_empty_batches_are_skipped():
    ds = hr.Dataset.range(4).map(lambda n: np.arange(int(n) % 3)).unbatch()
    assert [int(x) for x in ds] == [0, 0, 1]


def test_next_chunk_stays_within_one_batch_and_split_is_whole_batch():
    it = iter(hr.Dataset.range(10).batch(4).unbatch())
    root = it.root
    assert [int(x) for x in root.next_chunk(3)] == [0, 1, 2]
    assert [int(x) for x in root.next_chunk(100)] == [3]
    assert [int(x) for x in root.next_chunk(100)] == [4, 5, 6, 7]


def test_scalar_or_mismatched_components_fail_clearly():
    with pytest.raises(
        hr.StructureError, match=r"unbatch\(\): input element 0 is a scalar .*every component"
    ):
        list(hr.Dataset.range(3).unbatch())
    mixed = hr.Dataset.from_tensors((np.zeros(2), np.zeros(3))).unbatch()
    with pytest.raises(hr.StructureError, match=r"different leading sizes \(\[0\] \(2,\), \[1\] \(3,\)\)"):
        list(mixed)
    with pytest.raises(hr.InvalidArgumentError, match="scalar component"):
        _ = hr.Dataset.range(3).unbatch().element_spec


def test_spec_and_cardinality():
    ds = hr.Dataset.range(10).map(lambda x: np.zeros((2, 3), np.float32)).batch(4).unbatch()
    assert ds.element_spec == hr.TensorSpec((2, 3), "float32")
    assert ds.cardinality() == hr.UNKNOWN_CARDINALITY
    assert hr.Dataset.range(0).batch(2).unbatch().cardinality() == 0
    assert hr.Dataset.range(2).repeat().batch(2).unbatch().cardinality() == hr.INFINITE_CARDINALITY


@given(sizes=st.lists(st.integers(0, 9), min_size=0, max_size=8), batch_size=st.integers(1, 10))
@settings(max_examples=80, deadline=None)
def test_batch_then_unbatch_is_the_identity(sizes, batch_size):
    n = sum(sizes)
    base = hr.Dataset.range(n).map(lambda x: (x, np.full(3, x, np.float32), {"s": b"%d" % int(x)}))
    assert_elements_equal(list(base.batch(batch_size).unbatch()), list(base))
    assert_elements_equal(
        list(base.batch(batch_size, drop_remainder=True).unbatch()), list(base)[: n - n % batch_size]
    )


def make():
    return hr.Dataset.range(11).map(lambda x: (x, np.full(2, x, np.float32))).batch(4).unbatch()


def test_checkpoints_mid_batch_and_across_epochs():
    check_checkpoints(make)
    check_checkpoints(lambda: make().repeat(2))
    check_checkpoints(lambda: hr.Dataset.range(9).batch(4).unbatch().batch(3))


def test_checkpoint_saves_only_the_unreturned_rows():
    it = iter(make())
    next(it)
    state = it.get_state()["state"]
    assert sorted(state) == ["parent", "position", "rest"]
    assert state["position"] == 1 and state["rest"]["t"][0]["s"] == [3]


def test_checkpoint_in_a_fresh_process():
    check_fresh_process("tests.ops.test_unbatch:make", after=6)


def test_every_batch_keeps_the_first_batch_structure_and_kinds():
    def from_list(values):
        return hr.Dataset.range(len(values)).map(lambda i: values[int(i)])

    shrinking = from_list([(np.arange(2), np.arange(2)), (np.arange(2),)])
    with pytest.raises(
        hr.StructureError,
        match=r"unbatch\(\): input element 1 has structure \(leaf,\) but input element 0 has \(leaf, leaf\)",
    ):
        list(shrinking.unbatch())
    kinds = from_list([{"a": np.arange(2)}, {"a": np.arange(2) / 2}])
    with pytest.raises(
        hr.StructureError, match=r"input element 1 has float values at \['a'\], where input element 0 has int"
    ):
        list(kinds.unbatch())


@given(st.lists(st.integers(1, 5), min_size=1, max_size=6), st.integers(1, 4))
@settings(max_examples=30, deadline=None)
def test_batch_then_unbatch_is_the_identity_for_nested_elements(sizes, batch_size):
    n = sum(sizes)
    ds = hr.Dataset.range(n).map(lambda x: (x, {"v": np.full(2, x, np.float32), "s": b"s"}))
    assert_elements_equal(list(ds.batch(batch_size).unbatch()), list(ds))
