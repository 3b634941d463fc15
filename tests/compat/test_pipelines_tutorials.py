"""Public tf.data pipelines from TensorFlow's guides and tutorials (and one course), ported under the
rules of ``test_pipelines.py``: ``import tensorflow as tf`` became ``import headrace as tf``, and
TensorFlow math inside user functions (``tf.cast``, ``tf.strings.*``, Keras preprocessing layers ...)
became numpy. The tf.data call chains are as the tutorials write them; ``tf.image`` and ``tf.io`` calls
stay, as headrace has them. Data is generated; each test names its source and checks the values
tf.data gives.
"""

import collections
import os
import pathlib

import numpy as np
import pytest

import headrace as tf  # the only change to the pipelines below: the import


def _write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def test_load_images_tutorial(tmp_path):
    # tensorflow.org/tutorials/load_data/images ("Using tf.data for finer control"): list_files without
    # shuffling, one fixed shuffle (reshuffle_each_iteration=False) split with skip / take, cardinality,
    # labels from the path, read_file + decode_jpeg + resize, then cache / shuffle / batch / prefetch.
    data_dir = pathlib.Path(tmp_path) / "flower_photos"
    class_colors = {"daisy": (250, 250, 250), "roses": (200, 20, 20), "tulips": (240, 200, 10)}
    for name, color in class_colors.items():
        (data_dir / name).mkdir(parents=True)
        for i in range(5):
            image = np.zeros((20 + i, 30, 3), np.uint8) + np.array(color, np.uint8)
            (data_dir / name / f"{i}.jpg").write_bytes(tf.io.encode_jpeg(image))
    (data_dir / "LICENSE.txt").write_text("CC-BY")
    image_count = len(list(data_dir.glob("*/*.jpg")))
    batch_size, img_height, img_width = 4, 18, 18
    AUTOTUNE = tf.data.AUTOTUNE  # noqa: N806

    list_ds = tf.data.Dataset.list_files(str(data_dir / "*/*"), shuffle=False)
    list_ds = list_ds.shuffle(image_count, reshuffle_each_iteration=False)
    class_names = np.array(sorted([item.name for item in data_dir.glob("*") if item.name != "LICENSE.txt"]))
    val_size = int(image_count * 0.2)
    train_ds = list_ds.skip(val_size)
    val_ds = list_ds.take(val_size)
    assert tf.data.experimental.cardinality(train_ds) == 12  # .numpy()
    assert tf.data.experimental.cardinality(val_ds) == 3

    def get_label(file_path):
        parts = file_path.split(os.path.sep.encode())  # tf.strings.split(file_path, os.path.sep)
        one_hot = parts[-2].decode() == class_names
        return np.argmax(one_hot)

    def decode_img(img):
        img = tf.io.decode_jpeg(img, channels=3)
        return tf.image.resize(img, [img_height, img_width])

    def process_path(file_path):
        label = get_label(file_path)
        img = tf.io.read_file(file_path)
        img = decode_img(img)
        return img, label

    train_ds = train_ds.map(process_path, num_parallel_calls=AUTOTUNE)
    val_ds = val_ds.map(process_path, num_parallel_calls=AUTOTUNE)
    for image, label in train_ds.take(1):
        assert image.shape == (img_height, img_width, 3) and image.dtype == np.float32 and 0 <= label < 3

    def configure_for_performance(ds):
        ds = ds.cache()
        ds = ds.shuffle(buffer_size=1000)
        ds = ds.batch(batch_size)
        ds = ds.prefetch(buffer_size=AUTOTUNE)
        return ds

    train_ds = configure_for_performance(train_ds)
    val_ds = configure_for_performance(val_ds)
    epochs = [[(img, lbl) for img, lbl in train_ds] for _ in range(2)]
    val_labels = [lbl for _, batch in val_ds for lbl in batch.tolist()]
    for epoch in epochs:
        assert [len(lbl) for _, lbl in epoch] == [4, 4, 4]
        for images, labels in epoch:
            for img, lbl in zip(images, labels):
                assert np.abs(img - np.array(class_colors[class_names[lbl]])).max() < 8
    train_labels = sorted(lbl for _, batch in epochs[0] for lbl in batch.tolist())
    assert sorted(train_labels + val_labels) == [0] * 5 + [1] * 5 + [2] * 5  # the split is disjoint
    assert [lbl for _, b in epochs[0] for lbl in b.tolist()] != [
        lbl for _, b in epochs[1] for lbl in b.tolist()
    ]


