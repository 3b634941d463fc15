import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def windows(ds) -> list:
    return [[int(x) for x in window] for window in ds]


@pytest.mark.parametrize(
    ("size", "shift", "stride", "drop", "expected"),
    [
        # Values as tf.data gives them (window_test.py cases).
        (3, None, 1, False, [[0, 1, 2], [3, 4, 5], [6]]),
        (3, 2, 1, False, [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]),
        (3, 2, 1, True, [[0, 1, 2], [2, 3, 4], [4, 5, 6]]),
        (3, 1, 2, False, [[0, 2, 4], [1, 3, 5], [2, 4, 6], [3, 5], [4, 6], [5], [6]]),
        (3, 1, 2, True, [[0, 2, 4], [1, 3, 5], [2, 4, 6]]),
        (2, 4, 1, False, [[0, 1], [4, 5]]),
        (8, 1, 1, True, []),
    ],
)
def test_window_values(size, shift, stride, drop, expected):
    ds = D.range(7).window(size, shift, stride, drop)
    assert windows(ds) == expected
    assert ds.cardinality() == len(expected)


def test_window_of_structures_gives_a_dataset_per_component():
    ds = D.zip(D.range(4), D.from_tensor_slices({"a": np.arange(4) * 10})).window(2)
    first = next(iter(ds))
    assert isinstance(first[0], hr.Dataset) and isinstance(first[1]["a"], hr.Dataset)
    batched = ds.flat_map(lambda x, y: D.zip(x.batch(2), y["a"].batch(2)))
    assert [(a.tolist(), b.tolist()) for a, b in batched] == [([0, 1], [0, 10]), ([2, 3], [20, 30])]


def test_window_arguments_are_checked():
    for kwargs in ({"size": 0}, {"size": 2, "shift": 0}, {"size": 2, "stride": -1}, {"size": 2.0}):
        with pytest.raises(hr.InvalidArgumentError):
            D.range(3).window(**kwargs)
    assert windows(D.range(3).window(np.int64(2))) == [[0, 1], [2]]
    assert D.range(3).repeat().window(2).cardinality() == hr.INFINITE_CARDINALITY


def as_array(window):
    return np.array([int(x) for x in window])


def test_window_checkpoints():
    # A map turns each window into an array: the states hold no datasets. (flat_map over windows
    # cannot checkpoint yet: its state holds the current input element, here a dataset.)
    check_checkpoints(lambda: D.range(11).window(3, 2, 2).map(as_array))
    check_checkpoints(lambda: D.range(9).window(2, 5).map(as_array))


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 30),
    size=st.integers(1, 6),
    shift=st.integers(1, 6),
    stride=st.integers(1, 4),
    drop=st.booleans(),
)
def test_window_matches_the_definition(n, size, shift, stride, drop):
    # Window k holds elements k*shift + j*stride (j < size) that exist; windows start before n.
    expected = []
    span = (size - 1) * stride + 1
    for start in range(0, n, shift):
        window = [i for i in range(start, start + span, stride) if i < n]
        if drop and start + span > n:
            break
        expected.append(window)
    ds = D.range(n).window(size, shift, stride, drop)
    assert windows(ds) == expected
    assert ds.cardinality() == len(expected)
