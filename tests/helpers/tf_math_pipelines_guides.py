"""tf.data pipelines of TensorFlow's guides and tutorials, tensorflow/models' input reader, tf.data's
documented examples and a course (the older hand-rewritten ports of tests/compat/test_pipelines.py and
test_pipelines_tutorials.py), re-ported with their TensorFlow math AS WRITTEN (issue 23): the functions
below are the sources' own (comments name repository and path) under ``import headrace as tf``; only
what feeds them changed (downloads and Keras loaders became small generated files and arrays) and sizes
shrank so the fixtures stay small. Output that a source draws at random (shuffles, np.random) is
compared as a multiset (``data.unordered``) or by dtype, shape and range (``data.summary``).

``tools/record_tf_math_pipelines.py pipelines_guides.json`` rebinds ``tf`` to TensorFlow and records
what tf.data yields into tests/data/tfops_fixtures/pipelines_guides.json (three pipelines need pandas
importable beside TensorFlow, e.g. a folder of links to a venv's pandas, dateutil and six.py added to
PYTHONPATH); tests/compat/test_pipelines_tf_math.py replays them on headrace (skipped without pandas).
Pipelines that need names headrace lacks keep their source's code here but are listed in
``NOT_IMPORT_ONLY`` (with what is missing) instead of ``PIPELINES``.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import random
import re
import string
import time
import unittest
from typing import Any

import numpy as np

import headrace as tf  # the port: was `import tensorflow as tf`
from tests.helpers import pipeline_data as data
from tests.helpers.tf_fixtures import canon


def elements(ds) -> list:
    return list(ds.as_numpy_iterator())


def _rows(batch: Any) -> list:
    """Observation only: a batch's rows one by one (dicts and tuples kept), to compare a shuffled
    pipeline's batches as a multiset of rows."""
    if isinstance(batch, dict):
        keys = list(batch)
        return [dict(zip(keys, values)) for values in zip(*(_rows(batch[k]) for k in keys))]
    if isinstance(batch, tuple):
        return [tuple(values) for values in zip(*(_rows(part) for part in batch))]
    return list(np.asarray(batch))


def unordered_rows(batches: list) -> list:
    return data.unordered([row for batch in batches for row in _rows(batch)])


def _pandas() -> Any:
    """pandas, which three sources read their CSV files with; the tests skip them without it."""
    try:
        import pandas  # noqa: PLC0415
    except ImportError:
        raise unittest.SkipTest("pandas is not installed (the source reads its CSV with pandas)") from None
    return pandas


def _write(path: pathlib.Path, text: str) -> str:
    path.write_text(text)
    return str(path)


# ---- tensorflow/docs site/en/tutorials/load_data/text.ipynb ("Example 2: Predict the author of Iliad
# translations": labelled TextLineDatasets, concatenated and shuffled once) ----------------------------


def labeler(example, index):
    return example, tf.cast(index, tf.int64)


def docs_load_text_iliad(tmp) -> Any:
    parent_dir = pathlib.Path(tmp)  # utils.get_file(name, origin=DIRECTORY_URL + name)
    FILE_NAMES = ["cowper.txt", "derby.txt", "butler.txt"]  # noqa: N806 (the tutorial's names)
    for k, name in enumerate(FILE_NAMES):
        _write(parent_dir / name, "".join(f"Line {i} of {name}, sing O goddess\n" for i in range(4 + k)))

    labeled_data_sets = []

    for i, file_name in enumerate(FILE_NAMES):
        lines_dataset = tf.data.TextLineDataset(str(parent_dir / file_name))
        labeled_dataset = lines_dataset.map(lambda ex: labeler(ex, i))  # noqa: B023 (the tutorial's code)
        labeled_data_sets.append(labeled_dataset)

    BUFFER_SIZE = 50000  # noqa: N806

    all_labeled_data = labeled_data_sets[0]
    for labeled_dataset in labeled_data_sets[1:]:
        all_labeled_data = all_labeled_data.concatenate(labeled_dataset)

    all_labeled_data = all_labeled_data.shuffle(BUFFER_SIZE, reshuffle_each_iteration=False)
    first = elements(all_labeled_data)
    # reshuffle_each_iteration=False: a second pass gives the first pass's order
    return [data.unordered(first), first == elements(all_labeled_data)]


