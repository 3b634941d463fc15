# ruff: noqa: UP031 (the sources' own %-formatting, kept as written)
"""Repository input functions (tensorflow/models official/r1 ResNet CIFAR-10 and MNIST, the official
Transformer, official/vision's TF Example decoder with keras-io's RetinaNet) re-ported with their TensorFlow
math AS WRITTEN under ``import headrace as tf`` (issue 23). The older hand-rewritten ports of the same
sources are tests/compat/test_pipelines_repos.py. As tf_math_pipelines.py: the functions are the sources'
own (comments name repository and path); only what feeds them changed (downloads became small generated
files, tests/helpers/pipeline_data_repos.py) and sizes shrank; tools/record_tf_math_pipelines.py records
what TensorFlow gives into tests/data/tfops_fixtures/pipelines_repos.json.

Pipelines that do not port by changing only the import keep their source here but stay out of
``PIPELINES``; ``NOT_IMPORT_ONLY`` names what is missing.
"""

from __future__ import annotations

import gzip
import logging  # the sources' `from absl import logging` (the same .info calls; absl is not TensorFlow)
import os
import shutil
import tempfile
import urllib.request
from typing import Any

import numpy as np

import headrace as tf  # the port: was `import tensorflow as tf`
from tests.helpers import pipeline_data as data
from tests.helpers import pipeline_data_repos as repo_data


def elements(ds) -> list:
    return list(ds.as_numpy_iterator())


def _trimmed_rows(batches: list) -> list:
    """The rows of shuffled, padded batches (padding zeros trimmed) as one multiset."""
    return data.unordered(
        [tuple(np.trim_zeros(r, "b") for r in row) for batch in batches for row in zip(*batch)]
    )


# ---- tensorflow/models official/r1/resnet/resnet_run_loop.py (process_record_dataset) ------------------


def process_record_dataset(
    dataset,
    is_training,
    batch_size,
    shuffle_buffer,
    parse_record_fn,
    num_epochs=1,
    dtype=tf.float32,
    datasets_num_private_threads=None,
    drop_remainder=False,
    tf_data_experimental_slack=False,
):
    # Defines a specific size thread pool for tf.data operations.
    if datasets_num_private_threads:
        options = tf.data.Options()
        options.experimental_threading.private_threadpool_size = datasets_num_private_threads
        dataset = dataset.with_options(options)
        tf.compat.v1.logging.info("datasets_num_private_threads: %s", datasets_num_private_threads)

    # Disable intra-op parallelism to optimize for throughput instead of latency.
    options = tf.data.Options()
    options.experimental_threading.max_intra_op_parallelism = 1
    dataset = dataset.with_options(options)

    # Prefetches a batch at a time to smooth out the time taken to load input
    # files for shuffling and processing.
    dataset = dataset.prefetch(buffer_size=batch_size)
    if is_training:
        # Shuffles records before repeating to respect epoch boundaries.
        dataset = dataset.shuffle(buffer_size=shuffle_buffer)

    # Repeats the dataset for the number of epochs to train.
    dataset = dataset.repeat(num_epochs)

    # Parses the raw records into images and labels.
    dataset = dataset.map(
        lambda value: parse_record_fn(value, is_training, dtype),
        num_parallel_calls=tf.data.experimental.AUTOTUNE,
    )
    dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)

    # Operations between the final prefetch and the get_next call to the iterator
    # will happen synchronously during run time.
    dataset = dataset.prefetch(buffer_size=tf.data.experimental.AUTOTUNE)

    if tf_data_experimental_slack:
        options = tf.data.Options()
        options.experimental_slack = True
        dataset = dataset.with_options(options)

    return dataset


# ---- tensorflow/models official/r1/resnet/cifar10_main.py (get_filenames, parse_record, input_fn) -------

HEIGHT = 32
WIDTH = 32
NUM_CHANNELS = 3
_DEFAULT_IMAGE_BYTES = HEIGHT * WIDTH * NUM_CHANNELS
# The record is the image plus a one-byte label
_RECORD_BYTES = _DEFAULT_IMAGE_BYTES + 1
NUM_CLASSES = 10
_NUM_DATA_FILES = 5
NUM_IMAGES = {"train": 50000, "validation": 10000}