def test_data_performance_guide():
    # tensorflow.org/guide/data_performance: a tf.data.Dataset subclass whose __new__ returns
    # from_generator(output_signature=..., args=...), prefetch, interleave (serial and parallel), parallel
    # and vectorised map, cache before and after a map. The sleeps that simulate latency are left out.
    class ArtificialDataset(tf.data.Dataset):
        def _generator(num_samples):
            for sample_idx in range(num_samples):
                yield (sample_idx,)

        def __new__(cls, num_samples=3):
            return tf.data.Dataset.from_generator(
                cls._generator,
                output_signature=tf.TensorSpec(shape=(1,), dtype=tf.int64),
                args=(num_samples,),
            )

    def benchmark(dataset, num_epochs=2):
        seen = []
        for _epoch_num in range(num_epochs):
            for sample in dataset:
                seen.append(sample)
        return seen

    plain = benchmark(ArtificialDataset())
    assert [s.tolist() for s in plain] == [[0], [1], [2]] * 2 and plain[0].dtype == np.int64
    assert [s.tolist() for s in benchmark(ArtificialDataset().prefetch(tf.data.AUTOTUNE))] == [
        [0],
        [1],
        [2],
    ] * 2
    sequential = benchmark(tf.data.Dataset.range(2).interleave(lambda _: ArtificialDataset()))
    assert [int(s[0]) for s in sequential] == [0, 0, 1, 1, 2, 2] * 2
    parallel = tf.data.Dataset.range(2).interleave(
        lambda _: ArtificialDataset(), num_parallel_calls=tf.data.AUTOTUNE
    )
    # tf.data's cycle for AUTOTUNE with no cycle_length: ceil(CPUs / 3) (one input at a time on 1-3 CPUs).
    cycle_length = -(-len(os.sched_getaffinity(0)) // 3)
    expected = [0, 1, 2, 0, 1, 2] if cycle_length == 1 else [0, 0, 1, 1, 2, 2]
    assert [int(s[0]) for s in benchmark(parallel)] == expected * 2

    def mapped_function(s):
        return s + 1  # tf.py_function(lambda: time.sleep(0.03), [], ()) then s

    mapped = ArtificialDataset().map(mapped_function, num_parallel_calls=tf.data.AUTOTUNE)
    assert [int(s[0]) for s in benchmark(mapped)] == [1, 2, 3] * 2
    calls = []

    def counted(s):
        calls.append(int(s[0]))
        return s

    cached = ArtificialDataset().map(counted).cache()
    assert [int(s[0]) for s in benchmark(cached, 5)] == [0, 1, 2] * 5 and calls == [0, 1, 2]

    fast_dataset = tf.data.Dataset.range(10000)

    def increment(x):
        return x + 1

    vectorized = fast_dataset.batch(256).map(increment)
    batches = list(vectorized)
    assert len(batches) == 40 and batches[-1].shape == (16,)
    assert np.concatenate(batches).tolist() == list(range(1, 10001))
    assert np.array_equal(
        np.concatenate(list(fast_dataset.map(increment).batch(256))), np.concatenate(batches)
    )


def test_distributed_input_tutorials():
    # tensorflow.org/tutorials/distribute/input (auto_shard_policy DATA, a dataset_fn sharding by
    # InputContext) and tutorials/distribute/multi_worker_with_keras's mnist_setup (shuffle / repeat /
    # batch, auto_shard_policy OFF, fit with steps_per_epoch: repeat then take).
    dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(64).batch(16)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    dataset = dataset.with_options(options)
    assert (
        dataset.options().experimental_distribute.auto_shard_policy
        == tf.data.experimental.AutoShardPolicy.DATA
    )
    assert [x.shape for x, _ in dataset] == [(16, 1)] * 4 and dataset.element_spec[0].dtype == np.float32

    InputContext = collections.namedtuple(  # noqa: N806 (tf.distribute.InputContext, not part of tf.data)
        "InputContext", ["num_input_pipelines", "input_pipeline_id", "num_replicas_in_sync"]
    )
    global_batch_size = 8

    def dataset_fn(input_context):
        batch_size = global_batch_size // input_context.num_replicas_in_sync  # get_per_replica_batch_size
        d = tf.data.Dataset.range(100).map(lambda x: np.float32(x))  # distinct values for the tutorial's
        d = d.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        d = d.batch(batch_size)
        return d.prefetch(2)

    workers = [dataset_fn(InputContext(3, i, 2)) for i in range(3)]
    per_worker = [np.concatenate(list(w)).tolist() for w in workers]
    assert per_worker[1][:4] == [1.0, 4.0, 7.0, 10.0]
    assert sorted(sum(per_worker, [])) == [float(v) for v in range(100)]

    x_train = np.arange(60 * 4, dtype=np.uint8).reshape(60, 2, 2)
    y_train = np.arange(60) % 10
    x_train = x_train / np.float32(255)
    y_train = y_train.astype(np.int64)
    train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(60000).repeat().batch(16)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    train_dataset = train_dataset.with_options(options)
    steps_per_epoch, epochs = 7, 3
    seen = [y for x, y in train_dataset.take(steps_per_epoch * epochs)]
    assert len(seen) == 21 and all(len(y) == 16 for y in seen)
    flat = np.concatenate(seen)
    assert collections.Counter(flat[:60].tolist()) == {k: 6 for k in range(10)}  # one whole epoch first
    assert tf.data.experimental.cardinality(train_dataset) == tf.data.INFINITE_CARDINALITY
    assert tf.data.experimental.cardinality(train_dataset.take(21)) == 21


def test_windowed_series_course():
    # github.com/https-deeplearning-ai/tensorflow-1-public (C4 time series: windowed_dataset and
    # model_forecast): window(drop_remainder=True) + flat_map(window.batch), shuffle, map to (features,
    # label), batch, prefetch(1); forecasting windows over the series without labels.
    series = np.arange(30, dtype=np.float32) * 0.5
    window_size, batch_size, shuffle_buffer = 5, 4, 100

    def windowed_dataset(series, window_size, batch_size, shuffle_buffer):
        dataset = tf.data.Dataset.from_tensor_slices(series)
        dataset = dataset.window(window_size + 1, shift=1, drop_remainder=True)
        dataset = dataset.flat_map(lambda window: window.batch(window_size + 1))
        dataset = dataset.shuffle(shuffle_buffer).map(lambda window: (window[:-1], window[-1]))
        dataset = dataset.batch(batch_size).prefetch(1)
        return dataset

    batches = list(windowed_dataset(series, window_size, batch_size, shuffle_buffer))
    assert [len(y) for _, y in batches] == [4, 4, 4, 4, 4, 4, 1]
    pairs = [(x, y) for xs, ys in batches for x, y in zip(xs, ys)]
    for x, y in pairs:
        assert x.shape == (window_size,) and np.allclose(np.diff(x), 0.5) and y == x[-1] + 0.5
    assert sorted(float(y) for _, y in pairs) == series[window_size:].tolist()

    def model_forecast(series, window_size):
        ds = tf.data.Dataset.from_tensor_slices(series)
        ds = ds.window(window_size, shift=1, drop_remainder=True)
        ds = ds.flat_map(lambda w: w.batch(window_size))
        ds = ds.batch(32).prefetch(1)
        return ds

    forecast = [row.tolist() for batch in model_forecast(series, window_size) for row in batch]
    assert len(forecast) == 26 and forecast[0] == series[:5].tolist() and forecast[-1] == series[-5:].tolist()


def test_data_guide_generators_and_epochs(tmp_path):
    # tensorflow.org/guide/data ("Consuming Python generators", "Processing multiple epochs", "Randomly
    # shuffling input data"): from_generator with args / output_types / output_shapes, shuffle +
    # padded_batch of varying lengths, Counter zipped with lines, and where shuffle and repeat meet.
    def count(stop):
        i = 0
        while i < stop:
            yield i
            i += 1

    ds_counter = tf.data.Dataset.from_generator(count, args=[25], output_types=tf.int32, output_shapes=())
    batches = [b.tolist() for b in ds_counter.repeat().batch(10).take(10)]
    assert batches[2] == [20, 21, 22, 23, 24, 0, 1, 2, 3, 4] and batches[9] == list(range(15, 25))

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
    ids, sequence_batch = next(iter(ds_series_batch))
    assert ids.dtype == np.int32 and sequence_batch.dtype == np.float32 and ids.shape == (10,)
    assert len(set(ids.tolist())) == 10 and max(ids) < 30 and sequence_batch.shape[1] <= 9

    titanic_file = _write_lines(tmp_path / "train.csv", [f"{i},passenger {i}" for i in range(628)])
    titanic_lines = tf.data.TextLineDataset(titanic_file)
    assert [len(b) for b in titanic_lines.repeat(3).batch(128)] == [128] * 14 + [92]
    assert [len(b) for b in titanic_lines.batch(128).repeat(3)] == ([128] * 4 + [116]) * 3

    lines = tf.data.TextLineDataset(titanic_file)
    counter = tf.data.experimental.Counter()
    dataset = tf.data.Dataset.zip((counter, lines))
    dataset = dataset.shuffle(buffer_size=100)
    dataset = dataset.batch(20)
    n, line_batch = next(iter(dataset))
    assert n.max() < 120 and all(bytes(line).startswith(b"%d," % k) for k, line in zip(n, line_batch))

    dataset = tf.data.Dataset.zip((counter, lines))
    shuffled = dataset.shuffle(buffer_size=100).batch(10).repeat(2)
    sizes = [len(n) for n, _ in shuffled]
    assert sizes[62] == 8 and len(sizes) == 126  # each epoch ends with its own short batch
    shuffled = dataset.repeat(2).shuffle(buffer_size=100).batch(10)
    ids = [n.tolist() for n, _ in shuffled]
    assert [len(b) for b in ids] == [10] * 125 + [6]  # the epochs run together
    assert collections.Counter(sum(ids, [])) == {k: 2 for k in range(628)}


def test_word2vec_tutorial(tmp_path):
    # tensorflow.org/text/tutorials/word2vec: TextLineDataset filtered on non-empty lines, adapt over
    # batches, batch / prefetch / map(vectorize) / unbatch, as_numpy_iterator; then from_tensor_slices of
    # a nested ((targets, contexts), labels) structure, shuffle, batch(drop_remainder=True), cache, prefetch.
    path_to_file = _write_lines(
        tmp_path / "shakespeare.txt",
        ["First Citizen:", "", "Before we proceed any further, hear me speak."] * 40,
    )
    vocab_size, sequence_length, AUTOTUNE = 16, 6, tf.data.AUTOTUNE  # noqa: N806

    text_ds = tf.data.TextLineDataset(path_to_file).filter(
        lambda x: bool(len(x))
    )  # tf.cast(tf.strings.length(x), bool)

    class TextVectorization:  # keras.layers.TextVectorization(max_tokens, output_sequence_length), in numpy
        def adapt(self, batches):
            counts = collections.Counter(w for batch in batches for line in batch for w in self.words(line))
            self.vocab = ["", "[UNK]"] + [w for w, _ in counts.most_common(vocab_size - 2)]

        def words(self, line):
            return bytes(line).lower().replace(b",", b"").replace(b".", b"").replace(b":", b"").split()

        def __call__(self, batch):
            ids = {w: i for i, w in enumerate(self.vocab)}
            out = np.zeros((len(batch), sequence_length), np.int64)
            for row, line in enumerate(batch):
                tokens = [ids.get(w, 1) for w in self.words(line)][:sequence_length]
                out[row, : len(tokens)] = tokens
            return out

    vectorize_layer = TextVectorization()
    vectorize_layer.adapt(text_ds.batch(1024))
    text_vector_ds = text_ds.batch(1024).prefetch(AUTOTUNE).map(vectorize_layer).unbatch()
    sequences = list(text_vector_ds.as_numpy_iterator())
    assert len(sequences) == 80 and sequences[0].shape == (sequence_length,)
    assert sequences[0].tolist()[2:] == [0, 0, 0, 0] and sequences[1].min() > 0

    targets, contexts, labels = [], [], []
    for sequence in sequences:  # generate_training_data, with positive skip-grams of window 1 only
        for i in range(len(sequence) - 1):
            if sequence[i] and sequence[i + 1]:
                targets.append(sequence[i])
                contexts.append([sequence[i + 1], 0])
                labels.append([1, 0])
    targets, contexts, labels = np.array(targets), np.array(contexts), np.array(labels)
    BATCH_SIZE, BUFFER_SIZE = 64, 10000  # noqa: N806
    dataset = tf.data.Dataset.from_tensor_slices(((targets, contexts), labels))
    dataset = dataset.shuffle(BUFFER_SIZE).batch(BATCH_SIZE, drop_remainder=True)
    dataset = dataset.cache().prefetch(buffer_size=AUTOTUNE)
    assert dataset.element_spec[0][1].shape == (64, 2)  # drop_remainder=True: a static batch size
    epoch = [((t, c), lbl) for (t, c), lbl in dataset]
    assert len(epoch) == len(targets) // BATCH_SIZE
    (t, c), lbl = epoch[0]
    assert t.shape == (64,) and c.shape == (64, 2) and lbl.shape == (64, 2)
    pairs = set(zip(targets.tolist(), contexts[:, 0].tolist()))
    assert all((a, b) in pairs for (ts, cs), _ in epoch for a, b in zip(ts.tolist(), cs[:, 0].tolist()))
    assert [t.tolist() for (t, _), _ in dataset] == [t.tolist() for (t, _), _ in epoch]  # cached: one order


def test_pandas_dataframe_tutorials(tmp_path):
    # tensorflow.org/tutorials/load_data/pandas_dataframe (a DataFrame, then a dict of columns, sliced with
    # the target) and keras-io examples/structured_data/structured_data_classification_from_scratch.py
    # (dataframe_to_dataset: from_tensor_slices((dict(dataframe), labels)).shuffle(len(dataframe))).
    pd = pytest.importorskip("pandas")
    csv_file = tmp_path / "heart.csv"
    rows = ["age,sex,cp,trestbps,chol,thalach,oldpeak,thal,target"]
    rows += [
        f"{40 + i},{i % 2},{i % 4},{120 + i},{200 + 3 * i},{150 - i},{i / 10},{['fixed', 'normal', 'reversible'][i % 3]},{i % 2}"
        for i in range(30)
    ]
    csv_file.write_text("\n".join(rows) + "\n")
    df = pd.read_csv(csv_file)
    target = df.pop("target")
    numeric_feature_names = ["age", "thalach", "trestbps", "chol", "oldpeak"]
    numeric_features = df[numeric_feature_names]

    numeric_dataset = tf.data.Dataset.from_tensor_slices((numeric_features, target))
    features, label = next(iter(numeric_dataset))
    assert features.dtype == np.float64 and features.tolist() == [40.0, 150.0, 120.0, 200.0, 0.0]  # as tf
    assert label.dtype == np.int64 and int(label) == 0
    numeric_batches = numeric_dataset.shuffle(1000).batch(2)
    assert next(iter(numeric_batches))[0].shape == (2, 5)

    numeric_dict_ds = tf.data.Dataset.from_tensor_slices((dict(numeric_features), target))
    row, label = next(iter(numeric_dict_ds.skip(1)))
    assert list(row) == numeric_feature_names  # tf keeps the dict's own key order
    assert (
        row["age"].dtype == np.int64 and row["oldpeak"].dtype == np.float64 and float(row["oldpeak"]) == 0.1
    )
    numeric_dict_batches = numeric_dict_ds.shuffle(100).batch(4)
    batch, labels = next(iter(numeric_dict_batches))
    assert list(batch) == numeric_feature_names and batch["chol"].shape == (4,)

    def dataframe_to_dataset(dataframe):
        dataframe = dataframe.copy()
        labels = dataframe.pop("target")
        ds = tf.data.Dataset.from_tensor_slices((dict(dataframe), labels))
        ds = ds.shuffle(buffer_size=len(dataframe))
        return ds

    dataframe = pd.read_csv(csv_file)
    val_dataframe = dataframe.sample(frac=0.2, random_state=1337)
    train_dataframe = dataframe.drop(val_dataframe.index)
    train_ds = dataframe_to_dataset(train_dataframe)
    for x, y in train_ds.take(1):
        assert list(x) == ["age", "sex", "cp", "trestbps", "chol", "thalach", "oldpeak", "thal"]
        assert isinstance(x["thal"], bytes) and x["thal"] in (b"fixed", b"normal", b"reversible")
        assert x["oldpeak"].dtype == np.float64 and y.dtype == np.int64
    train_ds = train_ds.batch(32)
    ((x, y),) = list(train_ds)
    assert len(y) == 24 and x["thal"].dtype == object and all(isinstance(v, bytes) for v in x["thal"])

    # The pandas tutorial's last section: columns as (n, 1) numpy arrays, strings among them.
    df_dict = {key: value.to_numpy()[:, np.newaxis] for key, value in dict(df).items()}
    ds = tf.data.Dataset.from_tensor_slices((df_dict, target)).batch(5)
    x, _ = next(iter(ds))
    assert x["thal"].shape == (5, 1) and x["thal"][0, 0] == b"fixed" and x["age"].dtype == np.int64


def test_load_csv_tutorial(tmp_path):
    # tensorflow.org/tutorials/load_data/csv: a dict of numpy columns from pandas, make_csv_dataset on a
    # GZIP file and on a file pattern (num_parallel_reads, shuffle_buffer_size), cache / snapshot then
    # shuffle, decode_csv on many lines and per line, CsvDataset interleaved over files.
    pd = pytest.importorskip("pandas")
    import gzip  # noqa: PLC0415

    titanic_file_path = tmp_path / "train.csv"
    header = "survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone"
    rows = [
        f"{i % 2},{['male', 'female'][i % 2]},{20 + i}.0,{i % 3},0,{7.25 + i},Third,unknown,Cork,y"
        for i in range(12)
    ]
    titanic_file_path.write_text("\n".join([header, *rows]) + "\n")

    titanic = pd.read_csv(titanic_file_path)
    titanic_features = titanic.copy()
    titanic_labels = titanic_features.pop("survived")
    titanic_features_dict = {name: np.array(value) for name, value in titanic_features.items()}
    features_ds = tf.data.Dataset.from_tensor_slices(titanic_features_dict)
    example = next(iter(features_ds))
    assert (
        list(example) == header.split(",")[1:]
        and example["sex"] == b"male"
        and example["fare"].dtype == np.float64
    )
    titanic_ds = tf.data.Dataset.from_tensor_slices((titanic_features_dict, titanic_labels))
    titanic_batches = titanic_ds.shuffle(len(titanic_labels)).batch(32)
    ((batch, labels),) = list(titanic_batches)
    assert sorted(labels.tolist()) == [0] * 6 + [1] * 6 and batch["class"].tolist() == [b"Third"] * 12

    traffic_volume_csv_gz = tmp_path / "Metro_Interstate_Traffic_Volume.csv.gz"
    with gzip.open(traffic_volume_csv_gz, "wt") as f:
        f.write("holiday,temp,weather_main,traffic_volume\n")
        f.writelines(f"None,{280 + i / 10},Clouds,{5000 + i}\n" for i in range(600))
    traffic_volume_csv_gz_ds = tf.data.experimental.make_csv_dataset(
        str(traffic_volume_csv_gz),
        batch_size=256,
        label_name="traffic_volume",
        num_epochs=1,
        compression_type="GZIP",
    )
    batches = list(traffic_volume_csv_gz_ds)
    assert [len(label) for _, label in batches] == [256, 256, 88]
    assert (
        list(batches[0][0]) == ["holiday", "temp", "weather_main"]
        and batches[0][0]["temp"].dtype == np.float32
    )
    caching = traffic_volume_csv_gz_ds.cache().shuffle(1000)
    snapshotting = traffic_volume_csv_gz_ds.snapshot(str(tmp_path / "titanic.tfsnap")).shuffle(1000)
    for ds in (caching, snapshotting):
        for _ in range(2):
            assert sorted(np.concatenate([label for _, label in ds]).tolist()) == list(range(5000, 5600))

    fonts = tmp_path / "fonts"
    fonts.mkdir()
    for k, font in enumerate(["AGENCY", "ARIAL", "BAHNSCHRIFT"]):
        lines = ["font,fontVariant,m_label,r0c0,r0c1"] + [
            f"{font},{font} FB,{65 + i},{k}.0,{i}.5" for i in range(7)
        ]
        (fonts / f"{font}.csv").write_text("\n".join(lines) + "\n")
    fonts_ds = tf.data.experimental.make_csv_dataset(
        file_pattern=str(fonts / "*.csv"),
        batch_size=10,
        num_epochs=1,
        num_parallel_reads=20,
        shuffle_buffer_size=10000,
    )
    font_batches = list(fonts_ds)
    assert [len(b["font"]) for b in font_batches] == [10, 10, 1]
    assert sorted(np.concatenate([b["m_label"] for b in font_batches]).tolist()) == sorted(
        list(range(65, 72)) * 3
    )

    text = titanic_file_path.read_text()
    lines = text.split("\n")[1:-1]
    all_strings = [str()] * 10  # noqa: UP018 (the tutorial's spelling)
    features = tf.io.decode_csv(lines, record_defaults=all_strings)
    assert [f.dtype for f in features] == [object] * 10 and features[1].tolist()[:2] == [b"male", b"female"]
    titanic_types = [int(), str(), float(), int(), int(), float(), str(), str(), str(), str()]  # noqa: UP018 (the tutorial's spelling)
    features = tf.io.decode_csv(lines, record_defaults=titanic_types)
    assert (
        features[0].dtype == np.int32
        and features[2].dtype == np.float32
        and features[5][1] == np.float32(8.25)
    )
    simple_titanic = tf.data.experimental.CsvDataset(
        str(titanic_file_path), record_defaults=titanic_types, header=True
    )

    def decode_titanic_line(line):
        return tf.io.decode_csv(line, titanic_types)

    manual_titanic = tf.data.TextLineDataset(str(titanic_file_path)).skip(1).map(decode_titanic_line)
    for simple, manual in zip(simple_titanic, manual_titanic):
        assert [type(v) for v in simple] == [type(v) for v in manual] and simple == tuple(manual)

    font_csvs = sorted(str(p) for p in fonts.glob("*.csv"))
    font_line_ds = (
        tf.data.Dataset.list_files(font_csvs)
        .interleave(lambda fname: tf.data.TextLineDataset(fname).skip(1), cycle_length=100)
        .batch(10)
    )
    assert [len(b) for b in font_line_ds] == [10, 10, 1]
    font_column_types = [str(), str()] + [float()] * 3  # noqa: UP018 (the tutorial's spelling)
    simple_font_ds = tf.data.experimental.CsvDataset(
        font_csvs, record_defaults=font_column_types, header=True
    )
    assert [bytes(row[0]) for row in simple_font_ds][::7] == [b"AGENCY", b"ARIAL", b"BAHNSCHRIFT"]
    font_files = tf.data.Dataset.list_files(str(fonts / "*.csv"))

    def make_font_csv_ds(path):
        return tf.data.experimental.CsvDataset(path, record_defaults=font_column_types, header=True)

    font_rows = font_files.interleave(make_font_csv_ds, cycle_length=3)
    fonts_dict = {"font_name": [], "character": []}
    for row in font_rows.take(10):
        fonts_dict["font_name"].append(row[0].decode())  # row[0].numpy().decode()
        fonts_dict["character"].append(chr(int(row[2])))
    # list_files shuffles by default: whichever file comes first gives the fourth row.
    assert sorted(collections.Counter(fonts_dict["font_name"]).values()) == [3, 3, 4]
    assert sorted(fonts_dict["character"])[:3] == ["A", "A", "A"]