def docs_load_text_iliad_encode(tmp) -> Any:
    # the tutorial's next step (not import-only: see NOT_IMPORT_ONLY): tokenize with tensorflow_text in a
    # Keras layer, look the tokens up in a tf.lookup table, split and padded_batch
    import tensorflow_text as tf_text  # noqa: PLC0415

    class MyTokenizer(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.tokenizer = tf_text.UnicodeScriptTokenizer()

        def call(self, text):
            lower_case = tf_text.case_fold_utf8(text)
            result = self.tokenizer.tokenize(lower_case)
            # If you pass a batch of strings, it will return a RaggedTensor.
            if isinstance(result, tf.RaggedTensor):
                # Convert to dense 0-padded.
                result = result.to_tensor()
            return result

    class MyVocabTable(tf.keras.layers.Layer):
        def __init__(self, vocab):
            super().__init__()
            self.keys = ["", *vocab]
            self.values = range(len(self.keys))

            self.init = tf.lookup.KeyValueTensorInitializer(
                self.keys, self.values, key_dtype=tf.string, value_dtype=tf.int64
            )

            num_oov_buckets = 1

            self.table = tf.lookup.StaticVocabularyTable(self.init, num_oov_buckets)

        def call(self, x):
            result = self.table.lookup(x)
            return result

    tokenizer = MyTokenizer()
    vocab_table = MyVocabTable(["line", "of", "sing", "goddess"])
    preprocess_text = tf.keras.Sequential([tokenizer, vocab_table])
    all_labeled_data = tf.data.Dataset.from_tensor_slices(([b"Line 1 of derby", b"sing O goddess"], [1, 2]))
    all_encoded_data = all_labeled_data.map(lambda text, labels: (preprocess_text(text), labels))
    return elements(all_encoded_data.padded_batch(2))


# ---- tensorflow/docs site/en/guide/data.ipynb ("Time series windowing": batch, then window) -----------


def dense_1_step(batch):
    # Shift features and labels one step relative to each other.
    return batch[:-1], batch[1:]


def label_next_5_steps(batch):
    return (
        batch[:-5],  # Inputs: All except the last 5 steps
        batch[-5:],  # Labels: The last 5 steps
    )


def make_window_dataset(ds, window_size=5, shift=1, stride=1):
    windows = ds.window(window_size, shift=shift, stride=stride)

    def sub_to_batch(sub):
        return sub.batch(window_size, drop_remainder=True)

    windows = windows.flat_map(sub_to_batch)
    return windows


def docs_data_time_series(tmp) -> Any:
    out = []
    range_ds = tf.data.Dataset.range(100000)
    batches = range_ds.batch(10, drop_remainder=True)
    out.append(elements(batches.take(5)))
    predict_dense_1_step = batches.map(dense_1_step)
    out.append(elements(predict_dense_1_step.take(3)))

    batches = range_ds.batch(15, drop_remainder=True)
    predict_5_steps = batches.map(label_next_5_steps)
    out.append(elements(predict_5_steps.take(3)))

    feature_length = 10
    label_length = 3

    features = range_ds.batch(feature_length, drop_remainder=True)
    labels = range_ds.batch(feature_length).skip(1).map(lambda labels: labels[:label_length])

    predicted_steps = tf.data.Dataset.zip((features, labels))
    out.append(elements(predicted_steps.take(5)))

    window_size = 5

    windows = range_ds.window(window_size, shift=1)
    out.append(elements(windows.flat_map(lambda x: x).take(30)))

    def sub_to_batch(sub):
        return sub.batch(window_size, drop_remainder=True)

    out.append(elements(windows.flat_map(sub_to_batch).take(5)))

    ds = make_window_dataset(range_ds, window_size=10, shift=5, stride=3)
    out.append(elements(ds.take(10)))
    dense_labels_ds = ds.map(dense_1_step)
    out.append(elements(dense_labels_ds.take(3)))
    return out


# ---- tensorflow/docs site/en/guide/data.ipynb ("Consuming CSV data") ---------------------------------

TITANIC_HEADER = "survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone"


def _titanic_csv(path: pathlib.Path, rows: int) -> str:
    lines = [TITANIC_HEADER]
    for i in range(rows):
        lines.append(
            f"{i % 2},{'male' if i % 3 else 'female'},{20 + i}.0,{i % 4},{i % 2},{7.25 + i * 1.5:.4f},"
            f"{['First', 'Second', 'Third'][i % 3]},{'unknown' if i % 2 else 'C'},Southampton,"
            f"{'y' if i % 2 else 'n'}"
        )
    return _write(path, "\n".join(lines) + "\n")


def docs_data_csv(tmp) -> Any:
    with contextlib.chdir(tmp):  # the source reads and writes files relative to its directory
        return _docs_data_csv(tmp)


def _docs_data_csv(tmp) -> Any:
    pd = _pandas()  # the guide's `import pandas as pd`

    out = []
    titanic_file = _titanic_csv(pathlib.Path(tmp) / "train.csv", 8)
    df = pd.read_csv(titanic_file)
    titanic_slices = tf.data.Dataset.from_tensor_slices(dict(df))
    out.append(elements(titanic_slices.take(1)))

    titanic_batches = tf.data.experimental.make_csv_dataset(titanic_file, batch_size=4, label_name="survived")
    # num_epochs=None repeats and shuffles: two batches of 4 are one epoch of 8 rows (as a multiset)
    out.append(unordered_rows(elements(titanic_batches.take(2))))

    titanic_batches = tf.data.experimental.make_csv_dataset(
        titanic_file, batch_size=4, label_name="survived", select_columns=["class", "fare", "survived"]
    )
    out.append(unordered_rows(elements(titanic_batches.take(2))))

    titanic_types = [
        tf.int32,
        tf.string,
        tf.float32,
        tf.int32,
        tf.int32,
        tf.float32,
        tf.string,
        tf.string,
        tf.string,
        tf.string,
    ]
    dataset = tf.data.experimental.CsvDataset(titanic_file, titanic_types, header=True)
    out.append(elements(dataset.take(10)))

    _write(pathlib.Path(tmp) / "missing.csv", "1,2,3,4\n,2,3,4\n1,,3,4\n1,2,,4\n1,2,3,\n,,,\n")  # %%writefile
    # Creates a dataset that reads all of the records from two CSV files, each with
    # four float columns which may have missing values.

    record_defaults = [999, 999, 999, 999]
    dataset = tf.data.experimental.CsvDataset("missing.csv", record_defaults)
    dataset = dataset.map(lambda *items: tf.stack(items))
    out.append(elements(dataset))

    # Creates a dataset that reads all of the records from two CSV files with
    # headers, extracting float data from columns 2 and 4.
    record_defaults = [999, 999]  # Only provide defaults for the selected columns
    dataset = tf.data.experimental.CsvDataset("missing.csv", record_defaults, select_cols=[1, 3])
    dataset = dataset.map(lambda *items: tf.stack(items))
    out.append(elements(dataset))
    return out


# ---- tensorflow/docs site/en/guide/data.ipynb ("Simple batching", "Batching tensors with padding") ----


def docs_data_batching(tmp) -> Any:
    inc_dataset = tf.data.Dataset.range(100)
    dec_dataset = tf.data.Dataset.range(0, -100, -1)
    dataset = tf.data.Dataset.zip((inc_dataset, dec_dataset))
    batched_dataset = dataset.batch(4)
    out = [elements(batched_dataset.take(4))]
    batched_dataset = dataset.batch(7, drop_remainder=True)
    out.append(str(batched_dataset.element_spec[0].shape))

    dataset = tf.data.Dataset.range(100)
    dataset = dataset.map(lambda x: tf.fill([tf.cast(x, tf.int32)], x))
    dataset = dataset.padded_batch(4, padded_shapes=(None,))
    out.append(elements(dataset.take(2)))
    return out


# ---- tensorflow/models official/core/input_reader.py (match_files, _read_files_then_shard,
# _shard_files_then_read, InputReader._decode_and_parse_dataset and read, for TFRecord files) ----------


def _get_random_integer():
    return random.randint(0, (1 << 31) - 1)


def _maybe_map_fn(dataset, fn=None):
    """Calls dataset.map if a valid function is passed in."""
    return dataset if fn is None else dataset.map(fn, num_parallel_calls=tf.data.experimental.AUTOTUNE)


def match_files(input_path):
    """Matches files from an input_path."""
    matched_files = []
    # Read dataset from files.
    usage = (
        "`input_path` should be either (1) a str indicating a file "
        "path/pattern, or (2) a str indicating multiple file "
        'paths/patterns separated by comma (e.g "a, b, c" or no spaces '
        '"a,b,c", or (3) a list of str, each of which is a file '
        "path/pattern or multiple file paths/patterns separated by "
        "comma, but got: %s"
    )
    if isinstance(input_path, str):
        input_path_list = [input_path]
    elif isinstance(input_path, (list, tuple)):
        if any(not isinstance(x, str) for x in input_path):
            raise ValueError(usage % input_path)
        input_path_list = input_path
    else:
        raise ValueError(usage % input_path)

    for input_path in input_path_list:  # noqa: PLR1704 (the source's name)
        input_patterns = input_path.strip().split(",")
        for input_pattern in input_patterns:
            input_pattern = input_pattern.strip()  # noqa: PLW2901
            if not input_pattern:
                continue
            if "*" in input_pattern or "?" in input_pattern:
                tmp_matched_files = tf.io.gfile.glob(input_pattern)
                if not tmp_matched_files:
                    raise ValueError("%s does not match any files." % input_pattern)  # noqa: UP031
                matched_files.extend(tmp_matched_files)
            else:
                matched_files.append(input_pattern)

    if not matched_files:
        raise ValueError("%s does not match any files." % input_path)  # noqa: UP031

    return matched_files


def _read_files_then_shard(matched_files, dataset_fn, input_context=None, sharding=False, repeat=False):
    """Sends all data files to every worker and then shard by data."""
    dataset = dataset_fn(matched_files)

    # When `input_file` is a path to a single file or the number of files is
    # less than the number of input pipelines, disable auto sharding
    # so that same input file is sent to all workers.
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    dataset = dataset.with_options(options)
    if sharding and input_context and (input_context.num_input_pipelines > 1):
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)

    if repeat:
        dataset = dataset.repeat()
    return dataset


