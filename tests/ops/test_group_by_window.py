import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process


def lists(ds) -> list:
    return [b.tolist() for b in ds]


def tf_group_by_window(elements, key, size_of):
    """tf.data's GroupByWindowDatasetOp, transcribed: windows flush when full, leftovers by key."""
    groups: dict = {}
    out = []
    for element in elements:
        k = key(element)
        groups.setdefault(k, []).append(element)
        if len(groups[k]) == size_of(k):
            out.append(groups.pop(k))
    for k in sorted(groups):
        out.append(groups[k])
    return out


def test_documented_example():
    # tf.data's group_by_window docstring.
    ds = hr.Dataset.range(10).group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda key, ds: ds.batch(5), window_size=5
    )
    assert lists(ds) == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]


def test_small_groups_flush_when_full():
    # tf.data kernel test testSmallGroups.
    components = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0], dtype=np.int64)
    ds = hr.Dataset.from_tensor_slices(components).group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda _, xs: xs.batch(4), window_size=4
    )
    assert lists(ds) == [[1, 1, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]]


def test_leftover_windows_come_out_in_ascending_key_order():
    ds = hr.Dataset.from_tensor_slices(np.array([5, 3, 9, 1, 3])).group_by_window(
        key_func=lambda x: x, reduce_func=lambda key, ds: ds.batch(10), window_size=2
    )
    assert lists(ds) == [[3, 3], [1], [5], [9]]


def test_window_size_func_reduce_func_key_and_window_dataset():
    keys_seen = []

    def reduce_func(key, window):
        keys_seen.append((type(key), int(key)))
        assert isinstance(window, hr.Dataset) and window.cardinality() >= 1
        return window.map(lambda x: x * 100 + key).batch(10)

    ds = hr.Dataset.range(12).group_by_window(
        key_func=lambda x: x % 3, reduce_func=reduce_func, window_size_func=lambda key: key + 1
    )
    assert lists(ds) == tf_group_by_window(
        [x * 100 + x % 3 for x in range(12)], lambda y: y % 100, lambda k: k + 1
    )
    assert all(t is np.int64 for t, _ in keys_seen)


def test_tuple_elements_unpacked_for_key_func_and_reduce_to_any_dataset():
    ds = hr.Dataset.from_tensor_slices(
        (np.arange(6), np.array([b"a", b"b"] * 3, dtype=object))
    ).group_by_window(
        key_func=lambda i, tag: 0 if tag == b"a" else 1,
        reduce_func=lambda key, window: window.map(lambda i, tag: i).filter(lambda i: i > 0),
        window_size=2,
    )
    assert [int(x) for x in ds] == [2, 1, 3, 4, 5]


@given(
    keys=st.lists(st.integers(0, 4), max_size=40),
    window_size=st.integers(1, 5),
    use_func=st.booleans(),
)
@settings(max_examples=60, deadline=None)
def test_matches_tf_grouping(keys, window_size, use_func):
    elements = [k * 1000 + i for i, k in enumerate(keys)]
    size_of = (lambda k: (k % 3) + 1) if use_func else (lambda k: window_size)
    kwargs = (
        {"window_size_func": lambda k: np.int64(size_of(int(k)))}
        if use_func
        else {"window_size": window_size}
    )
    ds = hr.Dataset.from_tensor_slices(np.array(elements, dtype=np.int64)).group_by_window(
        key_func=lambda x: x // 1000, reduce_func=lambda k, w: w.batch(100), **kwargs
    )
    assert lists(ds) == tf_group_by_window(elements, lambda x: x // 1000, size_of)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "exactly one of window_size and window_size_func"),
        ({"window_size": 2, "window_size_func": lambda k: 2}, "exactly one"),
        ({"window_size": 0}, "window_size=0"),
        ({"window_size": True}, "window_size=True"),
        ({"window_size_func": 3}, "window_size_func=3 is not callable"),
    ],
)
def test_invalid_arguments(kwargs, match):
    with pytest.raises(hr.InvalidArgumentError, match=match):
        hr.Dataset.range(4).group_by_window(lambda x: x, lambda k, w: w, **kwargs)
    with pytest.raises(hr.InvalidArgumentError, match="key_func=.*not callable"):
        hr.Dataset.range(4).group_by_window(None, lambda k, w: w, window_size=2)


def test_bad_user_function_results():
    base = hr.Dataset.range(4)
    with pytest.raises(hr.InvalidArgumentError, match="key_func must return a scalar integer, got float"):
        list(base.group_by_window(lambda x: 0.5, lambda k, w: w, window_size=2))
    with pytest.raises(hr.InvalidArgumentError, match="key_func must return a scalar integer"):
        list(base.group_by_window(lambda x: np.array([1]), lambda k, w: w, window_size=2))
    with pytest.raises(hr.InvalidArgumentError, match="window sizes must be > 0"):
        list(base.group_by_window(lambda x: x, lambda k, w: w, window_size_func=lambda k: 0))
    with pytest.raises(hr.InvalidArgumentError, match="reduce_func must return a headrace Dataset, got list"):
        list(base.group_by_window(lambda x: x, lambda k, w: [1], window_size=1))


def test_key_func_error_loses_only_that_element():
    def key(x):
        if x == 3:
            raise ValueError("no key")
        return x % 2

    it = iter(hr.Dataset.range(8).group_by_window(key, lambda k, w: w.batch(3), window_size=3))
    out = []
    with pytest.raises(ValueError) as info:
        while True:
            out.append(next(it).tolist())
    assert any("group_by_window" in n and "input element 3" in n for n in info.value.__notes__)
    out.extend(b.tolist() for b in it)
    assert out == [[0, 2, 4], [1, 5, 7], [6]]


def make():
    return (
        hr.Dataset.range(25)
        .shuffle(8, seed=1)
        .group_by_window(
            key_func=lambda x: x % 3,
            reduce_func=lambda key, window: window.map(lambda x: x * 2).batch(2),
            window_size_func=lambda key: key + 2,
        )
    )


def test_checkpoints_mid_window_and_across_epochs():
    check_checkpoints(make)
    check_checkpoints(lambda: make().repeat(2))
    check_checkpoints(
        lambda: hr.Dataset.range(9).group_by_window(lambda x: x % 2, lambda k, w: w, window_size=4).repeat(2)
    )


def test_checkpoint_in_a_fresh_process():
    check_fresh_process("tests.ops.test_group_by_window:make", after=4)


def test_group_by_window_saved_state_format_is_pinned():
    # Checkpoints saved before must still restore: a change to the saved keys or values shows here.
    def make():
        return hr.Dataset.range(11).group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), window_size=3)

    it = iter(make())
    assert next(it).tolist() == [0, 2]
    state = it.get_state()
    saved = state["state"]
    assert list(saved) == ["parent", "position", "end_of_input", "owed", "groups", "window_sizes", "current"]
    assert saved["parent"] == {"index": 5}
    assert (saved["position"], saved["end_of_input"], saved["owed"]) == (5, False, [])
    assert [key for key, _ in saved["groups"]] == [1] and len(saved["groups"][0][1]) == 2
    assert saved["window_sizes"] == [[0, 3], [1, 3]]
    assert list(saved["current"]) == ["key", "elements", "state"]
    assert (saved["current"]["key"], len(saved["current"]["elements"])) == (0, 3)
    assert saved["current"]["state"] == {"parent": {"index": 2}, "batches": 1, "owed": []}
    fresh = iter(make())
    fresh.set_state(state)
    assert [b.tolist() for b in fresh] == [[4], [1, 3], [5], [6, 8], [10], [7, 9]]
