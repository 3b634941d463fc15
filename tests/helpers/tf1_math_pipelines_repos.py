# ruff: noqa: UP031 (the sources' own %-formatting, kept as written)
"""TF1 repository input functions (google-research/bert run_pretraining.py, tensorflow/nmt iterator_utils.py,
tensorflow/tpu's ResNet ImageNet input) re-ported with their TensorFlow math AS WRITTEN under ``import
headrace.compat.v1 as tf`` (issue 23). The older hand-rewritten ports of the same sources are
tests/compat/test_pipelines_repos.py. As tf1_math_pipelines.py: the functions are the sources' own
(comments name repository and path); inputs are generated (tests/helpers/pipeline_data_repos.py);
tools/record_tf_math_pipelines.py records what TensorFlow's ``tf.compat.v1`` gives into
tests/data/tfops_fixtures/pipelines_repos.json (with ``tf.contrib.data`` restored there as TF 1.15 had it:
the deprecated aliases of ``tf.data.experimental``).

Pipelines that do not port by changing only the import keep their source here but stay out of
``PIPELINES``; ``NOT_IMPORT_ONLY`` names what is missing.
"""

from __future__ import annotations

import abc
import collections
import functools
import os
from typing import Any

import numpy as np

import headrace.compat.v1 as tf  # the port: was `import tensorflow as tf` (TF1) / `tensorflow.compat.v1`
from tests.helpers import pipeline_data_repos as repo_data


def elements(ds) -> list:
    return list(ds.as_numpy_iterator())


# ---- google-research/bert run_pretraining.py (input_fn_builder, _decode_record) -------------------------


def input_fn_builder(input_files, max_seq_length, max_predictions_per_seq, is_training, num_cpu_threads=4):
    """Creates an `input_fn` closure to be passed to TPUEstimator."""

    def input_fn(params):
        """The actual input function."""
        batch_size = params["batch_size"]

        name_to_features = {
            "input_ids": tf.FixedLenFeature([max_seq_length], tf.int64),
            "input_mask": tf.FixedLenFeature([max_seq_length], tf.int64),
            "segment_ids": tf.FixedLenFeature([max_seq_length], tf.int64),
            "masked_lm_positions": tf.FixedLenFeature([max_predictions_per_seq], tf.int64),
            "masked_lm_ids": tf.FixedLenFeature([max_predictions_per_seq], tf.int64),
            "masked_lm_weights": tf.FixedLenFeature([max_predictions_per_seq], tf.float32),
            "next_sentence_labels": tf.FixedLenFeature([1], tf.int64),
        }

        # For training, we want a lot of parallel reading and shuffling.
        # For eval, we want no shuffling and parallel reading doesn't matter.
        if is_training:
            d = tf.data.Dataset.from_tensor_slices(tf.constant(input_files))
            d = d.repeat()
            d = d.shuffle(buffer_size=len(input_files))

            # `cycle_length` is the number of parallel files that get read.
            cycle_length = min(num_cpu_threads, len(input_files))

            # `sloppy` mode means that the interleaving is not exact. This adds
            # even more randomness to the training pipeline.
            d = d.apply(
                tf.contrib.data.parallel_interleave(
                    tf.data.TFRecordDataset, sloppy=is_training, cycle_length=cycle_length
                )
            )
            d = d.shuffle(buffer_size=100)
        else:
            d = tf.data.TFRecordDataset(input_files)
            # Since we evaluate for a fixed number of steps we don't want to encounter
            # out-of-range exceptions.
            d = d.repeat()

        # We must `drop_remainder` on training because the TPU requires fixed
        # size dimensions. For eval, we assume we are evaluating on the CPU or GPU
        # and we *don't* want to drop the remainder, otherwise we wont cover
        # every sample.
        d = d.apply(
            tf.contrib.data.map_and_batch(
                lambda record: _decode_record(record, name_to_features),
                batch_size=batch_size,
                num_parallel_batches=num_cpu_threads,
                drop_remainder=True,
            )
        )
        return d

    return input_fn


