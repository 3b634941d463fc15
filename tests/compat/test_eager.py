"""``headrace.compat.eager`` (and ``eager_v1``): tf.data's API with TensorFlow's element type."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import headrace
import headrace.compat.eager as tf
import headrace.compat.eager_v1 as tf1
from headrace.tfops._tensor import EagerTensor
from tests.helpers.checkpoint import check_checkpoints


def test_functions_receive_and_iteration_yields_tensors_with_their_methods():
    seen = []

    def fn(s, n):
        seen.append((type(s), s.numpy(), n.numpy(), s.shape.as_list()))
        return s, n

    ds = tf.data.Dataset.from_tensor_slices(([b"a", b"bc"], [1, 2])).map(fn)
    out = list(ds)
    assert seen[0] == (EagerTensor, b"a", np.int32(1), [])
    assert all(isinstance(v, EagerTensor) for pair in out for v in pair)
    assert [s.numpy() for s, _ in out] == [b"a", b"bc"]
    # as_numpy_iterator gives numpy values, as in TensorFlow
    assert list(ds.as_numpy_iterator()) == [(b"a", np.int32(1)), (b"bc", np.int32(2))]
    assert isinstance(ds, headrace.Dataset) and isinstance(ds, tf.data.Dataset)


def test_python_numbers_take_tensorflows_dtypes():
    assert tf.data.Dataset.from_tensor_slices([1, 2]).element_spec.dtype == np.int32
    assert tf.data.Dataset.from_tensor_slices([1.5]).element_spec.dtype == np.float32
    ds = tf.data.Dataset.range(3).map(lambda x: (x, 7, 0.5))
    assert [v.dtype for v in next(iter(ds))] == [np.int64, np.int32, np.float32]
    counts = tf.data.Dataset.range(4).reduce({"n": 0}, lambda s, x: {"n": s["n"] + 1})
    assert counts["n"].numpy() == 4 and counts["n"].dtype == np.int32
    big = tf.data.Dataset.from_tensors(2**40).get_single_element()
    assert big.dtype == np.int64  # does not fit int32: int64, as tf.convert_to_tensor gives


def test_shape_methods_and_set_shape():
    image = tf.zeros([4, 6, 3])
    assert image.shape.as_list() == [4, 6, 3] and image.shape.rank == 3 and image.get_shape()[1] == 6
    image.set_shape([None, None, 3])
    with pytest.raises(ValueError, match="not compatible"):
        image.set_shape([None, None, 1])
    assert image.get_shape().merge_with([4, None, None]).as_list() == [4, 6, 3]
    assert np.pad(image, 1).shape == (6, 8, 5)  # still a tuple to numpy


def test_string_tensors_compare_with_numpy_str_arrays_as_tf_does():
    class_names = np.array(["cat", "dog"])
    parts = tf.strings.split(tf.constant("data/dog/1.jpg"), "/")
    assert (parts[-2] == class_names).numpy().tolist() == [False, True]
    assert (parts[-2] != class_names).numpy().tolist() == [True, False]
    assert tf.argmax(parts[-2] == class_names).numpy() == 1
    # plain numpy would say False everywhere: the reason the facade exists
    assert not (b"dog" == class_names).any()


def test_indexing_and_iteration_give_tensors_and_t_empty_tuple_gives_the_scalar():
    t = tf.constant([[1, 2], [3, 4]])
    assert isinstance(t[0], EagerTensor) and isinstance(t[0, 1], EagerTensor) and t[0, 1].numpy() == 2
    assert [row.numpy().tolist() for row in t] == [[1, 2], [3, 4]]
    s = tf.constant(b"x")
    assert s[()] == b"x" and type(s[()]) is bytes  # numpy's idiom for a 0-d array's value
    with pytest.raises(TypeError, match="scalar"):
        iter(s)
    assert "tf.Tensor: shape=(2, 2), dtype=int32" in repr(t)


def test_py_function_decorator_gives_a_tensor_and_numpy_function_bodies_take_numpy():
    @tf.py_function(Tout=tf.string)
    def greet(name):
        assert isinstance(name, EagerTensor)
        return b"hi " + name.numpy()

    assert greet(tf.constant(b"ann")).numpy() == b"hi ann"

    def body(value):
        assert type(value) in (bytes, np.ndarray) and not isinstance(value, EagerTensor)
        return value

    out = tf.data.Dataset.from_tensor_slices([b"a"]).map(lambda s: tf.numpy_function(body, [s], tf.string))
    assert [v.numpy() for v in out] == [b"a"]


def test_window_datasets_and_flat_map_functions_are_the_facades():
    def reduce_func(key, window):
        assert isinstance(window, tf.data.Dataset)
        return window.batch(10)

    ds = tf.data.Dataset.range(6).group_by_window(lambda x: x % 2, reduce_func, window_size=10)
    assert sorted(b.numpy().tolist() for b in ds) == [[0, 2, 4], [1, 3, 5]]
    flat = tf.data.Dataset.range(2).flat_map(lambda x: tf.data.Dataset.from_tensors(x).repeat(2))
    assert [v.numpy() for v in flat] == [0, 0, 1, 1]


def test_maps_of_ops_still_run_vectorised():
    ds = tf.data.Dataset.range(8).map(lambda x: tf.cast(x, tf.float32) * 2.0).batch(4)
    it = iter(ds)
    assert [b.numpy().tolist() for b in it] == [[0, 2, 4, 6], [8, 10, 12, 14]]
    assert "vectorised inside batch" in it.stats().report()


def _triple(x):
    return x * 3


def test_process_maps_checkpoints_and_stage_names():
    ds = tf.data.Dataset.range(6).map(_triple, num_parallel_calls=2, executor="process")
    assert [int(v) for v in ds] == [0, 3, 6, 9, 12, 15]
    assert "_triple at test_eager.py:" in ds.explain()
    check_checkpoints(lambda: tf.data.Dataset.range(20).map(lambda x: x + 1).shuffle(5, seed=1).batch(3))
    fn = tf.data.Dataset.range(1).map(_triple).node.map_func
    assert pickle.loads(pickle.dumps(fn))(np.int64(2)) == 6


def test_errors_keep_their_type_and_name_the_stage():
    def bad(x):
        return x.no_such_method()

    with pytest.raises(AttributeError, match="no_such_method") as info:
        list(tf.data.Dataset.range(2).map(bad))
    assert "map(bad" in "".join(getattr(info.value, "__notes__", []))


def test_names_resolve_like_headrace_and_tf1_names_through_eager_v1():
    assert tf.data.AUTOTUNE == headrace.data.AUTOTUNE
    assert tf.io.FixedLenFeature is headrace.io.FixedLenFeature
    assert isinstance(tf.constant(1), tf.Tensor) and tf.EagerTensor is EagerTensor
    with pytest.raises(AttributeError):
        tf.no_such_name  # noqa: B018
    image = tf1.zeros([2, 2, 3])
    image.set_shape(image.get_shape().merge_with([None, None, 3]))
    assert tf1.to_float(tf1.shape(image)).numpy().tolist() == [2.0, 2.0, 3.0]
    ds = tf1.data.TFRecordDataset  # TF1's namespace reaches tf.data too
    assert callable(ds)


def test_tf_keras_gives_the_preprocessing_input_functions_call_and_keras_for_the_rest():
    lookup = tf.keras.layers.StringLookup(vocabulary=["a", "b"])
    out = tf.data.Dataset.from_tensor_slices([["a", "z"], ["b", "a"]]).map(lambda x: lookup(x))
    assert [v.numpy().tolist() for v in out] == [[1, 0], [2, 1]]
    image = tf.keras.applications.resnet.preprocess_input(tf.zeros([1, 1, 3]))
    assert isinstance(image, EagerTensor) and image.numpy().ravel().tolist() == pytest.approx(
        [-103.939, -116.779, -123.68]
    )
    try:
        import keras  # noqa: F401, PLC0415
    except ImportError:
        with pytest.raises(AttributeError, match="install keras"):
            tf.keras.Sequential  # noqa: B018
    else:
        assert tf.keras.Sequential is keras.Sequential
