"""numpy integers and 0-d arrays are accepted wherever an int is (issue 12)."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.args import boolean, integer, integers

D = hr.Dataset


def values(ds) -> list:
    return [int(x) for x in ds]


def test_integer_converts_numpy_and_leaves_the_rest():
    assert integer(np.int64(3)) == 3 and type(integer(np.int64(3))) is int
    assert integer(np.array(4, np.uint8)) == 4
    assert integer(True) is True  # bools stay bools, for the caller's check to refuse
    assert integer(np.array([1, 2])).tolist() == [1, 2]  # not 0-d: unchanged
    assert integer(2.0) == 2.0 and type(integer(2.0)) is float
    assert boolean(np.bool_(False)) is False
    assert integers((np.int16(1), 2)) == (1, 2)


@pytest.mark.parametrize(
    "build",
    [
        lambda: D.range(3).repeat(np.int64(2)),
        lambda: D.range(6).take(np.int32(6)),
        lambda: D.range(6).skip(np.array(0)),
        lambda: D.range(6).shuffle(buffer_size=np.int64(203), seed=np.int64(0)),
        lambda: D.range(6).global_shuffle(seed=np.int64(1)),
        lambda: D.range(6).batch(np.int64(2)).unbatch(),
        lambda: D.range(6).padded_batch(np.int64(3)).unbatch(),
        lambda: D.range(6).prefetch(np.int64(2)),
        lambda: D.range(6).map(lambda x, rng: x, num_parallel_calls=np.int64(2), seed=np.int64(3)),
        lambda: D.range(np.int64(6)),
        lambda: D.range(12).shard(np.int64(2), np.int64(0)).map(lambda x: x // 2),
        lambda: D.range(6).interleave(
            lambda x: D.from_tensors(x), cycle_length=np.int64(2), block_length=np.int8(1)
        ),
    ],
)
def test_ops_accept_numpy_integers(build):
    ds = build()
    assert sorted(values(ds)) == sorted(values(ds)) and len(values(ds)) >= 6


def test_interleave_repeat_by_element_value():
    # tf.data's standard example: the element (an np.int64) is an argument.
    ds = D.range(1, 4).interleave(lambda x: D.from_tensors(x).repeat(x), cycle_length=2)
    assert values(ds) == [1, 2, 2, 3, 3, 3]


def test_reduce_result_as_argument():
    total = D.range(4).reduce(0, lambda state, x: state + x)
    assert values(D.range(10).take(total)) == list(range(6))


def test_refusals_show_the_value_not_its_numpy_repr():
    with pytest.raises(hr.InvalidArgumentError) as info:
        D.range(3).shuffle(np.int64(-3))
    assert "buffer_size=-3 is not allowed" in str(info.value) and "np.int64" not in str(info.value)
    with pytest.raises(hr.InvalidArgumentError, match="batch_size"):
        D.range(3).batch(np.float32(2))
    with pytest.raises(hr.InvalidArgumentError, match="buffer_size"):
        D.range(3).shuffle(np.array([2, 3]))


def test_prefetch_none_means_autotune():
    assert values(D.range(4).prefetch(None)) == [0, 1, 2, 3]
    assert values(D.range(4).prefetch(buffer_size=None)) == [0, 1, 2, 3]


def test_padded_batch_int_shape_and_none_padding_values():
    ds = D.range(1, 4).map(lambda n: {"x": np.full(n, n), "y": np.int64(n)})
    first = next(iter(ds.padded_batch(2, padded_shapes={"x": 5, "y": []})))
    assert first["x"].tolist() == [[1, 0, 0, 0, 0], [2, 2, 0, 0, 0]]
    first = next(iter(ds.padded_batch(2, padding_values={"x": None, "y": None})))
    assert first["x"].tolist() == [[1, 0], [2, 2]]
    with pytest.raises(hr.InvalidArgumentError, match="padded_shapes"):
        ds.padded_batch(2, padded_shapes={"x": 2.5, "y": []})
