"""Public tf.data pipelines, ported: ``import tensorflow as tf`` became ``import headrace as tf``, and
TensorFlow math inside user functions became numpy. Everything else is as the sources write it.
Data is generated; each test names where its pipeline comes from and checks the values tf.data gives.
"""

import collections
import os

import numpy as np

import headrace as tf  # the only change to the pipelines below: the import


def test_load_text_tutorial_labels_each_file(tmp_path):
    # tensorflow.org/tutorials/load_data/text ("Example 2: Predict the author of Iliad translations"):
    # one TextLineDataset per file, labelled in a loop with a lambda, concatenated and shuffled.
    file_names = []
    for k, author in enumerate(["cowper", "derby", "butler"]):
        path = tmp_path / f"{author}.txt"
        path.write_text("".join(f"line {i} of {author}\n" for i in range(250 + k)))
        file_names.append(str(path))

    def labeler(example, index):
        return example, np.int64(index)  # tf.cast(index, tf.int64)

    labeled_data_sets = []
    for i, file_name in enumerate(file_names):
        lines_dataset = tf.data.TextLineDataset(file_name)
        labeled_dataset = lines_dataset.map(lambda ex: labeler(ex, i))  # noqa: B023 (the tutorial's code)
        labeled_data_sets.append(labeled_dataset)

    BUFFER_SIZE = 50000  # noqa: N806
    all_labeled_data = labeled_data_sets[0]
    for labeled_dataset in labeled_data_sets[1:]:
        all_labeled_data = all_labeled_data.concatenate(labeled_dataset)
    all_labeled_data = all_labeled_data.shuffle(BUFFER_SIZE, reshuffle_each_iteration=False)

    counts = collections.Counter(int(label) for _, label in all_labeled_data)
    assert counts == {0: 250, 1: 251, 2: 252}  # late binding gave {2: 753}
    texts = {bytes(text) for text, label in all_labeled_data if int(label) == 1}
    assert b"line 0 of derby" in texts and len(texts) == 251


def test_time_series_windowing_guide():
    # tensorflow.org/guide/data ("Time series windowing"): batch then split, and window + flat_map.
    range_ds = tf.data.Dataset.range(100000)
    batches = range_ds.batch(10, drop_remainder=True)

    def dense_1_step(batch):
        return batch[:-1], batch[1:]

    features, label = next(iter(batches.map(dense_1_step)))
    assert features.tolist() == list(range(9)) and label.tolist() == list(range(1, 10))

    def make_window_dataset(ds, window_size=5, shift=1, stride=1):
        windows = ds.window(window_size, shift=shift, stride=stride)

        def sub_to_batch(sub):
            return sub.batch(window_size, drop_remainder=True)

        windows = windows.flat_map(sub_to_batch)
        return windows

    ds = make_window_dataset(range_ds, window_size=10, shift=5, stride=3)
    first = [example.tolist() for example in ds.take(3)]
    assert first == [list(range(0, 30, 3)), list(range(5, 35, 3)), list(range(10, 40, 3))]

    def dense_labels(example):
        return example[:-5], example[-5:]

    inputs, labels = next(iter(ds.map(dense_labels)))
    assert inputs.tolist() == [0, 3, 6, 9, 12] and labels.tolist() == [15, 18, 21, 24, 27]


def test_csv_guide(tmp_path):
    # tensorflow.org/guide/data ("Consuming CSV data") and tutorials/load_data/csv: make_csv_dataset
    # with a label column, then CsvDataset with record_defaults and select_cols.
    titanic_file = tmp_path / "train.csv"
    rng = np.random.default_rng(0)
    rows = ["survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone"]
    for i in range(40):
        rows.append(
            f"{i % 2},{'male' if i % 3 else 'female'},{20 + i}.0,{i % 4},{i % 2},{rng.random() * 50:.4f},"
            f"{['First', 'Second', 'Third'][i % 3]},unknown,Southampton,{'y' if i % 2 else 'n'}"
        )
    titanic_file.write_text("\n".join(rows) + "\n")

    titanic_batches = tf.data.experimental.make_csv_dataset(
        str(titanic_file), batch_size=4, label_name="survived"
    )
    for feature_batch, label_batch in titanic_batches.take(1):
        assert label_batch.shape == (4,) and set(label_batch.tolist()) <= {0, 1}
        assert list(feature_batch) == [
            "sex",
            "age",
            "n_siblings_spouses",
            "parch",
            "fare",
            "class",
            "deck",
            "embark_town",
            "alone",
        ]
        assert feature_batch["age"].dtype == np.float32 and feature_batch["parch"].dtype == np.int32

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
    dataset = tf.data.experimental.CsvDataset(str(titanic_file), titanic_types, header=True)
    first = next(iter(dataset))
    assert [bytes(first[1]), float(first[2])] == [b"female", 20.0]

    simple = tmp_path / "simple.csv"
    simple.write_text("1,2,3,4\n5,6,7,8\n")
    dataset = tf.data.experimental.CsvDataset(
        str(simple), record_defaults=[tf.int32, tf.int32], select_cols=[1, 3]
    )
    assert [(int(a), int(b)) for a, b in dataset] == [(2, 4), (6, 8)]