def _decode_record(record, name_to_features):
    """Decodes a record to a TensorFlow example."""
    example = tf.parse_single_example(record, name_to_features)

    # tf.Example only supports tf.int64, but the TPU only supports tf.int32.
    # So cast all int64 to int32.
    for name in list(example.keys()):
        t = example[name]
        if t.dtype == tf.int64:
            t = tf.to_int32(t)
        example[name] = t

    return example


def bert_run_pretraining_input_fn(tmp) -> Any:
    max_seq_length, max_predictions_per_seq = 16, 4
    input_files = repo_data.bert_records(tmp, max_seq_length, max_predictions_per_seq)
    evaluate = input_fn_builder(input_files, max_seq_length, max_predictions_per_seq, is_training=False)
    eval_batches = elements(evaluate({"batch_size": 8}).take(5))  # 40 records: the 30 in order, then 10 again
    train = input_fn_builder(input_files, max_seq_length, max_predictions_per_seq, True, num_cpu_threads=4)
    train_batches = elements(train({"batch_size": 8}).take(6))
    # training shuffles files and records at random (headrace's draws, not TF's): compared by each feature's
    # dtype and shape, and by every row being one whole record of the files (its ids and label agree)
    structure = [{k: [str(v.dtype), list(v.shape)] for k, v in b.items()} for b in train_batches]
    uids = {s * 100 + i for s in range(3) for i in range(10)}
    whole = all(
        int(row[0]) in uids and (np.diff(row) == 1).all() and int(label[0]) == int(row[0]) % 2
        for b in train_batches
        for row, label in zip(b["input_ids"], b["next_sentence_labels"])
    )
    return [eval_batches, structure, whole]


# ---- tensorflow/nmt nmt/utils/iterator_utils.py (get_infer_iterator, get_iterator) ------------------------
# NOT import-only: tf.string_split and TF1 graph iterators (make_initializable_iterator) are missing; the
# last does not run in TensorFlow 2's eager mode either. The vocabulary tables (tf.lookup for
# lookup_ops.index_table_from_file in vocab_utils.py) port.


class BatchedInput(
    collections.namedtuple(
        "BatchedInput",
        (
            "initializer",
            "source",
            "target_input",
            "target_output",
            "source_sequence_length",
            "target_sequence_length",
        ),
    )
):
    pass


def get_infer_iterator(src_dataset, src_vocab_table, batch_size, source_reverse, eos, src_max_len=None):
    src_eos_id = tf.cast(src_vocab_table.lookup(tf.constant(eos)), tf.int32)
    src_dataset = src_dataset.map(lambda src: tf.string_split([src]).values)

    if src_max_len:
        src_dataset = src_dataset.map(lambda src: src[:src_max_len])
    # Convert the word strings to ids
    src_dataset = src_dataset.map(lambda src: tf.cast(src_vocab_table.lookup(src), tf.int32))
    if source_reverse:
        src_dataset = src_dataset.map(lambda src: tf.reverse(src, axis=[0]))
    # Add in the word counts.
    src_dataset = src_dataset.map(lambda src: (src, tf.size(src)))

    def batching_func(x):
        return x.padded_batch(
            batch_size,
            # The entry is the source line rows;
            # this has unknown-length vectors.  The last entry is
            # the source row size; this is a scalar.
            padded_shapes=(tf.TensorShape([None]), tf.TensorShape([])),  # src  # src_len
            # Pad the source sequences with eos tokens.
            padding_values=(src_eos_id, 0),  # src  # src_len -- unused
        )

    batched_dataset = batching_func(src_dataset)
    batched_iter = batched_dataset.make_initializable_iterator()
    (src_ids, src_seq_len) = batched_iter.get_next()
    return BatchedInput(
        initializer=batched_iter.initializer,
        source=src_ids,
        target_input=None,
        target_output=None,
        source_sequence_length=src_seq_len,
        target_sequence_length=None,
    )


