"""tensorflow/python/kernel_tests/io_ops/parsing_ops_test.py (ParseExampleTest), translated.

tf's VarLenFeature gives a SparseTensor; headrace gives an ``hr.io.Ragged`` whose ``to_sparse()`` is
compared with tf's (indices, values, dense_shape) triple (a SparseFeature gives an ``hr.io.SparseTensor``,
compared field by field). Examples are written with
``hr.io.serialize_example``; a feature "with nothing in it" is an empty untyped list, an empty typed
list is an empty numpy array of that type.
"""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import HeadraceError, InvalidArgumentError
from headrace.io import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
    serialize_example,
)

F32 = np.float32


def floats(*values):
    return np.array(values, dtype=F32)


def ints(*values):
    return np.array(values, dtype=np.int64)


def check(out, expected):
    assert set(out) == set(expected)
    for key, want in expected.items():
        got = out[key]
        if isinstance(want, tuple):  # a sparse triple
            if isinstance(got, hr.io.SparseTensor):
                indices, values, dense_shape = got.indices, got.values, got.dense_shape
                assert values.dtype == np.asarray(want[1]).dtype, key
            else:
                indices, values, dense_shape = got.to_sparse()
            assert (
                np.asarray(indices).reshape(-1, 2).tolist() == np.asarray(want[0]).reshape(-1, 2).tolist()
            ), key
            assert np.asarray(values).tolist() == np.asarray(want[1]).tolist(), key
            assert np.asarray(dense_shape).tolist() == np.asarray(want[2]).tolist(), key
        else:
            assert np.asarray(got).shape == np.asarray(want).shape, key
            assert np.asarray(got).tolist() == np.asarray(want).tolist(), key


def test_empty_serialized_with_all_defaults():
    a_default = [0, 42, 0]
    b_default = np.random.default_rng(0).random((3, 3)).astype(bytes)
    c_default = np.random.default_rng(1).random(2).astype(F32)
    out = parse_example(
        [b"", b""],
        {
            "st_a": VarLenFeature(hr.int64),
            "a": FixedLenFeature((1, 3), hr.int64, default_value=a_default),
            "b": FixedLenFeature((3, 3), hr.string, default_value=b_default),
            "c:has_a_tricky_name": FixedLenFeature((2,), hr.float32, default_value=c_default),
        },
        example_names=[],
    )
    check(
        out,
        {
            "st_a": (np.empty((0, 2), np.int64), np.empty((0,), np.int64), [2, 0]),
            "a": np.array(2 * [[a_default]]),
            "b": np.array(2 * [b_default]),
            "c:has_a_tricky_name": np.array(2 * [c_default]),
        },
    )


def _required_c():
    return {
        "st_a": VarLenFeature(hr.int64),
        "a": FixedLenFeature((1, 3), hr.int64, default_value=[0, 42, 0]),
        "b": FixedLenFeature((3, 3), hr.string, default_value=np.full((3, 3), b"x", dtype=object)),
        "c": FixedLenFeature((2,), dtype=hr.float32),
    }


def test_empty_serialized_without_defaults_should_fail():
    # The key is there but its value is empty, then the key is missing: both name record and feature.
    with pytest.raises(HeadraceError, match=r"c"):
        parse_example([serialize_example({"c": []})], _required_c(), example_names=["in1"])
    with pytest.raises(HeadraceError, match=r"in1"):
        parse_example([b"", b""], _required_c(), example_names=["in1", "in2"])


def test_dense_not_matching_shape_should_fail():
    serialized = [serialize_example({"a": floats(1, 1, 3)}), serialize_example({"a": floats(-1, -1)})]
    with pytest.raises(HeadraceError, match=r"failing"):
        parse_example(
            serialized, {"a": FixedLenFeature((1, 3), hr.float32)}, example_names=["passing", "failing"]
        )


def test_dense_default_no_shape_should_fail():
    with pytest.raises((ValueError, HeadraceError), match="shape"):
        parse_example([serialize_example({"a": floats(1, 1, 3)})], {"a": FixedLenFeature(None, hr.float32)})


def test_serialized_containing_sparse():
    serialized = [
        serialize_example({"st_c": floats(3, 4)}),
        serialize_example({"st_c": floats()}),
        serialize_example({"st_d": []}),
        serialize_example({"st_c": floats(1, 2, -1), "st_d": [b"hi"]}),
    ]
    out = parse_example(serialized, {"st_c": VarLenFeature(hr.float32), "st_d": VarLenFeature(hr.string)})
    check(
        out,
        {
            "st_c": ([[0, 0], [0, 1], [3, 0], [3, 1], [3, 2]], floats(3, 4, 1, 2, -1), [4, 3]),
            "st_d": ([[3, 0]], [b"hi"], [4, 1]),
        },
    )


