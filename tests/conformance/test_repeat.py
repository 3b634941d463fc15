"""tensorflow/python/data/kernel_tests/repeat_test.py, translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import HeadraceError

from .support import assert_same, plain, produces, verify_checkpoints

D = hr.Dataset
COMPONENTS = (np.array(1), np.array([1, 2, 3]), np.array(37.0))


@pytest.mark.parametrize("count", [0, 3, 7])
def test_finite_repeat(count):
    ds = D.from_tensors(COMPONENTS).repeat(count)
    assert [tuple(s.shape) for s in ds.element_spec] == [c.shape for c in COMPONENTS]
    produces(ds, [COMPONENTS] * count)


def test_infinite_repeat():
    ds = D.from_tensors(COMPONENTS).repeat(-1)
    assert [tuple(s.shape) for s in ds.element_spec] == [c.shape for c in COMPONENTS]
    it = iter(ds)
    for _ in range(17):
        assert_same(next(it), COMPONENTS)


def test_repeat_repeat():
    ds = D.from_tensors(COMPONENTS).repeat(7).repeat(14)
    produces(ds, [COMPONENTS] * 98)


def test_name():
    produces(D.from_tensors(42).repeat(1, name="repeat"), [42])


@pytest.mark.parametrize(
    ("elements", "epochs", "zipped", "num_outputs"),
    [(10, 10, None, 100), (10, 0, None, 0), (10, -1, 100, 100), (0, -1, None, 0)],
    ids=["finite", "empty", "infinite", "infinite_empty"],
)
def test_checkpoint(elements, epochs, zipped, num_outputs):
    def make():
        ds = D.range(elements).repeat(epochs)
        if zipped:
            ds = D.zip((ds, D.range(zipped)))
        return ds

    verify_checkpoints(make, num_outputs, max_elements=num_outputs + 3)


@pytest.mark.parametrize("elements", [0, 5, 10])
@pytest.mark.parametrize("count", [0, 3, 8])
def test_random_access_finite_repeat(elements, count):
    ds = D.range(elements).repeat(count)
    expected = np.tile(np.arange(elements), count).tolist()
    for i in range(0, elements * count, 3):
        assert plain(ds.skip(i).take(1)) == [expected[i]]
    assert ds.node.random_access_length() == elements * count


@pytest.mark.parametrize("elements", [0, 3, 5])
@pytest.mark.parametrize("count_1", [0, 1, 2])
@pytest.mark.parametrize("count_2", [3, 4, 5])
def test_random_access_repeat_repeat(elements, count_1, count_2):
    ds = D.range(elements).repeat(count_1).repeat(count_2)
    expected = np.tile(np.arange(elements), count_1 * count_2).tolist()
    assert ds.node.random_access_length() == len(expected)
    assert [int(hr.data.experimental.at(ds, i)) for i in range(len(expected))] == expected


@pytest.mark.parametrize("repetitions", [1, 27])
@pytest.mark.parametrize("seed", [None, 19])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_global_shuffle_repeat(repetitions, seed, reshuffle):
    n = 41
    ds = D.range(n).repeat(repetitions).prefetch(hr.AUTOTUNE)
    ds = ds.global_shuffle(seed=seed, reshuffle_each_iteration=reshuffle)
    out = plain(ds)
    expected = list(range(n)) * repetitions
    assert sorted(out) == sorted(expected)
    assert out != expected
    per_epoch = [out[i : i + n] for i in range(0, len(out), n)]
    for i in range(1, repetitions):
        assert per_epoch[i] != list(range(n))
        assert per_epoch[i] != per_epoch[i - 1]


@pytest.mark.parametrize("repetitions", [None, 0])
def test_global_shuffle_invalid_dataset(repetitions):
    # tf.data refuses an infinite repeat (FailedPrecondition); repeat(0) is empty and refused too
    # in tf.data because its cardinality 0 makes the permutation meaningless.
    ds = D.range(10).repeat(repetitions).prefetch(hr.AUTOTUNE)
    if repetitions is None:
        with pytest.raises(HeadraceError, match="read by index"):
            list(ds.global_shuffle())
    else:
        assert plain(ds.global_shuffle()) == []


@pytest.mark.parametrize("repetitions", [1, 27])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_global_shuffle_checkpoint(repetitions, reshuffle):
    def make():
        ds = D.range(41).repeat(repetitions).prefetch(hr.AUTOTUNE)
        return ds.global_shuffle(seed=42, reshuffle_each_iteration=reshuffle)

    verify_checkpoints(make, 41 * repetitions, max_elements=min(41 * repetitions + 2, 90))