def _shard_files_then_read(
    matched_files,
    dataset_fn,
    input_context=None,
    seed=None,
    is_training=False,
    sharding=False,
    cache=False,
    cycle_length=None,
    block_length=None,
    deterministic=False,
):
    """Shards the data files and then sent a split to every worker to read."""
    dataset = tf.data.Dataset.from_tensor_slices(matched_files)

    # Shuffle and repeat at file level.
    if is_training:
        if sharding and seed is None:
            seed = _get_random_integer()
        dataset = dataset.shuffle(
            len(matched_files), seed=seed, reshuffle_each_iteration=True if not cache else False
        )

    if sharding and input_context and (input_context.num_input_pipelines > 1):
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)

    # If cache is enabled, we will call `repeat()` later after `cache()`.
    if is_training and not cache:
        dataset = dataset.repeat()

    dataset = dataset.interleave(
        map_func=dataset_fn,
        cycle_length=cycle_length,
        block_length=block_length,
        num_parallel_calls=(cycle_length if cycle_length else tf.data.experimental.AUTOTUNE),
        deterministic=deterministic,
    )
    return dataset


class InputReader:
    """The source's InputReader for files (no TFDS, no tf.data service); ``params`` is a plain object
    with the DataConfig fields it reads."""

    def __init__(self, params, dataset_fn=None, decoder_fn=None, parser_fn=None):  # TFRecordDataset
        self._matched_files = match_files(params.input_path)
        self._global_batch_size = params.global_batch_size
        self._is_training = params.is_training
        self._drop_remainder = params.drop_remainder
        self._shuffle_buffer_size = params.shuffle_buffer_size
        self._cache = params.cache
        self._cycle_length = params.cycle_length
        self._block_length = params.block_length
        self._deterministic = params.deterministic
        self._sharding = params.sharding
        self._dataset_fn = dataset_fn
        self._decoder_fn = decoder_fn
        self._parser_fn = parser_fn
        self._seed = params.seed
        self._prefetch_buffer_size = params.prefetch_buffer_size or tf.data.experimental.AUTOTUNE

    def _read_data_source(self, matched_files, dataset_fn, input_context=None):
        if len(matched_files) > 1:
            if input_context and (len(matched_files) < input_context.num_input_pipelines):
                return _read_files_then_shard(
                    matched_files,
                    dataset_fn,
                    input_context,
                    sharding=self._sharding,
                    repeat=self._is_training and not self._cache,
                )
            return _shard_files_then_read(
                matched_files,
                dataset_fn,
                input_context,
                seed=self._seed,
                is_training=self._is_training,
                sharding=self._sharding,
                cache=self._cache,
                cycle_length=self._cycle_length,
                block_length=self._block_length,
                deterministic=self._deterministic,
            )
        return _read_files_then_shard(
            matched_files,
            dataset_fn,
            input_context,
            sharding=self._sharding,
            repeat=self._is_training and not self._cache,
        )

    def _decode_and_parse_dataset(self, dataset, batch_size, input_context=None):
        def _shuffle_and_decode(ds):
            # If cache is enabled, we will call `shuffle()` later after `cache()`.
            if self._is_training and not self._cache:
                ds = ds.shuffle(self._shuffle_buffer_size, seed=self._seed)
            # Decode
            ds = _maybe_map_fn(ds, self._decoder_fn)
            return ds

        dataset = tf.nest.map_structure(_shuffle_and_decode, dataset)
        dataset = _maybe_map_fn(dataset, self._parser_fn)

        if self._cache:
            dataset = dataset.cache()
            if self._is_training:
                dataset = dataset.repeat()
                dataset = dataset.shuffle(self._shuffle_buffer_size, seed=self._seed)

        per_replica_batch_size = (
            input_context.get_per_replica_batch_size(batch_size) if input_context else batch_size
        )
        dataset = dataset.batch(per_replica_batch_size, drop_remainder=self._drop_remainder)
        return dataset

    def read(self, input_context=None, dataset=None):
        """Generates a tf.data.Dataset object."""
        if dataset is None:
            dataset = self._read_data_source(self._matched_files, self._dataset_fn, input_context)
        dataset = self._decode_and_parse_dataset(dataset, self._global_batch_size, input_context)
        if self._deterministic is not None:
            options = tf.data.Options()
            options.experimental_deterministic = self._deterministic
            dataset = dataset.with_options(options)
        return dataset.prefetch(self._prefetch_buffer_size)


