"""tensorflow/python/data/kernel_tests/shard_test.py and enumerate_test.py, translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError

from .support import plain, produces, verify_checkpoints

D = hr.Dataset


@pytest.mark.parametrize(
    ("n", "num_shards", "index", "expected"),
    [
        (10, 5, 2, [2, 7]),
        (10, 5, 0, [0, 5]),
        (1, 5, 2, []),
        (10, 7, 5, [5]),
        (10, 5, 4, [4, 9]),
        (10, 4, 3, [3, 7]),
        (10, 20, 5, [5]),
    ],
    ids=[
        "simple",
        "offset_zero",
        "ends_before_first",
        "larger_worker_pool",
        "index_equals_num_shards",
        "index_equals_num_shards2",
        "num_shards_larger_than_dataset",
    ],
)
def test_shard(n, num_shards, index, expected):
    assert plain(D.range(n).shard(num_shards, index)) == expected


def test_nested_data():
    ds = D.zip((D.range(10), D.range(10, 0, -1))).shard(5, 2)
    assert plain(ds) == [(2, 8), (7, 3)]


@pytest.mark.parametrize(("num_shards", "index"), [(5, 7), (5, -3), (-3, 1), (0, 1)])
def test_invalid_arguments(num_shards, index):
    with pytest.raises(InvalidArgumentError):
        list(D.range(10).shard(num_shards, index))


def test_shard_name():
    produces(D.from_tensors(42).shard(1, 0, name="shard"), [42])


@pytest.mark.parametrize("elems", [10, 100])
@pytest.mark.parametrize("num_shards", [2, 5])
@pytest.mark.parametrize("index", [0, 1])
def test_shard_checkpoint(elems, num_shards, index):
    verify_checkpoints(lambda: D.range(elems).shard(num_shards, index), elems // num_shards)


@pytest.mark.parametrize("elements", [0, 10, 50])
@pytest.mark.parametrize("num_shards", [5, 7, 10])
@pytest.mark.parametrize("index", [0, 1, 2, 3, 4])
def test_shard_random_access(elements, num_shards, index):
    ds = D.range(elements).shard(num_shards=num_shards, index=index)
    n = ds.cardinality()
    assert ds.node.random_access_length() == n
    for i in range(n):
        assert plain(ds.skip(i).take(1)) == [index + num_shards * i]
    assert plain(ds.skip(n)) == []


@pytest.mark.parametrize(
    ("n", "num_shards", "index", "expected"), [(10, 5, 0, [0, 5]), (7, 8, 3, [3]), (13, 23, 21, [])]
)
def test_shard_random_access_small(n, num_shards, index, expected):
    ds = D.range(n).shard(num_shards, index)
    assert [plain(ds.skip(i).take(1))[0] for i in range(ds.node.random_access_length())] == expected


@pytest.mark.parametrize("num_shards", [1, 3, 5])
@pytest.mark.parametrize("shard_index", [0, 1, 2, 4])
@pytest.mark.parametrize("seed", [None, 42])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_shard_global_shuffle(num_shards, shard_index, seed, reshuffle):
    if shard_index >= num_shards:
        return
    ds = D.range(100).shard(num_shards, shard_index).prefetch(hr.AUTOTUNE)
    out = plain(ds.global_shuffle(seed=seed, reshuffle_each_iteration=reshuffle))
    expected = list(range(shard_index, 100, num_shards))
    assert sorted(out) == expected
    assert out != expected


@pytest.mark.parametrize(("num_shards", "shard_index"), [(1, 0), (3, 0), (3, 1), (3, 2)])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_shard_global_shuffle_checkpoint(num_shards, shard_index, reshuffle):
    def make():
        ds = D.range(10).shard(num_shards, shard_index).prefetch(hr.AUTOTUNE)
        return ds.global_shuffle(seed=42, reshuffle_each_iteration=reshuffle)

    verify_checkpoints(make, len(range(shard_index, 10, num_shards)))


def test_enumerate():
    ds = D.from_tensor_slices((["a", "b"], [1, 2], [37.0, 38])).enumerate(np.int64(20))
    spec = ds.element_spec
    assert spec[0].dtype == np.int64 and tuple(spec[0].shape) == ()
    assert [tuple(s.shape) for s in spec[1]] == [(), (), ()]
    produces(ds, [(20, (b"a", 1, 37.0)), (21, (b"b", 2, 38.0))])


def test_enumerate_checkpoint():
    verify_checkpoints(lambda: D.range(2, 10).enumerate(), 8)
