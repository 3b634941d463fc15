"""tensorflow/python/data/kernel_tests/sample_from_datasets_test.py and choose_from_datasets_test.py,
translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import HeadraceError

from .support import plain, produces, verify_checkpoints

D = hr.Dataset
WEIGHT_TYPES = ["list", "array", "dataset"]


def _weights(values, kind):
    if kind == "list":
        return list(values)
    if kind == "array":
        return np.asarray(values)
    return D.from_tensors(np.asarray(values)).repeat()


@pytest.mark.parametrize("kind", WEIGHT_TYPES)
@pytest.mark.parametrize(
    "probs",
    [[0.85, 0.05, 0.1], list(np.random.default_rng(1619).random(5) / 2.5), [1.0]],
    ids=["skewed", "random", "one"],
)
def test_sample_from_datasets(kind, probs):
    probs = np.asarray(probs) / np.sum(probs)
    n = 5000
    ds = D.sample_from_datasets(
        [D.from_tensors(i).repeat() for i in range(len(probs))], _weights(probs, kind), seed=3
    )
    freqs = np.bincount(plain(ds.take(n)), minlength=len(probs)) / n
    chi2 = np.sum((freqs - probs) ** 2 / probs)
    assert chi2 < 1e-2


@pytest.mark.parametrize("kind", WEIGHT_TYPES)
def test_sample_from_datasets_stopping_on_empty_dataset(kind):
    datasets = [D.from_tensors(np.int64(-1)), D.from_tensors(np.int64(1)).repeat(), D.range(10).repeat()]
    out = plain(
        D.sample_from_datasets(datasets, weights=_weights([0.5, 0.1, 0.4], kind), stop_on_empty_dataset=True)
    )
    assert out.count(-1) == 1


@pytest.mark.parametrize("kind", WEIGHT_TYPES)
def test_sample_from_datasets_skipping_empty_dataset(kind):
    datasets = [D.from_tensors(np.int64(-1)), D.from_tensors(np.int64(1)).repeat(), D.range(10).repeat()]
    ds = D.sample_from_datasets(
        datasets, weights=_weights([0.5, 0.1, 0.4], kind), stop_on_empty_dataset=False
    )
    out = plain(ds.take(100))
    assert len(out) == 100 and out.count(-1) == 1


@pytest.mark.parametrize("kind", WEIGHT_TYPES)
def test_sample_from_datasets_with_zero_weight(kind):
    datasets = [D.from_tensors(-1).repeat(2), D.from_tensors(1).repeat(2)]
    assert plain(
        D.sample_from_datasets(datasets, weights=_weights([0.0, 1.0], kind), stop_on_empty_dataset=True)
    ) == [1, 1]


@pytest.mark.parametrize("kind", WEIGHT_TYPES)
def test_sample_from_empty_dataset(kind):
    datasets = [D.range(0), D.range(1).repeat()]
    assert (
        plain(
            D.sample_from_datasets(datasets, weights=_weights([1.0, 0.0], kind), stop_on_empty_dataset=True)
        )
        == []
    )


def test_sample_from_datasets_skipping_datasets_with_zero_weight():
    datasets = [D.from_tensors(-1).repeat(), D.from_tensors(1)]
    assert plain(
        D.sample_from_datasets(datasets, weights=np.asarray([0.0, 1.0]), stop_on_empty_dataset=False)
    ) == [1]


def test_sample_from_datasets_all_weights_are_zero():
    datasets = [D.from_tensors(-1).repeat(), D.from_tensors(1).repeat()]
    assert (
        plain(D.sample_from_datasets(datasets, weights=np.asarray([0.0, 0.0]), stop_on_empty_dataset=False))
        == []
    )


def test_sample_from_datasets_cardinality():
    ds = D.sample_from_datasets([D.from_tensors([1.0]).repeat(), D.from_tensors([2.0]).repeat()])
    assert ds.cardinality() == hr.INFINITE_CARDINALITY


def test_sample_from_datasets_nested():
    ds = D.sample_from_datasets([D.range(10).window(2), D.range(10, 20).window(2)], weights=[0.3, 0.7])
    first = next(iter(ds.flat_map(lambda x: x)))
    assert int(first) in range(20)


def _two_ranges(rerandomize):
    return D.sample_from_datasets(
        [D.range(0, 10), D.range(100, 110)],
        seed=42,
        weights=[0.5, 0.5],
        stop_on_empty_dataset=True,
        rerandomize_each_iteration=rerandomize,
    )


@pytest.mark.parametrize("rerandomize", [None, True, False])
def test_rerandomize_each_iteration_epochs(rerandomize):
    ds = _two_ranges(rerandomize)
    first, second = plain(ds), plain(ds)
    assert (first != second) == bool(rerandomize)


@pytest.mark.parametrize("rerandomize", [None, True, False])
def test_rerandomize_repeat_epochs(rerandomize):
    out = plain(_two_ranges(rerandomize).repeat(2))
    first, second = out[: len(out) // 2], out[len(out) // 2 :]
    assert (first != second) == bool(rerandomize)


def test_sample_errors():
    with pytest.raises(ValueError, match="same length|one weight per dataset|weights"):
        D.sample_from_datasets([D.range(10), D.range(20)], weights=[0.25, 0.25, 0.25, 0.25])
    with pytest.raises((TypeError, ValueError), match="structure|dtype|compatible"):
        D.sample_from_datasets([D.from_tensors(0), D.from_tensors(0.0)])
    with pytest.raises(ValueError, match="empty"):
        D.sample_from_datasets(datasets=[], weights=[])


def test_sample_integer_weights_are_accepted():
    # tf requires float weights ([1, 1] is a TypeError); headrace takes any non-negative numbers.
    out = plain(D.sample_from_datasets([D.range(10), D.range(20)], weights=[1, 1], seed=1))
    assert sorted(out) == sorted(list(range(10)) + list(range(20)))


def test_sample_checkpoint():
    verify_checkpoints(
        lambda: D.sample_from_datasets(
            [D.from_tensors(i).repeat(None) for i in range(2)], [0.5, 0.5], seed=1813
        ).take(100),
        100,
        max_elements=40,
    )


WORDS = [b"foo", b"bar", b"baz"]


def test_choose_from_datasets():
    choices = np.random.default_rng(0).integers(3, size=15).astype(np.int64)
    ds = D.choose_from_datasets([D.from_tensors(w).repeat() for w in WORDS], D.from_tensor_slices(choices))
    produces(ds, [WORDS[i] for i in choices])


def _stopping(stop):
    datasets = [
        D.from_tensors(b"foo").repeat(2),
        D.from_tensors(b"bar").repeat(),
        D.from_tensors(b"baz").repeat(),
    ]
    choices = D.from_tensor_slices(np.asarray([0, 0, 0, 1, 1, 1, 2, 2, 2], dtype=np.int64))
    return D.choose_from_datasets(datasets, choices, stop_on_empty_dataset=stop)


def test_choose_from_datasets_stopping_on_empty_dataset():
    produces(_stopping(True), [b"foo", b"foo"])


def test_choose_from_datasets_skipping_empty_datasets():
    produces(_stopping(False), [b"foo", b"foo", b"bar", b"bar", b"bar", b"baz", b"baz", b"baz"])


def test_choose_from_datasets_choice_dataset_is_empty():
    datasets = [D.from_tensors(w).repeat() for w in WORDS]
    produces(D.choose_from_datasets(datasets, choice_dataset=D.range(0), stop_on_empty_dataset=False), [])


def test_choose_from_datasets_nested():
    ds = D.choose_from_datasets([D.range(10).window(2), D.range(10, 20).window(2)], D.range(2).repeat(5))
    expected = [v for i in range(5) for j in range(2) for v in (10 * j + 2 * i, 10 * j + 2 * i + 1)]
    assert plain(ds.flat_map(lambda x: x)) == expected


def test_choose_errors():
    two = [D.from_tensors(0), D.from_tensors(1)]
    with pytest.raises((TypeError, HeadraceError), match="int"):
        list(D.choose_from_datasets(two, choice_dataset=D.from_tensors(1.0)))
    with pytest.raises((TypeError, HeadraceError), match="scalar|int"):
        list(D.choose_from_datasets(two, choice_dataset=D.from_tensors([1.0])))
    with pytest.raises(HeadraceError, match="must be ints from 0 to 0"):
        list(D.choose_from_datasets([D.from_tensors(0)], choice_dataset=D.from_tensors(np.int64(1))))
    with pytest.raises(ValueError, match="empty"):
        D.choose_from_datasets(datasets=[], choice_dataset=D.from_tensors(1.0))
    with pytest.raises((TypeError, ValueError), match="choice_dataset"):
        D.choose_from_datasets([D.range(42)], choice_dataset=None)


def test_choose_checkpoint():
    indices = np.random.default_rng(12).permutation(np.repeat(np.arange(5, dtype=np.int64), 20))
    verify_checkpoints(
        lambda: D.choose_from_datasets([D.range(20) for _ in range(5)], D.from_tensor_slices(indices)),
        100,
        max_elements=40,
    )
