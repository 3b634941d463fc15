"""headrace on Ray (the ``ray`` extra): TFRecord + tf.train.Example for Ray Data without TensorFlow,
pipelines run on Ray actors (:meth:`headrace.Dataset.run_on`), and ``headrace convert --ray``.

Importing this package does not import Ray; each function does, when called.
"""

from __future__ import annotations

from .cluster import connect
from .datasource import read_tfrecords, write_tfrecords

__all__ = ["connect", "read_tfrecords", "write_tfrecords"]
