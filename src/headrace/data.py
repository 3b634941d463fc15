"""``tf.data`` names: ``import headrace as hr`` then ``hr.data.Dataset``, ``hr.data.TFRecordDataset``,
``hr.data.AUTOTUNE``, ``hr.data.experimental.X`` ... so a port changes ``tf.data`` to ``hr.data``.

>>> import headrace as hr
>>> [int(x) for x in hr.data.Dataset.range(3).prefetch(hr.data.AUTOTUNE)]
[0, 1, 2]
"""

from __future__ import annotations

from . import experimental
from .core.node import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .core.options import Options, ThreadingOptions
from .core.spec import TensorSpec
from .dataset import Dataset, TFRecordDataset
from .iterator import Iterator
from .iterator import Iterator as NumpyIterator  # as_numpy_iterator() gives the same iterator
from .readers import FixedLengthRecordDataset, TextLineDataset

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "FixedLengthRecordDataset",
    "Iterator",
    "NumpyIterator",
    "Options",
    "TFRecordDataset",
    "TensorSpec",
    "TextLineDataset",
    "ThreadingOptions",
    "experimental",
]

del annotations  # the __future__ import: not a tf.data name
