"""tensorflow/python/data/kernel_tests/concatenate_test.py, translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError

from .support import produces, verify_checkpoints

D = hr.Dataset


def _tile(rows, n):
    return np.tile(np.array([[r] for r in rows]), n)


def _check(input_components, other_components):
    ds = D.from_tensor_slices(input_components).concatenate(D.from_tensor_slices(other_components))
    expected = [tuple(c[i] for c in input_components) for i in range(4)]
    expected += [tuple(c[i] for c in other_components) for i in range(5)]
    produces(ds, expected)
    return ds


def test_concatenate_dataset():
    a = (_tile([1, 2, 3, 4], 20), _tile([12, 13, 14, 15], 15), np.array([37.0, 38.0, 39.0, 40.0]))
    b = (
        _tile([1, 2, 3, 4, 5], 20),
        _tile([12, 13, 14, 15, 16], 15),
        np.array([37.0, 38.0, 39.0, 40.0, 41.0]),
    )
    ds = _check(a, b)
    assert [tuple(s.shape) for s in ds.element_spec] == [(20,), (15,), ()]


def test_concatenate_dataset_different_shape():
    a = (_tile([1, 2, 3, 4], 20), _tile([12, 13, 14, 15], 4))
    b = (_tile([1, 2, 3, 4, 5], 20), _tile([12, 13, 14, 15, 16], 15))
    ds = _check(a, b)
    assert [tuple(s.shape) for s in ds.element_spec] == [(20,), (None,)]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            (_tile([1, 2, 3, 4], 5), _tile([12, 13, 14, 15], 4)),
            (_tile([1, 2, 3, 4, 5], 20), _tile([12, 13, 14, 15, 16], 15), np.arange(5.0)),
        ),
        (
            {"foo": _tile([1, 2, 3, 4], 1), "bar": _tile([12, 13, 14, 15], 1)},
            {"foo": _tile([1, 2, 3, 4], 1), "baz": _tile([5, 6, 7, 8], 1)},
        ),
        (
            (_tile([1, 2, 3, 4], 5), _tile([12, 13, 14, 15], 4)),
            (_tile([1.0, 2.0, 3.0, 4.0], 5), _tile([12, 13, 14, 15], 15)),
        ),
    ],
    ids=["different_structure", "different_keys", "different_type"],
)
def test_concatenate_dataset_mismatch(a, b):
    # tf: TypeError "have different types"; headrace: InvalidArgumentError (a ValueError) naming both
    # structures and what differs (docs/porting.md, differences).
    with pytest.raises(InvalidArgumentError, match="must share one structure and dtypes"):
        D.from_tensor_slices(a).concatenate(D.from_tensor_slices(b))


def test_checkpoint():
    def make():
        a = (_tile([1, 2, 3, 4], 20), _tile([12, 13, 14, 15], 4))
        b = (_tile([5, 6, 7, 8, 9], 20), _tile([16, 17, 18, 19, 20], 15))
        return D.from_tensor_slices(a).concatenate(D.from_tensor_slices(b))

    verify_checkpoints(make, 9)