def get_iterator(
    src_dataset,
    tgt_dataset,
    src_vocab_table,
    tgt_vocab_table,
    batch_size,
    sos,
    eos,
    source_reverse,
    random_seed,
    num_buckets,
    src_max_len=None,
    tgt_max_len=None,
    num_parallel_calls=4,
    output_buffer_size=None,
    skip_count=None,
    num_shards=1,
    shard_index=0,
):
    if not output_buffer_size:
        output_buffer_size = batch_size * 1000
    src_eos_id = tf.cast(src_vocab_table.lookup(tf.constant(eos)), tf.int32)
    tgt_sos_id = tf.cast(tgt_vocab_table.lookup(tf.constant(sos)), tf.int32)
    tgt_eos_id = tf.cast(tgt_vocab_table.lookup(tf.constant(eos)), tf.int32)

    src_tgt_dataset = tf.data.Dataset.zip((src_dataset, tgt_dataset))

    src_tgt_dataset = src_tgt_dataset.shard(num_shards, shard_index)
    if skip_count is not None:
        src_tgt_dataset = src_tgt_dataset.skip(skip_count)

    src_tgt_dataset = src_tgt_dataset.shuffle(output_buffer_size, random_seed)

    src_tgt_dataset = src_tgt_dataset.map(
        lambda src, tgt: (tf.string_split([src]).values, tf.string_split([tgt]).values),
        num_parallel_calls=num_parallel_calls,
    ).prefetch(output_buffer_size)

    # Filter zero length input sequences.
    src_tgt_dataset = src_tgt_dataset.filter(
        lambda src, tgt: tf.logical_and(tf.size(src) > 0, tf.size(tgt) > 0)
    )

    if src_max_len:
        src_tgt_dataset = src_tgt_dataset.map(
            lambda src, tgt: (src[:src_max_len], tgt), num_parallel_calls=num_parallel_calls
        ).prefetch(output_buffer_size)
    if tgt_max_len:
        src_tgt_dataset = src_tgt_dataset.map(
            lambda src, tgt: (src, tgt[:tgt_max_len]), num_parallel_calls=num_parallel_calls
        ).prefetch(output_buffer_size)
    if source_reverse:
        src_tgt_dataset = src_tgt_dataset.map(
            lambda src, tgt: (tf.reverse(src, axis=[0]), tgt), num_parallel_calls=num_parallel_calls
        ).prefetch(output_buffer_size)
    # Convert the word strings to ids.  Word strings that are not in the
    # vocab get the lookup table's default_value integer.
    src_tgt_dataset = src_tgt_dataset.map(
        lambda src, tgt: (
            tf.cast(src_vocab_table.lookup(src), tf.int32),
            tf.cast(tgt_vocab_table.lookup(tgt), tf.int32),
        ),
        num_parallel_calls=num_parallel_calls,
    ).prefetch(output_buffer_size)
    # Create a tgt_input prefixed with <sos> and a tgt_output suffixed with <eos>.
    src_tgt_dataset = src_tgt_dataset.map(
        lambda src, tgt: (src, tf.concat(([tgt_sos_id], tgt), 0), tf.concat((tgt, [tgt_eos_id]), 0)),
        num_parallel_calls=num_parallel_calls,
    ).prefetch(output_buffer_size)
    # Add in sequence lengths.
    src_tgt_dataset = src_tgt_dataset.map(
        lambda src, tgt_in, tgt_out: (src, tgt_in, tgt_out, tf.size(src), tf.size(tgt_in)),
        num_parallel_calls=num_parallel_calls,
    ).prefetch(output_buffer_size)

    # Bucket by source sequence length (buckets for lengths 0-9, 10-19, ...)
    def batching_func(x):
        return x.padded_batch(
            batch_size,
            # The first three entries are the source and target line rows;
            # these have unknown-length vectors.  The last two entries are
            # the source and target row sizes; these are scalars.
            padded_shapes=(
                tf.TensorShape([None]),  # src
                tf.TensorShape([None]),  # tgt_input
                tf.TensorShape([None]),  # tgt_output
                tf.TensorShape([]),  # src_len
                tf.TensorShape([]),
            ),  # tgt_len
            # Pad the source and target sequences with eos tokens.
            padding_values=(
                src_eos_id,  # src
                tgt_eos_id,  # tgt_input
                tgt_eos_id,  # tgt_output
                0,  # src_len -- unused
                0,
            ),
        )  # tgt_len -- unused

    if num_buckets > 1:

        def key_func(unused_1, unused_2, unused_3, src_len, tgt_len):
            # Calculate bucket_width by maximum source sequence length.
            # Pairs with length [0, bucket_width) go to bucket 0, length
            # [bucket_width, 2 * bucket_width) go to bucket 1, etc.  Pairs with length
            # over ((num_bucket-1) * bucket_width) words all go into the last bucket.
            if src_max_len:
                bucket_width = (src_max_len + num_buckets - 1) // num_buckets
            else:
                bucket_width = 10

            # Bucket sentence pairs by the length of their source sentence and target
            # sentence.
            bucket_id = tf.maximum(src_len // bucket_width, tgt_len // bucket_width)
            return tf.to_int64(tf.minimum(num_buckets, bucket_id))

        def reduce_func(unused_key, windowed_data):
            return batching_func(windowed_data)

        batched_dataset = src_tgt_dataset.apply(
            tf.contrib.data.group_by_window(
                key_func=key_func, reduce_func=reduce_func, window_size=batch_size
            )
        )

    else:
        batched_dataset = batching_func(src_tgt_dataset)
    batched_iter = batched_dataset.make_initializable_iterator()
    (src_ids, tgt_input_ids, tgt_output_ids, src_seq_len, tgt_seq_len) = batched_iter.get_next()
    return BatchedInput(
        initializer=batched_iter.initializer,
        source=src_ids,
        target_input=tgt_input_ids,
        target_output=tgt_output_ids,
        source_sequence_length=src_seq_len,
        target_sequence_length=tgt_seq_len,
    )


def nmt_get_iterator(tmp) -> Any:
    paths = repo_data.nmt_text(tmp)
    # vocab_utils.create_vocab_tables: lookup_ops.index_table_from_file(vocab_file, default_value=UNK_ID)
    vocab_table = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(
            paths["vocab"],
            tf.string,
            tf.lookup.TextFileIndex.WHOLE_LINE,
            tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER,
        ),
        default_value=0,
    )
    iterator = get_iterator(
        tf.data.TextLineDataset(paths["src"]),
        tf.data.TextLineDataset(paths["tgt"]),
        vocab_table,
        vocab_table,
        batch_size=4,
        sos="<s>",
        eos="</s>",
        source_reverse=False,
        random_seed=3,
        num_buckets=3,
        src_max_len=16,
        tgt_max_len=20,
        skip_count=2,
        num_shards=2,
        shard_index=1,
    )
    infer = get_infer_iterator(tf.data.TextLineDataset(paths["infer"]), vocab_table, 4, True, "</s>")
    return [iterator, infer]