def get_filenames(is_training, data_dir):
    """Returns a list of filenames."""
    assert tf.io.gfile.exists(data_dir), (
        "Run cifar10_download_and_extract.py first to download and extract the CIFAR-10 data."
    )

    if is_training:
        return [os.path.join(data_dir, "data_batch_%d.bin" % i) for i in range(1, _NUM_DATA_FILES + 1)]
    else:
        return [os.path.join(data_dir, "test_batch.bin")]


def parse_record(raw_record, is_training, dtype):
    """Parse CIFAR-10 image and label from a raw record."""
    # Convert bytes to a vector of uint8 that is record_bytes long.
    record_vector = tf.io.decode_raw(raw_record, tf.uint8)

    # The first byte represents the label, which we convert from uint8 to int32
    # and then to one-hot.
    label = tf.cast(record_vector[0], tf.int32)

    # The remaining bytes after the label represent the image, which we reshape
    # from [depth * height * width] to [depth, height, width].
    depth_major = tf.reshape(record_vector[1:_RECORD_BYTES], [NUM_CHANNELS, HEIGHT, WIDTH])

    # Convert from [depth, height, width] to [height, width, depth], and cast as
    # float32.
    image = tf.cast(tf.transpose(a=depth_major, perm=[1, 2, 0]), tf.float32)

    image = preprocess_image(image, is_training)
    image = tf.cast(image, dtype)

    return image, label


def preprocess_image(image, is_training):
    """Preprocess a single image of layout [height, width, depth]."""
    if is_training:
        # Resize the image to add four extra pixels on each side.
        image = tf.image.resize_with_crop_or_pad(image, HEIGHT + 8, WIDTH + 8)

        # Randomly crop a [HEIGHT, WIDTH] section of the image.
        image = tf.image.random_crop(image, [HEIGHT, WIDTH, NUM_CHANNELS])

        # Randomly flip the image horizontally.
        image = tf.image.random_flip_left_right(image)

    # Subtract off the mean and divide by the variance of the pixels.
    image = tf.image.per_image_standardization(image)
    return image


def input_fn(
    is_training,
    data_dir,
    batch_size,
    num_epochs=1,
    dtype=tf.float32,
    datasets_num_private_threads=None,
    parse_record_fn=parse_record,
    input_context=None,
    drop_remainder=False,
):
    """Input function which provides batches for train or eval."""
    filenames = get_filenames(is_training, data_dir)
    dataset = tf.data.FixedLengthRecordDataset(filenames, _RECORD_BYTES)

    if input_context:
        logging.info(
            "Sharding the dataset: input_pipeline_id=%d num_input_pipelines=%d",
            input_context.input_pipeline_id,
            input_context.num_input_pipelines,
        )
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)

    return process_record_dataset(
        dataset=dataset,
        is_training=is_training,
        batch_size=batch_size,
        shuffle_buffer=NUM_IMAGES["train"],
        parse_record_fn=parse_record_fn,
        num_epochs=num_epochs,
        dtype=dtype,
        datasets_num_private_threads=datasets_num_private_threads,
        drop_remainder=drop_remainder,
    )


def official_resnet_cifar10_input(tmp) -> Any:
    data_dir = repo_data.cifar10_bins(tmp)
    # dtype passed explicitly: a default `tf.float32` is bound when this module is imported (headrace's),
    # and the recorder runs these functions with TensorFlow's `tf`
    evaluation = input_fn(False, data_dir, batch_size=3, dtype=tf.float32, datasets_num_private_threads=2)
    context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1)
    sharded = input_fn(False, data_dir, batch_size=4, dtype=tf.float32, input_context=context)
    train = elements(
        input_fn(True, data_dir, batch_size=4, num_epochs=2, dtype=tf.float32, drop_remainder=True)
    )
    # training crops, flips and shuffles at random (headrace's draws, not TF's): compared by dtype and shape,
    # and by the labels it yields (each record's label twice)
    train_labels = np.sort(np.concatenate([labels for _, labels in train]))
    return [elements(evaluation), elements(sharded), data.summary(train), train_labels]


# ---- tensorflow/models official/r1/mnist/dataset.py and official/r1/mnist/mnist.py (input fns) ----------


