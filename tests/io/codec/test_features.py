import numpy as np
import pytest

from headrace.core.errors import InvalidArgumentError
from headrace.core.spec import string
from headrace.io import FixedLenFeature, FixedLenSequenceFeature, RaggedFeature, VarLenFeature


class FakeTfDtype:  # what a tf.DType offers, without importing TensorFlow
    def __init__(self, name, numpy_dtype):
        self.name, self.as_numpy_dtype = name, numpy_dtype


def test_dtypes_by_name_numpy_and_tf_like():
    assert FixedLenFeature([], "float32").dtype == np.float32
    assert VarLenFeature(np.int64).dtype == np.int64
    assert VarLenFeature("string").dtype == string and VarLenFeature(bytes).dtype == string
    assert VarLenFeature(FakeTfDtype("string", object)).dtype == string
    assert VarLenFeature(FakeTfDtype("float32", np.float32)).dtype == np.float32
    for bad in ("float64", "int32", np.uint8, "complex64"):
        with pytest.raises(InvalidArgumentError, match="only 'float32', 'int64' and 'string'"):
            VarLenFeature(bad)


def test_defaults_are_shaped_and_typed():
    spec = FixedLenFeature([2, 2], "int64", default_value=[1, 2, 3, 4])
    assert spec.default_value.shape == (2, 2) and spec.default_value.dtype == np.int64
    assert (
        FixedLenFeature([3], "float32", 1.5).default_value.tolist() == [1.5] * 3
    )  # one value fills the shape
    assert FixedLenFeature([], "string", "x").default_value.tolist() == b"x"
    with pytest.raises(InvalidArgumentError, match="must hold bytes or str"):
        FixedLenFeature([], "string", 3)
    with pytest.raises(InvalidArgumentError, match="not a int64 value"):
        FixedLenFeature([], "int64", "x")
    with pytest.raises(InvalidArgumentError, match="shape"):
        FixedLenFeature([-1], "int64")
    with pytest.raises(InvalidArgumentError, match="allow_missing"):
        FixedLenSequenceFeature([], "int64", allow_missing="yes")


def test_ragged_feature_partitions_are_checked():
    spec = RaggedFeature(
        "int64", partitions=[RaggedFeature.RowSplits("s"), RaggedFeature.UniformRowLength(2)]
    )
    assert len(spec.partitions) == 2
    with pytest.raises(InvalidArgumentError, match="partition"):
        RaggedFeature("int64", partitions=["lengths"])
    with pytest.raises(InvalidArgumentError, match="value_key"):
        RaggedFeature("int64", value_key=3)