# ---- tensorflow/tpu models/official/resnet/resnet_preprocessing.py ---------------------------------------
# NOT import-only (with imagenet_input.py below): set_shapes calls images.set_shape(images.get_shape()
# .merge_with(...)), tf.Tensor methods numpy arrays lack.

IMAGE_SIZE = 224
CROP_PADDING = 32


def distorted_bounding_box_crop(
    image_bytes,
    bbox,
    min_object_covered=0.1,
    aspect_ratio_range=(0.75, 1.33),
    area_range=(0.05, 1.0),
    max_attempts=100,
    scope=None,
):
    """Generates cropped_image using one of the bboxes randomly distorted."""
    with tf.name_scope(scope, "distorted_bounding_box_crop", [image_bytes, bbox]):
        shape = tf.image.extract_jpeg_shape(image_bytes)
        sample_distorted_bounding_box = tf.image.sample_distorted_bounding_box(
            shape,
            bounding_boxes=bbox,
            min_object_covered=min_object_covered,
            aspect_ratio_range=aspect_ratio_range,
            area_range=area_range,
            max_attempts=max_attempts,
            use_image_if_no_bounding_boxes=True,
        )
        bbox_begin, bbox_size, _ = sample_distorted_bounding_box

        # Crop the image to the specified bounding box.
        offset_y, offset_x, _ = tf.unstack(bbox_begin)
        target_height, target_width, _ = tf.unstack(bbox_size)
        crop_window = tf.stack([offset_y, offset_x, target_height, target_width])
        image = tf.image.decode_and_crop_jpeg(image_bytes, crop_window, channels=3)

        return image


