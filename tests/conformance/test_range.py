"""tensorflow/python/data/kernel_tests/range_test.py, translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError

from .support import plain

D = hr.Dataset


@pytest.mark.parametrize(
    "args",
    [(5,), (2, 5), (2, 10, 2), (2, 10, -1), (10, 2), (10, 2, 2), (10, 2, -1)],
    ids=[
        "stop",
        "start_stop",
        "start_stop_step",
        "negative_step",
        "stop_less_than_start",
        "stop_less_than_start_positive_step",
        "stop_less_than_start_negative_step",
    ],
)
def test_range(args):
    assert plain(D.range(*args)) == list(range(*args))


def test_zero_step():
    with pytest.raises(InvalidArgumentError):
        D.range(2, 10, 0)


def test_output_type():
    ds = D.range(5, output_type=hr.int32)
    assert plain(ds) == list(range(5))
    assert ds.element_spec.dtype == hr.int32
    assert next(iter(ds)).dtype == np.int32


def test_default_output_type_is_int64():
    assert next(iter(D.range(3))).dtype == np.int64
