import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process
from tests.helpers.tf_fixtures import load_json

ROWS = [[0], [1, 2, 3, 4], [5, 6, 7], [7, 8, 9, 10, 11], [13, 14, 15, 16, 19, 20], [21, 22]]


def rows_dataset(dtype=np.int64):
    return hr.Dataset.range(len(ROWS)).map(lambda i: np.array(ROWS[int(i)], dtype=dtype))


def lists(ds) -> list:
    return [b.tolist() for b in ds]


def test_documented_example():
    # tf.data's bucket_by_sequence_length docstring, first example.
    ds = rows_dataset().bucket_by_sequence_length(
        element_length_func=lambda elem: len(elem), bucket_boundaries=[3, 5], bucket_batch_sizes=[2, 2, 2]
    )
    assert lists(ds) == [
        [[1, 2, 3, 4], [5, 6, 7, 0]],
        [[7, 8, 9, 10, 11, 0], [13, 14, 15, 16, 19, 20]],
        [[0, 0], [21, 22]],
    ]


def test_documented_example_padded_to_bucket_boundary():
    # tf.data's second example (int32 elements, padding -1, boundaries [4, 7]); the elements' spec has an
    # unknown length there, which headrace is told through padded_shapes=[None].
    ds = rows_dataset(np.int32).bucket_by_sequence_length(
        element_length_func=lambda elem: len(elem),
        bucket_boundaries=[4, 7],
        bucket_batch_sizes=[2, 2, 2],
        padded_shapes=[None],
        pad_to_bucket_boundary=True,
        padding_values=-1,
    )
    out = list(ds)
    assert [b.tolist() for b in out] == [
        [[0, -1, -1], [5, 6, 7]],
        [[1, 2, 3, 4, -1, -1], [7, 8, 9, 10, 11, -1]],
        [[21, 22, -1]],
        [[13, 14, 15, 16, 19, 20]],
    ]
    assert all(b.dtype == np.int32 for b in out)


def test_drop_remainder_and_no_padding():
    ds = rows_dataset().bucket_by_sequence_length(lambda e: len(e), [3, 5], [2, 2, 2], drop_remainder=True)
    assert len(lists(ds)) == 3
    ds = rows_dataset().bucket_by_sequence_length(lambda e: len(e), [3, 5], [2, 2, 3], drop_remainder=True)
    assert lists(ds) == [[[1, 2, 3, 4], [5, 6, 7, 0]], [[0, 0], [21, 22]]]
    fixed = hr.Dataset.range(7).map(lambda x: np.full(3, x))
    out = lists(fixed.bucket_by_sequence_length(lambda e: int(e[0]) % 3, [1, 2], [2, 2, 2], no_padding=True))
    assert out == [[[0, 0, 0], [3, 3, 3]], [[1, 1, 1], [4, 4, 4]], [[2, 2, 2], [5, 5, 5]], [[6, 6, 6]]]
    with pytest.raises(hr.StructureError, match="padded_batch"):
        list(rows_dataset().bucket_by_sequence_length(lambda e: 1, [3], [6, 1], no_padding=True))


def test_tuple_elements_padded_shapes_and_values():
    ds = (
        rows_dataset()
        .map(lambda r: (r, np.int64(len(r))))
        .bucket_by_sequence_length(
            lambda r, n: n, [3], [3, 3], padded_shapes=([8], []), padding_values=(-7, 0)
        )
    )
    out = list(ds)
    assert out[0][0].shape == (3, 8) and out[0][1].tolist() == [4, 3, 5]
    assert out[0][0][1].tolist() == [5, 6, 7, -7, -7, -7, -7, -7]
    assert out[1][1].tolist() == [1, 2]


def test_spec():
    ds = rows_dataset().bucket_by_sequence_length(lambda e: len(e), [3], [2, 2], padded_shapes=[None])
    assert ds.element_spec == hr.TensorSpec((None, None), "int64")
    ds = rows_dataset().bucket_by_sequence_length(lambda e: len(e), [3], [2, 2], padded_shapes=[6])
    assert ds.element_spec == hr.TensorSpec((None, 6), "int64")


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (([3, 5], [2, 2]), {}, r"len\(bucket_batch_sizes\) must equal len\(bucket_boundaries\) \+ 1"),
        (([5, 3], [2, 2, 2]), {}, "increase strictly"),
        (([3], [2, 0]), {}, "bucket_batch_sizes="),
        (("3", [2, 2]), {}, "bucket_boundaries="),
        (([3], [2, 2]), {"no_padding": 1}, "no_padding=1"),
        (([3], [2, 2]), {"padded_shapes": ["x"]}, "not a shape"),
    ],
)
def test_invalid_arguments(args, kwargs, match):
    with pytest.raises(hr.InvalidArgumentError, match=match):
        rows_dataset().bucket_by_sequence_length(lambda e: len(e), *args, **kwargs)
    with pytest.raises(hr.InvalidArgumentError, match="not callable"):
        rows_dataset().bucket_by_sequence_length(3, [3], [2, 2])