def read32(bytestream):
    """Read 4 bytes from bytestream as an unsigned 32-bit integer."""
    dt = np.dtype(np.uint32).newbyteorder(">")
    return np.frombuffer(bytestream.read(4), dtype=dt)[0]


def check_image_file_header(filename):
    """Validate that filename corresponds to images for the MNIST dataset."""
    with tf.io.gfile.GFile(filename, "rb") as f:
        magic = read32(f)
        read32(f)  # num_images, unused
        rows = read32(f)
        cols = read32(f)
        if magic != 2051:
            raise ValueError("Invalid magic number %d in MNIST file %s" % (magic, f.name))
        if rows != 28 or cols != 28:
            raise ValueError(
                "Invalid MNIST file %s: Expected 28x28 images, found %dx%d" % (f.name, rows, cols)
            )


def check_labels_file_header(filename):
    """Validate that filename corresponds to labels for the MNIST dataset."""
    with tf.io.gfile.GFile(filename, "rb") as f:
        magic = read32(f)
        read32(f)  # num_items, unused
        if magic != 2049:
            raise ValueError("Invalid magic number %d in MNIST file %s" % (magic, f.name))


def download(directory, filename):
    """Download (and unzip) a file from the MNIST dataset if not already done."""
    filepath = os.path.join(directory, filename)
    if tf.io.gfile.exists(filepath):
        return filepath
    if not tf.io.gfile.exists(directory):
        tf.io.gfile.makedirs(directory)
    # CVDF mirror of http://yann.lecun.com/exdb/mnist/
    url = "https://storage.googleapis.com/cvdf-datasets/mnist/" + filename + ".gz"
    _, zipped_filepath = tempfile.mkstemp(suffix=".gz")
    print("Downloading %s to %s" % (url, zipped_filepath))
    urllib.request.urlretrieve(url, zipped_filepath)
    with gzip.open(zipped_filepath, "rb") as f_in, tf.io.gfile.GFile(filepath, "wb") as f_out:
        shutil.copyfileobj(f_in, f_out)
    os.remove(zipped_filepath)
    return filepath


def mnist_dataset(directory, images_file, labels_file):  # the source's `dataset`
    """Download and parse MNIST dataset."""

    images_file = download(directory, images_file)
    labels_file = download(directory, labels_file)

    check_image_file_header(images_file)
    check_labels_file_header(labels_file)

    def decode_image(image):
        # Normalize from [0, 255] to [0.0, 1.0]
        image = tf.io.decode_raw(image, tf.uint8)
        image = tf.cast(image, tf.float32)
        image = tf.reshape(image, [784])
        return image / 255.0

    def decode_label(label):
        label = tf.io.decode_raw(label, tf.uint8)  # tf.string -> [tf.uint8]
        label = tf.reshape(label, [])  # label is a scalar
        return tf.cast(label, tf.int32)

    images = tf.data.FixedLengthRecordDataset(images_file, 28 * 28, header_bytes=16).map(decode_image)
    labels = tf.data.FixedLengthRecordDataset(labels_file, 1, header_bytes=8).map(decode_label)
    return tf.data.Dataset.zip((images, labels))


def mnist_train(directory):
    """tf.data.Dataset object for MNIST training data."""
    return mnist_dataset(directory, "train-images-idx3-ubyte", "train-labels-idx1-ubyte")