def _at_least_x_are_equal(a, b, x):
    """At least `x` of `a` and `b` `Tensors` are equal."""
    match = tf.equal(a, b)
    match = tf.cast(match, tf.int32)
    return tf.greater_equal(tf.reduce_sum(match), x)


def _decode_and_random_crop(image_bytes, image_size):
    """Make a random crop of image_size."""
    bbox = tf.constant([0.0, 0.0, 1.0, 1.0], dtype=tf.float32, shape=[1, 1, 4])
    image = distorted_bounding_box_crop(
        image_bytes,
        bbox,
        min_object_covered=0.1,
        aspect_ratio_range=(3.0 / 4, 4.0 / 3.0),
        area_range=(0.08, 1.0),
        max_attempts=10,
        scope=None,
    )
    original_shape = tf.image.extract_jpeg_shape(image_bytes)
    bad = _at_least_x_are_equal(original_shape, tf.shape(image), 3)

    image = tf.cond(
        bad,
        lambda: _decode_and_center_crop(image_bytes, image_size),
        lambda: tf.image.resize_bicubic([image], [image_size, image_size])[0],  # pylint: disable=g-long-lambda
    )

    return image


def _decode_and_center_crop(image_bytes, image_size):
    """Crops to center of image with padding then scales image_size."""
    shape = tf.image.extract_jpeg_shape(image_bytes)
    image_height = shape[0]
    image_width = shape[1]

    padded_center_crop_size = tf.cast(
        (
            (image_size / (image_size + CROP_PADDING))
            * tf.cast(tf.minimum(image_height, image_width), tf.float32)
        ),
        tf.int32,
    )

    offset_height = ((image_height - padded_center_crop_size) + 1) // 2
    offset_width = ((image_width - padded_center_crop_size) + 1) // 2
    crop_window = tf.stack([offset_height, offset_width, padded_center_crop_size, padded_center_crop_size])
    image = tf.image.decode_and_crop_jpeg(image_bytes, crop_window, channels=3)
    image = tf.image.resize_bicubic([image], [image_size, image_size])[0]

    return image


def _flip(image):
    """Random horizontal image flip."""
    image = tf.image.random_flip_left_right(image)
    return image


def preprocess_for_train(image_bytes, use_bfloat16, image_size=IMAGE_SIZE):
    """Preprocesses the given image for training."""
    image = _decode_and_random_crop(image_bytes, image_size)
    image = _flip(image)
    image = tf.reshape(image, [image_size, image_size, 3])
    image = tf.image.convert_image_dtype(image, dtype=tf.bfloat16 if use_bfloat16 else tf.float32)
    return image


def preprocess_for_eval(image_bytes, use_bfloat16, image_size=IMAGE_SIZE):
    """Preprocesses the given image for evaluation."""
    image = _decode_and_center_crop(image_bytes, image_size)
    image = tf.reshape(image, [image_size, image_size, 3])
    image = tf.image.convert_image_dtype(image, dtype=tf.bfloat16 if use_bfloat16 else tf.float32)
    return image


def preprocess_image(image_bytes, is_training=False, use_bfloat16=False, image_size=IMAGE_SIZE):
    """Preprocesses the given image."""
    if is_training:
        return preprocess_for_train(image_bytes, use_bfloat16, image_size)
    else:
        return preprocess_for_eval(image_bytes, use_bfloat16, image_size)


# ---- tensorflow/tpu models/official/resnet/imagenet_input.py (ImageNetTFExampleInput, ImageNetInput) -----


