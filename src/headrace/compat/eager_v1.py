"""``import headrace.compat.eager_v1 as tf``: TF1's namespace (``headrace.compat.v1``) with TensorFlow's
element type, as ``headrace.compat.eager`` gives TF2's: for input functions written against
``import tensorflow.compat.v1 as tf`` that call ``tf.Tensor`` methods (``set_shape``, ``get_shape``,
``.numpy()``) on their values.

>>> import headrace.compat.eager_v1 as tf
>>> image = tf.zeros([4, 4, 3])
>>> image.set_shape(image.get_shape().merge_with([None, None, 3]))
>>> tf.to_float(tf.shape(image)).numpy().tolist()
[4.0, 4.0, 3.0]
"""

from . import v1 as _v1
from ._eager import Dataset, EagerTensor
from ._eager import facade as _facade

__getattr__ = _facade(_v1, __name__)
__all__ = ["Dataset", "EagerTensor"]
