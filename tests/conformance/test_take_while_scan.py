"""tensorflow/python/data/kernel_tests/take_while_test.py and scan_test.py, translated."""

import itertools

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import HeadraceError, UserStopIteration

from .support import plain, produces, verify_checkpoints

D = hr.Dataset


@pytest.mark.parametrize(("num_elements", "window_size"), [(14, 2), (15, 2), (100, 3)])
def test_take_while_dataset(num_elements, window_size):
    ds = D.range(num_elements).batch(window_size)
    ds = ds.take_while(predicate=lambda elem: elem.shape[0] > window_size - 1).flat_map(D.from_tensor_slices)
    assert plain(ds) == list(range(num_elements // window_size * window_size))


@pytest.mark.parametrize(("num_elements", "upper_bound"), [(10, 2), (16, 7), (100, 99), (100, 101), (0, 1)])
def test_take_while_dataset_range(num_elements, upper_bound):
    assert plain(D.range(num_elements).take_while(lambda x: x < upper_bound)) == list(
        range(min(num_elements, upper_bound))
    )


def test_take_while_dataset_string():
    words = ["this", "is", "the", "test", "for", "strings"]
    ds = D.from_tensor_slices(words).take_while(predicate=lambda x: x != b"test")
    produces(ds, [b"this", b"is", b"the"])


@pytest.mark.parametrize(("size", "index"), [(5, 3), (10, 0), (100, 5), (8, 7)])
def test_take_while_dataset_short_circuit(size, index):
    flags = [True] * size
    flags[index] = False
    produces(D.from_tensor_slices(flags).take_while(predicate=lambda x: x), [True] * index)


def test_take_while_dataset_with_repeat():
    assert plain(D.range(10).take_while(predicate=lambda x: x < 2).repeat(5)) == [0, 1] * 5


@pytest.mark.parametrize("num_elements", [10, 23])
@pytest.mark.parametrize("upper_bound", [10, 23])
def test_take_while_checkpoint(num_elements, upper_bound):
    verify_checkpoints(
        lambda: D.range(num_elements).take_while(predicate=lambda x: x < upper_bound),
        min(num_elements, upper_bound),
    )


def _counting(start, scan_fn):
    return D.from_tensors(0).repeat().scan(initial_state=start, scan_func=scan_fn)


@pytest.mark.parametrize(
    ("start", "step", "take"), [(0, 1, 10), (0, 1, 0), (10, 1, 10), (10, 2, 10), (10, -1, 10), (10, -2, 10)]
)
def test_count(start, step, take):
    ds = _counting(start, lambda state, _: (state + step, state)).take(take)
    assert plain(ds) == list(itertools.islice(itertools.count(start, step), take))


def test_fibonacci():
    ds = (
        D.from_tensors(1)
        .repeat(None)
        .scan(initial_state=[0, 1], scan_func=lambda a, _: ([a[1], a[0] + a[1]], a[1]))
    )
    it = iter(ds)
    assert [int(next(it)) for _ in range(6)] == [1, 1, 2, 3, 5, 8]


@pytest.mark.parametrize(("start", "step", "take"), [(0, 1, 10), (10, -2, 10)])
def test_sparse_count(start, step, take):
    # A SparseTensor state becomes a numpy array carried as the state.
    ds = _counting(np.array([start]), lambda state, _: (np.array([state[0] + step]), state)).take(take)
    assert [int(v[0]) for v in ds] == list(itertools.islice(itertools.count(start, step), take))


def test_tensor_array_simple():
    # tf's TensorArray state: a growing numpy array.
    ds = D.range(5).scan(
        initial_state=np.array([-1]), scan_func=lambda ta, x: (np.append(ta, x), np.append(ta, x))
    )
    expected = [[-1, 0], [-1, 0, 1], [-1, 0, 1, 2], [-1, 0, 1, 2, 3], [-1, 0, 1, 2, 3, 4]]
    for _ in range(2):
        assert plain(ds) == expected


def test_tensor_array_with_cond_reset():
    def scan_fn(ta, x):
        updated = np.append(ta, x)
        return (np.array([], dtype=np.int64) if x % 3 == 0 else updated), updated

    ds = D.range(6).scan(initial_state=np.array([-1]), scan_func=scan_fn)
    for _ in range(2):
        assert plain(ds) == [[-1, 0], [1], [1, 2], [1, 2, 3], [4], [4, 5]]


def test_changing_state_shape():
    def scan_fn(state, value):
        longer, larger_rank = state
        return (np.concatenate([longer, longer]), np.expand_dims(larger_rank, 0)), (state, value)

    ds = D.from_tensors(0).repeat(5).scan(initial_state=(np.array([0]), np.array(1)), scan_func=scan_fn)
    out = list(ds)
    assert len(out) == 5
    for i, ((longer, larger_rank), _) in enumerate(out):
        assert longer.tolist() == [0] * 2**i
        assert np.array_equal(larger_rank, np.array(1, ndmin=i)) and larger_rank.ndim == i


def test_incorrect_state_type():
    ds = D.range(10).scan(initial_state=np.int32(1), scan_func=lambda state, _: (np.int64(1), state))
    # tf checks when scan() is called; headrace when the state comes back from the function.
    with pytest.raises((TypeError, HeadraceError), match="state"):
        list(ds)


def test_incorrect_return_type():
    ds = D.range(10).scan(initial_state=np.int32(1), scan_func=lambda state, value: np.int64(1))
    with pytest.raises((TypeError, HeadraceError), match="pair|new state"):
        list(ds)


def test_scan_preserve_cardinality():
    def scan_fn(state, value):
        raise StopIteration()

    with pytest.raises(UserStopIteration):
        list(D.from_tensors(0).scan(initial_state=np.int32(1), scan_func=scan_fn))


def test_scan_name():
    produces(D.from_tensors(42).scan(0, lambda x, y: (y, y), name="scan"), [42])


def test_scan_checkpoint():
    verify_checkpoints(
        lambda: (
            D.from_tensors(1)
            .repeat(10)
            .scan(initial_state=[0, 1], scan_func=lambda a, _: ([a[1], a[0] + a[1]], a[1]))
        ),
        10,
    )