class _DataConfig:  # official/core/config_definitions.py DataConfig's fields, with its defaults
    def __init__(self, **kwargs):
        self.input_path = ""
        self.global_batch_size = 0
        self.is_training = None
        self.drop_remainder = True
        self.shuffle_buffer_size = 100
        self.cache = False
        self.cycle_length = None
        self.block_length = 1
        self.deterministic = None
        self.sharding = True
        self.seed = None
        self.prefetch_buffer_size = None
        self.__dict__.update(kwargs)


def _decode_xy(serialized):  # a task's decoder: parse_single_example of its keys
    spec = {"x": tf.io.FixedLenFeature([2], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}
    return tf.io.parse_single_example(serialized, spec)


def _parse_xy(decoded):  # a task's parser: features and label
    return tf.cast(decoded["x"], tf.float32) * 2.0, tf.cast(decoded["y"], tf.int32)


def models_input_reader(tmp) -> Any:
    data.xy_records(tmp, shards=4, per_shard=6)  # train-0000k-of-00004: Examples of x [2] and y
    pattern = os.path.join(tmp, "train-*")
    out = []
    # evaluation: files in order, cycle_length 2, deterministic: the values in TF's order
    # TF's glob does not sort: the deterministic reads name their files (the source's comma list)
    files = ",".join(os.path.join(tmp, f"train-{shard:05d}-of-00004") for shard in (0, 2, 1, 3, 3))
    params = _DataConfig(
        input_path=files,
        global_batch_size=4,
        is_training=False,
        drop_remainder=False,
        cycle_length=2,
        block_length=2,
        deterministic=True,
    )
    reader = InputReader(
        params, dataset_fn=tf.data.TFRecordDataset, decoder_fn=_decode_xy, parser_fn=_parse_xy
    )
    out.append(elements(reader.read()))
    context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=4)
    out.append(elements(reader.read(input_context=context)))
    # training: shuffled and repeated: compared by dtype and shape
    params = _DataConfig(
        input_path=[pattern],
        global_batch_size=8,
        is_training=True,
        seed=3,
        cycle_length=4,
        shuffle_buffer_size=8,
    )
    reader = InputReader(
        params, dataset_fn=tf.data.TFRecordDataset, decoder_fn=_decode_xy, parser_fn=_parse_xy
    )
    out.append(data.summary(elements(reader.read().take(9))))
    cached = InputReader(
        _DataConfig(input_path=pattern, global_batch_size=6, is_training=True, cache=True, seed=1),
        dataset_fn=tf.data.TFRecordDataset,
        decoder_fn=_decode_xy,
        parser_fn=_parse_xy,
    )
    out.append(data.summary(elements(cached.read().take(4))))  # shuffled across repeats: not one epoch
    return out


