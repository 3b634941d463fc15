"""tensorflow/python/data/kernel_tests/bucket_by_sequence_length_test.py, translated (padded variants;
the no_padding variants build SparseTensors, see UNTRANSLATED.md)."""

import random

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import HeadraceError

D = hr.Dataset
BOUNDARIES, BATCH_SIZES = [10, 20, 30], [10, 8, 4, 2]


def element_length(x, y=None):
    return x.shape[0]


def _dataset(elements):
    random.Random(0).shuffle(elements)
    return D.from_generator(lambda: ((e,) for e in elements), (hr.int32,), (hr.TensorShape([None]),))


def test_bucket_drop_remainder():
    lengths, counts = [8, 13, 25, 35], [28, 7, 6, 5]
    elements = [[1] * length for length, n in zip(lengths, counts) for _ in range(n)]
    ds = _dataset(elements).bucket_by_sequence_length(
        element_length_func=element_length,
        bucket_boundaries=BOUNDARIES,
        bucket_batch_sizes=BATCH_SIZES,
        drop_remainder=True,
    )
    batches = [b for (b,) in ds]
    assert len(batches) == 5
    sums, sizes = {length: 0 for length in lengths}, {length: [] for length in lengths}
    for b in batches:
        sums[b.shape[1]] += b.sum()
        sizes[b.shape[1]].append(b.shape[0])
    for length, size, n in zip(lengths, BATCH_SIZES, counts):
        assert sums[length] == (n - n % size) * length
        assert sorted(sizes[length]) == [size] * (n // size)


def test_bucket():
    lengths = [8, 13, 25, 35]
    elements = []
    for size, length in zip(BATCH_SIZES, lengths):
        elements += [[1] * (length - 1)] + [[1] * length] * (size - 1)
    ds = _dataset(elements).bucket_by_sequence_length(
        element_length_func=element_length, bucket_boundaries=BOUNDARIES, bucket_batch_sizes=BATCH_SIZES
    )
    batches = [b for (b,) in ds]
    assert len(batches) == 4
    for b in batches:
        assert b.sum() == b.shape[0] * b.shape[1] - 1
    assert sorted(b.shape[0] for b in batches) == sorted(BATCH_SIZES)
    assert sorted(b.shape[1] for b in batches) == sorted(lengths)


def test_pad_to_boundary():
    lengths = [8, 13, 25]
    elements = [[1] * length for size, length in zip(BATCH_SIZES[:-1], lengths) for _ in range(size)]
    random.Random(1).shuffle(elements)
    elements += [[1] * (BOUNDARIES[-1] + 5)] * BATCH_SIZES[-1]
    ds = D.from_generator(lambda: ((e,) for e in elements), (hr.int64,), ([None],)).bucket_by_sequence_length(
        element_length_func=element_length,
        bucket_boundaries=BOUNDARIES,
        bucket_batch_sizes=BATCH_SIZES,
        pad_to_bucket_boundary=True,
    )
    it = iter(ds)
    batches = [next(it)[0] for _ in range(3)]
    with pytest.raises(HeadraceError, match="bucket_boundaries"):
        next(it)
    assert sorted(b.shape[0] for b in batches) == sorted(BATCH_SIZES[:-1])
    assert sorted(b.shape[1] for b in batches) == [b - 1 for b in BOUNDARIES]


def test_pad_to_boundary_no_extraneous_padding():
    ds = D.from_generator(
        lambda: (([1] * n,) for n in range(1, 11)), (hr.int64,), ([None],)
    ).bucket_by_sequence_length(
        element_length_func=element_length,
        bucket_boundaries=[3, 7, 11],
        bucket_batch_sizes=[2, 2, 2, 2],
        pad_to_bucket_boundary=True,
    )
    batches = [b.tolist() for (b,) in ds]
    assert batches == [
        [[1, 0], [1, 1]],
        [[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 0, 0]],
        [[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]],
        [[1] * 7 + [0] * 3, [1] * 8 + [0] * 2],
        [[1] * 9 + [0], [1] * 10],
    ]


def test_tuple_elements():
    def gen():
        yield from zip([[1, 2, 3], [3, 4, 5, 6, 7], [1, 2], [8, 9, 0, 2, 3]], [1, 2, 1, 2])

    ds = D.from_generator(gen, (hr.int32, hr.int32), (hr.TensorShape([None]), hr.TensorShape([])))
    ds = ds.bucket_by_sequence_length(
        element_length_func=element_length, bucket_batch_sizes=[2, 2, 2], bucket_boundaries=[0, 8]
    )
    assert [list(s.shape) for s in ds.element_spec] == [[None, None], [None]]
    out = list(ds)
    assert sorted(int(v) for _, y in out for v in y) == [1, 1, 2, 2]


@pytest.mark.parametrize("drop_remainder", [True, False])
def test_bucket_padded_lengths_range(drop_remainder):
    # tf's testBucketSparse dataset ([0], [0, 1], [0, 1, 2], ...) with padding instead of sparse output.
    ds = (
        D.range(1, 21)
        .map(lambda n: np.arange(n))
        .bucket_by_sequence_length(
            element_length_func=lambda x: x.shape[0],
            bucket_boundaries=[5, 10, 15],
            bucket_batch_sizes=[3, 3, 3, 3],
            drop_remainder=drop_remainder,
        )
    )
    batches = list(ds)
    sizes = [b.shape[0] for b in batches]
    assert all(s == 3 for s in sizes) if drop_remainder else sum(sizes) == 20
    for b in batches:
        lengths = (b != 0).sum(axis=1) + 1  # each row is 0..n-1, so its non-zeros are n-1
        assert b.shape[1] == lengths.max()
