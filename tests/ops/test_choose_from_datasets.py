import numpy as np
import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def values(ds) -> list:
    return [x.item() if isinstance(x, np.generic) else x for x in ds]


def choices(*values):
    return D.from_tensor_slices(np.array(values, np.int64))


def test_choose_follows_the_choices():
    datasets = [
        D.from_tensor_slices([b"foo"] * 3),
        D.from_tensor_slices([b"bar"] * 3),
        D.from_tensor_slices([b"baz"] * 3),
    ]
    ds = D.choose_from_datasets(datasets, D.range(3).repeat(3))
    assert values(ds) == [b"foo", b"bar", b"baz"] * 3
    assert values(D.choose_from_datasets([D.range(3), D.range(10, 13)], choices(1, 1, 0, 1))) == [
        10,
        11,
        0,
        12,
    ]


def test_choose_stop_on_empty_dataset():
    # tf.data: stops at the first choice of an exhausted dataset by default...
    ds = D.choose_from_datasets([D.range(2), D.range(10, 15)], choices(0, 0, 0, 1, 1))
    assert values(ds) == [0, 1]
    # ...and skips it with stop_on_empty_dataset=False.
    ds = D.choose_from_datasets(
        [D.range(2), D.range(10, 15)], choices(0, 0, 0, 1, 1), stop_on_empty_dataset=False
    )
    assert values(ds) == [0, 1, 10, 11]


def test_choose_ends_when_every_dataset_is_exhausted():
    ds = D.choose_from_datasets([D.range(1), D.range(5, 6)], D.range(2).repeat(), stop_on_empty_dataset=False)
    assert values(ds) == [0, 5]


def test_choose_element_spec_relaxes_shapes():
    ds = D.choose_from_datasets(
        [
            D.from_tensor_slices(np.zeros((2, 3), np.float32)),
            D.from_tensor_slices(np.zeros((2, 4), np.float32)),
        ],
        choices(0, 1),
    )
    assert ds.element_spec == hr.TensorSpec((None,), "float32")
    assert [x.shape for x in ds] == [(3,), (4,)]


def test_choose_invalid_arguments():
    with pytest.raises(hr.InvalidArgumentError, match=r"datasets=\[\]"):
        D.choose_from_datasets([], choices(0))
    with pytest.raises(hr.InvalidArgumentError, match="datasets must be a list"):
        D.choose_from_datasets(D.range(3), choices(0))
    with pytest.raises(hr.InvalidArgumentError, match=r"datasets\[1\]"):
        D.choose_from_datasets([D.range(3), 4], choices(0))
    with pytest.raises(hr.InvalidArgumentError, match="choice_dataset has elements"):
        D.choose_from_datasets([D.range(3)], D.from_tensor_slices([0.0, 1.0]))
    with pytest.raises(hr.InvalidArgumentError, match="choice_dataset has elements"):
        D.choose_from_datasets([D.range(3)], D.range(3).batch(2))
    with pytest.raises(hr.InvalidArgumentError, match="choice_dataset must be"):
        D.choose_from_datasets([D.range(3)], [0, 1])
    with pytest.raises(hr.InvalidArgumentError, match="stop_on_empty_dataset="):
        D.choose_from_datasets([D.range(3)], choices(0), stop_on_empty_dataset=1)
    with pytest.raises(hr.InvalidArgumentError, match=r"datasets\[1\] has elements"):
        D.choose_from_datasets([D.range(3), D.from_tensor_slices([b"x"])], choices(0))


def test_choose_out_of_range_choice_raises_and_iteration_can_go_on():
    ds = D.choose_from_datasets([D.range(3), D.range(10, 13)], choices(0, 5, 1))
    it = iter(ds)
    assert int(next(it)) == 0
    with pytest.raises(hr.InvalidArgumentError, match="choice_dataset element 1 is 5.*0 to 1"):
        next(it)
    assert int(next(it)) == 10
    # Choices made by a user function are also checked value by value.
    with pytest.raises(hr.InvalidArgumentError, match="choice_dataset has elements"):
        D.choose_from_datasets([D.range(3)], D.range(2).map(lambda c: float(c)))
    bad = D.choose_from_datasets([D.range(3)], D.range(2).map(lambda c: c if c == 0 else 0.5))
    with pytest.raises(hr.InvalidArgumentError, match="element 1 is float"):
        list(bad)


