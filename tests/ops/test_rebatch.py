import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process
from tests.helpers.elements import assert_elements_equal
from tests.helpers.tf_fixtures import load_json


def lists(ds) -> list:
    return [b.tolist() for b in ds]


def test_documented_examples():
    # tf.data's Dataset.rebatch docstring.
    assert lists(hr.Dataset.range(6).batch(2).rebatch(3)) == [[0, 1, 2], [3, 4, 5]]
    assert lists(hr.Dataset.range(7).batch(4).rebatch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert lists(hr.Dataset.range(7).batch(2).rebatch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert lists(hr.Dataset.range(8).batch(4).rebatch([2, 1, 1])) == [[0, 1], [2], [3], [4, 5], [6], [7]]


@pytest.mark.parametrize("drop_remainder", [False, True])
def test_tf_kernel_cases(drop_remainder):
    # tf.data's rebatch kernel tests (batch_sizes vectors, including empty splits).
    batched = hr.Dataset.range(8).batch(4, drop_remainder=True)
    assert lists(batched.rebatch([2, 2], drop_remainder)) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert lists(hr.Dataset.range(12).batch(4).rebatch([6], drop_remainder)) == [
        [0, 1, 2, 3, 4, 5],
        [6, 7, 8, 9, 10, 11],
    ]
    assert lists(batched.rebatch([1, 1, 1, 1, 0], drop_remainder)) == [
        [0],
        [1],
        [2],
        [3],
        [],
        [4],
        [5],
        [6],
        [7],
        [],
    ]
    assert lists(batched.rebatch([0, 1], drop_remainder)) == [[]] + [x for i in range(8) for x in ([i], [])]
    assert lists(batched.rebatch([1, 0], drop_remainder)) == [x for i in range(8) for x in ([i], [])]
    nested = hr.Dataset.range(16).batch(2, drop_remainder=True).batch(4, drop_remainder=True)
    assert lists(nested.rebatch([2, 2], drop_remainder)) == [
        [[0, 1], [2, 3]],
        [[4, 5], [6, 7]],
        [[8, 9], [10, 11]],
        [[12, 13], [14, 15]],
    ]


def test_partial_batches():
    assert lists(hr.Dataset.range(5).batch(4).rebatch([2, 2])) == [[0, 1], [2, 3], [4]]
    assert lists(hr.Dataset.range(5).batch(4).rebatch([2, 2], drop_remainder=True)) == [[0, 1], [2, 3]]
    # Once the input has ended, a 0 entry after the last partial batch yields nothing more.
    assert lists(hr.Dataset.range(1).batch(1).rebatch([0, 2])) == [[], [0]]


def test_dicts_strings_and_dtypes():
    ds = hr.Dataset.range(8).map(lambda x: {"a": x, "b": {"c": x + 1, "s": b"x"}}).batch(4)
    out = list(ds.rebatch(3))
    assert [o["a"].tolist() for o in out] == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert out[1]["b"]["c"].tolist() == [4, 5, 6] and out[1]["b"]["s"].tolist() == [b"x"] * 3
    assert out[0]["a"].dtype == np.int64


def test_empty_input_batches_and_empty_input():
    ds = hr.Dataset.range(5).map(lambda n: np.arange(int(n) % 3)).rebatch(2)
    assert lists(ds) == [[0, 0], [1, 0]]
    assert lists(hr.Dataset.range(0).batch(2).rebatch(3)) == []


def test_spec_follows_tf_static_rules():
    assert hr.Dataset.range(8).batch(4, drop_remainder=True).rebatch(2).element_spec == hr.TensorSpec(
        (2,), "int64"
    )
    assert hr.Dataset.range(10).batch(5, drop_remainder=True).rebatch([2, 2]).element_spec.shape == (None,)
    assert hr.Dataset.range(10).batch(5).rebatch([2, 2], drop_remainder=True).element_spec.shape == (2,)
    assert hr.Dataset.range(8).batch(4).rebatch([2, 1, 1]).element_spec.shape == (None,)
    assert hr.Dataset.range(8).batch(4).rebatch(2).cardinality() == hr.UNKNOWN_CARDINALITY


@pytest.mark.parametrize("batch_size", [0, -1, [], [0, 0], [1, -1], "2", 1.5, True])
def test_invalid_batch_size(batch_size):
    with pytest.raises(hr.InvalidArgumentError, match="batch_size="):
        hr.Dataset.range(4).batch(2).rebatch(batch_size)


def test_invalid_inputs_fail_clearly():
    with pytest.raises(hr.InvalidArgumentError, match="drop_remainder"):
        hr.Dataset.range(4).batch(2).rebatch(2, drop_remainder="no")
    with pytest.raises(hr.StructureError, match=r"input element 0 is a scalar.*use batch before rebatch"):
        list(hr.Dataset.range(4).rebatch(2))
    ragged = hr.Dataset.range(1, 3).map(lambda n: np.zeros((1, int(n))))
    with pytest.raises(hr.StructureError, match=r"do not share component shapes.*padded_batch"):
        list(ragged.rebatch(2))


@given(
    sizes=st.lists(st.integers(0, 6), max_size=8),
    batch_size=st.one_of(st.integers(1, 7), st.lists(st.integers(0, 4), min_size=1, max_size=4).filter(any)),
    drop_remainder=st.booleans(),
)
@settings(max_examples=80, deadline=None)
def test_preserves_the_flattened_sequence_and_equals_unbatch_batch(sizes, batch_size, drop_remainder):
    total = sum(sizes)
    bounds = np.cumsum([0] + sizes)
    ds = hr.Dataset.range(len(sizes)).map(
        lambda i: (np.arange(bounds[int(i)], bounds[int(i) + 1]), np.ones((sizes[int(i)], 2), np.float32))
    )
    out = list(ds.rebatch(batch_size, drop_remainder=drop_remainder))
    flat = [int(x) for batch, _ in out for x in batch]
    plan = [batch_size] if isinstance(batch_size, int) else batch_size
    if not drop_remainder:
        assert flat == list(range(total))
    else:
        assert flat == list(range(len(flat)))
    # Batch k has plan[k % len(plan)] rows, except a smaller last one (kept unless drop_remainder).
    for k, (batch, ones) in enumerate(out):
        want = plan[k % len(plan)]
        assert ones.shape == (len(batch), 2)
        if k < len(out) - 1 or drop_remainder:
            assert len(batch) == want
    if isinstance(batch_size, int):
        expected = list(ds.unbatch().batch(batch_size, drop_remainder=drop_remainder))
        assert_elements_equal(out, expected)


def make():
    return hr.Dataset.range(23).map(lambda x: (x, np.full(2, x, np.float32))).batch(5).rebatch([3, 0, 4])


def test_checkpoints():
    check_checkpoints(make)
    check_checkpoints(lambda: make().repeat(2))
    check_checkpoints(lambda: hr.Dataset.range(10).batch(3).rebatch(4, drop_remainder=True).repeat(2))


def test_checkpoint_keys_and_the_rows_it_holds():
    it = iter(make())
    next(it)  # 3 of the first batch's 5 rows out: 2 held
    state = it.get_state()["state"]
    assert sorted(state) == ["cycle_index", "done", "end_of_input", "parent", "position", "rest", "template"]
    assert (state["position"], state["cycle_index"], state["done"]) == (1, 1, False)
    assert state["rest"]["t"][0]["s"] == [2] and state["template"]["t"][0]["s"] == [0]
    template = state["template"]
    state["template"] = state["rest"]
    with pytest.raises(hr.CheckpointError, match="'template' is 'a batch of 2 rows', expected an empty"):
        iter(make()).set_state(it.get_state() | {"state": state})
    state["template"], state["rest"] = template, {"t": [{"p": 1}, {"p": 2}]}
    with pytest.raises(hr.CheckpointError, match="'rest' is 'a value that is not a batch'"):
        iter(make()).set_state(it.get_state() | {"state": state})


def test_checkpoint_in_a_fresh_process():
    check_fresh_process("tests.ops.test_rebatch:make", after=3)


@pytest.mark.parametrize(
    "case", load_json("datasets.json")["rebatch"], ids=lambda c: f"{c['n']}-{c['batch_size']}"
)
def test_matches_recorded_tensorflow(case):
    # the live test's cases with tf.data's batches, recorded by tools/record_tf_fixtures.py
    got = hr.Dataset.range(case["n"]).batch(case["size"])
    assert lists(got.rebatch(case["batch_size"], drop_remainder=case["drop_remainder"])) == case["expected"]


def test_every_input_batch_keeps_the_first_structure():
    def from_list(values):
        return hr.Dataset.range(len(values)).map(lambda i: values[int(i)])

    keys = from_list([{"a": np.arange(2), "b": np.arange(2)}, {"a": np.arange(2), "c": np.arange(2)}])
    with pytest.raises(
        hr.StructureError, match=r"rebatch.*input element 1 has structure \{'a': leaf, 'c': leaf\}"
    ):
        list(keys.rebatch(3))