def mnist_test(directory):
    """tf.data.Dataset object for MNIST test data."""
    return mnist_dataset(directory, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


def official_mnist_dataset(tmp) -> Any:
    data_dir = repo_data.mnist_idx(tmp)
    batch_size, epochs_between_evals = 4, 2

    def train_input_fn():  # mnist.py
        ds = mnist_train(data_dir)
        ds = ds.cache().shuffle(buffer_size=50000).batch(batch_size)
        ds = ds.repeat(epochs_between_evals)
        return ds

    def eval_input_fn():  # mnist.py, up to its TF1 `.make_one_shot_iterator().get_next()`
        return mnist_test(data_dir).batch(batch_size)

    train = elements(train_input_fn())
    # shuffled: the batch sizes, and the rows in one fixed order (by their bytes), stacked
    rows = sorted(
        ((image, label) for images, labels in train for image, label in zip(images, labels)),
        key=lambda row: (row[0].tobytes(), int(row[1])),
    )
    stacked = (np.stack([image for image, _ in rows]), np.stack([label for _, label in rows]))
    return [elements(eval_input_fn()), [len(labels) for _, labels in train], stacked]


# ---- tensorflow/models official/legacy/transformer/data_pipeline.py ------------------------------------

# Buffer size for reading records from a TFRecord file. Each training file is
# 7.2 MB, so 8 MB allows an entire file to be kept in memory.
_READ_RECORD_BUFFER = 8 * 1000 * 1000

# Example grouping constants. Defines length boundaries for each group.
# These values are the defaults used in Tensor2Tensor.
_MIN_BOUNDARY = 8
_BOUNDARY_SCALE = 1.1


def _load_records(filename):
    """Read file and return a dataset of tf.Examples."""
    return tf.data.TFRecordDataset(filename, buffer_size=_READ_RECORD_BUFFER)


def _parse_example(serialized_example):
    """Return inputs and targets Tensors from a serialized tf.Example."""
    data_fields = {"inputs": tf.io.VarLenFeature(tf.int64), "targets": tf.io.VarLenFeature(tf.int64)}
    parsed = tf.io.parse_single_example(serialized_example, data_fields)
    inputs = tf.sparse.to_dense(parsed["inputs"])
    targets = tf.sparse.to_dense(parsed["targets"])
    return inputs, targets


def _filter_max_length(example, max_length=256):
    """Indicates whether the example's length is lower than the maximum length."""
    return tf.logical_and(tf.size(example[0]) <= max_length, tf.size(example[1]) <= max_length)


def _get_example_length(example):
    """Returns the maximum length between the example inputs and targets."""
    length = tf.maximum(tf.shape(example[0])[0], tf.shape(example[1])[0])
    return length


def _create_min_max_boundaries(max_length, min_boundary=_MIN_BOUNDARY, boundary_scale=_BOUNDARY_SCALE):
    """Create min and max boundary lists up to max_length."""
    # Create bucket boundaries list by scaling the previous boundary or adding 1
    # (to ensure increasing boundary sizes).
    bucket_boundaries = []
    x = min_boundary
    while x < max_length:
        bucket_boundaries.append(x)
        x = max(x + 1, int(x * boundary_scale))

    # Create min and max boundary lists from the initial list.
    buckets_min = [0] + bucket_boundaries
    buckets_max = bucket_boundaries + [max_length + 1]
    return buckets_min, buckets_max


def _batch_examples(dataset, batch_size, max_length):
    """Group examples by similar lengths, and return batched dataset."""
    buckets_min, buckets_max = _create_min_max_boundaries(max_length)

    # Create list of batch sizes for each bucket_id, so that
    # bucket_batch_size[bucket_id] * buckets_max[bucket_id] <= batch_size
    bucket_batch_sizes = [int(batch_size) // x for x in buckets_max]
    # bucket_id will be a tensor, so convert this list to a tensor as well.
    bucket_batch_sizes = tf.constant(bucket_batch_sizes, dtype=tf.int64)

    def example_to_bucket_id(example_input, example_target):
        """Return int64 bucket id for this example, calculated based on length."""
        seq_length = _get_example_length((example_input, example_target))

        conditions_c = tf.logical_and(
            tf.less_equal(buckets_min, seq_length), tf.less(seq_length, buckets_max)
        )
        bucket_id = tf.reduce_min(tf.where(conditions_c))
        return bucket_id

    def window_size_fn(bucket_id):
        """Return number of examples to be grouped when given a bucket id."""
        return bucket_batch_sizes[bucket_id]

    def batching_fn(bucket_id, grouped_dataset):
        """Batch and add padding to a dataset of elements with similar lengths."""
        bucket_batch_size = window_size_fn(bucket_id)

        # Batch the dataset and add padding so that all input sequences in the
        # examples have the same length, and all target sequences have the same
        # lengths as well. Resulting lengths of inputs and targets can differ.
        return grouped_dataset.padded_batch(bucket_batch_size, ([None], [None]))

    return dataset.apply(
        tf.data.experimental.group_by_window(
            key_func=example_to_bucket_id,
            reduce_func=batching_fn,
            window_size=None,
            window_size_func=window_size_fn,
        )
    )


def _read_and_batch_from_files(
    file_pattern,
    batch_size,
    max_length,
    max_io_parallelism,
    shuffle,
    repeat,
    static_batch=False,
    num_replicas=1,
    ctx=None,
):
    """Create dataset where each item is a dict of "inputs" and "targets"."""
    dataset = tf.data.Dataset.list_files(file_pattern, shuffle=shuffle)

    if ctx and ctx.num_input_pipelines > 1:
        logging.info("Shard %d of the dataset.", ctx.input_pipeline_id)
        dataset = dataset.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)

    # Read files and interleave results. When training, the order of the examples
    # will be non-deterministic.
    options = tf.data.Options()
    options.experimental_deterministic = False
    dataset = dataset.interleave(
        _load_records, cycle_length=max_io_parallelism, num_parallel_calls=tf.data.experimental.AUTOTUNE
    ).with_options(options)

    # Parse each tf.Example into a dictionary
    dataset = dataset.map(_parse_example, num_parallel_calls=tf.data.experimental.AUTOTUNE)

    # Remove examples where the input or target length exceeds the maximum length,
    dataset = dataset.filter(lambda x, y: _filter_max_length((x, y), max_length))

    if static_batch:
        dataset = dataset.padded_batch(
            # First calculate batch size (token number) per worker, then divide it
            # into sentences, and finally expand to a global batch. It could prove
            # the global batch divisble for distribution strategy.
            int(batch_size // num_replicas // max_length * num_replicas),
            ([max_length], [max_length]),
            drop_remainder=True,
        )
    else:
        # Group and batch such that each batch has examples of similar length.
        dataset = _batch_examples(dataset, batch_size, max_length)

    dataset = dataset.repeat(repeat)

    # Prefetch the next element to improve speed of input pipeline.
    dataset = dataset.prefetch(buffer_size=tf.data.experimental.AUTOTUNE)
    return dataset


# train_input_fn / eval_input_fn without their `use_synthetic_data` branch (model_helpers' synthetic data)
def train_input_fn(params, ctx=None):
    """Load and return dataset of batched examples for use during training."""
    file_pattern = os.path.join(params["data_dir"] or "", "*train*")
    return _read_and_batch_from_files(
        file_pattern,
        params["batch_size"],
        params["max_length"],
        params["max_io_parallelism"],
        shuffle=True,
        repeat=params["repeat_dataset"],
        static_batch=params["static_batch"],
        num_replicas=params["num_gpus"],
        ctx=ctx,
    )


def eval_input_fn(params, ctx=None):
    """Load and return dataset of batched examples for use during evaluation."""
    file_pattern = os.path.join(params["data_dir"] or "", "*dev*")
    return _read_and_batch_from_files(
        file_pattern,
        params["batch_size"],
        params["max_length"],
        params["max_io_parallelism"],
        shuffle=False,
        repeat=1,
        static_batch=params["static_batch"],
        num_replicas=params["num_gpus"],
        ctx=ctx,
    )


def official_transformer_data_pipeline(tmp) -> Any:
    params = {
        "data_dir": repo_data.wmt_records(tmp),
        "batch_size": 120,
        "max_length": 32,
        "max_io_parallelism": 2,
        "repeat_dataset": 1,
        "static_batch": False,
        "num_gpus": 1,
    }
    # one dev file: the non-deterministic interleave reads it in order
    dev = elements(eval_input_fn(params))
    dev_static = elements(eval_input_fn({**params, "static_batch": True, "batch_size": 100}))
    # two shuffled train files read non-deterministically: the rows (padding trimmed) as a multiset
    train = _trimmed_rows(elements(train_input_fn(params)))
    return [dev, dev_static, train]


PIPELINES = {
    "official_resnet_cifar10_input": official_resnet_cifar10_input,
    "official_mnist_dataset": official_mnist_dataset,
    "official_transformer_data_pipeline": official_transformer_data_pipeline,
}

#: float tolerances (absolute): per_image_standardization's mean and deviation sum in float32 in both
TOLERANCE = {"official_resnet_cifar10_input": 1e-5, "official_mnist_dataset": 1e-7}

#: the ported sources that do not run by changing only the import: what is missing
NOT_IMPORT_ONLY: dict = {}
