"""tensorflow/python/data/kernel_tests/take_test.py and skip_test.py, translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import HeadraceError

from .support import plain, produces, verify_checkpoints

D = hr.Dataset


@pytest.mark.parametrize("count", [-1, 0, 4, 10, 25])
def test_take_basic(count):
    ds = D.from_tensor_slices((np.arange(10),)).take(count)
    assert [tuple(s.shape) for s in ds.element_spec] == [()]
    n = 10 if count == -1 else min(count, 10)
    produces(ds, [(i,) for i in range(n)])


@pytest.mark.parametrize("count", [-1, 0, 4, 10, 25])
def test_skip_basic(count):
    ds = D.from_tensor_slices((np.arange(10),)).skip(count)
    assert [tuple(s.shape) for s in ds.element_spec] == [()]
    start = 10 if count == -1 else min(count, 10)
    produces(ds, [(i,) for i in range(start, 10)])


def test_take_name():
    produces(D.from_tensors(42).take(1, name="take"), [42])


def test_skip_name():
    produces(D.from_tensors(42).skip(0, name="skip"), [42])


@pytest.mark.parametrize(("count", "num_outputs"), [(50, 50), (200, 100), (100, 100), (-1, 100), (0, 0)])
def test_take_checkpoint(count, num_outputs):
    verify_checkpoints(lambda: D.range(100).take(count), num_outputs, max_elements=num_outputs + 2)


@pytest.mark.parametrize(("count", "num_outputs"), [(50, 50), (200, 0), (100, 0), (-1, 0), (0, 100)])
def test_skip_checkpoint(count, num_outputs):
    verify_checkpoints(lambda: D.range(100).skip(count), num_outputs, max_elements=num_outputs + 2)


@pytest.mark.parametrize("count", [-1, 0, 4, 10, 25])
def test_take_random_access(count):
    ds = D.range(10).take(count)
    n = 10 if count == -1 else min(count, 10)
    assert ds.node.random_access_length() == n
    for i in range(n):
        assert plain(ds.skip(i).take(1)) == [i]


def test_skip_random_access():
    ds = D.range(11).skip(3)
    assert ds.node.random_access_length() == 8
    for i in range(8):
        assert plain(ds.skip(i).take(1)) == [i + 3]


@pytest.mark.parametrize("elements", [0, 5, 10])
@pytest.mark.parametrize("skip", [-1, 0, 5, 15])
def test_skip_multiple_combinations(elements, skip):
    ds = D.range(elements).skip(skip)
    n = ds.cardinality()
    assert n == (0 if skip == -1 else max(elements - skip, 0))
    for i in range(n):
        assert plain(ds.skip(i).take(1)) == [i + skip]


@pytest.mark.parametrize("count", [20, 200])
@pytest.mark.parametrize("repetitions", [1, 2])
@pytest.mark.parametrize("seed", [None, 42])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_take_global_shuffle(count, repetitions, seed, reshuffle):
    ds = D.range(100).take(count).prefetch(hr.AUTOTUNE)
    if repetitions > 1:
        ds = ds.repeat(repetitions)
    ds = ds.global_shuffle(seed=seed, reshuffle_each_iteration=reshuffle)
    out = plain(ds)
    expected = list(range(min(count, 100))) * repetitions
    assert sorted(out) == sorted(expected)
    assert out != expected
    assert len(out) == ds.cardinality()


@pytest.mark.parametrize("count", [0, 2])
@pytest.mark.parametrize("repetitions", [1, 2])
@pytest.mark.parametrize("seed", [None, 42])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_skip_global_shuffle(count, repetitions, seed, reshuffle):
    ds = D.range(10).skip(count).prefetch(hr.AUTOTUNE)
    if repetitions > 1:
        ds = ds.repeat(repetitions)
    ds = ds.global_shuffle(seed=seed, reshuffle_each_iteration=reshuffle)
    out = plain(ds)
    expected = list(range(count, 10)) * repetitions
    assert sorted(out) == sorted(expected)
    assert out != expected
    assert len(out) == ds.cardinality()


@pytest.mark.parametrize("skip", [-2, -1])
def test_skip_negative_global_shuffle(skip):
    # tf.data: FailedPrecondition. headrace: skip(-1) skips everything, leaving nothing to shuffle,
    # or refuses -2 at construction.
    try:
        ds = D.range(10).skip(skip)
    except HeadraceError:
        return
    assert plain(ds.global_shuffle(seed=1)) == []


@pytest.mark.parametrize("count", [2, 20])
@pytest.mark.parametrize("repetitions", [1, 2])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_take_global_shuffle_checkpoint(count, repetitions, reshuffle):
    def make():
        ds = D.range(10).take(count).prefetch(hr.AUTOTUNE)
        if repetitions > 1:
            ds = ds.repeat(repetitions)
        return ds.global_shuffle(seed=42, reshuffle_each_iteration=reshuffle)

    verify_checkpoints(make, min(count, 10) * repetitions)


@pytest.mark.parametrize("count", [0, 2])
@pytest.mark.parametrize("repetitions", [1, 2])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_skip_global_shuffle_checkpoint(count, repetitions, reshuffle):
    def make():
        ds = D.range(10).skip(count).prefetch(hr.AUTOTUNE)
        if repetitions > 1:
            ds = ds.repeat(repetitions)
        return ds.global_shuffle(seed=42, reshuffle_each_iteration=reshuffle)

    verify_checkpoints(make, (10 - count) * repetitions)