def test_padded_batch_guide():
    # tensorflow.org/guide/data ("Batching tensors with padding").
    dataset = tf.data.Dataset.range(100)
    dataset = dataset.map(lambda x: np.full([int(x)], x))  # tf.fill([tf.cast(x, tf.int32)], x)
    dataset = dataset.padded_batch(4, padded_shapes=(None,))
    batches = [b.tolist() for b in dataset.take(2)]
    assert batches == [
        [[0, 0, 0], [1, 0, 0], [2, 2, 0], [3, 3, 3]],
        [[4, 4, 4, 4, 0, 0, 0], [5, 5, 5, 5, 5, 0, 0], [6, 6, 6, 6, 6, 6, 0], [7, 7, 7, 7, 7, 7, 7]],
    ]


def test_rejection_resampling_guide():
    # tensorflow.org/guide/data ("Resampling", the credit-card fraud example): an imbalanced batched
    # dataset, unbatched, resampled to 50/50 and re-batched; the extra label dropped with map.
    rng = np.random.default_rng(1)
    labels = (rng.random(20000) < 0.05).astype(np.int64)
    features = rng.normal(size=(20000, 3)).astype(np.float32)
    creditcard_ds = tf.data.Dataset.from_tensor_slices((features, labels)).batch(1024)

    def count(counts, batch):
        features, labels = batch
        class_1 = labels == 1
        class_1 = class_1.astype(np.int32)
        class_0 = labels == 0
        class_0 = class_0.astype(np.int32)
        counts["class_0"] += class_0.sum()
        counts["class_1"] += class_1.sum()
        return counts

    counts = creditcard_ds.take(10).reduce(initial_state={"class_0": 0, "class_1": 0}, reduce_func=count)
    counts = np.array([counts["class_0"], counts["class_1"]]).astype(np.float32)
    fractions = counts / counts.sum()

    def class_func(features, label):
        return label

    resample_ds = (
        creditcard_ds.unbatch()
        .rejection_resample(class_func, target_dist=[0.5, 0.5], initial_dist=fractions, seed=0)
        .batch(10)
    )
    balanced_ds = resample_ds.map(lambda extra_label, features_and_label: features_and_label)
    seen = np.concatenate([label for _, label in balanced_ds.take(100)])
    assert abs(seen.mean() - 0.5) < 0.1


def test_tfrecord_tutorial(tmp_path):
    # tensorflow.org/tutorials/load_data/tfrecord: serialize Examples, write them, read and parse.
    n_observations = 100
    feature0 = np.random.default_rng(2).choice([False, True], n_observations)
    feature1 = np.random.default_rng(3).integers(0, 5, n_observations)
    strings = np.array([b"cat", b"dog", b"chicken", b"horse", b"goat"])
    feature2 = strings[feature1]
    feature3 = np.random.default_rng(4).normal(size=n_observations)

    def serialize_example(feature0, feature1, feature2, feature3):
        feature = {
            "feature0": int(feature0),
            "feature1": int(feature1),
            "feature2": bytes(feature2),
            "feature3": float(feature3),
        }
        return tf.io.serialize_example(feature)

    filename = str(tmp_path / "test.tfrecord")
    with tf.io.TFRecordWriter(filename) as writer:
        for i in range(n_observations):
            writer.write(serialize_example(feature0[i], feature1[i], feature2[i], feature3[i]))

    raw_dataset = tf.data.TFRecordDataset([filename])
    feature_description = {
        "feature0": tf.io.FixedLenFeature([], tf.int64, default_value=0),
        "feature1": tf.io.FixedLenFeature([], tf.int64, default_value=0),
        "feature2": tf.io.FixedLenFeature([], tf.string, default_value=""),
        "feature3": tf.io.FixedLenFeature([], tf.float32, default_value=0.0),
    }

    def _parse_function(example_proto):
        return tf.io.parse_single_example(example_proto, feature_description)

    parsed_dataset = raw_dataset.map(_parse_function)
    parsed = list(parsed_dataset)
    assert len(parsed) == n_observations
    assert [bytes(p["feature2"]) for p in parsed[:5]] == feature2[:5].tolist()
    assert np.allclose([float(p["feature3"]) for p in parsed], feature3.astype(np.float32))


