"""tensorflow/python/data/kernel_tests/rebatch_test.py and prefetch_test.py, translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError

from .support import plain, produces, verify_checkpoints

D = hr.Dataset


def shapes(ds):
    spec = ds.element_spec
    leaves = [spec] if not isinstance(spec, (tuple, dict)) else list(_leaves(spec))
    return [list(s.shape) for s in leaves]


def _leaves(spec):
    if isinstance(spec, dict):
        for k in sorted(spec):
            yield from _leaves(spec[k])
    elif isinstance(spec, tuple):
        for s in spec:
            yield from _leaves(s)
    else:
        yield spec


@pytest.mark.parametrize(
    ("n", "batch", "batch_drop", "sizes", "drop", "expected_shape"),
    [
        (8, 4, True, [2, 1, 1], False, [[None]]),
        (8, 4, True, [2, 2], True, [[2]]),
        (8, 4, True, [2, 2], False, [[2]]),
        (8, 4, False, [2, 2], False, [[None]]),
        (8, 4, False, [2, 2], True, [[2]]),
        (10, 5, True, [2, 2], False, [[None]]),
        (10, 5, True, [2, 2], True, [[2]]),
    ],
    ids=[
        "not_all_equal",
        "divisible_drop",
        "divisible",
        "unknown",
        "unknown_drop",
        "indivisible",
        "indivisible_drop",
    ],
)
def test_shape_inference(n, batch, batch_drop, sizes, drop, expected_shape):
    ds = D.range(n).batch(batch, drop_remainder=batch_drop).rebatch(batch_size=sizes, drop_remainder=drop)
    assert shapes(ds) == expected_shape


@pytest.mark.parametrize("drop_remainder", [True, False])
def test_basic(drop_remainder):
    ds = D.range(8).batch(4, drop_remainder=True).rebatch(batch_size=[2, 2], drop_remainder=drop_remainder)
    assert plain(ds) == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_partial_batch():
    assert plain(D.range(5).batch(4).rebatch(batch_size=[2, 2])) == [[0, 1], [2, 3], [4]]


def test_partial_batch_with_drop_remainder():
    assert plain(D.range(5).batch(4).rebatch(batch_size=[2, 2], drop_remainder=True)) == [[0, 1], [2, 3]]


@pytest.mark.parametrize("drop_remainder", [True, False])
def test_batch_size_greater_than_original(drop_remainder):
    ds = D.range(12).batch(4).rebatch(batch_size=[6], drop_remainder=drop_remainder)
    assert plain(ds) == [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]]


@pytest.mark.parametrize("batch_size", [2, 3, 4])
@pytest.mark.parametrize("drop_remainder", [True, False])
def test_batch_size_equal_to_original(batch_size, drop_remainder):
    ds = D.range(11).batch(batch_size, drop_remainder=drop_remainder)
    assert plain(ds.rebatch(batch_size=batch_size, drop_remainder=False)) == plain(ds)


@pytest.mark.parametrize("drop_remainder", [True, False])
def test_empty_splits(drop_remainder):
    ds = (
        D.range(8)
        .batch(4, drop_remainder=True)
        .rebatch(batch_size=[1, 1, 1, 1, 0], drop_remainder=drop_remainder)
    )
    assert shapes(ds) == [[None]]
    assert plain(ds) == [[0], [1], [2], [3], [], [4], [5], [6], [7], []]


@pytest.mark.parametrize("drop_remainder", [True, False])
def test_empty_first_splits(drop_remainder):
    ds = D.range(8).batch(4, drop_remainder=True).rebatch(batch_size=[0, 1], drop_remainder=drop_remainder)
    expected = []
    for i in range(8):
        expected += [[], [i]]
    assert plain(ds) == expected + [[]]


@pytest.mark.parametrize("drop_remainder", [True, False])
def test_empty_last_splits(drop_remainder):
    ds = D.range(8).batch(4, drop_remainder=True).rebatch(batch_size=[1, 0], drop_remainder=drop_remainder)
    expected = []
    for i in range(8):
        expected += [[i], []]
    assert plain(ds) == expected


@pytest.mark.parametrize("drop_remainder", [True, False])
def test_empty_tensors(drop_remainder):
    ds = D.range(8).map(lambda x: np.zeros((5, 0), np.float32)).batch(2)
    produces(ds.rebatch(batch_size=4, drop_remainder=drop_remainder), [np.zeros((4, 5, 0), np.float32)] * 2)


@pytest.mark.parametrize("drop_remainder", [True, False])
def test_scalar_batch_size_input(drop_remainder):
    ds = D.range(8).batch(4, drop_remainder=True).rebatch(batch_size=2, drop_remainder=drop_remainder)
    assert shapes(ds) == [[2]]
    assert plain(ds) == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_multiple_batches():
    ds = D.range(16).batch(2, drop_remainder=True).batch(4, drop_remainder=True)
    assert shapes(ds) == [[4, 2]]
    ds = ds.rebatch([2, 2])
    assert shapes(ds) == [[2, 2]]
    assert plain(ds) == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], [10, 11]], [[12, 13], [14, 15]]]


def test_nested_dictionary_output():
    ds = D.range(8).map(lambda x: {"a": x, "b": {"c": x + 1}}).batch(4, drop_remainder=True).rebatch([2, 2])
    assert shapes(ds) == [[2], [2]]
    assert plain(ds) == [{"a": [i, i + 1], "b": {"c": [i + 1, i + 2]}} for i in range(0, 8, 2)]


@pytest.mark.xfail(
    reason="rebatch (like unbatch) cannot split a None component yet (docs/porting.md, differences)",
    strict=True,
)
def test_none_dataset():
    ds = D.range(4).map(lambda x: (x, None)).batch(4, drop_remainder=True).rebatch(batch_size=[2, 2])
    assert [e[1] for e in ds] == [None, None]


def test_rebatch_checkpoint():
    verify_checkpoints(lambda: D.range(64).batch(2 * 4, drop_remainder=True).rebatch(batch_size=[4, 4]), 16)


@pytest.mark.parametrize("buffer_size", [-1, None, 0, 42])
def test_prefetch_buffer_size(buffer_size):
    produces(D.range(10).prefetch(buffer_size=buffer_size), list(range(10)))


@pytest.mark.parametrize("buffer_size", [-2, -42])
def test_prefetch_invalid_buffer_size(buffer_size):
    with pytest.raises(InvalidArgumentError):
        D.range(10).prefetch(buffer_size=buffer_size)


@pytest.mark.parametrize("buffer_size", [-1, None, 0, 42])
def test_prefetch_with_slack(buffer_size):
    options = hr.Options()
    options.experimental_slack = True
    produces(D.range(100).prefetch(buffer_size).with_options(options), list(range(100)))


def test_prefetch_name():
    produces(D.from_tensors(42).prefetch(1, name="prefetch"), [42])


def test_prefetch_checkpoint():
    verify_checkpoints(lambda: D.range(100).prefetch(10), 100, max_elements=60)


@pytest.mark.parametrize("elements", [10, 50, 100])
@pytest.mark.parametrize("buffer_size", [0, 5, 10])
def test_prefetch_random_access(elements, buffer_size):
    ds = D.range(elements).prefetch(buffer_size=buffer_size)
    n = ds.cardinality()
    assert n == elements
    for i in (0, n // 2, n - 1):
        assert plain(ds.skip(i).take(1)) == [i]
    assert plain(ds.skip(n)) == []