# ---- tensorflow/tensorflow tensorflow/python/data/ops/dataset_ops.py (docstring examples of
# bucket_by_sequence_length, group_by_window and interleave) --------------------------------------------


def api_bucket_and_group_by_window(tmp) -> Any:
    elements_ = [[0], [1, 2, 3, 4], [5, 6, 7], [7, 8, 9, 10, 11], [13, 14, 15, 16, 19, 20], [21, 22]]
    dataset = tf.data.Dataset.from_generator(lambda: elements_, tf.int64, output_shapes=[None])
    dataset = dataset.bucket_by_sequence_length(
        element_length_func=lambda elem: tf.shape(elem)[0],
        bucket_boundaries=[3, 5],
        bucket_batch_sizes=[2, 2, 2],
    )
    out = [elements(dataset)]
    dataset = tf.data.Dataset.from_generator(lambda: elements_, tf.int32, output_shapes=[None])
    dataset = dataset.bucket_by_sequence_length(
        element_length_func=lambda elem: tf.shape(elem)[0],
        bucket_boundaries=[4, 7],
        bucket_batch_sizes=[2, 2, 2],
        pad_to_bucket_boundary=True,
    )
    out.append(elements(dataset))
    dataset = tf.data.Dataset.from_generator(lambda: elements_, tf.int32, output_shapes=[None])
    dataset = dataset.bucket_by_sequence_length(
        element_length_func=lambda elem: tf.shape(elem)[0],
        bucket_boundaries=[3, 5],
        bucket_batch_sizes=[2, 2, 2],
        padding_values=-1,
    )
    out.append(elements(dataset))

    dataset = tf.data.Dataset.range(10)
    window_size = 5
    key_func = lambda x: x % 2  # noqa: E731 (the docstring's code)
    reduce_func = lambda key, dataset: dataset.batch(window_size)  # noqa: E731
    dataset = dataset.group_by_window(key_func=key_func, reduce_func=reduce_func, window_size=window_size)
    out.append(elements(dataset))
    return out