def test_serialized_containing_sparse_feature():
    serialized = [
        serialize_example({"val": floats(3, 4), "idx": ints(5, 10)}),
        serialize_example({"val": floats(), "idx": ints()}),
        serialize_example({"val": []}),
        serialize_example({"val": floats(1, 2, -1), "idx": ints(0, 9, 3)}),
    ]
    out = parse_example(serialized, {"sp": hr.io.SparseFeature(["idx"], "val", hr.float32, [13])})
    check(out, {"sp": ([[0, 5], [0, 10], [3, 0], [3, 3], [3, 9]], floats(3, 4, 1, -1, 2), [4, 13])})


def test_serialized_containing_dense():
    serialized = [
        serialize_example({"a": floats(1, 1), "b*has+a:tricky_name": [b"b0_str"]}),
        serialize_example({"a": floats(-1, -1), "b*has+a:tricky_name": [b""]}),
    ]
    out = parse_example(
        serialized,
        {
            "a": FixedLenFeature((1, 2, 1), dtype=hr.float32),
            "b*has+a:tricky_name": FixedLenFeature((1, 1, 1, 1), dtype=hr.string),
        },
    )
    check(
        out,
        {
            "a": np.array([[1, 1], [-1, -1]], F32).reshape(2, 1, 2, 1),
            "b*has+a:tricky_name": np.array([b"b0_str", b""], dtype=object).reshape(2, 1, 1, 1, 1),
        },
    )


def test_serialized_containing_dense_with_concat():
    # Two Examples concatenated in one record: protobuf merges them and the later value wins.
    first = serialize_example({"a": floats(10, 10)}) + serialize_example(
        {"a": floats(1, 1), "b": [b"b0_str"]}
    )
    second = serialize_example({"b": [b"b100"]}) + serialize_example({"a": floats(-1, -1), "b": [b"b1"]})
    out = parse_example(
        [first, second],
        {
            "a": FixedLenFeature((1, 2, 1), dtype=hr.float32),
            "b": FixedLenFeature((1, 1, 1, 1), dtype=hr.string),
        },
    )
    check(
        out,
        {
            "a": np.array([[1, 1], [-1, -1]], F32).reshape(2, 1, 2, 1),
            "b": np.array([b"b0_str", b"b1"], dtype=object).reshape(2, 1, 1, 1, 1),
        },
    )


def test_serialized_containing_dense_scalar():
    out = parse_example(
        [serialize_example({"a": floats(1)}), serialize_example({})],
        {"a": FixedLenFeature((1,), dtype=hr.float32, default_value=-1)},
    )
    check(out, {"a": np.array([[1], [-1]], F32)})


def test_serialized_containing_dense_with_defaults():
    serialized = [
        serialize_example({"a": floats(1, 1)}),
        serialize_example({"b": [b"b1"]}),
        serialize_example({"b": []}),
    ]
    out = parse_example(
        serialized,
        {
            "a": FixedLenFeature((1, 2, 1), dtype=hr.float32, default_value=[3.0, -3.0]),
            "b": FixedLenFeature((1, 1, 1, 1), dtype=hr.string, default_value="tmp_str"),
        },
    )
    check(
        out,
        {
            "a": np.array([[1, 1], [3, -3], [3, -3]], F32).reshape(3, 1, 2, 1),
            "b": np.array([b"tmp_str", b"b1", b"tmp_str"], dtype=object).reshape(3, 1, 1, 1, 1),
        },
    )


def test_serialized_containing_sparse_and_dense_with_no_default():
    serialized = [
        serialize_example({"c": floats(3, 4), "val": [b"a", b"b"], "idx": ints(0, 3)}),
        serialize_example({"c": floats(1, 2), "val": [b"c"], "idx": ints(7)}),
    ]
    a_default = [1, 2, 3]
    b_default = np.full((3, 3), b"q", dtype=object)
    out = parse_example(
        serialized,
        {
            "st_a": VarLenFeature(hr.int64),
            "a": FixedLenFeature((1, 3), hr.int64, default_value=a_default),
            "b": FixedLenFeature((3, 3), hr.string, default_value=b_default),
            "c": FixedLenFeature((2,), hr.float32),
        },
        example_names=["in1", "in2"],
    )
    check(
        out,
        {
            "st_a": (np.empty((0, 2), np.int64), np.empty((0,), np.int64), [2, 0]),
            "a": np.array(2 * [[a_default]]),
            "b": np.array(2 * [b_default]),
            "c": np.array([[3, 4], [1, 2]], F32),
        },
    )


