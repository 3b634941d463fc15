import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def test_unique_keeps_first_occurrences_in_order():
    assert [int(x) for x in D.from_tensor_slices([1, 37, 2, 37, 2, 1]).unique()] == [1, 37, 2]
    assert list(D.from_tensor_slices([b"a", b"b", b"a"]).unique()) == [b"a", b"b"]
    vectors = D.from_tensor_slices(np.array([[1, 2], [1, 2], [2, 1]])).unique()
    assert [v.tolist() for v in vectors] == [[1, 2], [2, 1]]
    assert D.range(3).unique().cardinality() == hr.UNKNOWN_CARDINALITY


def test_unique_refuses_other_elements():
    with pytest.raises(hr.InvalidArgumentError, match="integer or string"):
        list(D.from_tensor_slices([1.0, 2.0]).unique())
    with pytest.raises(hr.InvalidArgumentError, match="element 0"):
        list(D.zip(D.range(2), D.range(2)).unique())


def test_unique_each_epoch_starts_afresh_and_checkpoints():
    assert [int(x) for x in D.from_tensor_slices([1, 1, 2]).unique().repeat(2)] == [1, 2, 1, 2]
    check_checkpoints(lambda: D.range(30).map(lambda x: x % 7).unique())


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-5, 5), max_size=40))
def test_unique_is_dict_fromkeys(values):
    ds = D.from_tensor_slices(np.array(values, dtype=np.int64)) if values else D.range(0)
    assert [int(x) for x in ds.unique()] == list(dict.fromkeys(values))
