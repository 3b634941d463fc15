"""The ported public pipelines of tests/compat, written once for both libraries: each ``pipeline(m, ops,
tmp)`` takes ``m`` = ``tensorflow`` or ``headrace`` (the same tf.data call chains) and ``ops``, the
TensorFlow math inside user functions (``tf.fill``, ``tf.cast`` ...) in that library, and returns what
the pipeline yields. tools/record_tf_fixtures.py runs them in TensorFlow and stores the result in
tests/data/tf_fixtures/pipelines.json; tests/compat/test_tf_fixtures.py runs them in headrace and
compares. Data is generated without random generators (arithmetic only), so both sides see the same
files. Shuffled pipelines return what a shuffle keeps (sorted values, counts, sizes), not an order.
"""

from __future__ import annotations

import collections
import os
from typing import Any

import numpy as np


class NumpyOps:
    """The user-function math of the ported tests (numpy), and headrace's iteration."""

    @staticmethod
    def elements(ds) -> list:
        return list(ds)

    @staticmethod
    def first(ds):
        return next(iter(ds))

    @staticmethod
    def value(x):
        return x

    fill = staticmethod(lambda x: np.full([int(x)], x))
    length = staticmethod(lambda e: e.shape[0])
    to_float32 = staticmethod(lambda x: np.float32(x) if np.ndim(x) == 0 else np.asarray(x, np.float32))
    to_int32 = staticmethod(lambda x: np.asarray(x).astype(np.int32))
    to_int64 = staticmethod(lambda x: np.int64(x))
    size = staticmethod(lambda x: np.int32(np.size(x)))
    nonempty = staticmethod(lambda line: bool(len(line)))
    count_eq = staticmethod(lambda labels, k: int((labels == k).astype(np.int32).sum()))

    @staticmethod
    def serialize_example(features: dict) -> bytes:
        import headrace as hr

        return hr.io.serialize_example(features)

    @staticmethod
    def label_from_path(path, class_names):
        parts = path.split(os.path.sep.encode())
        return np.argmax(parts[-2].decode() == np.array(class_names))

    @staticmethod
    def lookup(line, vocab):
        ids = {w.encode(): i for i, w in enumerate(vocab)}
        return np.array([ids.get(w, 0) for w in line.split()], dtype=np.int32)

    @staticmethod
    def decode_raw_image(raw, record_bytes, shape):
        import headrace as hr

        vector = hr.io.decode_raw(raw, "uint8")
        label = vector[0].astype(np.int32)
        image = np.transpose(vector[1:record_bytes].reshape(shape), [1, 2, 0]).astype(np.float32)
        return hr.image.per_image_standardization(image), label


def _write_lines(path: str, lines: list[str]) -> str:
    with open(path, "w") as f:
        f.write("".join(line + "\n" for line in lines))
    return path


def time_series_windowing(m, ops, tmp) -> Any:
    # tensorflow.org/guide/data ("Time series windowing")
    range_ds = m.data.Dataset.range(100000)
    batches = range_ds.batch(10, drop_remainder=True)

    def dense_1_step(batch):
        return batch[:-1], batch[1:]

    def make_window_dataset(ds, window_size=5, shift=1, stride=1):
        windows = ds.window(window_size, shift=shift, stride=stride)

        def sub_to_batch(sub):
            return sub.batch(window_size, drop_remainder=True)

        return windows.flat_map(sub_to_batch)

    ds = make_window_dataset(range_ds, window_size=10, shift=5, stride=3)
    return {
        "dense_1_step": ops.first(batches.map(dense_1_step)),
        "windows": ops.elements(ds.take(3)),
        "dense_labels": ops.first(ds.map(lambda example: (example[:-5], example[-5:]))),
    }


def padded_batch_guide(m, ops, tmp) -> Any:
    # tensorflow.org/guide/data ("Batching tensors with padding")
    dataset = m.data.Dataset.range(100).map(ops.fill).padded_batch(4, padded_shapes=(None,))
    return ops.elements(dataset.take(2))


def bucket_and_group_by_window_guide(m, ops, tmp) -> Any:
    # tf.data.Dataset.bucket_by_sequence_length's documented example and the guide's group_by_window
    elements = [[0], [1, 2, 3, 4], [5, 6, 7], [7, 8, 9, 10, 11], [13, 14, 15, 16, 19, 20], [21, 22]]
    dataset = m.data.Dataset.from_generator(lambda: elements, m.int64, output_shapes=[None])
    dataset = dataset.bucket_by_sequence_length(
        element_length_func=ops.length, bucket_boundaries=[3, 5], bucket_batch_sizes=[2, 2, 2]
    )
    ds = m.data.Dataset.range(10).group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda key, window: window.batch(4), window_size=4
    )
    return {"bucket": ops.elements(dataset), "group_by_window": ops.elements(ds)}