def test_serialized_containing_sparse_with_reuse():
    serialized = [
        serialize_example({"val": [b"a", b"b"], "idx": ints(0, 3)}),
        serialize_example({"val": [b"c", b"d"], "idx": ints(7, 1)}),
    ]
    out = parse_example(serialized, {"idx": VarLenFeature(hr.int64)}, example_names=["in1", "in2"])
    check(out, {"idx": ([[0, 0], [0, 1], [1, 0], [1, 1]], [0, 3, 7, 1], [2, 2])})


@pytest.mark.parametrize("batch_size", [1, 10, 20, 100, 256])
def test_serialized_containing_var_len_dense_larger_batch(batch_size):
    rng = np.random.default_rng(3456)
    truth_int = list(range(batch_size))
    truth_str = [[f"foo{i}".encode(), f"bar{i}".encode()] for i in range(batch_size)]
    expected_str = [list(row) for row in truth_str]
    for i in range(1, batch_size):
        col = 1
        if rng.random() < 0.25:
            expected_str[i][col] = b"default"
            col -= 1
            truth_str[i].pop()
        if rng.random() < 0.25:
            expected_str[i][col] = b"default"
            truth_str[i].pop()
    serialized = [serialize_example({"a": ints(truth_int[i]), "b": truth_str[i]}) for i in range(batch_size)]
    out = parse_example(
        serialized,
        {
            "a": FixedLenSequenceFeature(shape=(), dtype=hr.int64, allow_missing=True, default_value=-1),
            "b": FixedLenSequenceFeature(
                shape=[], dtype=hr.string, allow_missing=True, default_value="default"
            ),
        },
    )
    check(
        out,
        {
            "a": np.array(truth_int, np.int64).reshape(batch_size, 1),
            "b": np.array(expected_str, dtype=object).reshape(batch_size, 2),
        },
    )


VAR_LEN_DENSE = [
    serialize_example({"c": ints(2)}),
    serialize_example({"a": floats(1, 1), "b": [b"b0_str", b"b1_str"]}),
    serialize_example({"a": floats(-1, -1, 2, 2), "b": [b"b1"]}),
    serialize_example({"a": floats(), "c": ints(3)}),
]
NAMES = ["in1", "in2", "in3", "in4"]


def _var_len_features(a_default=None):
    return {
        "a": FixedLenSequenceFeature((2, 1), dtype=hr.float32, allow_missing=True, default_value=a_default),
        "b": FixedLenSequenceFeature((1, 1, 1), dtype=hr.string, allow_missing=True),
        "c": FixedLenSequenceFeature(shape=[], dtype=hr.int64, allow_missing=True),
        "d": FixedLenSequenceFeature(shape=[], dtype=hr.string, allow_missing=True),
    }


@pytest.mark.parametrize("a_default", [None, -2.0])
def test_serialized_containing_var_len_dense(a_default):
    pad = 0 if a_default is None else a_default
    out = parse_example(VAR_LEN_DENSE, _var_len_features(a_default), example_names=NAMES)
    check(
        out,
        {
            "a": np.array([[pad] * 4, [1, 1, pad, pad], [-1, -1, 2, 2], [pad] * 4], F32).reshape(4, 2, 2, 1),
            "b": np.array(
                [[b"", b""], [b"b0_str", b"b1_str"], [b"b1", b""], [b"", b""]], dtype=object
            ).reshape(4, 2, 1, 1, 1),
            "c": np.array([2, 0, 0, 3], np.int64).reshape(4, 1),
            "d": np.empty((4, 0), dtype=object),
        },
    )


def test_serialized_containing_var_len_dense_stride_error():
    features = {
        "a": FixedLenSequenceFeature((2, 1), dtype=hr.float32, allow_missing=True),
        "b": FixedLenSequenceFeature((2, 1, 1), dtype=hr.string, allow_missing=True),
    }
    with pytest.raises(HeadraceError, match=r"in3"):
        parse_example(VAR_LEN_DENSE, features, example_names=NAMES)


