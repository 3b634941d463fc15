"""TensorFlow interop: a headrace pipeline as a ``tf.data.Dataset``, for models that stay in TensorFlow.

``to_tf(ds)`` gives a ``tf.data.Dataset`` with ``ds``'s structure and an ``element_spec`` of
``tf.TensorSpec`` (numpy dtypes as TensorFlow's, strings as ``tf.string``, unknown sizes as None) and
with its cardinality when known, so ``model.fit`` knows the epoch's length. Each iteration of the
result is a new ``iter(ds)``: headrace runs the pipeline, TensorFlow only receives the elements.
See docs/tensorflow.md.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from .core.errors import InvalidArgumentError
from .core.spec import TensorSpec
from .core.structure import map_structure
from .dataset import Dataset

__all__ = ["to_tf", "tf_spec"]


def tf_spec(spec: TensorSpec) -> tf.TensorSpec:
    """The ``tf.TensorSpec`` of a headrace ``TensorSpec``."""
    dims = getattr(spec.shape, "dims", spec.shape)
    shape = tf.TensorShape(None if dims is None else list(dims))
    dtype = tf.string if spec.dtype.kind in "OSU" else tf.as_dtype(spec.dtype)
    return tf.TensorSpec(shape, dtype, name=getattr(spec, "name", None))


def to_tf(
    dataset: Dataset, output_signature: Any = None, batch_axis_to_none: bool = False
) -> tf.data.Dataset:
    """``dataset`` as a ``tf.data.Dataset`` with the matching ``element_spec`` and cardinality.

    ``output_signature`` (``tf.TensorSpec`` structure) overrides the spec derived from
    ``dataset.element_spec``; ``batch_axis_to_none=True`` makes every leading dimension unknown (what
    Keras does with its inputs). Stages after a user function (``map``) read their spec from the first
    element: if later elements differ (a last partial batch), use one of the two.

    >>> import headrace as hr
    >>> tf_ds = to_tf(hr.Dataset.range(5).map(lambda x: (x, b"id")).batch(2))
    >>> tf_ds.element_spec
    (TensorSpec(shape=(None,), dtype=tf.int64, name=None), TensorSpec(shape=(None,), dtype=tf.string, name=None))
    >>> int(tf_ds.cardinality()), [a.numpy().tolist() for a, _ in tf_ds]
    (3, [[0, 1], [2, 3], [4]])
    """
    if not isinstance(dataset, Dataset):
        raise InvalidArgumentError(f"to_tf takes a headrace Dataset, got {type(dataset).__name__}")
    signature = output_signature
    if signature is None:
        signature = map_structure(tf_spec, dataset.element_spec)
        if batch_axis_to_none:
            signature = map_structure(_unknown_batch_axis, signature)

    def elements():
        yield from dataset

    result = tf.data.Dataset.from_generator(elements, output_signature=signature)
    n = dataset.cardinality()
    if n >= 0 or n == tf.data.INFINITE_CARDINALITY:
        result = result.apply(tf.data.experimental.assert_cardinality(n))
    return result


def _unknown_batch_axis(spec: tf.TensorSpec) -> tf.TensorSpec:
    if spec.shape.rank is None or spec.shape.rank == 0:
        return spec
    return tf.TensorSpec([None, *spec.shape.as_list()[1:]], spec.dtype, spec.name)