def interleave_guide(m, ops, tmp) -> Any:
    # tf.data.Dataset.interleave's documented examples
    dataset = m.data.Dataset.range(1, 6).interleave(
        lambda x: m.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4
    )
    counts = m.data.Dataset.range(1, 4).interleave(
        lambda x: m.data.Dataset.from_tensors(x).repeat(x), cycle_length=2
    )
    return {"repeat_6": ops.elements(dataset), "repeat_by_value": ops.elements(counts)}


def csv_guide(m, ops, tmp) -> Any:
    # tensorflow.org/guide/data ("Consuming CSV data"): CsvDataset with types and select_cols, and
    # make_csv_dataset (unshuffled here, so the values compare; the guide's shuffle only reorders)
    titanic_file = os.path.join(tmp, "train.csv")
    rows = ["survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone"]
    for i in range(40):
        rows.append(
            f"{i % 2},{'male' if i % 3 else 'female'},{20 + i}.0,{i % 4},{i % 2},{(i * 37 % 100) / 3:.4f},"
            f"{['First', 'Second', 'Third'][i % 3]},unknown,Southampton,{'y' if i % 2 else 'n'}"
        )
    _write_lines(titanic_file, rows)
    batches = m.data.experimental.make_csv_dataset(
        titanic_file, batch_size=4, label_name="survived", shuffle=False, num_epochs=1
    )
    titanic_types = [m.int32, m.string, m.float32, m.int32, m.int32, m.float32] + [m.string] * 4
    simple = _write_lines(os.path.join(tmp, "simple.csv"), ["1,2,3,4", "5,6,7,8"])
    first_features, first_label = ops.first(batches)
    return {
        "make_csv_dataset": ops.elements(batches),
        "feature_order": list(first_features),
        "csv_dataset": ops.elements(m.data.experimental.CsvDataset(titanic_file, titanic_types, header=True)),
        "select_cols": ops.elements(
            m.data.experimental.CsvDataset(simple, record_defaults=[m.int32, m.int32], select_cols=[1, 3])
        ),
    }


def tfrecord_tutorial(m, ops, tmp) -> Any:
    # tensorflow.org/tutorials/load_data/tfrecord: serialize Examples, write them, read and parse
    strings = [b"cat", b"dog", b"chicken", b"horse", b"goat"]
    filename = os.path.join(tmp, "test.tfrecord")
    with m.io.TFRecordWriter(filename) as writer:
        for i in range(100):
            feature = {
                "feature0": int(i % 3 == 0),
                "feature1": i % 5,
                "feature2": strings[i % 5],
                "feature3": float(i * 0.37 - 5),
            }
            writer.write(ops.serialize_example(feature))
    feature_description = {
        "feature0": m.io.FixedLenFeature([], m.int64, default_value=0),
        "feature1": m.io.FixedLenFeature([], m.int64, default_value=0),
        "feature2": m.io.FixedLenFeature([], m.string, default_value=""),
        "feature3": m.io.FixedLenFeature([], m.float32, default_value=0.0),
    }
    parsed = m.data.TFRecordDataset([filename]).map(
        lambda proto: m.io.parse_single_example(proto, feature_description)
    )
    return ops.elements(parsed)


def load_text_labels(m, ops, tmp) -> Any:
    # tensorflow.org/tutorials/load_data/text: TextLineDatasets labelled in a loop, concatenated, shuffled
    file_names = []
    for k, author in enumerate(["cowper", "derby", "butler"]):
        file_names.append(
            _write_lines(os.path.join(tmp, f"{author}.txt"), [f"line {i} of {author}" for i in range(25 + k)])
        )
    labeled = []
    for i, file_name in enumerate(file_names):
        labeled.append(m.data.TextLineDataset(file_name).map(lambda ex: (ex, ops.to_int64(i))))  # noqa: B023
    all_labeled = labeled[0]
    for ds in labeled[1:]:
        all_labeled = all_labeled.concatenate(ds)
    all_labeled = all_labeled.shuffle(50000, reshuffle_each_iteration=False)
    pairs = [(bytes(text).hex(), int(label)) for text, label in ops.elements(all_labeled)]
    return sorted(pairs)