def test_choose_cardinality():
    def card(datasets, choice, **kw):
        return D.choose_from_datasets(datasets, choice, **kw).cardinality()

    inf = D.range(3).repeat()
    assert card([inf, inf], D.range(2).repeat(3)) == 6  # tf.data says -1 here, but it is 6
    assert card([inf, D.range(3)], D.range(2).repeat(3)) == hr.UNKNOWN_CARDINALITY
    assert card([inf, inf], D.range(2).repeat()) == hr.INFINITE_CARDINALITY
    assert (
        card([inf, D.range(3)], D.range(2).repeat(), stop_on_empty_dataset=False) == hr.INFINITE_CARDINALITY
    )
    assert card([D.range(3), D.range(3)], D.range(2).repeat()) == hr.UNKNOWN_CARDINALITY
    assert card([D.range(3)], choices()) == 0


def test_choose_serves_runs_in_chunks():
    ds = D.choose_from_datasets([D.range(100), D.range(1000, 1100)], choices(*([0] * 5 + [1] * 3 + [0] * 2)))
    assert [b.tolist() for b in ds.batch(4)] == [[0, 1, 2, 3], [4, 1000, 1001, 1002], [5, 6]]


def _unreadable_1001(x):
    if x == 1001:
        raise OSError("unreadable")
    return x


def _over_unreadable():
    """Choices 0, 0, 1, 1, 1, 0 over range(100) and range(1000, 1100), whose element 1001 fails."""
    return D.choose_from_datasets(
        [D.range(100), D.range(1000, 1100).map(_unreadable_1001)], choices(0, 0, 1, 1, 1, 0)
    )


def test_choose_input_error_loses_only_its_element():
    it = iter(_over_unreadable().batch(6))
    with pytest.raises(OSError):
        next(it)
    state = it.get_state()
    expected = [0, 1, 1000, 1002, 2]
    assert next(it).tolist() == expected
    fresh = iter(_over_unreadable().batch(6))
    fresh.set_state(state)
    assert next(fresh).tolist() == expected


def make():
    datasets = [D.range(5), D.from_tensor_slices(np.arange(100, 104)), D.range(50, 52)]
    return D.choose_from_datasets(datasets, choices(0, 1, 2, 2, 1, 0, 2, 0, 1), stop_on_empty_dataset=False)


def test_choose_checkpoints():
    assert values(check_checkpoints(make)) == [0, 100, 50, 51, 101, 1, 2, 102]
    assert len(check_checkpoints(lambda: make().repeat(2))) == 16
    check_checkpoints(lambda: make().batch(3).repeat(2))


def test_choose_saved_state_format_is_pinned():
    # Checkpoints saved before must still restore: a change to the saved keys or values shows here.
    it = iter(make())
    for _ in range(7):
        next(it)
    assert it.get_state()["state"] == {
        "choice": {"index": 8},
        "datasets": [{"index": 3}, {"index": 2}, {"index": 2}],
        "exhausted": [False, False, True],
        "done": False,
        "position": 8,
        "choices": [],
        "owed": [],
    }


def test_choose_chunks_give_the_same_sequence_as_single_steps():
    # The shared loop (ops/support/choosing.py) serves a run of equal choices with one pull, cut where
    # the choices change, where the chunk is full and where a dataset runs out: every cut gives the
    # elements of single steps.
    runs = [0] * 300 + [1, 2, 1, 2] + [2] * 40 + [0, 1] * 30 + [1] * 9 + [2, 0, 0, 1]
    for stop in (True, False):
        ds = D.choose_from_datasets(
            [D.range(320), D.range(100, 130), D.range(500, 560)], choices(*runs), stop_on_empty_dataset=stop
        )
        single = values(ds)
        assert len(single) == (384 if stop else 393)
        for size in (1, 2, 7, 64, 256, 1000):
            assert [x for b in ds.batch(size) for x in b.tolist()] == single


def test_choose_a_restored_state_with_every_input_ended_ends_instead_of_spinning():
    # Reading choices from an endless choice dataset while every dataset is exhausted never ended.
    ds = D.choose_from_datasets([D.range(2), D.range(2)], choices(0, 1).repeat(), stop_on_empty_dataset=False)
    it = iter(ds.take(4))
    assert values(it) == [0, 0, 1, 1]
    state = iter(ds).get_state()
    state["state"]["exhausted"] = [True, True]
    fresh = iter(ds)
    fresh.set_state(state)
    assert list(fresh) == []


def test_choose_saved_state_keeps_the_choices_pulled_and_not_used():
    # After an input's error the rest of the pulled choices are saved, and restored where they were.
    it = iter(_over_unreadable().batch(6))
    with pytest.raises(OSError):
        next(it)  # the batch holds 0, 1, 1000
    state = it.get_state()
    assert {k: v for k, v in state["state"]["parent"].items() if k != "datasets"} == {
        "choice": {"index": 6},
        "exhausted": [False, False],
        "done": False,
        "position": 4,
        "choices": [1, 0],
        "owed": [],
    }
    fresh = iter(_over_unreadable().batch(6))
    fresh.set_state(state)
    assert next(fresh).tolist() == [0, 1, 1000, 1002, 2]
