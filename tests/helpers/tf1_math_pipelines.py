"""TF1 input functions (``import tensorflow.compat.v1 as tf``) whose TensorFlow math runs UNCHANGED on
headrace's TF1 namespace: ``import headrace.compat.v1 as tf``. As tf_math_pipelines.py: the functions are
the sources' own (comments name repository and path); inputs are generated;
tools/record_tf_math_pipelines.py records what TensorFlow's ``tf.compat.v1`` gives.
"""

from __future__ import annotations

import os
from typing import Any

import headrace.compat.v1 as tf  # the port: was `import tensorflow.compat.v1 as tf`
from tests.helpers import pipeline_data as data


def elements(ds) -> list:
    return list(ds.as_numpy_iterator())


# ---- tensorflow/tpu models/official/mnist/mnist_tpu.py (dataset, eval_input_fn, predict_input_fn) ------


def dataset(records_file):
    """Loads MNIST dataset from given TFRecords file."""
    features = {
        "image_raw": tf.io.FixedLenFeature((), tf.string),
        "label": tf.io.FixedLenFeature((), tf.int64),
    }

    def decode_record(record):
        example = tf.io.parse_single_example(record, features)
        image = tf.decode_raw(example["image_raw"], tf.uint8)
        image = tf.cast(image, tf.float32)
        image = tf.reshape(image, [28, 28, 1])

        return image, example["label"]

    return tf.data.TFRecordDataset(records_file).map(decode_record)


def eval_input_fn(params):
    batch_size = params["batch_size"]
    records_file = os.path.join(params["data_dir"], "validation.tfrecords")

    return dataset(records_file).batch(batch_size, drop_remainder=True)


def predict_input_fn(params):
    batch_size = params["batch_size"]
    records_file = os.path.join(params["data_dir"], "test.tfrecords")

    # Take out top 10 samples from test data to make the predictions.
    return dataset(records_file).take(10).batch(batch_size)


def tpu_mnist_input(tmp) -> Any:
    data.mnist_records(os.path.join(tmp, "validation.tfrecords"), 5)
    data.mnist_records(os.path.join(tmp, "test.tfrecords"), 12)
    params = {"batch_size": 2, "data_dir": tmp}
    return [elements(eval_input_fn(params)), elements(predict_input_fn(params))]


# ---- tensorflow/docs site/en/r1/tutorials/load_data/tf_records.ipynb (reading the file back) ---------


def tf1_tfrecord_tutorial(tmp) -> Any:
    filename = data.tf_records_tutorial(os.path.join(tmp, "test.tfrecord"), 7)
    filenames = [filename]
    raw_dataset = tf.data.TFRecordDataset(filenames)

    # Create a description of the features.
    feature_description = {
        "feature0": tf.FixedLenFeature([], tf.int64, default_value=0),
        "feature1": tf.FixedLenFeature([], tf.int64, default_value=0),
        "feature2": tf.FixedLenFeature([], tf.string, default_value=""),
        "feature3": tf.FixedLenFeature([], tf.float32, default_value=0.0),
    }

    def _parse_function(example_proto):
        # Parse the input tf.Example proto using the dictionary above.
        return tf.parse_single_example(example_proto, feature_description)

    parsed_dataset = raw_dataset.map(_parse_function)
    return elements(parsed_dataset.take(10))


PIPELINES = {"tpu_mnist_input": tpu_mnist_input, "tf1_tfrecord_tutorial": tf1_tfrecord_tutorial}
TOLERANCE: dict[str, float] = {}