def test_models_style_input_reader(tmp_path):
    # tensorflow/models official/core/input_reader.py's shape of pipeline: list_files, interleave of
    # TFRecordDatasets, options with experimental_deterministic / threading, shuffle, repeat, parse,
    # batch with drop_remainder, prefetch(AUTOTUNE).
    for shard in range(4):
        with tf.io.TFRecordWriter(str(tmp_path / f"train-{shard:05d}-of-00004")) as writer:
            for i in range(25):
                writer.write(tf.io.serialize_example({"x": [float(shard * 25 + i)], "y": shard}))
    pattern = os.path.join(str(tmp_path), "train-*")

    dataset = tf.data.Dataset.list_files(pattern, shuffle=True, seed=1)
    dataset = dataset.repeat()
    dataset = dataset.interleave(
        map_func=tf.data.TFRecordDataset,
        cycle_length=4,
        block_length=1,
        num_parallel_calls=tf.data.experimental.AUTOTUNE,
        deterministic=False,
    )
    options = tf.data.Options()
    options.experimental_deterministic = False
    options.experimental_optimization.map_parallelization = True
    options.threading.private_threadpool_size = 2
    options.experimental_slack = True
    dataset = dataset.with_options(options)
    dataset = dataset.shuffle(64, seed=2)
    spec = {"x": tf.io.FixedLenFeature([1], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}
    dataset = dataset.map(
        lambda record: tf.io.parse_single_example(record, spec), num_parallel_calls=tf.data.AUTOTUNE
    )
    dataset = dataset.batch(16, drop_remainder=True)
    dataset = dataset.prefetch(tf.data.AUTOTUNE)

    seen = np.concatenate([batch["x"].ravel() for batch in dataset.take(25)])
    assert seen.shape == (400,)
    assert sorted(set(seen.tolist())) == [float(v) for v in range(100)]  # four epochs of 100
    assert dataset.options().autotune.cpu_budget == 2


def test_bucket_by_sequence_length_guide():
    # tensorflow.org/api_docs/python/tf/data/Dataset#bucket_by_sequence_length example and the
    # guide's group_by_window example.
    elements = [[0], [1, 2, 3, 4], [5, 6, 7], [7, 8, 9, 10, 11], [13, 14, 15, 16, 19, 20], [21, 22]]
    dataset = tf.data.Dataset.from_generator(lambda: elements, tf.int64, output_shapes=[None])
    dataset = dataset.bucket_by_sequence_length(
        element_length_func=lambda elem: elem.shape[0],  # tf.shape(elem)[0]
        bucket_boundaries=[3, 5],
        bucket_batch_sizes=[2, 2, 2],
    )
    assert [b.tolist() for b in dataset] == [
        [[1, 2, 3, 4], [5, 6, 7, 0]],
        [[7, 8, 9, 10, 11, 0], [13, 14, 15, 16, 19, 20]],
        [[0, 0], [21, 22]],
    ]
    ds = tf.data.Dataset.range(10)
    ds = ds.group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda key, window: window.batch(4), window_size=4
    )
    assert [b.tolist() for b in ds] == [[0, 2, 4, 6], [1, 3, 5, 7], [8], [9]]


def test_interleave_guide_repeat_by_value():
    # tf.data.Dataset.interleave's documented example: each element repeated by its own value.
    dataset = tf.data.Dataset.range(1, 6)
    dataset = dataset.interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4
    )
    assert [int(x) for x in dataset][:12] == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2]
    counts = tf.data.Dataset.range(1, 4).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x), cycle_length=2
    )
    assert [int(x) for x in counts] == [1, 2, 2, 3, 3, 3]