def data_performance_guide(m, ops, tmp) -> Any:
    # tensorflow.org/guide/data_performance: from_generator with output_signature and args, prefetch,
    # a sequential interleave, a parallel map, a vectorised map
    def _generator(num_samples):
        for sample_idx in range(num_samples):
            yield (sample_idx,)

    def artificial(num_samples=3):
        return m.data.Dataset.from_generator(
            _generator, output_signature=m.TensorSpec(shape=(1,), dtype=m.int64), args=(num_samples,)
        )

    fast = m.data.Dataset.range(10000)
    return {
        "plain": ops.elements(artificial()),
        "prefetch": ops.elements(artificial().prefetch(m.data.AUTOTUNE)),
        "interleave": ops.elements(
            m.data.Dataset.range(2).interleave(lambda _: artificial(), cycle_length=2)
        ),
        "map": ops.elements(artificial().map(lambda s: s + 1, num_parallel_calls=m.data.AUTOTUNE)),
        "vectorized": ops.elements(fast.batch(256).map(lambda x: x + 1))[-2:],
        "cardinality": int(fast.batch(256).cardinality()),
    }


def distributed_input(m, ops, tmp) -> Any:
    # tensorflow.org/tutorials/distribute/input: dataset_fn sharding by input pipeline
    def dataset_fn(num_input_pipelines, input_pipeline_id, num_replicas_in_sync):
        batch_size = 8 // num_replicas_in_sync
        d = m.data.Dataset.range(100).map(ops.to_float32)
        d = d.shard(num_input_pipelines, input_pipeline_id)
        return d.batch(batch_size).prefetch(2)

    dataset = m.data.Dataset.from_tensors(([1.0], [1.0])).repeat(64).batch(16)
    x_train = np.arange(60 * 4, dtype=np.uint8).reshape(60, 2, 2) / np.float32(255)
    train = m.data.Dataset.from_tensor_slices((x_train, np.arange(60) % 10)).shuffle(60000).repeat().batch(16)
    return {
        "workers": [ops.elements(dataset_fn(3, i, 2)) for i in range(3)],
        "from_tensors": ops.elements(dataset)[:1],
        "cardinalities": [int(train.cardinality()), int(train.take(21).cardinality())],
    }


def windowed_series_course(m, ops, tmp) -> Any:
    # github.com/https-deeplearning-ai/tensorflow-1-public C4: windowed_dataset and model_forecast
    series = np.arange(30, dtype=np.float32) * 0.5
    window_size = 5
    dataset = m.data.Dataset.from_tensor_slices(series)
    dataset = dataset.window(window_size + 1, shift=1, drop_remainder=True)
    dataset = dataset.flat_map(lambda window: window.batch(window_size + 1))
    dataset = dataset.shuffle(100).map(lambda window: (window[:-1], window[-1]))
    batches = ops.elements(dataset.batch(4).prefetch(1))
    pairs = sorted((x.tolist(), float(y)) for xs, ys in batches for x, y in zip(xs, ys))
    ds = m.data.Dataset.from_tensor_slices(series).window(window_size, shift=1, drop_remainder=True)
    ds = ds.flat_map(lambda w: w.batch(window_size)).batch(32).prefetch(1)
    return {"sizes": [len(y) for _, y in batches], "pairs": pairs, "forecast": ops.elements(ds)}


def generators_and_epochs(m, ops, tmp) -> Any:
    # tensorflow.org/guide/data ("Consuming Python generators", "Processing multiple epochs")
    def count(stop):
        i = 0
        while i < stop:
            yield i
            i += 1

    ds_counter = m.data.Dataset.from_generator(count, args=[25], output_types=m.int32, output_shapes=())
    titanic_file = _write_lines(os.path.join(tmp, "train.csv"), [f"{i},passenger {i}" for i in range(628)])
    lines = m.data.TextLineDataset(titanic_file)
    counter = m.data.experimental.Counter()
    zipped = m.data.Dataset.zip((counter, lines))
    shuffled_then_repeated = zipped.shuffle(buffer_size=100).batch(10).repeat(2)
    repeated_then_shuffled = zipped.repeat(2).shuffle(buffer_size=100).batch(10)
    ids = [n for n, _ in ops.elements(repeated_then_shuffled)]
    return {
        "counter_batches": ops.elements(ds_counter.repeat().batch(10).take(10)),
        "repeat_batch_sizes": [len(b) for b in ops.elements(lines.repeat(3).batch(128))],
        "batch_repeat_sizes": [len(b) for b in ops.elements(lines.batch(128).repeat(3))],
        "shuffle_repeat_sizes": [len(n) for n, _ in ops.elements(shuffled_then_repeated)],
        "repeat_shuffle_sizes": [len(n) for n in ids],
        "repeat_shuffle_counts": sorted(collections.Counter(np.concatenate(ids).tolist()).items()),
    }