def test_failures_while_iterating():
    too_long = rows_dataset().bucket_by_sequence_length(
        lambda e: len(e), [5], [2, 2], padded_shapes=[None], pad_to_bucket_boundary=True
    )
    with pytest.raises(
        hr.InvalidArgumentError,
        match=r"input element 3 has length 5.*shorter than max\(bucket_boundaries\) \(5\)",
    ):
        list(too_long)
    unknown = rows_dataset().bucket_by_sequence_length(
        lambda e: len(e), [7], [2, 2], pad_to_bucket_boundary=True
    )
    with pytest.raises(
        hr.InvalidArgumentError, match=r"pass padded_shapes with None for the length dimension"
    ):
        list(unknown)
    with pytest.raises(hr.InvalidArgumentError, match="element_length_func must return a scalar integer"):
        list(rows_dataset().bucket_by_sequence_length(lambda e: 2.5, [3], [2, 2]))


def test_length_error_loses_only_that_element():
    def length(e):
        if len(e) == 3:
            raise ValueError("bad length")
        return len(e)

    it = iter(rows_dataset().bucket_by_sequence_length(length, [3, 5], [2, 2, 2]))
    out = []
    with pytest.raises(ValueError) as info:
        while True:
            out.append(next(it).tolist())
    assert any("bucket_by_sequence_length" in n and "input element 2" in n for n in info.value.__notes__)
    out.extend(b.tolist() for b in it)
    assert out == [[[7, 8, 9, 10, 11, 0], [13, 14, 15, 16, 19, 20]], [[0, 0], [21, 22]], [[1, 2, 3, 4]]]


@given(
    lengths=st.lists(st.integers(0, 12), max_size=30),
    boundaries=st.lists(st.integers(1, 12), max_size=3, unique=True).map(sorted),
    batch=st.integers(1, 4),
    drop=st.booleans(),
)
@settings(max_examples=60, deadline=None)
def test_same_as_group_by_window_then_padded_batch(lengths, boundaries, batch, drop):
    ds = hr.Dataset.from_tensor_slices(np.array(lengths, dtype=np.int64)).map(lambda n: np.arange(int(n)))
    sizes = [batch + i for i in range(len(boundaries) + 1)]
    got = lists(ds.bucket_by_sequence_length(lambda e: len(e), boundaries, sizes, drop_remainder=drop))
    reference = ds.group_by_window(
        key_func=lambda e: int(np.searchsorted(boundaries, len(e), side="right")),
        reduce_func=lambda key, window: window.padded_batch(sizes[int(key)], drop_remainder=drop),
        window_size_func=lambda key: sizes[int(key)],
    )
    assert got == lists(reference)


def make():
    return (
        rows_dataset()
        .repeat(3)
        .shuffle(5, seed=3)
        .bucket_by_sequence_length(lambda e: len(e), [3, 5], [2, 3, 2], padding_values=-1)
    )


def test_checkpoints():
    check_checkpoints(make)
    check_checkpoints(lambda: make().repeat(2))


def test_checkpoint_in_a_fresh_process():
    check_fresh_process("tests.ops.test_bucket_by_sequence_length:make", after=3)


@pytest.mark.parametrize(
    "case", load_json("datasets.json")["bucket_by_sequence_length"], ids=lambda c: str(c["boundaries"])
)
def test_matches_recorded_tensorflow(case):
    # the live test's cases with tf.data's batches, recorded by tools/record_tf_fixtures.py
    got = (
        hr.Dataset.from_tensor_slices(np.array(case["lengths"], dtype=np.int64))
        .map(lambda n: np.arange(1, int(n) + 1))
        .bucket_by_sequence_length(
            lambda e: len(e),
            case["boundaries"],
            case["sizes"],
            padded_shapes=[None],
            padding_values=-1,
            pad_to_bucket_boundary=case["pad_to_bucket_boundary"],
            drop_remainder=case["drop_remainder"],
        )
    )
    assert lists(got) == case["expected"]
