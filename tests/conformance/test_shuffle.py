"""tensorflow/python/data/kernel_tests/shuffle_test.py, translated."""

import collections

import numpy as np
import pytest

import headrace as hr

from .support import plain, verify_checkpoints

D = hr.Dataset
COMPONENTS = (np.array([1, 2, 3, 4]), np.array([5, 6, 7, 8]), np.array([9.0, 10.0, 11.0, 12.0]))


def test_basic():
    def dataset_fn(count=5, buffer_size=None, seed=0):
        ds = D.from_tensor_slices(COMPONENTS).repeat(count)
        if buffer_size:
            ds = ds.shuffle(buffer_size, seed)
            assert tuple(s.shape for s in ds.element_spec) == ((), (), ())
        return ds

    unshuffled = plain(dataset_fn())
    assert len(unshuffled) == 20
    shuffled = plain(dataset_fn(buffer_size=100, seed=37))
    assert sorted(shuffled) == sorted(unshuffled)
    assert plain(dataset_fn(buffer_size=100, seed=37)) == shuffled
    different = plain(dataset_fn(buffer_size=100, seed=137))
    assert different != shuffled and sorted(different) == sorted(shuffled)
    assert sorted(plain(dataset_fn(buffer_size=2, seed=37))) == sorted(unshuffled)
    assert plain(dataset_fn(count=0, buffer_size=100, seed=37)) == []


def test_seed_zero():
    # tf's graph-mode case compares a Python 0 with a tensor 0 as the seed; here a numpy 0.
    assert plain(D.range(10).shuffle(10, seed=0)) == plain(D.range(10).shuffle(10, seed=np.int64(0)))


def test_default_arguments():
    it = iter(D.from_tensor_slices([0, 1, 2, 3, 4]).shuffle(5).repeat())
    counts = collections.Counter(int(next(it)) for _ in range(50))
    assert counts == {i: 10 for i in range(5)}


@pytest.mark.parametrize("reshuffle", [True, False])
def test_shuffle_seed(reshuffle):
    def run():
        return plain(D.range(10).shuffle(10, seed=42, reshuffle_each_iteration=reshuffle).repeat(3))

    assert run() == run()


def test_multiple_iterators():
    # Without a seed, two iterators of one dataset shuffle differently. (tf's reshuffle=False variant
    # is graph-mode only: in eager tf.data, as here, such iterators repeat one order.)
    ds = D.range(100).shuffle(10, reshuffle_each_iteration=True).repeat(3)
    first, second = plain(ds), plain(ds)
    assert len(first) == len(second) == 300
    assert first != second


@pytest.mark.parametrize("reshuffle", [True, False])
@pytest.mark.parametrize("seed", [None, 42])
def test_reshuffle_repeat_epochs(reshuffle, seed):
    out = plain(D.range(10).shuffle(10, seed=seed, reshuffle_each_iteration=reshuffle).repeat(2))
    assert (out[:10] == out[10:]) == (not reshuffle)


@pytest.mark.parametrize("reshuffle", [True, False])
@pytest.mark.parametrize("seed", [None, 42])
def test_reshuffle_iteration_epochs(reshuffle, seed):
    ds = D.range(10).shuffle(10, seed=seed, reshuffle_each_iteration=reshuffle)
    assert (plain(ds) == plain(ds)) == (not reshuffle)


def test_shuffle_resource_capture():
    ids = D.range(10).shuffle(1)
    assert plain(D.range(1).interleave(lambda _: ids)) == list(range(10))


@pytest.mark.parametrize("reshuffle", [True, False])
@pytest.mark.parametrize("seed", [None, 42])
def test_reshuffle_separate_transformations(reshuffle, seed):
    ds = D.range(10)
    first = plain(ds.shuffle(10, seed=seed, reshuffle_each_iteration=reshuffle))
    second = plain(ds.shuffle(10, seed=seed, reshuffle_each_iteration=reshuffle))
    assert (first != second) == (seed is None)


def test_empty_dataset():
    # The map fails on its only element; the cache then holds nothing and the next epoch ends at once.
    def check_zero(x):
        if x != 0:
            raise ValueError("assertion failed: x == 0")
        return x

    it = iter(D.from_tensors(1).map(check_zero).cache().shuffle(buffer_size=10).repeat())
    with pytest.raises(ValueError, match="x == 0"):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


@pytest.mark.parametrize("reshuffle", [True, False])
def test_rerandomize_on_replicate(reshuffle):
    # tf re-instantiates the dataset from its graph; building the pipeline again is the equivalent.
    def make():
        return D.range(100).shuffle(100, reshuffle_each_iteration=reshuffle)

    first, second = plain(make()), plain(make())
    assert sorted(first) == sorted(second)
    assert first != second


@pytest.mark.parametrize("reshuffle", [True, False])
def test_pickled_copy_keeps_its_seed(reshuffle):
    # Deliberate difference (docs/porting.md): a pickled dataset is the same dataset, so worker
    # processes given a copy agree on the order of an unseeded shuffle.
    import pickle

    ds = D.range(100).shuffle(100, reshuffle_each_iteration=reshuffle)
    assert plain(pickle.loads(pickle.dumps(ds))) == plain(ds)


@pytest.mark.parametrize("reshuffle", [True, False])
@pytest.mark.parametrize("buffer_size", [1, 3, 5, 8, 10])
def test_checkpoint(reshuffle, buffer_size):
    verify_checkpoints(
        lambda: D.range(5).shuffle(buffer_size, seed=55, reshuffle_each_iteration=reshuffle).repeat(2), 10
    )
