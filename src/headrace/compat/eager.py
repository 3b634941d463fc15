"""``import headrace.compat.eager as tf``: tf.data's API with TensorFlow's element *type*.

``import headrace as tf`` hands functions numpy values (arrays, numpy scalars, ``bytes``): the fastest
form, and what numpy code expects. Code written against eager tensors calls their methods, which numpy
values lack: ``row[0].numpy().decode()``, ``image.set_shape([None, None, 3])``,
``x.get_shape().merge_with(...)``, ``x.shape.as_list()``, or compares a string element with a numpy
``str`` array (``parts[-2] == class_names``, False in numpy). Through this facade the same code runs
unchanged: every value a pipeline's function receives, every element iteration yields, and every result
of an op called through ``tf.`` is an :class:`~headrace.tfops._tensor.EagerTensor` (a numpy array with
``tf.Tensor``'s methods; a string is a 0-d tensor holding ``bytes``). Python numbers that become
elements take TensorFlow's dtypes: an ``int`` returned by a map function, given to
``from_tensor_slices`` or as a ``reduce`` state is int32 (int64 when it does not fit), a ``float``
float32, as in TensorFlow (``import headrace`` makes them int64 and float64, numpy's defaults).

Only the boundaries change: the engine, the kernels, checkpoints and caches see the same numpy values
as with ``import headrace``, and ``as_numpy_iterator()`` yields numpy, as in TensorFlow. What it costs:
a wrap of each element a function receives and an unwrap of what it returns, and the same around each
op call (a few microseconds per element); a map built from ops still runs vectorised.
``Dataset.map(..., executor="process")`` works as with ``import headrace``.

TF1 code (``import tensorflow.compat.v1 as tf``) ports with ``import headrace.compat.eager_v1 as tf``.

>>> import headrace.compat.eager as tf
>>> ds = tf.data.Dataset.from_tensor_slices([b"a b", b"c"]).map(lambda s: tf.strings.split(s))
>>> [[w.numpy() for w in words] for words in ds]
[[b'a', b'b'], [b'c']]
>>> tf.data.Dataset.from_tensor_slices([1, 2]).reduce(0, lambda a, x: a + x).numpy()
np.int32(3)
"""

import headrace as _hr

from ._eager import Dataset, EagerTensor
from ._eager import facade as _facade

__getattr__ = _facade(_hr, __name__)
__all__ = ["Dataset", "EagerTensor"]