def test_parse_single_example_scalar_record():
    # tf.io.parse_example of one scalar record: columns without the batch dimension.
    record = serialize_example({"a": floats(1, 2), "s": [b"x", b"yz"]})
    out = parse_example(record, {"a": FixedLenFeature([2], hr.float32), "s": VarLenFeature(hr.string)})
    assert out["a"].tolist() == [1.0, 2.0]
    single = parse_single_example(record, {"a": FixedLenFeature([2], hr.float32)})
    assert single["a"].tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    "features",
    [
        lambda: {
            "a": FixedLenSequenceFeature((2, 1), dtype=hr.float32, allow_missing=True, default_value=[]),
            "b": FixedLenSequenceFeature((2, 1, 1), dtype=hr.string, allow_missing=True),
        },
        lambda: {
            "a": FixedLenFeature((None, 2, 1), dtype=hr.float32),
            "b": FixedLenSequenceFeature((2, 1, 1), dtype=hr.string, allow_missing=True),
        },
        lambda: {"c": FixedLenFeature((1, None), dtype=hr.int64, default_value=[[1]])},
        lambda: {"c": FixedLenSequenceFeature(shape=[], dtype=hr.int64, allow_missing=False)},
    ],
    ids=["empty_default", "unknown_first_dimension", "unknown_dimension", "allow_missing_false"],
)
def test_serialized_containing_var_len_dense_invalid_features(features, request):
    # tf raises when parsing; headrace may already refuse the feature spec itself.
    expected = {
        "empty_default": r"FixedLenSequenceFeature: default_value has 0 values",
        "unknown_first_dimension": r"FixedLenFeature: shape=\(None, 2, 1\) must be a list of non-negative ints",
        "unknown_dimension": r"FixedLenFeature: shape=\(1, None\) must be a list of non-negative ints",
        "allow_missing_false": r"feature 'c': FixedLenSequenceFeature in an Example needs allow_missing=True",
    }[request.node.callspec.id]
    with pytest.raises(InvalidArgumentError, match=expected):
        parse_example(VAR_LEN_DENSE, features(), example_names=NAMES)


RaggedFeature = hr.io.RaggedFeature


@pytest.mark.parametrize("copies", [1, 64])
def test_serialized_containing_ragged_feature_with_no_partitions(copies):
    serialized = [
        serialize_example({"rt_c": floats(3, 4)}),
        serialize_example({"rt_c": floats()}),
        serialize_example({"rt_d": []}),
        serialize_example({"rt_c": floats(1, 2, -1), "rt_d": [b"hi"]}),
    ] * copies
    out = parse_example(
        serialized,
        {
            "rt_c": RaggedFeature(dtype=hr.float32),
            "rt_d": RaggedFeature(dtype=hr.string, row_splits_dtype=hr.int64),
        },
    )
    assert out["rt_c"].to_list() == [[3.0, 4.0], [], [], [1.0, 2.0, -1.0]] * copies
    assert out["rt_d"].to_list() == [[], [], [], [b"hi"]] * copies


RAGGED_RECORDS = [
    serialize_example(
        {
            "rt_values": floats(3, 4, 5, 6),
            "rt_splits": ints(0, 1, 4),
            "rt_lengths": ints(1, 3),
            "rt_starts": ints(0, 1),
            "rt_limits": ints(1, 4),
            "rt_rowids": ints(0, 1, 1, 1),
        }
    ),
    serialize_example(
        {
            "rt_values": floats(),
            "rt_splits": ints(0),
            "rt_lengths": ints(),
            "rt_starts": ints(),
            "rt_limits": ints(),
            "rt_rowids": ints(),
        }
    ),
    serialize_example(
        {
            "rt_values": [],
            "rt_splits": ints(0),
            "rt_lengths": [],
            "rt_starts": [],
            "rt_limits": [],
            "rt_rowids": [],
        }
    ),
    serialize_example(
        {
            "rt_values": floats(1, 2, -1, 8, 9, 5),
            "rt_splits": ints(0, 3, 3, 5, 6),
            "rt_lengths": ints(3, 0, 2, 1),
            "rt_starts": ints(0, 3, 3, 5),
            "rt_limits": ints(3, 3, 5, 6),
            "rt_rowids": ints(0, 0, 0, 2, 2, 3),
        }
    ),
]
EXPECTED_RT = [[[3], [4, 5, 6]], [], [], [[1, 2, -1], [], [8, 9], [5]]]


