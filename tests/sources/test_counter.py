import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def test_counter_counts_forever():
    assert [int(x) for x in D.counter().take(3)] == [0, 1, 2]
    assert [int(x) for x in D.counter(10, -3).take(3)] == [10, 7, 4]
    assert D.counter().cardinality() == hr.INFINITE_CARDINALITY
    assert D.counter(dtype="int32").element_spec == hr.TensorSpec((), "int32")
    assert [int(x) for x in D.counter().skip(1000).take(1)] == [1000]


def test_counter_refuses_bad_arguments():
    with pytest.raises(hr.InvalidArgumentError, match="step"):
        D.counter(0, 1.5)
    with pytest.raises(hr.InvalidArgumentError, match="dtype"):
        D.counter(dtype="string")


def test_counter_checkpoints():
    check_checkpoints(lambda: D.counter(5, 2).take(20))
