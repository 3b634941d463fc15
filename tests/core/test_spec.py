import numpy as np
import pytest

import headrace as hr
from headrace.core.spec import as_dtype, spec_of, to_array


def test_conversions_follow_tf_data():
    assert to_array(1.5).dtype == np.float32
    assert to_array(3).dtype == np.int64
    assert to_array(b"x")[()] == b"x" and to_array("x")[()] == b"x"
    assert to_array(["a", "bc"]).tolist() == [b"a", b"bc"]
    assert to_array(np.float64(2.0)).dtype == np.float64  # numpy values keep their dtype


class _Column:
    """An array-like with its own dtype, as a pandas column or a torch tensor."""

    def __init__(self, values, dtype=None):
        self.values = np.asarray(values, dtype=dtype)

    def __array__(self, dtype=None, copy=None):
        return self.values


def test_array_likes_keep_their_dtype():
    # tf.convert_to_tensor keeps a pandas column's float64 / int32; only Python numbers get float32 / int64.
    assert to_array(_Column([1.5, 2.5])).dtype == np.float64
    assert to_array(_Column([1, 2], np.int32)).dtype == np.int32
    assert to_array(_Column(["a", b"b", None], object)).tolist() == [b"a", b"b", None]
    assert to_array([1.5, 2.5]).dtype == np.float32


def test_array_likes_from_pandas():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"age": [63, 41], "oldpeak": [2.3, 0.0], "thal": ["fixed", "normal"]})
    assert to_array(frame["oldpeak"]).dtype == np.float64 and to_array(frame["age"]).dtype == np.int64
    assert to_array(frame["thal"]).tolist() == [b"fixed", b"normal"]
    assert to_array(frame[["age", "oldpeak"]]).dtype == np.float64


def test_compatibility_and_common_spec():
    a = hr.TensorSpec((None, 3), "float32")
    assert a.is_compatible_with(np.zeros((7, 3), np.float32))
    assert not a.is_compatible_with(np.zeros((7, 4), np.float32))
    assert not a.is_compatible_with(np.zeros((7, 3), np.int64))
    common = hr.TensorSpec((2, 3), "float32").most_specific_common(hr.TensorSpec((5, 3), "float32"))
    assert common == a
    assert hr.TensorSpec(None, "int64").is_compatible_with(hr.TensorSpec((1, 2), "int64"))


def test_invalid_specs_name_the_problem():
    with pytest.raises(hr.InvalidArgumentError, match="dtype='nope'"):
        as_dtype("nope")
    with pytest.raises(hr.InvalidArgumentError, match="sizes must be >= 0"):
        hr.TensorSpec((-3,), "float32")


def test_spec_of_nested_element_and_repr():
    spec = spec_of({"image": np.zeros((2, 2, 3), np.uint8), "label": np.int64(1), "name": b"a"})
    assert spec["image"] == hr.TensorSpec((2, 2, 3), "uint8")
    assert repr(spec["name"]) == "TensorSpec(shape=(), dtype=string)"