@pytest.mark.parametrize(
    ("partition", "key"),
    [
        ("RowSplits", "rt_splits"),
        ("RowLengths", "rt_lengths"),
        ("RowStarts", "rt_starts"),
        ("RowLimits", "rt_limits"),
        ("ValueRowIds", "rt_rowids"),
    ],
)
def test_serialized_containing_ragged_feature(partition, key):
    spec = RaggedFeature(
        value_key="rt_values", partitions=[getattr(RaggedFeature, partition)(key)], dtype=hr.float32
    )
    assert parse_example(RAGGED_RECORDS, {"rt": spec})["rt"].to_list() == EXPECTED_RT


def test_serialized_containing_ragged_feature_uniform_row_length():
    uniform1 = RaggedFeature(
        value_key="rt_values", partitions=[RaggedFeature.UniformRowLength(2)], dtype=hr.float32
    )
    uniform2 = RaggedFeature(
        value_key="rt_values",
        partitions=[RaggedFeature.UniformRowLength(2), RaggedFeature.RowSplits("rt_splits")],
        dtype=hr.float32,
    )
    out = parse_example(RAGGED_RECORDS, {"u1": uniform1, "u2": uniform2})
    assert out["u1"].to_list() == [[[3, 4], [5, 6]], [], [], [[1, 2], [-1, 8], [9, 5]]]
    assert out["u2"].to_list() == [[[[3], [4, 5, 6]]], [], [], [[[1, 2, -1], []], [[8, 9], [5]]]]


def test_serialized_containing_nested_ragged_feature():
    serialized = [
        serialize_example(
            {
                "rt_values": floats(1, 2, 3, 4, 5, 6, 7),
                "lengths_axis2": ints(1, 2, 0, 1),
                "lengths_axis3": ints(1, 2, 1, 3),
                "splits_axis3": ints(0, 1, 3, 4, 7),
            }
        ),
        serialize_example(
            {
                "rt_values": floats(1, 2, 3, 4, 5, 6, 7, 8),
                "lengths_axis2": ints(2, 3),
                "lengths_axis3": ints(3, 1, 1, 1, 2),
                "splits_axis3": ints(0, 3, 4, 5, 6, 8),
            }
        ),
    ]
    spec = RaggedFeature(
        value_key="rt_values",
        partitions=[
            RaggedFeature.UniformRowLength(2),
            RaggedFeature.RowLengths("lengths_axis2"),
            RaggedFeature.RowSplits("splits_axis3"),
        ],
        dtype=hr.float32,
        row_splits_dtype=hr.int64,
    )
    assert parse_example(serialized, {"rt1": spec})["rt1"].to_list() == [
        [[[[1]], [[2, 3], [4]]], [[], [[5, 6, 7]]]],
        [[[[1, 2, 3], [4]], [[5], [6], [7, 8]]]],
    ]


def test_serialized_containing_misaligned_ragged_feature_row_lengths():
    serialized = [
        serialize_example({"rt_values": floats(), "rt_lengths": ints(5)}),
        serialize_example({"rt_values": floats(1, 2, 3, 4, 5), "rt_lengths": ints()}),
    ]
    spec = RaggedFeature(
        value_key="rt_values",
        partitions=[RaggedFeature.RowLengths("rt_lengths")],
        dtype=hr.float32,
        validate=True,
    )
    with pytest.raises((ValueError, HeadraceError), match="rt"):
        parse_example(serialized, {"rt": spec})


def test_single_example_with_sparse_and_dense():
    record = serialize_example(
        {
            "c": floats(3, 4),
            "d": floats(0.0, 1.0),
            "val": [b"a", b"b"],
            "idx": ints(0, 3),
            "st_a": floats(3.0, 4.0),
        }
    )
    a_default = [1, 2, 3]
    b_default = np.full((3, 3), b"z", dtype=object)
    out = parse_single_example(
        record,
        {
            "st_a": VarLenFeature(hr.float32),
            "a": FixedLenFeature((1, 3), hr.int64, default_value=a_default),
            "b": FixedLenFeature((3, 3), hr.string, default_value=b_default),
            "c": FixedLenFeature(2, hr.float32),
            "d": FixedLenSequenceFeature([], hr.float32, allow_missing=True),
        },
        example_names="in1",
    )
    # tf: a SparseTensor with indices [[0], [1]]; a single example's VarLenFeature is its values here.
    assert out["st_a"].tolist() == [3.0, 4.0] and out["st_a"].dtype == np.float32
    assert out["a"].tolist() == [a_default]
    assert out["b"].tolist() == b_default.tolist()
    assert out["c"].tolist() == [3.0, 4.0] and out["c"].dtype == np.float32
    assert out["d"].tolist() == [0.0, 1.0]
