import numpy as np
import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def values(ds) -> list[int]:
    return [int(x) for x in ds]


def test_random_is_seeded_int64_and_infinite():
    a = values(D.random(seed=1).take(100))
    assert a == values(D.random(seed=1).take(100))
    assert a != values(D.random(seed=2).take(100))
    assert all(0 <= x < 2**32 for x in a) and len(set(a)) == 100  # tf.data's range
    assert D.random().cardinality() == hr.INFINITE_CARDINALITY
    assert D.random().element_spec == hr.TensorSpec((), "int64")
    assert isinstance(next(iter(D.random(seed=1))), np.int64)


def test_random_rerandomize_each_iteration():
    same = D.random(seed=3).take(5)
    assert values(same) == values(same)
    fresh = D.random(seed=3, rerandomize_each_iteration=True).take(5)
    assert values(fresh) != values(fresh)
    # epochs inside one iteration follow the same rule
    twice = values(D.random(seed=3, rerandomize_each_iteration=True).take(5).repeat(2))
    assert twice[:5] != twice[5:]
    assert values(D.random(seed=3).take(5).repeat(2)) == values(same) * 2


def test_random_skip_is_a_jump_and_checkpoints():
    assert values(D.random(seed=9).skip(50).take(3)) == values(D.random(seed=9).take(53))[50:]
    check_checkpoints(lambda: D.random(seed=4).take(30))
    check_checkpoints(lambda: D.random(seed=4, rerandomize_each_iteration=True).take(7).repeat(3))


def test_random_refuses_bad_seeds():
    with pytest.raises(hr.InvalidArgumentError, match="seed"):
        D.random(seed=-1)
    with pytest.raises(hr.InvalidArgumentError, match="rerandomize"):
        D.random(rerandomize_each_iteration="yes")