def word2vec_lines(m, ops, tmp) -> Any:
    # tensorflow.org/text/tutorials/word2vec: TextLineDataset filtered on non-empty lines, batched
    path = _write_lines(
        os.path.join(tmp, "shakespeare.txt"), ["First Citizen:", "", "Before we proceed any further."] * 5
    )
    text_ds = m.data.TextLineDataset(path).filter(ops.nonempty)
    return {"lines": ops.elements(text_ds), "batches": ops.elements(text_ds.batch(4).unbatch().batch(6))}


def rejection_resampling_counts(m, ops, tmp) -> Any:
    # tensorflow.org/guide/data ("Resampling"): class counts by reduce over the first ten batches
    labels = ((np.arange(20000) * 7919) % 100 < 5).astype(np.int64)
    features = np.stack([np.arange(20000) % 7, np.arange(20000) % 11, np.arange(20000) % 13], 1)
    creditcard_ds = m.data.Dataset.from_tensor_slices((features.astype(np.float32), labels)).batch(1024)

    def count(counts, batch):
        _, labels = batch
        return {
            "class_0": counts["class_0"] + ops.count_eq(labels, 0),
            "class_1": counts["class_1"] + ops.count_eq(labels, 1),
        }

    counts = creditcard_ds.take(10).reduce(initial_state={"class_0": 0, "class_1": 0}, reduce_func=count)
    return {k: int(ops.value(v)) for k, v in counts.items()}


def load_images(m, ops, tmp) -> Any:
    # tensorflow.org/tutorials/load_data/images: list_files, one fixed shuffle split with skip / take,
    # labels from the path, read_file + decode_jpeg + resize (flat-coloured JPEGs, written by headrace)
    import headrace as hr

    class_colors = {"daisy": (250, 250, 250), "roses": (200, 20, 20), "tulips": (240, 200, 10)}
    data_dir = os.path.join(tmp, "flower_photos")
    for name, color in class_colors.items():
        os.makedirs(os.path.join(data_dir, name))
        for i in range(5):
            image = np.zeros((20 + i, 30, 3), np.uint8) + np.array(color, np.uint8)
            with open(os.path.join(data_dir, name, f"{i}.jpg"), "wb") as f:
                f.write(hr.image.encode_jpeg(image))
    class_names = sorted(class_colors)
    list_ds = m.data.Dataset.list_files(os.path.join(data_dir, "*/*"), shuffle=False)
    shuffled = list_ds.shuffle(15, reshuffle_each_iteration=False)

    def process_path(file_path):
        label = ops.label_from_path(file_path, class_names)
        img = m.io.decode_jpeg(m.io.read_file(file_path), channels=3)
        return m.image.resize(img, [18, 18]), label

    return {
        "cardinalities": [int(shuffled.skip(3).cardinality()), int(shuffled.take(3).cardinality())],
        "files": [os.path.relpath(bytes(p).decode(), tmp) for p in ops.elements(list_ds)],
        "images": ops.elements(list_ds.map(process_path, num_parallel_calls=m.data.AUTOTUNE)),
    }


def nmt_infer_iterator(m, ops, tmp) -> Any:
    # github.com/tensorflow/nmt get_infer_iterator: split, vocabulary lookup, (ids, size), padded_batch
    vocab = ["<unk>", "<s>", "</s>"] + [f"w{i}" for i in range(20)]
    infer = m.data.TextLineDataset(_write_lines(os.path.join(tmp, "infer.src"), ["w1 w2 w3", "w4", "w25 w2"]))
    infer = infer.map(lambda src: ops.lookup(src, vocab))
    infer = infer.map(lambda src: (src, ops.size(src)))
    infer = infer.padded_batch(
        8, padded_shapes=(m.TensorShape([None]), m.TensorShape([])), padding_values=(np.int32(2), np.int32(0))
    )
    return ops.elements(infer)


