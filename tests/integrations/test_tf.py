import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

import headrace as hr  # noqa: E402
from headrace.tf import to_tf  # noqa: E402

D = hr.Dataset


def test_element_spec_structure_dtypes_and_values_match():
    ds = D.range(5).map(
        lambda i: {"image": np.full((2, 3), i, np.uint8), "label": (i, np.float32(i) / 2), "id": b"%d" % i}
    )
    tf_ds = to_tf(ds.batch(2))
    spec = tf_ds.element_spec
    assert spec["image"] == tf.TensorSpec((None, 2, 3), tf.uint8)
    assert spec["label"] == (tf.TensorSpec((None,), tf.int64), tf.TensorSpec((None,), tf.float32))
    assert spec["id"] == tf.TensorSpec((None,), tf.string)
    batches = list(tf_ds.as_numpy_iterator())
    assert [b["label"][0].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert batches[2]["id"].tolist() == [b"4"]
    assert int(tf_ds.cardinality()) == 3


def test_cardinality_unknown_and_infinite_and_each_iteration_is_a_new_epoch():
    assert int(to_tf(D.range(4).filter(lambda x: x > 1)).cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert int(to_tf(D.range(4).repeat()).cardinality()) == tf.data.INFINITE_CARDINALITY
    tf_ds = to_tf(D.range(6).global_shuffle(seed=1))
    first, second = [list(tf_ds.as_numpy_iterator()) for _ in range(2)]
    assert sorted(first) == sorted(second) == list(range(6)) and first != second


def test_fixed_shapes_stay_fixed_and_errors_name_the_input():
    tf_ds = to_tf(D.range(4).batch(2, drop_remainder=True))
    assert tf_ds.element_spec.shape == (2,)
    with pytest.raises(hr.InvalidArgumentError, match="headrace Dataset"):
        to_tf([1, 2])


def test_spec_read_from_a_first_full_batch_can_be_relaxed_or_given():
    ds = D.range(5).batch(2).map(lambda x: x * 2)  # map's spec comes from its first element: (2,)
    assert to_tf(ds).element_spec.shape == (2,)
    relaxed = to_tf(ds, batch_axis_to_none=True)
    assert relaxed.element_spec.shape.as_list() == [None]
    assert [b.tolist() for b in relaxed.as_numpy_iterator()] == [[0, 2], [4, 6], [8]]
    given = to_tf(ds, output_signature=tf.TensorSpec((None,), tf.int64))
    assert len(list(given)) == 3
