import numpy as np
import pytest

import headrace as hr


def test_dtype_names_are_numpy_dtypes():
    assert hr.int64 == np.int64 and hr.float32 == np.dtype("float32") and hr.bool == np.bool_
    assert hr.string is hr.as_dtype("string") and hr.double == hr.float64 and hr.half == hr.float16
    assert np.arange(3).astype(hr.float32).dtype == np.float32
    assert hr.TensorSpec([None], hr.string) == hr.TensorSpec((None,), "string")
    assert [int(x) for x in hr.Dataset.range(3, output_type=hr.int32)] == [0, 1, 2]


def test_tensor_shape():
    shape = hr.TensorShape([None, 3])
    assert shape.rank == 2 and len(shape) == 2 and list(shape) == [None, 3] and shape[1] == 3
    assert shape == [None, 3] and shape == (None, 3) and shape != [2, 3]
    assert shape.is_compatible_with([7, 3]) and not shape.is_compatible_with([7, 4])
    assert shape.merge_with([7, None]) == [7, 3]
    assert shape.concatenate([5]).as_list() == [None, 3, 5] and shape[1:] == [3]
    assert hr.TensorShape([2, 3]).num_elements() == 6 and shape.num_elements() is None
    unknown = hr.TensorShape(None)
    assert unknown.rank is None and unknown.is_compatible_with([1, 2, 3])
    with pytest.raises(ValueError):
        unknown.as_list()
    assert hr.TensorShape(4) == [4] and hr.TensorShape([-1]) == [None]
    with pytest.raises(hr.InvalidArgumentError):
        hr.TensorShape(["a"])
    with pytest.raises(hr.InvalidArgumentError):
        shape.merge_with([1, 4])


def test_specs_and_padded_batch_take_tensor_shapes():
    assert hr.TensorSpec(hr.TensorShape([None, 2]), hr.int64).shape == (None, 2)
    assert hr.TensorSpec(hr.TensorShape(None), hr.int64).shape is None
    ds = hr.Dataset.range(1, 3).map(lambda n: np.ones(n, np.int64))
    assert [b.shape for b in ds.padded_batch(2, padded_shapes=hr.TensorShape([4]))] == [(2, 4)]
