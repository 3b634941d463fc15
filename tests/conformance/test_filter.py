"""tensorflow/python/data/kernel_tests/filter_test.py, translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import HeadraceError, InvalidArgumentError

from .support import plain, produces, verify_checkpoints

D = hr.Dataset
COMPONENTS = (
    np.arange(7, dtype=np.int64),
    np.array([[1, 2, 3]], dtype=np.int64) * np.arange(7, dtype=np.int64)[:, np.newaxis],
    np.array(37.0, dtype=np.float64) * np.arange(7),
)


@pytest.mark.parametrize(("count", "modulus"), [(14, 2), (4, 18), (0, 1)])
def test_filter_dataset(count, modulus):
    ds = D.from_tensor_slices(COMPONENTS).map(lambda x, y, z: (x * x, y * y, z * z)).repeat(count)
    ds = ds.filter(lambda x, _y, _z: x % modulus == 0)
    assert [tuple(s.shape) for s in ds.element_spec] == [c.shape[1:] for c in COMPONENTS]
    expected = [
        tuple(c[i] ** 2 for c in COMPONENTS) for _ in range(count) for i in range(7) if i**2 % modulus == 0
    ]
    produces(ds, expected)


def test_filter_range():
    assert plain(D.range(4).filter(lambda x: x % 3 != 2)) == [0, 1, 3]


def test_filter_dict():
    ds = D.range(10).map(lambda x: {"foo": x * 2, "bar": x**2}).filter(lambda d: d["bar"] % 2 == 0)
    ds = ds.map(lambda d: d["foo"] + d["bar"])
    assert plain(ds) == [i * 2 + i**2 for i in range(10) if not (i**2) % 2]


def test_use_step_container_in_filter():
    data = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64)
    ds = D.from_tensor_slices(data).filter(lambda xs: np.sum(xs * xs) == 1 + 4 + 9)
    produces(ds, [data[0]])


def test_short_circuit():
    ds = D.zip((D.range(10), D.from_tensors(True).repeat(None))).filter(lambda x, y: y)
    produces(ds, [(i, True) for i in range(10)])


def test_parallel_filters():
    ds = D.range(10).filter(lambda x: x % 2 == 0)
    iterators = [iter(ds) for _ in range(10)]
    assert [int(next(it)) for it in iterators] == [0] * 10


def test_name():
    produces(D.from_tensors(42).filter(lambda x: True, name="filter"), [42])


def test_predicate_fail_with_error_context():
    ds = D.from_tensors(42).filter(lambda x: (x // 0) > 0, name="filter")
    # tf: InvalidArgumentError naming the transformation; headrace re-raises the user's exception
    # unchanged, with a note naming the stage and the element.
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as info:
        list(ds)
    assert any("filter" in note for note in getattr(info.value, "__notes__", []))


def test_predicate_must_return_a_bool():
    # tf: a ValueError when tracing; headrace: InvalidArgumentError (a ValueError) when it is called.
    with pytest.raises(
        InvalidArgumentError,
        match=r"filter\(<lambda> at test_filter\.py:\d+\): the predicate must return a scalar bool, "
        r"got ndarray \(2,\) for input element 0",
    ):
        list(D.range(3).filter(lambda x: np.array([True, False])))


def test_checkpoint():
    verify_checkpoints(lambda: D.range(100).filter(lambda x: x % 3 != 2), sum(x % 3 != 2 for x in range(100)))


def test_checkpoint_dict():
    def make():
        ds = D.range(10).map(lambda x: {"foo": x * 2, "bar": x**2}).filter(lambda d: d["bar"] % 2 == 0)
        return ds.map(lambda d: d["foo"] + d["bar"])

    verify_checkpoints(make, 5)


def test_shuffle_filter():
    ds = D.range(100).global_shuffle().filter(lambda x: x % 2 == 0)
    produces(ds, list(range(0, 100, 2)), items_equal=True)


def test_filter_shuffle():
    ds = D.range(100).filter(lambda x: x % 2 == 0)
    with pytest.raises(HeadraceError, match="read by index"):
        list(ds.global_shuffle())


@pytest.mark.parametrize("reshuffle", [True, False])
def test_shuffle_filter_checkpoint(reshuffle):
    verify_checkpoints(
        lambda: (
            D.range(10)
            .global_shuffle(seed=42, reshuffle_each_iteration=reshuffle)
            .filter(lambda x: x % 2 == 0)
        ),
        5,
    )