def bert_eval_input(m, ops, tmp) -> Any:
    # github.com/google-research/bert run_pretraining.py input_fn_builder, the evaluation path
    input_files = []
    for shard in range(3):
        path = os.path.join(tmp, f"tf_examples.tfrecord-{shard}")
        with m.io.TFRecordWriter(path) as writer:
            for i in range(10):
                uid = shard * 100 + i
                writer.write(
                    ops.serialize_example(
                        {
                            "input_ids": np.arange(uid, uid + 16),
                            "masked_lm_weights": np.array([1.0, 1.0, 0.5, 0.0], np.float32),
                            "next_sentence_labels": np.array([uid % 2]),
                        }
                    )
                )
        input_files.append(path)
    name_to_features = {
        "input_ids": m.io.FixedLenFeature([16], m.int64),
        "masked_lm_weights": m.io.FixedLenFeature([4], m.float32),
        "next_sentence_labels": m.io.FixedLenFeature([1], m.int64),
    }

    def _decode_record(record):
        example = m.io.parse_single_example(record, name_to_features)
        return {k: ops.to_int32(v) if v.dtype == m.int64 else v for k, v in example.items()}

    d = m.data.TFRecordDataset(input_files).repeat()
    d = d.apply(
        m.data.experimental.map_and_batch(
            _decode_record, batch_size=8, num_parallel_batches=4, drop_remainder=True
        )
    )
    return ops.elements(d.take(4))


def cifar10_eval_input(m, ops, tmp) -> Any:
    # github.com/tensorflow/models official/r1/resnet/cifar10_main.py, the evaluation path: fixed-length
    # records, decode_raw, per_image_standardization, map_and_batch
    height, width, channels = 8, 8, 3
    record_bytes = height * width * channels + 1
    filenames = []
    for f in range(2):
        path = os.path.join(tmp, f"data_batch_{f + 1}.bin")
        with open(path, "wb") as out:
            for i in range(6):
                label = (f * 6 + i) % 10
                pixels = (np.arange(record_bytes - 1) * (7 + i + f) % 256).astype(np.uint8)
                out.write(bytes([label]) + pixels.tobytes())
        filenames.append(path)
    dataset = m.data.FixedLengthRecordDataset(filenames, record_bytes).prefetch(5).repeat(1)
    dataset = dataset.apply(
        m.data.experimental.map_and_batch(
            lambda value: ops.decode_raw_image(value, record_bytes, [channels, height, width]),
            batch_size=5,
            num_parallel_batches=1,
            drop_remainder=False,
        )
    )
    return ops.elements(dataset)


# Float tolerances (the rest compare exactly): per_image_standardization and resize sum in float32
TOLERANCE = {"cifar10_eval_input": 1e-5, "load_images": 1e-4}

PIPELINES = {
    "time_series_windowing": time_series_windowing,
    "padded_batch_guide": padded_batch_guide,
    "bucket_and_group_by_window_guide": bucket_and_group_by_window_guide,
    "interleave_guide": interleave_guide,
    "csv_guide": csv_guide,
    "tfrecord_tutorial": tfrecord_tutorial,
    "load_text_labels": load_text_labels,
    "data_performance_guide": data_performance_guide,
    "distributed_input": distributed_input,
    "windowed_series_course": windowed_series_course,
    "generators_and_epochs": generators_and_epochs,
    "word2vec_lines": word2vec_lines,
    "rejection_resampling_counts": rejection_resampling_counts,
    "load_images": load_images,
    "nmt_infer_iterator": nmt_infer_iterator,
    "bert_eval_input": bert_eval_input,
    "cifar10_eval_input": cifar10_eval_input,
}

# Ported pipelines with no recorded TensorFlow output, and why.
NOT_RECORDED = {
    "test_models_style_input_reader": "deterministic=False interleave of a repeated shuffled file list: "
    "neither order nor batch content is fixed in TensorFlow",
    "test_nmt_get_iterator (training)": "needs tf.lookup tables and tf.strings inside group_by_window; its "
    "shuffle fixes no order (the inference iterator is recorded)",
    "test_bert_run_pretraining_input_fn (training)": "sloppy parallel_interleave over a shuffled file list "
    "(the evaluation path is recorded)",
    "test_official_resnet_cifar10 (training, mnist)": "random crops and flips, shuffles (the evaluation path "
    "is recorded)",
    "test_object_detection_example_decoder_and_retinanet_batching": "ignore_errors after padded_batch is a "
    "deliberate difference (docs/porting.md); the decoder uses TF Object Detection protos",
    "test_tpu_resnet_imagenet_input": "sloppy parallel_interleave and shuffle_and_repeat: no fixed order",
    "test_official_transformer_data_pipeline": "deterministic=False interleave with AUTOTUNE: no fixed order",
    "test_pandas_dataframe_tutorials": "needs pandas in the TensorFlow environment",
    "test_load_csv_tutorial": "make_csv_dataset shuffles with no seed argument through the tutorial's calls",
    "test_rejection_resampling_guide (resampling)": "the resampling draws are TensorFlow's RNG (the class "
    "counts are recorded)",
}
