import numpy as np
import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints
from tests.helpers.random_access import check_random_access

D = hr.Dataset


def values(ds) -> list:
    return [x.tolist() if isinstance(x, np.ndarray) else x.item() for x in ds]


def test_concatenate_appends_in_order():
    assert values(D.range(1, 4).concatenate(D.range(4, 8))) == [1, 2, 3, 4, 5, 6, 7]
    assert values(D.range(0).concatenate(D.range(2))) == [0, 1]
    assert values(D.range(2).concatenate(D.range(0))) == [0, 1]
    assert values(D.range(2).concatenate(D.range(2)).concatenate(D.range(1))) == [0, 1, 0, 1, 0]


def test_concatenate_relaxes_shapes_and_rejects_other_types():
    ds = D.from_tensor_slices([[1, 2]]).concatenate(D.from_tensor_slices([[1, 2, 3]]))
    assert ds.element_spec == hr.TensorSpec((None,), "int64")
    assert values(ds) == [[1, 2], [1, 2, 3]]
    with pytest.raises(hr.InvalidArgumentError, match="dataset argument.*dtype"):
        D.range(3).concatenate(D.from_tensor_slices([1.0]))
    with pytest.raises(
        hr.InvalidArgumentError, match="the dataset argument has elements.*do not share one structure"
    ):
        D.range(3).concatenate(D.zip(D.range(3), D.range(3)))
    with pytest.raises(
        hr.InvalidArgumentError, match="the dataset argument has elements.*do not share one structure"
    ):
        D.from_tensor_slices({"a": [1]}).concatenate(D.from_tensor_slices({"b": [1]}))
    # Checked when built even when the spec needs a user function to run (as tf.data traces it).
    with pytest.raises(hr.InvalidArgumentError, match="dtype"):
        D.range(3).concatenate(D.range(3).map(lambda x: np.float32(x)))
    with pytest.raises(hr.InvalidArgumentError, match="dataset must be a headrace Dataset"):
        D.range(3).concatenate([1, 2])


def test_concatenate_with_empty_user_function_input_defers_the_check():
    ds = D.range(2).concatenate(D.range(0).map(lambda x: x))
    assert values(ds) == [0, 1]


@pytest.mark.parametrize(
    "first, second, expected",
    [
        (lambda: D.range(3), lambda: D.range(4), 7),
        (lambda: D.range(3), lambda: D.range(3).repeat(), hr.INFINITE_CARDINALITY),
        (lambda: D.range(3).filter(lambda x: True), lambda: D.range(3), hr.UNKNOWN_CARDINALITY),
        (lambda: D.range(3).repeat(), lambda: D.range(3).filter(lambda x: True), hr.INFINITE_CARDINALITY),
        (lambda: D.range(0), lambda: D.range(0), 0),
    ],
)
def test_concatenate_cardinality(first, second, expected):
    assert first().concatenate(second()).cardinality() == expected


def test_concatenate_chunks_never_mix_inputs():
    it = iter(D.range(3).concatenate(D.range(10, 15))).root
    assert [int(x) for x in it.next_chunk(10)] == [0, 1, 2]
    assert [int(x) for x in it.next_chunk(10)] == [10, 11, 12, 13, 14]
    with pytest.raises(StopIteration):
        it.next_chunk(10)
    assert [b.tolist() for b in D.range(3).concatenate(D.range(10, 15)).batch(4)] == [
        [0, 1, 2, 10],
        [11, 12, 13, 14],
    ]


def test_concatenate_reshuffles_each_epoch():
    ds = D.range(20).shuffle(20, seed=1).concatenate(D.range(100, 120).shuffle(20, seed=2)).repeat(2)
    out = values(ds)
    assert sorted(out[:40]) == sorted(out[40:]) and out[:40] != out[40:]


def test_concatenate_random_access_and_seeking():
    check_random_access(D.range(5).concatenate(D.range(20, 26)))
    check_random_access(D.range(0).concatenate(D.range(3)).concatenate(D.range(0)))
    assert values(D.range(5).concatenate(D.range(20, 26).map(lambda x: x)).skip(7)) == [22, 23, 24, 25]
    assert values(D.range(5).map(lambda x: x).concatenate(D.range(20, 26)).skip(7)) == [22, 23, 24, 25]


def make():
    return D.range(5).concatenate(D.from_tensor_slices(np.arange(10, 14)))


def test_concatenate_checkpoints():
    assert values(check_checkpoints(make)) == [0, 1, 2, 3, 4, 10, 11, 12, 13]
    assert len(check_checkpoints(lambda: make().repeat(2))) == 18
    check_checkpoints(lambda: D.range(9).shuffle(4, seed=2).concatenate(D.range(4)).batch(2).repeat(2))


def _chain():
    return D.range(3).concatenate(D.range(10, 12)).concatenate(D.range(20, 23))


def test_concatenate_saves_a_flat_list_of_input_states():
    it = iter(_chain())
    [next(it) for _ in range(4)]
    state = it.get_state()["state"]
    assert sorted(state) == ["current", "inputs"]
    assert state["current"] == 1 and [s["index"] for s in state["inputs"]] == [3, 1, 0]


def _nested(flat: dict) -> dict:
    """The format before a chain was one stage: ``first``/``second``/``in_second`` per concatenate."""
    states, current = flat["inputs"], flat["current"]
    nested = states[0]
    for k in range(1, len(states)):
        nested = {"first": nested, "second": states[k], "in_second": current >= k}
    return nested


@pytest.mark.parametrize("k", [0, 2, 4, 7, 8])
def test_concatenate_restores_the_older_nested_format(k):
    it = iter(_chain())
    [next(it) for _ in range(k)]
    state = it.get_state()
    state["state"] = _nested(state["state"])
    restored = iter(_chain())
    restored.set_state(state)
    assert values(restored) == values(_chain())[k:]
    state["state"] = {"first": {"first": {}, "second": {}}, "second": {}, "in_second": False}
    with pytest.raises(hr.CheckpointError, match="concatenate"):
        iter(_chain()).set_state(state)
