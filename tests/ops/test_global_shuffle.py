import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from headrace.ops.support.permutation import IndexPermutation
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process


def ints(ds):
    return [int(x) for x in ds]


def make():
    return hr.Dataset.range(37).global_shuffle(seed=4).repeat(2)


@given(n=st.integers(0, 3000), seed=st.integers(0, 2**40))
@settings(max_examples=50, deadline=None)
def test_index_permutation_is_a_bijection(n, seed):
    assert sorted(IndexPermutation(n, seed)(np.arange(n)).tolist()) == list(range(n))


def test_each_epoch_is_a_permutation_and_epochs_differ():
    out = ints(hr.Dataset.range(100).global_shuffle(seed=1).repeat(3))
    epochs = [out[i : i + 100] for i in (0, 100, 200)]
    assert all(sorted(e) == list(range(100)) for e in epochs)
    assert epochs[0] != epochs[1] != epochs[2] and epochs[0] != list(range(100))
    fixed = ints(hr.Dataset.range(50).global_shuffle(seed=1, reshuffle_each_iteration=False).repeat(2))
    assert fixed[:50] == fixed[50:]


def test_seeded_order_is_reproducible_and_pinned():
    a = ints(hr.Dataset.range(12).global_shuffle(seed=9))
    assert a == ints(hr.Dataset.range(12).global_shuffle(seed=9))
    assert a == [int(v) for v in IndexPermutation(12, [9, 0, 0])(np.arange(12))]


def test_uniform_positions_chi_square():
    # Where does element 0 land, over many iterations of one dataset (each iteration reshuffles)?
    n, runs = 16, 4000
    ds = hr.Dataset.range(n).global_shuffle(seed=2)
    counts = np.zeros(n)
    for _ in range(runs):
        counts[ints(ds).index(0)] += 1
    expected = runs / n
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 37.7  # p = 0.001 for 15 degrees of freedom


def test_works_through_random_access_stages():
    ds = hr.Dataset.from_tensor_slices({"x": np.arange(20), "y": np.arange(20) * 2}).skip(5).take(10)
    out = list(ds.global_shuffle(seed=3))
    assert sorted(int(e["x"]) for e in out) == list(range(5, 15))
    assert all(int(e["y"]) == 2 * int(e["x"]) for e in out)


def test_rejects_inputs_without_random_access():
    with pytest.raises(hr.InvalidArgumentError, match="filter.*cannot.*Move global_shuffle before"):
        hr.Dataset.range(10).filter(lambda x: True).global_shuffle()
    with pytest.raises(hr.InvalidArgumentError, match="shuffle"):
        hr.Dataset.range(10).shuffle(3).global_shuffle()


def test_state_is_tiny_for_a_huge_dataset_and_skip_is_a_seek():
    it = iter(hr.Dataset.range(10**12).global_shuffle(seed=1))
    next(it)
    assert len(json.dumps(it.get_state())) < 300
    skipped = iter(hr.Dataset.range(10**12).global_shuffle(seed=1).skip(10**11))
    first = next(skipped)  # would take hours if skip read the elements
    expected = IndexPermutation(10**12, [1, 0, 0])(np.array([10**11]))[0]
    assert int(first) == int(expected)


def test_checkpoints():
    check_checkpoints(make)
    check_checkpoints(lambda: hr.Dataset.range(30).global_shuffle(seed=5).batch(4))


def test_checkpoint_in_fresh_process():
    check_fresh_process("tests.ops.test_global_shuffle:make", after=40)


def test_through_batch_and_finite_repeat():
    batches = [b.tolist() for b in hr.Dataset.range(10).batch(3).global_shuffle(seed=1)]
    assert sorted(batches) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    out = ints(hr.Dataset.range(4).repeat(3).global_shuffle(seed=1))
    assert sorted(out) == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    with pytest.raises(hr.InvalidArgumentError, match="repeat"):
        hr.Dataset.range(4).repeat().global_shuffle()


def test_skip_over_batches_is_a_seek():
    it = iter(hr.Dataset.range(10**12).batch(1000).skip(10**8))
    assert int(next(it)[0]) == 10**11