class ImageNetTFExampleInput(metaclass=abc.ABCMeta):
    """Base class for ImageNet input_fn generator."""

    def __init__(
        self,
        is_training,
        use_bfloat16,
        image_size=224,
        transpose_input=False,
        num_parallel_calls=8,
        include_background_label=False,
    ):
        self.image_preprocessing_fn = preprocess_image
        self.is_training = is_training
        self.use_bfloat16 = use_bfloat16
        self.transpose_input = transpose_input
        self.image_size = image_size
        self.num_parallel_calls = num_parallel_calls
        self.include_background_label = include_background_label

    def set_shapes(self, batch_size, images, labels):
        """Statically set the batch_size dimension."""
        if self.transpose_input:
            images.set_shape(images.get_shape().merge_with(tf.TensorShape([None, None, None, batch_size])))
            images = tf.reshape(images, [-1])
            labels.set_shape(labels.get_shape().merge_with(tf.TensorShape([batch_size])))
        else:
            images.set_shape(images.get_shape().merge_with(tf.TensorShape([batch_size, None, None, None])))
            labels.set_shape(labels.get_shape().merge_with(tf.TensorShape([batch_size])))

        return images, labels

    def dataset_parser(self, value):
        """Parses an image and its label from a serialized ResNet-50 TFExample."""
        keys_to_features = {
            "image/encoded": tf.FixedLenFeature((), tf.string, ""),
            "image/class/label": tf.FixedLenFeature([], tf.int64, -1),
        }

        parsed = tf.parse_single_example(value, keys_to_features)
        image_bytes = tf.reshape(parsed["image/encoded"], shape=[])

        image = self.image_preprocessing_fn(
            image_bytes=image_bytes,
            is_training=self.is_training,
            image_size=self.image_size,
            use_bfloat16=self.use_bfloat16,
        )

        label = tf.cast(tf.reshape(parsed["image/class/label"], shape=[]), dtype=tf.int32)

        if not self.include_background_label:
            # 'image/class/label' is encoded as an integer from 1 to num_label_classes
            # In order to generate the correct one-hot label vector from this number,
            # we subtract the number by 1 to make it in [0, num_label_classes).
            label -= 1

        return image, label

    @abc.abstractmethod
    def make_source_dataset(self, index, num_hosts):
        """Makes dataset of serialized TFExamples."""
        return

    def input_fn(self, params):
        """Input function which provides a single batch for train or eval."""
        batch_size = params["batch_size"]

        if "context" in params:
            current_host = params["context"].current_input_fn_deployment()[1]
            num_hosts = params["context"].num_hosts
        else:
            current_host = 0
            num_hosts = 1

        dataset = self.make_source_dataset(current_host, num_hosts)

        # Use the fused map-and-batch operation.
        dataset = dataset.apply(
            tf.data.experimental.map_and_batch(
                self.dataset_parser,
                batch_size=batch_size,
                num_parallel_batches=self.num_parallel_calls,
                drop_remainder=True,
            )
        )

        # Transpose for performance on TPU
        if self.transpose_input:
            dataset = dataset.map(
                lambda images, labels: (tf.transpose(images, [1, 2, 3, 0]), labels),
                num_parallel_calls=self.num_parallel_calls,
            )

        # Assign static batch size dimension
        dataset = dataset.map(functools.partial(self.set_shapes, batch_size))

        # Prefetch overlaps in-feed with training
        dataset = dataset.prefetch(tf.data.experimental.AUTOTUNE)
        return dataset