def api_interleave(tmp) -> Any:
    Dataset = tf.data.Dataset  # noqa: N806 (the docstring's name)
    dataset = Dataset.range(1, 6)  # ==> [ 1, 2, 3, 4, 5 ]
    # NOTE: New lines indicate "block" boundaries.
    dataset = dataset.interleave(lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    out = [[a.item() for a in dataset.as_numpy_iterator()]]

    filenames = []
    for k in range(4):
        filenames.append(os.path.join(tmp, f"file{k + 1}.txt"))
        with tf.io.TFRecordWriter(filenames[-1]) as writer:
            for i in range(3 + k):
                writer.write(f"record {i} of file {k + 1}".encode())
    dataset = tf.data.Dataset.from_tensor_slices(filenames)
    dataset = dataset.interleave(
        lambda x: tf.data.TFRecordDataset(x),
        cycle_length=4,
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=False,
    )
    out.append(data.unordered(elements(dataset)))
    return out


# ---- tensorflow/docs site/en/guide/data_performance.ipynb ---------------------------------------------


def mapped_function(s):
    # Do some hard pre-processing
    tf.py_function(lambda: time.sleep(0.03), [], ())
    return s


def increment(x):
    return x + 1


def docs_data_performance(tmp) -> Any:
    class ArtificialDataset(tf.data.Dataset):
        def _generator(num_samples):
            # Opening the file
            time.sleep(0.03)

            for sample_idx in range(num_samples):
                # Reading data (line, record) from the file
                time.sleep(0.015)

                yield (sample_idx,)

        def __new__(cls, num_samples=3):
            return tf.data.Dataset.from_generator(
                cls._generator,
                output_signature=tf.TensorSpec(shape=(1,), dtype=tf.int64),
                args=(num_samples,),
            )

    def benchmark(dataset, num_epochs=2):  # the guide's training loop, recording what it gets
        seen = []
        for _epoch_num in range(num_epochs):
            for sample in dataset:
                seen.append(np.asarray(sample))
        return seen

    out = [benchmark(ArtificialDataset()), benchmark(ArtificialDataset().prefetch(tf.data.AUTOTUNE))]
    out.append(benchmark(tf.data.Dataset.range(2).interleave(lambda _: ArtificialDataset())))
    # a parallel interleave's cycle length follows the CPU count: compared as a multiset
    parallel = tf.data.Dataset.range(2).interleave(
        lambda _: ArtificialDataset(), num_parallel_calls=tf.data.AUTOTUNE
    )
    out.append(data.unordered(benchmark(parallel)))
    out.append(benchmark(ArtificialDataset().map(mapped_function)))
    out.append(benchmark(ArtificialDataset().map(mapped_function, num_parallel_calls=tf.data.AUTOTUNE)))
    out.append(benchmark(ArtificialDataset().map(mapped_function).cache(), 5))

    fast_dataset = tf.data.Dataset.range(10000)

    def fast_benchmark(dataset, num_epochs=2):
        last = []
        for _ in tf.data.Dataset.range(num_epochs):
            for x in dataset:  # noqa: B007 (the guide's loop; its last batch is recorded)
                pass
            last.append(np.asarray(x))
        return last

    out.append(fast_benchmark(fast_dataset.map(increment).batch(256)))
    out.append(fast_benchmark(fast_dataset.batch(256).map(increment)))
    return out


# ---- https-deeplearning-ai/tensorflow-1-public C4/W4/ungraded_labs/C4_W4_Lab_1_LSTM.ipynb (the
# synthetic series, windowed_dataset and model_forecast's dataset) -----------------------------------------


def trend(time, slope=0):
    series = slope * time
    return series


def seasonal_pattern(season_time):
    data_pattern = np.where(season_time < 0.4, np.cos(season_time * 2 * np.pi), 1 / np.exp(3 * season_time))
    return data_pattern


def seasonality(time, period, amplitude=1, phase=0):
    season_time = ((time + phase) % period) / period
    data_pattern = amplitude * seasonal_pattern(season_time)
    return data_pattern


def noise(time, noise_level=1, seed=None):
    rnd = np.random.RandomState(seed)
    noise = rnd.randn(len(time)) * noise_level
    return noise


def windowed_dataset(series, window_size, batch_size, shuffle_buffer):
    # Generate a TF Dataset from the series values
    dataset = tf.data.Dataset.from_tensor_slices(series)

    # Window the data but only take those with the specified size
    dataset = dataset.window(window_size + 1, shift=1, drop_remainder=True)

    # Flatten the windows by putting its elements in a single batch
    dataset = dataset.flat_map(lambda window: window.batch(window_size + 1))

    # Create tuples with features and labels
    dataset = dataset.map(lambda window: (window[:-1], window[-1]))

    # Shuffle the windows
    dataset = dataset.shuffle(shuffle_buffer)

    # Create batches of windows
    dataset = dataset.batch(batch_size).prefetch(1)

    return dataset


def model_forecast_dataset(series, window_size, batch_size):  # model_forecast, before model.predict
    dataset = tf.data.Dataset.from_tensor_slices(series)
    dataset = dataset.window(window_size, shift=1, drop_remainder=True)
    dataset = dataset.flat_map(lambda w: w.batch(window_size))
    dataset = dataset.batch(batch_size).prefetch(1)
    return dataset


def course_windowed_series(tmp) -> Any:
    # Parameters (4 * 365 + 1 steps and window 20 in the lab)
    time = np.arange(60, dtype="float32")
    baseline = 10
    amplitude = 40
    slope = 0.05
    noise_level = 5
    series = baseline + trend(time, slope) + seasonality(time, period=365, amplitude=amplitude)
    series += noise(time, noise_level, seed=42)
    split_time = 40
    x_train = series[:split_time]
    window_size = 6
    batch_size = 16
    shuffle_buffer_size = 1000
    train_set = windowed_dataset(x_train, window_size, batch_size, shuffle_buffer_size)
    batches = elements(train_set)
    forecast_series = series[split_time - window_size : -1]
    return [
        [len(y) for _, y in batches],
        unordered_rows(batches),
        elements(model_forecast_dataset(forecast_series, window_size, batch_size)),
    ]


# ---- tensorflow/docs site/en/guide/data.ipynb ("Consuming Python generators", "Processing multiple
# epochs", "Randomly shuffling input data") -------------------------------------------------------------


def docs_data_generators_epochs(tmp) -> Any:
    def count(stop):
        i = 0
        while i < stop:
            yield i
            i += 1

    ds_counter = tf.data.Dataset.from_generator(count, args=[25], output_types=tf.int32, output_shapes=())
    out = [elements(ds_counter.repeat().batch(10).take(10))]

    def gen_series():
        i = 0
        while True:
            size = np.random.randint(0, 10)
            yield i, np.random.normal(size=(size,))
            i += 1

    ds_series = tf.data.Dataset.from_generator(
        gen_series, output_types=(tf.int32, tf.float32), output_shapes=((), (None,))
    )
    ds_series_batch = ds_series.shuffle(20).padded_batch(10)
    ids, sequence_batch = (np.asarray(v) for v in next(iter(ds_series_batch)))
    out.append([ids.dtype.name, list(ids.shape), sequence_batch.dtype.name, sequence_batch.shape[0]])

    titanic_file = _titanic_csv(pathlib.Path(tmp) / "train.csv", 200)
    titanic_lines = tf.data.TextLineDataset(titanic_file)
    out.append([batch.shape[0] for batch in titanic_lines.repeat(3).batch(128)])
    out.append([batch.shape[0] for batch in titanic_lines.batch(128).repeat(3)])
    epochs = 3
    dataset = titanic_lines.batch(128)
    for _epoch in range(epochs):
        out.append([list(batch.shape) for batch in dataset])

    lines = tf.data.TextLineDataset(titanic_file)
    counter = tf.data.experimental.Counter()

    dataset = tf.data.Dataset.zip((counter, lines))
    dataset = dataset.shuffle(buffer_size=100)
    dataset = dataset.batch(20)
    n, line_batch = next(iter(dataset))
    n = np.asarray(n)
    out.append([n.dtype.name, list(n.shape), bool(n.max() < 120)])

    dataset = tf.data.Dataset.zip((counter, lines))
    shuffled = dataset.shuffle(buffer_size=100).batch(10).repeat(2)
    out.append([n.shape[0] for n, _ in shuffled])
    shuffle_repeat = [np.asarray(n) for n, line_batch in shuffled]
    out.append(sorted(np.concatenate(shuffle_repeat).tolist()))

    dataset = tf.data.Dataset.zip((counter, lines))
    shuffled = dataset.repeat(2).shuffle(buffer_size=100).batch(10)
    repeat_shuffle = [np.asarray(n) for n, line_batch in shuffled]
    out.append([len(n) for n in repeat_shuffle])
    out.append(sorted(np.concatenate(repeat_shuffle).tolist()))
    return out


# ---- tensorflow/text docs/tutorials/word2vec.ipynb ------------------------------------------------------


def custom_standardization(input_data):
    lowercase = tf.strings.lower(input_data)
    return tf.strings.regex_replace(lowercase, "[%s]" % re.escape(string.punctuation), "")  # noqa: UP031


def _shakespeare(tmp) -> str:  # tf.keras.utils.get_file('shakespeare.txt', ...)
    lines = ["First Citizen:", "Before we proceed any further, hear me speak.", "", "All:", "Speak, speak."]
    return _write(pathlib.Path(tmp) / "shakespeare.txt", "\n".join(lines * 3) + "\n")


def text_word2vec_dataset(tmp) -> Any:
    path_to_file = _shakespeare(tmp)
    AUTOTUNE = tf.data.AUTOTUNE  # noqa: N806
    text_ds = tf.data.TextLineDataset(path_to_file).filter(lambda x: tf.cast(tf.strings.length(x), bool))
    out = [elements(text_ds)]
    # vectorize_layer.adapt(text_ds.batch(1024)) standardizes each batch with the tutorial's function
    out.append([np.asarray(custom_standardization(batch)) for batch in text_ds.batch(1024)])

    # generate_training_data's output (Keras skipgrams and tf.random.log_uniform_candidate_sampler)
    targets = np.arange(40, dtype=np.int64) % 13 + 1
    contexts = ((np.arange(200, dtype=np.int64) * 7) % 16).reshape(40, 5, 1)
    labels = np.tile(np.array([1, 0, 0, 0, 0], np.int64), (40, 1))
    BATCH_SIZE = 8  # noqa: N806 (1024 in the tutorial)
    BUFFER_SIZE = 10000  # noqa: N806
    dataset = tf.data.Dataset.from_tensor_slices(((targets, contexts), labels))
    dataset = dataset.shuffle(BUFFER_SIZE).batch(BATCH_SIZE, drop_remainder=True)
    dataset = dataset.cache().prefetch(buffer_size=AUTOTUNE)
    epoch = elements(dataset)
    out.append(tf.nest.map_structure(lambda spec: (list(spec.shape), spec.dtype.name), dataset.element_spec))
    out.append(unordered_rows(epoch))
    out.append(canon(epoch) == canon(elements(dataset)))  # cached: the second epoch is the first
    return out


def text_word2vec_vectorize(tmp) -> Any:
    path_to_file = _shakespeare(tmp)
    AUTOTUNE = tf.data.AUTOTUNE  # noqa: N806
    text_ds = tf.data.TextLineDataset(path_to_file).filter(lambda x: tf.cast(tf.strings.length(x), bool))
    vocab_size = 4096
    sequence_length = 10
    vectorize_layer = tf.keras.layers.TextVectorization(
        standardize=custom_standardization,
        max_tokens=vocab_size,
        output_mode="int",
        output_sequence_length=sequence_length,
    )
    vectorize_layer.adapt(text_ds.batch(1024))
    text_vector_ds = text_ds.batch(1024).prefetch(AUTOTUNE).map(vectorize_layer).unbatch()
    sequences = list(text_vector_ds.as_numpy_iterator())
    num_ns = 4
    sampling_table = tf.keras.preprocessing.sequence.make_sampling_table(vocab_size)
    out = []
    for sequence in sequences:
        positive_skip_grams, _ = tf.keras.preprocessing.sequence.skipgrams(
            sequence,
            vocabulary_size=vocab_size,
            sampling_table=sampling_table,
            window_size=2,
            negative_samples=0,
        )
        for target_word, context_word in positive_skip_grams:
            context_class = tf.expand_dims(tf.constant([context_word], dtype="int64"), 1)
            negative_sampling_candidates, _, _ = tf.random.log_uniform_candidate_sampler(
                true_classes=context_class,
                num_true=1,
                num_sampled=num_ns,
                unique=True,
                range_max=vocab_size,
                seed=42,
                name="negative_sampling",
            )
            out.append((target_word, negative_sampling_candidates))
    return out


# ---- tensorflow/docs site/en/tutorials/load_data/pandas_dataframe.ipynb and keras-team/keras-io
# examples/structured_data/structured_data_classification_from_scratch.py (dataframe_to_dataset) --------


def _heart_csv(path: pathlib.Path, rows: int) -> str:
    lines = ["age,sex,cp,trestbps,chol,fbs,restecg,thalach,exang,oldpeak,slope,ca,thal,target"]
    for i in range(rows):
        thal = ["fixed", "normal", "reversible"][i % 3]
        lines.append(
            f"{40 + i},{i % 2},{i % 4},{120 + i},{200 + 3 * i},{i % 2},{i % 3},{150 - i},{(i + 1) % 2},"
            f"{i / 10},{i % 3},{i % 4},{thal},{(i * 7) % 3 == 0:d}"
        )
    return _write(path, "\n".join(lines) + "\n")


def dataframe_to_dataset(dataframe):
    dataframe = dataframe.copy()
    labels = dataframe.pop("target")
    ds = tf.data.Dataset.from_tensor_slices((dict(dataframe), labels))
    ds = ds.shuffle(buffer_size=len(dataframe))
    return ds


def docs_pandas_dataframe(tmp) -> Any:
    pd = _pandas()  # the tutorial's `import pandas as pd`

    csv_file = _heart_csv(pathlib.Path(tmp) / "heart.csv", 10)
    df = pd.read_csv(csv_file)
    target = df.pop("target")
    numeric_feature_names = ["age", "thalach", "trestbps", "chol", "oldpeak"]
    numeric_features = df[numeric_feature_names]
    out = [np.asarray(tf.convert_to_tensor(numeric_features))]

    numeric_dataset = tf.data.Dataset.from_tensor_slices((numeric_features, target))
    out.append(elements(numeric_dataset.take(3)))
    numeric_batches = numeric_dataset.shuffle(1000).batch(2)
    out.append(unordered_rows(elements(numeric_batches)))

    numeric_features_dict = {
        key: value.to_numpy()[:, tf.newaxis] for key, value in dict(numeric_features).items()
    }
    target_array = target.to_numpy()[:, tf.newaxis]
    numeric_dict_ds = tf.data.Dataset.from_tensor_slices((numeric_features_dict, target_array))
    out.append(elements(numeric_dict_ds.take(3)))
    numeric_dict_batches = numeric_dict_ds.shuffle(100).batch(4)
    out.append(unordered_rows(elements(numeric_dict_batches)))

    dataframe = pd.read_csv(csv_file)
    val_dataframe = dataframe.sample(frac=0.2, random_state=1337)
    train_dataframe = dataframe.drop(val_dataframe.index)
    train_ds = dataframe_to_dataset(train_dataframe)
    val_ds = dataframe_to_dataset(val_dataframe)
    out.append(unordered_rows([batch for batch in elements(train_ds.batch(32))]))
    out.append(unordered_rows([batch for batch in elements(val_ds.batch(32))]))
    return out


PIPELINES = {
    "docs_load_text_iliad": docs_load_text_iliad,
    "docs_data_time_series": docs_data_time_series,
    "docs_data_csv": docs_data_csv,
    "docs_data_batching": docs_data_batching,
    "models_input_reader": models_input_reader,
    "api_bucket_and_group_by_window": api_bucket_and_group_by_window,
    "api_interleave": api_interleave,
    "docs_data_performance": docs_data_performance,
    "course_windowed_series": course_windowed_series,
    "docs_data_generators_epochs": docs_data_generators_epochs,
    "text_word2vec_dataset": text_word2vec_dataset,
    "docs_pandas_dataframe": docs_pandas_dataframe,
}

#: pipelines whose source code is above but needs names headrace does not have (what is missing)
NOT_IMPORT_ONLY = {
    "docs_load_text_iliad_encode": (
        "tensorflow_text (UnicodeScriptTokenizer, case_fold_utf8: another library), tf.keras.layers.Layer / "
        "tf.keras.Sequential (its tf.lookup.StaticVocabularyTable ports)"
    ),
    "text_word2vec_vectorize": (
        "tf.keras.layers.TextVectorization, tf.keras.preprocessing.sequence.skipgrams / make_sampling_table "
        "(Keras, not TensorFlow ops) and tf.random.log_uniform_candidate_sampler"
    ),
}

#: Pipelines of NOT_IMPORT_ONLY that run on headrace but give other values than tf.data: each test
#: tells whether the difference its reason names is still there (tests/compat/test_pipelines_not_import_only.py).
STILL_DIFFERS: dict = {}

#: float tolerances (absolute): none of the replayed pipelines resizes or sums floats differently
TOLERANCE: dict[str, float] = {}
