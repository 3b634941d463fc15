# ruff: noqa: UP031 (the sources' own %-formatting, kept as written)
"""TF1 repository input functions (google-research/bert run_pretraining.py, tensorflow/nmt iterator_utils.py;
tensorflow/tpu's ResNet ImageNet input calls Tensor methods: it is in tf1_math_pipelines_eager.py) re-ported with their TensorFlow math AS WRITTEN under ``import
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

import collections
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


PIPELINES = {"bert_run_pretraining_input_fn": bert_run_pretraining_input_fn}
TOLERANCE: dict[str, float] = {}

#: the ported sources that do not run by changing only the import: what is missing
NOT_IMPORT_ONLY = {
    "nmt_get_iterator": "tf.string_split and make_initializable_iterator (TF1 graph iterators, which TF 2's "
    "eager mode refuses too); its vocabulary tables (tf.lookup.StaticHashTable / TextFileInitializer for "
    "lookup_ops.index_table_from_file) port",
}