class ImageNetInput(ImageNetTFExampleInput):
    """Generates ImageNet input_fn from a series of TFRecord files."""

    def __init__(
        self,
        is_training,
        use_bfloat16,
        transpose_input,
        data_dir,
        image_size=224,
        num_parallel_calls=8,
        cache=False,
        dataset_split=None,
        shuffle_shards=False,
        include_background_label=False,
    ):
        super().__init__(
            is_training=is_training,
            image_size=image_size,
            use_bfloat16=use_bfloat16,
            transpose_input=transpose_input,
            include_background_label=include_background_label,
        )
        self.data_dir = data_dir
        if self.data_dir == "null" or not self.data_dir:
            self.data_dir = None
        self.num_parallel_calls = num_parallel_calls
        self.cache = cache
        self.dataset_split = dataset_split
        self.shuffle_shards = shuffle_shards

    def _get_null_input(self, data):
        """Returns a null image (all black pixels)."""
        del data  # Unused since output is constant regardless of input
        return tf.zeros(
            [self.image_size, self.image_size, 3], tf.bfloat16 if self.use_bfloat16 else tf.float32
        )

    def dataset_parser(self, value):
        """See base class."""
        if not self.data_dir:
            return value, tf.constant(0, tf.int32)
        return super().dataset_parser(value)

    def make_source_dataset(self, index, num_hosts):
        """See base class."""
        if not self.data_dir:
            tf.logging.info("Undefined data_dir implies null input")
            return tf.data.Dataset.range(1).repeat().map(self._get_null_input)

        # Shuffle the filenames to ensure better randomization.
        if not self.dataset_split:
            file_pattern = os.path.join(self.data_dir, "train-*" if self.is_training else "validation-*")
        else:
            if self.dataset_split not in ["train", "validation"]:
                raise ValueError(
                    "If provided, dataset_split must be 'train' or 'validation', was %s" % self.dataset_split
                )
            file_pattern = os.path.join(self.data_dir, self.dataset_split + "-*")

        # For multi-host training, we want each hosts to always process the same
        # subset of files.  Each host only sees a subset of the entire dataset,
        # allowing us to cache larger datasets in memory.
        dataset = tf.data.Dataset.list_files(file_pattern, shuffle=self.shuffle_shards)
        dataset = dataset.shard(num_hosts, index)

        if self.is_training and not self.cache:
            dataset = dataset.repeat()

        def fetch_dataset(filename):
            buffer_size = 8 * 1024 * 1024  # 8 MiB per file
            dataset = tf.data.TFRecordDataset(filename, buffer_size=buffer_size)
            return dataset

        # Read the data from disk in parallel
        dataset = dataset.apply(
            tf.data.experimental.parallel_interleave(fetch_dataset, cycle_length=64, sloppy=True)
        )

        if self.cache:
            dataset = dataset.cache().apply(tf.data.experimental.shuffle_and_repeat(1024 * 16))
        else:
            dataset = dataset.shuffle(1024)
        return dataset


class _TPUContext:  # what TPUEstimator passes as params["context"] (feeding, not the input function)
    def __init__(self, host, num_hosts):
        self.num_hosts = num_hosts
        self._host = host

    def current_input_fn_deployment(self):
        return ("/job:worker/task:%d" % self._host, self._host, 0)


def tpu_resnet_imagenet_input(tmp) -> Any:
    data_dir = repo_data.imagenet_records(tmp)
    out = []
    for transpose_input in (True, False):
        reader = ImageNetInput(False, False, transpose_input, data_dir, image_size=16, dataset_split="train")
        dataset = reader.input_fn({"batch_size": 2, "context": _TPUContext(1, 2)})
        out.append(elements(dataset.take(3)))
    return out


PIPELINES = {"bert_run_pretraining_input_fn": bert_run_pretraining_input_fn}
TOLERANCE: dict[str, float] = {}

#: the ported sources that do not run by changing only the import: what is missing
NOT_IMPORT_ONLY = {
    "nmt_get_iterator": "tf.string_split and make_initializable_iterator (TF1 graph iterators, which TF 2's "
    "eager mode refuses too); its vocabulary tables (tf.lookup.StaticHashTable / TextFileInitializer for "
    "lookup_ops.index_table_from_file) port",
    "tpu_resnet_imagenet_input": "images.set_shape(images.get_shape().merge_with(...)) in set_shapes: numpy arrays "
    "have no set_shape / get_shape (the Tensor methods row of docs/porting.md)",
}
