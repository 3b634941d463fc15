"""The *RandomAccessTest cases of tf's kernel tests (batch, repeat, take, skip, shard, prefetch,
from_tensor_slices), through ``hr.data.experimental.at``.

tf raises OutOfRangeError for an index past the end and for a negative one; headrace's ``at`` raises
IndexError past the end and InvalidArgumentError for a negative index (it is an argument error).
"""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError

D = hr.Dataset
at = hr.data.experimental.at


CASES = [
    ("batch", lambda: D.from_tensor_slices([1, 2, 3, 4]).batch(2), [2, 3, 4]),
    ("batch_empty", lambda: D.from_tensor_slices(np.array([], dtype=np.int64)).batch(2), [0]),
    ("repeat", lambda: D.from_tensor_slices([1, 2, 3]).repeat(2), [6, 7]),
    ("repeat_empty", lambda: D.from_tensor_slices(np.array([], dtype=np.int64)).repeat(2), [0]),
    ("take", lambda: D.range(10).take(3), [3, 4]),
    ("take_empty", lambda: D.from_tensor_slices(np.array([], dtype=np.int64)).take(5), [0, 1]),
    ("skip", lambda: D.range(10).skip(8), [2, 3]),
    ("skip_empty", lambda: D.from_tensor_slices(np.array([], dtype=np.int64)).skip(8), [0]),
    ("skip_negative", lambda: D.range(11).skip(-1), [0]),
    ("skip_more_than_elements", lambda: D.range(4).skip(5), [0]),
    ("shard", lambda: D.range(4).shard(num_shards=2, index=0), [2, 3, 4]),
    ("shard_empty", lambda: D.from_tensor_slices(np.array([], dtype=np.int64)).shard(2, 1), [0]),
    ("shard_index_past_elements", lambda: D.range(13).shard(23, 21), [0]),
    ("prefetch", lambda: D.range(10).prefetch(buffer_size=5), [10, 11]),
    ("prefetch_empty", lambda: D.from_tensor_slices(np.array([], dtype=np.int64)).prefetch(5), [0, 1]),
    ("from_tensor_slices", lambda: D.from_tensor_slices([1, 2, 3]), [3]),
]


@pytest.mark.parametrize(("name", "make", "past_end"), CASES, ids=[c[0] for c in CASES])
def test_invalid_index(name, make, past_end):
    ds = make()
    for index in past_end:
        with pytest.raises(IndexError):
            at(ds, index)
    with pytest.raises(InvalidArgumentError):
        at(ds, -1)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: D.range(10).shard(5, 0), [0, 5]),
        (lambda: D.range(7).shard(8, 3), [3]),
        (lambda: D.from_tensor_slices([[1, 2], [3, 4]]), [[1, 2], [3, 4]]),
        (lambda: D.from_tensor_slices([1, 2, 3]), [1, 2, 3]),
        (lambda: D.range(11).skip(3), list(range(3, 11))),
        (lambda: D.range(10).batch(4, drop_remainder=True).unbatch(), list(range(8))),
    ],
)
def test_elements_by_index(make, expected):
    ds = make()
    assert [np.asarray(at(ds, i)).tolist() for i in range(len(expected))] == expected
    with pytest.raises(IndexError):
        at(ds, len(expected))


def test_infinite_repeat_has_no_random_access():
    # tf: FailedPrecondition from random_access.at; headrace reads by iterating and so finds the
    # element, but the node reports no random-access length (global_shuffle refuses it).
    ds = D.range(3).repeat()
    assert int(at(ds, 4)) == 1
    assert ds.node.random_access_length() is None
