import numpy as np
import pytest

import headrace as hr
from headrace.io import SparseFeature, SparseTensor, parse_example, parse_single_example, serialize_example


def test_sparse_feature_values_as_tf_gives_them():
    records = [
        serialize_example({"ix": [3, 0], "val": [0.5, 2.0]}),
        serialize_example({}),
        serialize_example({"ix": [1], "val": [7.0]}),
    ]
    parsed = parse_example(records, {"s": SparseFeature("ix", "val", hr.float32, 5)})
    assert list(parsed) == ["s"]  # the helper lists are not returned
    s = parsed["s"]
    assert isinstance(s, SparseTensor) and s.shape == (3, 5)
    assert s.indices.tolist() == [[0, 0], [0, 3], [2, 1]] and s.values.tolist() == [2.0, 0.5, 7.0]
    assert s.to_dense().tolist()[0] == [2.0, 0, 0, 0.5, 0]
    unsorted = parse_example(
        records[:1], {"s": SparseFeature("ix", "val", "float32", 5, already_sorted=True)}
    )["s"]
    assert unsorted.indices.tolist() == [[0, 3], [0, 0]]


def test_two_dimensional_and_single_example():
    record = serialize_example({"r": [0, 1], "c": [2, 0], "v": [b"a", b"b"]})
    spec = {"s": SparseFeature(["r", "c"], "v", "string", [2, 3]), "v": hr.io.VarLenFeature("string")}
    one = parse_single_example(record, spec)
    assert one["s"].shape == (2, 3) and one["s"].indices.tolist() == [[0, 2], [1, 0]]
    assert one["v"].tolist() == [b"a", b"b"]  # also asked for directly


def test_errors_name_the_record_and_feature():
    spec = {"s": SparseFeature("ix", "val", "float32", 2)}
    with pytest.raises(hr.InvalidArgumentError, match=r"record 0: SparseFeature 's' index \[5\] is outside"):
        parse_example([serialize_example({"ix": [5], "val": [1.0]})], spec)
    with pytest.raises(hr.InvalidArgumentError, match="record 0 has 1 values .* must match"):
        parse_example([serialize_example({"ix": [0, 1], "val": [1.0]})], spec)
    with pytest.raises(hr.InvalidArgumentError, match="asks for it as"):
        parse_example([serialize_example({})], {**spec, "val": hr.io.FixedLenFeature([], "float32")})
    with pytest.raises(hr.InvalidArgumentError, match="size"):
        SparseFeature(["a", "b"], "v", "int64", 3)


def test_empty_batch_shapes():
    s = parse_example([serialize_example({})], {"s": SparseFeature("ix", "val", "int64", 4)})["s"]
    assert s.indices.shape == (0, 2) and s.values.dtype == np.int64 and s.shape == (1, 4)
