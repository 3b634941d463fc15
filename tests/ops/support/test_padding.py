import numpy as np
import pytest

from headrace.core.errors import InvalidArgumentError, StructureError
from headrace.core.spec import TensorSpec
from headrace.ops.support.padding import (
    as_shape,
    pad_stack,
    padded_stack,
    padding_scalar,
    resolve_padded_shapes,
    resolve_padding_values,
)


def test_as_shape_accepts_lists_tuples_arrays_specs_and_tf_shapes():
    class FakeTensorShape:
        def as_list(self):
            return [None, 3]

    assert as_shape([None, -1, 4], "p") == (None, None, 4)
    assert as_shape((), "p") == ()
    assert as_shape(np.array([2, -1]), "p") == (2, None)
    assert as_shape(TensorSpec((None, 5)), "p") == (None, 5)
    assert as_shape(FakeTensorShape(), "p") == (None, 3)
    with pytest.raises(InvalidArgumentError, match=r"p=\[-2\] is not allowed"):
        as_shape([-2], "p")
    assert as_shape(3, "p") == (3,)  # as tf.TensorShape(3)
    with pytest.raises(InvalidArgumentError, match="is not a shape"):
        as_shape("3", "p")


def test_structures_resolve_per_leaf():
    element = ({"b": np.zeros(2), "a": np.zeros(1)}, np.zeros(3))
    assert resolve_padded_shapes(({"a": [4], "b": [None]}, [5]), element, "s") == [(4,), (None,), (5,)]
    assert resolve_padded_shapes([{"a": [4], "b": [None]}, [5]], element, "s") == [(4,), (None,), (5,)]
    assert resolve_padding_values(-1, element, "s") == [-1, -1, -1]
    assert resolve_padding_values(({"a": 1, "b": None}, 2), element, "s") == [1, None, 2]
    with pytest.raises(
        InvalidArgumentError, match=r"s: padded_shapes\[0\] must be a dict with the element's keys"
    ):
        resolve_padded_shapes(({"a": [4]}, [5]), element, "s")


def test_padding_scalar_conversions():
    assert (
        padding_scalar(None, np.dtype(np.float32), "w") == 0
        and padding_scalar(None, np.dtype(bool), "w") is np.False_
    )
    assert padding_scalar("x", np.dtype(object), "w") == b"x"
    assert padding_scalar(2, np.dtype(np.float32), "w").dtype == np.float32
    for value, dtype in ((300, np.uint8), (1.5, np.int64), (True, np.int64), (1, bool), (b"x", np.int32)):
        with pytest.raises(StructureError):
            padding_scalar(value, np.dtype(dtype), "w")
    with pytest.raises(StructureError, match="must be a scalar"):
        padding_scalar([1, 2], np.dtype(np.int64), "w")


def test_pad_stack_pads_at_the_end_of_every_dimension():
    out = pad_stack([np.ones((1, 2)), np.ones((2, 1))], None, 9, "s", "", 0)
    assert out.tolist() == [[[1, 1], [9, 9]], [[1, 9], [1, 9]]]
    out = pad_stack([np.ones(2), np.ones(1)], (None,), None, "s", "", 0)
    assert out.tolist() == [[1, 1], [1, 0]]
    with pytest.raises(
        StructureError, match=r"s: element 5 has shape \(3,\), larger than the padded shape \[2\]"
    ):
        pad_stack([np.ones(1), np.ones(3)], (2,), None, "s", "", 4)


def test_padded_stack_structure_mismatch():
    with pytest.raises(StructureError, match="element 1 has structure"):
        padded_stack([(np.ones(1), np.ones(1)), (np.ones(1),)], [None, None], [None, None], "s")
