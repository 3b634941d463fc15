"""Public tf.data pipelines from repositories (tensorflow/models, tensorflow/tpu, tensorflow/nmt,
google-research/bert, keras-io), ported under the rules of ``test_pipelines.py``: ``import tensorflow
as tf`` became ``import headrace as tf``, TensorFlow math inside user functions (``tf.cast``,
``tf.string_split``, lookup tables, ``tf.sparse.to_dense`` ...) became numpy, ``tf.contrib.data.X`` became
its TF 2 name ``tf.data.experimental.X``. The tf.data call chains are as the sources write them; ``tf.image``
and ``tf.io`` calls stay, as headrace has them. Data is generated; each test names its source and checks
the values tf.data gives.
"""

import collections
import functools
import os

import numpy as np

import headrace as tf  # the only change to the pipelines below: the import


def _write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def test_nmt_get_iterator(tmp_path):
    # github.com/tensorflow/nmt nmt/utils/iterator_utils.py (get_iterator, get_infer_iterator): zip of two
    # TextLineDatasets, shard, skip, shuffle with positional seed / reshuffle_each_iteration, maps over
    # unpacked (src, tgt) with num_parallel_calls + prefetch, filter, and group_by_window (key_func of
    # five arguments) whose reduce_func is a padded_batch with TensorShape padded_shapes and padding_values.
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(30)]
    src_lines, tgt_lines = [], []
    for _ in range(120):
        src_lines.append(" ".join(rng.choice(words, size=int(rng.integers(0, 25)))))
        tgt_lines.append(" ".join(rng.choice(words, size=int(rng.integers(1, 25)))))
    vocab = ["<unk>", "<s>", "</s>"] + words[:20]  # w20..w29 are out of vocabulary

    class VocabTable:  # tf.contrib.lookup.index_table_from_file(vocab_file, default_value=0)
        def __init__(self, vocab):
            self.ids = {w.encode(): i for i, w in enumerate(vocab)}

        def lookup(self, keys):
            if isinstance(keys, bytes):
                return np.int64(self.ids.get(keys, 0))
            return np.array([self.ids.get(k, 0) for k in keys], dtype=np.int64)

    src_vocab_table = tgt_vocab_table = VocabTable(vocab)
    src_dataset = tf.data.TextLineDataset(_write_lines(tmp_path / "train.src", src_lines))
    tgt_dataset = tf.data.TextLineDataset(_write_lines(tmp_path / "train.tgt", tgt_lines))
    batch_size, sos, eos, random_seed, num_buckets = 8, "<s>", "</s>", 3, 3
    src_max_len, tgt_max_len, num_parallel_calls = 16, 20, 4
    output_buffer_size, skip_count, num_shards, shard_index = batch_size * 1000, 2, 2, 1

    src_eos_id = np.int32(
        src_vocab_table.lookup(eos.encode())
    )  # tf.cast(table.lookup(tf.constant(eos)), tf.int32)
    tgt_sos_id = np.int32(tgt_vocab_table.lookup(sos.encode()))
    tgt_eos_id = np.int32(tgt_vocab_table.lookup(eos.encode()))

    src_tgt_dataset = tf.data.Dataset.zip((src_dataset, tgt_dataset))
    src_tgt_dataset = src_tgt_dataset.shard(num_shards, shard_index)
    if skip_count is not None:
        src_tgt_dataset = src_tgt_dataset.skip(skip_count)
    src_tgt_dataset = src_tgt_dataset.shuffle(output_buffer_size, random_seed, True)
    src_tgt_dataset = src_tgt_dataset.map(
        lambda src, tgt: (np.array(src.split(), dtype=object), np.array(tgt.split(), dtype=object)),
        num_parallel_calls=num_parallel_calls,
    ).prefetch(output_buffer_size)
    src_tgt_dataset = src_tgt_dataset.filter(lambda src, tgt: np.logical_and(src.size > 0, tgt.size > 0))
    if src_max_len:
        src_tgt_dataset = src_tgt_dataset.map(
            lambda src, tgt: (src[:src_max_len], tgt), num_parallel_calls=num_parallel_calls
        ).prefetch(output_buffer_size)
    if tgt_max_len:
        src_tgt_dataset = src_tgt_dataset.map(
            lambda src, tgt: (src, tgt[:tgt_max_len]), num_parallel_calls=num_parallel_calls
        ).prefetch(output_buffer_size)
    src_tgt_dataset = src_tgt_dataset.map(
        lambda src, tgt: (
            src_vocab_table.lookup(src).astype(np.int32),
            tgt_vocab_table.lookup(tgt).astype(np.int32),
        ),
        num_parallel_calls=num_parallel_calls,
    ).prefetch(output_buffer_size)
    src_tgt_dataset = src_tgt_dataset.map(
        lambda src, tgt: (src, np.concatenate(([tgt_sos_id], tgt)), np.concatenate((tgt, [tgt_eos_id]))),
        num_parallel_calls=num_parallel_calls,
    ).prefetch(output_buffer_size)
    src_tgt_dataset = src_tgt_dataset.map(
        lambda src, tgt_in, tgt_out: (src, tgt_in, tgt_out, np.int32(src.size), np.int32(tgt_in.size)),
        num_parallel_calls=num_parallel_calls,
    ).prefetch(output_buffer_size)

    def batching_func(x):
        return x.padded_batch(
            batch_size,
            padded_shapes=(
                tf.TensorShape([None]),  # src
                tf.TensorShape([None]),  # tgt_input
                tf.TensorShape([None]),  # tgt_output
                tf.TensorShape([]),  # src_len
                tf.TensorShape([]),  # tgt_len
            ),
            padding_values=(src_eos_id, tgt_eos_id, tgt_eos_id, 0, 0),
        )

    def key_func(unused_1, unused_2, unused_3, src_len, tgt_len):
        bucket_width = (src_max_len + num_buckets - 1) // num_buckets
        bucket_id = np.maximum(src_len // bucket_width, tgt_len // bucket_width)
        return np.int64(np.minimum(num_buckets, bucket_id))

    def reduce_func(unused_key, windowed_data):
        return batching_func(windowed_data)

    batched_dataset = src_tgt_dataset.apply(
        tf.data.experimental.group_by_window(
            key_func=key_func, reduce_func=reduce_func, window_size=batch_size
        )
    )

    # What tf.data gives: the pairs of shard 1 after skipping 2, empty ones dropped, each padded with eos.
    ids = {w.encode(): i for i, w in enumerate(vocab)}
    expected = collections.Counter()
    for src, tgt in list(zip(src_lines, tgt_lines))[shard_index::num_shards][skip_count:]:
        if src and tgt:
            s = tuple(ids.get(w.encode(), 0) for w in src.split()[:src_max_len])
            t = tuple(ids.get(w.encode(), 0) for w in tgt.split()[:tgt_max_len])
            expected[(s, t)] += 1
    seen = collections.Counter()
    for src, tgt_in, tgt_out, src_len, tgt_len in batched_dataset:
        assert src.dtype == np.int32 and tgt_in.dtype == np.int32 and src_len.dtype == np.int32
        assert len(src) <= batch_size and src.shape[1] == src_len.max() and tgt_in.shape[1] == tgt_len.max()
        bucket_width = (src_max_len + num_buckets - 1) // num_buckets
        assert (
            len(
                {
                    min(num_buckets, max(a // bucket_width, b // bucket_width))
                    for a, b in zip(src_len, tgt_len)
                }
            )
            == 1
        )
        for row in range(len(src)):
            n, m = int(src_len[row]), int(tgt_len[row])
            assert (src[row, n:] == src_eos_id).all() and (tgt_out[row, m:] == tgt_eos_id).all()
            assert tgt_in[row, 0] == tgt_sos_id and tgt_out[row, m - 1] == tgt_eos_id
            seen[(tuple(src[row, :n].tolist()), tuple(tgt_in[row, 1:m].tolist()))] += 1
    assert seen == expected and sum(expected.values()) > 40

    # get_infer_iterator: padded_batch of (ids, size) padded with eos, no bucketing.
    infer = tf.data.TextLineDataset(_write_lines(tmp_path / "infer.src", ["w1 w2 w3", "w4", "w25 w2"]))
    infer = infer.map(lambda src: np.array(src.split(), dtype=object))
    infer = infer.map(lambda src: src_vocab_table.lookup(src).astype(np.int32))
    infer = infer.map(lambda src: (src, np.int32(src.size)))
    infer = infer.padded_batch(
        batch_size,
        padded_shapes=(tf.TensorShape([None]), tf.TensorShape([])),
        padding_values=(src_eos_id, 0),
    )
    ((src_ids, src_seq_len),) = list(infer)
    assert src_ids.tolist() == [[4, 5, 6], [7, 2, 2], [0, 5, 2]] and src_ids.dtype == np.int32
    assert src_seq_len.tolist() == [3, 1, 2]


def test_bert_run_pretraining_input_fn(tmp_path):
    # github.com/google-research/bert run_pretraining.py (input_fn_builder, _decode_record): training reads
    # a shuffled, repeated list of files through parallel_interleave(TFRecordDataset, sloppy=True), shuffles
    # records and parses with map_and_batch(drop_remainder=True); evaluation reads the files in order.
    max_seq_length, max_predictions_per_seq, num_cpu_threads = 16, 4, 4
    input_files = []
    for shard in range(3):
        path = str(tmp_path / f"tf_examples.tfrecord-{shard}")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(10):
                uid = shard * 100 + i
                writer.write(
                    tf.io.serialize_example(
                        {
                            "input_ids": np.arange(uid, uid + max_seq_length),
                            "input_mask": np.ones(max_seq_length, np.int64),
                            "segment_ids": np.zeros(max_seq_length, np.int64),
                            "masked_lm_positions": np.array([1, 2, 3, 0]),
                            "masked_lm_ids": np.array([7, 8, 9, 0]),
                            "masked_lm_weights": np.array([1.0, 1.0, 1.0, 0.0], np.float32),
                            "next_sentence_labels": np.array([uid % 2]),
                        }
                    )
                )
        input_files.append(path)

    def _decode_record(record, name_to_features):
        example = tf.io.parse_single_example(record, name_to_features)
        for name in list(example.keys()):
            t = example[name]
            if t.dtype == tf.int64:
                t = t.astype(np.int32)  # tf.to_int32(t)
            example[name] = t
        return example

    def input_fn_builder(
        input_files, max_seq_length, max_predictions_per_seq, is_training, num_cpu_threads=4
    ):
        def input_fn(params):
            batch_size = params["batch_size"]
            name_to_features = {
                "input_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
                "input_mask": tf.io.FixedLenFeature([max_seq_length], tf.int64),
                "segment_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
                "masked_lm_positions": tf.io.FixedLenFeature([max_predictions_per_seq], tf.int64),
                "masked_lm_ids": tf.io.FixedLenFeature([max_predictions_per_seq], tf.int64),
                "masked_lm_weights": tf.io.FixedLenFeature([max_predictions_per_seq], tf.float32),
                "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
            }
            if is_training:
                d = tf.data.Dataset.from_tensor_slices(input_files)  # tf.constant(input_files)
                d = d.repeat()
                d = d.shuffle(buffer_size=len(input_files))
                cycle_length = min(num_cpu_threads, len(input_files))
                d = d.apply(
                    tf.data.experimental.parallel_interleave(
                        tf.data.TFRecordDataset, sloppy=is_training, cycle_length=cycle_length
                    )
                )
                d = d.shuffle(buffer_size=100)
            else:
                d = tf.data.TFRecordDataset(input_files)
                d = d.repeat()
            d = d.apply(
                tf.data.experimental.map_and_batch(
                    lambda record: _decode_record(record, name_to_features),
                    batch_size=batch_size,
                    num_parallel_batches=num_cpu_threads,
                    drop_remainder=True,
                )
            )
            return d

        return input_fn

    train = input_fn_builder(input_files, max_seq_length, max_predictions_per_seq, True, num_cpu_threads)
    train_ds = train({"batch_size": 8})
    batches = list(train_ds.take(15))  # 120 records: four passes over the 30
    for batch in batches:
        assert batch["input_ids"].shape == (8, max_seq_length) and batch["input_ids"].dtype == np.int32
        assert batch["masked_lm_weights"].dtype == np.float32 and batch["next_sentence_labels"].shape == (
            8,
            1,
        )
        assert (batch["input_ids"][:, 1] == batch["input_ids"][:, 0] + 1).all()
        assert (batch["next_sentence_labels"][:, 0] == batch["input_ids"][:, 0] % 2).all()
    firsts = np.concatenate([b["input_ids"][:, 0] for b in batches])
    valid = {s * 100 + i for s in range(3) for i in range(10)}
    # Whole files come through the interleave (10 records each), in a shuffled, repeating file order.
    assert set(firsts.tolist()) <= valid and len(set(firsts.tolist())) >= 10
    assert firsts[:30].tolist() != sorted(firsts[:30].tolist())

    evaluate = input_fn_builder(input_files, max_seq_length, max_predictions_per_seq, False)
    eval_firsts = [b["input_ids"][:, 0].tolist() for b in evaluate({"batch_size": 8}).take(4)]
    in_order = [s * 100 + i for s in range(3) for i in range(10)] * 2
    assert sum(eval_firsts, []) == in_order[:32]


def test_official_resnet_cifar10_and_mnist_fixed_length_records(tmp_path):
    # github.com/tensorflow/models official/r1/resnet/cifar10_main.py (parse_record, input_fn) with
    # resnet_run_loop.process_record_dataset (the map_and_batch version, with experimental_threading), and
    # official/r1/mnist/dataset.py (FixedLengthRecordDataset with header_bytes, decode_raw, zip).
    HEIGHT, WIDTH, NUM_CHANNELS = 32, 32, 3  # noqa: N806 (the source's names)
    _RECORD_BYTES = HEIGHT * WIDTH * NUM_CHANNELS + 1  # noqa: N806
    rng = np.random.default_rng(7)
    images = rng.integers(0, 256, size=(2, 6, NUM_CHANNELS, HEIGHT, WIDTH), dtype=np.uint8)
    labels = rng.integers(0, 10, size=(2, 6), dtype=np.uint8)
    filenames = []
    for f in range(2):
        path = tmp_path / f"data_batch_{f + 1}.bin"
        path.write_bytes(b"".join(bytes([labels[f, i]]) + images[f, i].tobytes() for i in range(6)))
        filenames.append(str(path))

    def preprocess_image(image, is_training):
        if is_training:
            image = tf.image.resize_with_crop_or_pad(image, HEIGHT + 8, WIDTH + 8)
            image = tf.image.random_crop(image, [HEIGHT, WIDTH, NUM_CHANNELS])
            image = tf.image.random_flip_left_right(image)
        image = tf.image.per_image_standardization(image)
        return image

    def parse_record(raw_record, is_training, dtype):
        record_vector = tf.io.decode_raw(raw_record, tf.uint8)
        label = record_vector[0].astype(np.int32)  # tf.cast(record_vector[0], tf.int32)
        depth_major = record_vector[1:_RECORD_BYTES].reshape([NUM_CHANNELS, HEIGHT, WIDTH])
        image = np.transpose(depth_major, [1, 2, 0]).astype(np.float32)
        image = preprocess_image(image, is_training)
        image = image.astype(dtype)
        return image, label

    def process_record_dataset(
        dataset, is_training, batch_size, shuffle_buffer, parse_record_fn, num_epochs=1, dtype=tf.float32,
        datasets_num_private_threads=None, num_parallel_batches=1,
    ):  # fmt: skip
        dataset = dataset.prefetch(buffer_size=batch_size)
        if is_training:
            dataset = dataset.shuffle(buffer_size=shuffle_buffer)
        dataset = dataset.repeat(num_epochs)
        dataset = dataset.apply(
            tf.data.experimental.map_and_batch(
                lambda value: parse_record_fn(value, is_training, dtype),
                batch_size=batch_size,
                num_parallel_batches=num_parallel_batches,
                drop_remainder=False,
            )
        )
        dataset = dataset.prefetch(buffer_size=tf.data.experimental.AUTOTUNE)
        if datasets_num_private_threads:
            options = tf.data.Options()
            options.experimental_threading.private_threadpool_size = datasets_num_private_threads
            dataset = dataset.with_options(options)
        return dataset

    def input_fn(
        is_training, filenames, batch_size, num_epochs=1, dtype=tf.float32, datasets_num_private_threads=None
    ):
        dataset = tf.data.FixedLengthRecordDataset(filenames, _RECORD_BYTES)
        return process_record_dataset(
            dataset=dataset,
            is_training=is_training,
            batch_size=batch_size,
            shuffle_buffer=50000,
            parse_record_fn=parse_record,
            num_epochs=num_epochs,
            dtype=dtype,
            datasets_num_private_threads=datasets_num_private_threads,
        )

    eval_batches = list(
        input_fn(False, filenames, batch_size=5, dtype=tf.float16, datasets_num_private_threads=2)
    )
    assert [b[0].shape for b in eval_batches] == [(5, 32, 32, 3), (5, 32, 32, 3), (2, 32, 32, 3)]
    assert eval_batches[0][0].dtype == np.float16 and eval_batches[0][1].dtype == np.int32
    assert np.concatenate([b[1] for b in eval_batches]).tolist() == labels.ravel().tolist()
    first = images[0, 0].transpose(1, 2, 0).astype(np.float64)
    standardized = (first - first.mean()) / max(first.std(), 1 / np.sqrt(first.size))
    assert np.allclose(eval_batches[0][0][0], standardized, atol=1e-2)
    train_labels = np.concatenate([b[1] for b in input_fn(True, filenames, batch_size=4, num_epochs=2)])
    assert sorted(train_labels.tolist()) == sorted(labels.ravel().tolist() * 2)

    # official/r1/mnist/dataset.py: idx files behind 16- and 8-byte headers.
    digits = rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8)
    digit_labels = np.array([3, 1, 4, 1, 5], np.uint8)
    images_file = tmp_path / "t10k-images-idx3-ubyte"
    images_file.write_bytes(b"\x00\x00\x08\x03" + b"\x00" * 12 + digits.tobytes())
    labels_file = tmp_path / "t10k-labels-idx1-ubyte"
    labels_file.write_bytes(b"\x00\x00\x08\x01" + b"\x00" * 4 + digit_labels.tobytes())

    def decode_image(image):
        image = tf.io.decode_raw(image, tf.uint8)
        image = image.astype(np.float32)
        image = image.reshape([784])
        return image / 255.0

    def decode_label(label):
        label = tf.io.decode_raw(label, tf.uint8)
        label = label.reshape([])
        return label.astype(np.int32)

    mnist_images = tf.data.FixedLengthRecordDataset(str(images_file), 28 * 28, header_bytes=16).map(
        decode_image
    )
    mnist_labels = tf.data.FixedLengthRecordDataset(str(labels_file), 1, header_bytes=8).map(decode_label)
    mnist = tf.data.Dataset.zip((mnist_images, mnist_labels))
    mnist = mnist.cache().shuffle(buffer_size=50000).batch(2).repeat(2)
    got = [(x, y) for x, y in mnist]
    assert [len(y) for _, y in got] == [2, 2, 1, 2, 2, 1]
    by_label = {}
    for x, y in got:
        for row, label in zip(x, y):
            by_label.setdefault(int(label), []).append(row)
    for i, label in enumerate(digit_labels):
        assert any(np.allclose(row, digits[i].ravel() / np.float32(255.0)) for row in by_label[int(label)])


def test_object_detection_example_decoder_and_retinanet_batching(tmp_path):
    # github.com/tensorflow/models official/vision/dataloaders/tf_example_decoder.py (VarLenFeature boxes,
    # FixedLenFeature with default_value, sparse outputs densified), feeding keras-io's
    # examples/vision/retinanet.py input pipeline: map, shuffle, padded_batch with padding_values only,
    # map, apply(ignore_errors()), prefetch.
    path = str(tmp_path / "coco-00000-of-00001.tfrecord")
    rng = np.random.default_rng(11)
    truth = []
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(9):
            n = int(rng.integers(1, 5)) if i != 4 else 0
            boxes = np.sort(rng.random((n, 2, 2)).astype(np.float32), axis=1)  # [[ymin, xmin], [ymax, xmax]]
            classes = rng.integers(1, 90, n)
            image = np.full((12, 16, 3), 10 * i, np.uint8)
            feature = {
                "image/encoded": tf.io.encode_jpeg(image) if i != 6 else b"not a jpeg",
                "image/source_id": str(i).encode(),
                "image/height": 12,
                "image/width": 16,
                "image/object/bbox/ymin": boxes[:, 0, 0],
                "image/object/bbox/xmin": boxes[:, 0, 1],
                "image/object/bbox/ymax": boxes[:, 1, 0],
                "image/object/bbox/xmax": boxes[:, 1, 1],
                "image/object/class/label": classes,
                "image/object/is_crowd": np.zeros(n, np.int64),
            }
            writer.write(tf.io.serialize_example({k: v for k, v in feature.items() if len(np.atleast_1d(v))}))
            truth.append((boxes, classes))

    keys_to_features = {
        "image/encoded": tf.io.FixedLenFeature((), tf.string),
        "image/source_id": tf.io.FixedLenFeature((), tf.string),
        "image/height": tf.io.FixedLenFeature((), tf.int64, -1),
        "image/width": tf.io.FixedLenFeature((), tf.int64, -1),
        "image/object/bbox/xmin": tf.io.VarLenFeature(tf.float32),
        "image/object/bbox/xmax": tf.io.VarLenFeature(tf.float32),
        "image/object/bbox/ymin": tf.io.VarLenFeature(tf.float32),
        "image/object/bbox/ymax": tf.io.VarLenFeature(tf.float32),
        "image/object/class/label": tf.io.VarLenFeature(tf.int64),
        "image/object/area": tf.io.VarLenFeature(tf.float32),
        "image/object/is_crowd": tf.io.VarLenFeature(tf.int64),
    }

    def decode(serialized_example):
        parsed_tensors = tf.io.parse_single_example(serialized_example, keys_to_features)
        # The source densifies each tf.SparseTensor with tf.sparse.to_dense(default_value=0 or ''):
        # headrace's parse_single_example already returns a VarLenFeature as a dense 1-D array.
        boxes = np.stack(
            [parsed_tensors[f"image/object/bbox/{k}"] for k in ("ymin", "xmin", "ymax", "xmax")], axis=-1
        )
        image = tf.io.decode_image(parsed_tensors["image/encoded"], channels=3)
        return {
            "image": image,
            "image/id": parsed_tensors["image/source_id"],
            "objects": {"bbox": boxes, "label": parsed_tensors["image/object/class/label"]},
            "is_crowd": parsed_tensors["image/object/is_crowd"].astype(bool),
            "area": parsed_tensors["image/object/area"],
        }

    decoded = list(tf.data.TFRecordDataset(path).take(6).map(decode))
    assert decoded[4]["objects"]["bbox"].shape == (0, 4) and decoded[4]["area"].dtype == np.float32
    assert (
        np.array_equal(decoded[1]["objects"]["label"], truth[1][1]) and decoded[1]["is_crowd"].dtype == bool
    )

    def preprocess_data(sample):  # keras-io retinanet.py, its TF math as numpy
        image = sample["image"].astype(np.float32)
        bbox = sample["objects"]["bbox"][:, [1, 0, 3, 2]]  # swap_xy
        class_id = sample["objects"]["label"].astype(np.int32)
        bbox = np.concatenate([(bbox[:, :2] + bbox[:, 2:]) / 2.0, bbox[:, 2:] - bbox[:, :2]], axis=-1)
        return image, bbox, class_id

    def encode_batch(batch_images, gt_boxes, cls_ids):  # LabelEncoder.encode_batch, reduced
        labels = np.concatenate([gt_boxes, cls_ids[..., None].astype(np.float32)], axis=-1)
        return batch_images / 127.5 - 1.0, labels

    batch_size = 2
    autotune = tf.data.AUTOTUNE
    train_dataset = tf.data.TFRecordDataset(path).map(decode, num_parallel_calls=autotune)
    train_dataset = train_dataset.map(preprocess_data, num_parallel_calls=autotune)
    train_dataset = train_dataset.shuffle(8 * batch_size, seed=0)
    train_dataset = train_dataset.padded_batch(
        batch_size=batch_size, padding_values=(0.0, 1e-8, -1), drop_remainder=True
    )
    train_dataset = train_dataset.map(encode_batch, num_parallel_calls=autotune)
    train_dataset = train_dataset.apply(tf.data.experimental.ignore_errors())
    train_dataset = train_dataset.prefetch(autotune)

    batches = list(train_dataset)
    # Record 6 fails to decode and ignore_errors skips the error. tf.data's padded_batch also drops the
    # elements it had gathered for that batch (3 batches here); headrace keeps them and completes the
    # batch (a deliberate difference, docs/porting.md), so all 8 good records make 4 batches.
    assert len(batches) == 4
    for images, labels in batches:
        assert images.shape[0] == 2 and images.dtype == np.float32 and labels.dtype == np.float32
        for row in labels:
            padded = row[:, 4] == -1
            assert (row[padded, :4] == np.float32(1e-8)).all()
            assert not (row[~padded, 2:4] == np.float32(1e-8)).any()
    real = sorted(int(c) for _, labels in batches for row in labels for c in row[:, 4] if c != -1)
    assert real == sorted(int(c) for i, (_, classes) in enumerate(truth) if i != 6 for c in classes)


def test_tpu_resnet_imagenet_input(tmp_path):
    # github.com/tensorflow/tpu models/official/resnet/imagenet_input.py (ImageNetInput.input_fn and
    # make_source_dataset) with resnet_preprocessing.py's eval path: list_files(shuffle=False) sharded by
    # host, TFRecordDataset(buffer_size=8 MiB) through parallel_interleave(cycle_length=64, sloppy=True),
    # cache + shuffle_and_repeat, map_and_batch(drop_remainder=True), a transposing map, threading options.
    for shard in range(4):
        with tf.io.TFRecordWriter(str(tmp_path / f"train-{shard:05d}-of-00004")) as writer:
            for i in range(6):
                label = shard * 6 + i + 1
                image = np.full((40 + 4 * i, 48, 3), label * 10, np.uint8)
                writer.write(
                    tf.io.serialize_example(
                        {"image/encoded": tf.io.encode_jpeg(image), "image/class/label": label}
                    )
                )
    image_size, CROP_PADDING, num_cores = 16, 32, 8  # noqa: N806 (the source's name)

    def _decode_and_center_crop(image_bytes, image_size):
        shape = tf.io.extract_jpeg_shape(image_bytes)
        image_height, image_width = int(shape[0]), int(shape[1])
        padded_center_crop_size = int(
            (image_size / (image_size + CROP_PADDING)) * float(min(image_height, image_width))
        )
        offset_height = ((image_height - padded_center_crop_size) + 1) // 2
        offset_width = ((image_width - padded_center_crop_size) + 1) // 2
        crop_window = np.stack(
            [offset_height, offset_width, padded_center_crop_size, padded_center_crop_size]
        )
        image = tf.io.decode_and_crop_jpeg(image_bytes, crop_window, channels=3)
        return tf.image.resize([image], [image_size, image_size], method=tf.image.ResizeMethod.BICUBIC)[0]

    def preprocess_for_eval(image_bytes, image_size):
        image = _decode_and_center_crop(image_bytes, image_size)
        image = image.reshape([image_size, image_size, 3])
        return tf.image.convert_image_dtype(image, dtype=tf.float32)

    class ImageNetInput:
        def __init__(self, is_training, data_dir, cache, transpose_input=True):
            self.is_training, self.data_dir, self.cache = is_training, data_dir, cache
            self.transpose_input, self.num_cores = transpose_input, num_cores

        def dataset_parser(self, value):
            keys_to_features = {
                "image/encoded": tf.io.FixedLenFeature((), tf.string, ""),
                "image/class/label": tf.io.FixedLenFeature([], tf.int64, -1),
            }
            parsed = tf.io.parse_single_example(value, keys_to_features)
            image_bytes = parsed["image/encoded"]  # tf.reshape(..., shape=[]): already a scalar (bytes)
            image = preprocess_for_eval(image_bytes, image_size)
            label = parsed["image/class/label"].reshape([]).astype(np.int32) - 1
            return image, label

        def set_shapes(self, batch_size, images, labels):  # images.set_shape(...): a static-shape check
            assert images.shape == (image_size, image_size, 3, batch_size) and labels.shape == (batch_size,)
            return images, labels

        def make_source_dataset(self, index, num_hosts):
            file_pattern = os.path.join(self.data_dir, "train-*" if self.is_training else "validation-*")
            dataset = tf.data.Dataset.list_files(file_pattern, shuffle=False)
            dataset = dataset.shard(num_hosts, index)
            if self.is_training and not self.cache:
                dataset = dataset.repeat()

            def fetch_dataset(filename):
                buffer_size = 8 * 1024 * 1024  # 8 MiB per file
                dataset = tf.data.TFRecordDataset(filename, buffer_size=buffer_size)
                return dataset

            dataset = dataset.apply(
                tf.data.experimental.parallel_interleave(fetch_dataset, cycle_length=64, sloppy=True)
            )
            if self.cache:
                dataset = dataset.cache().apply(tf.data.experimental.shuffle_and_repeat(1024 * 16))
            else:
                dataset = dataset.shuffle(1024)
            return dataset

        def input_fn(self, params):
            batch_size = params["batch_size"]
            current_host, num_hosts = params["context"]
            dataset = self.make_source_dataset(current_host, num_hosts)
            dataset = dataset.apply(
                tf.data.experimental.map_and_batch(
                    self.dataset_parser,
                    batch_size=batch_size,
                    num_parallel_batches=self.num_cores,
                    drop_remainder=True,
                )
            )
            if self.transpose_input:
                dataset = dataset.map(
                    lambda images, labels: (np.transpose(images, [1, 2, 3, 0]), labels),
                    num_parallel_calls=self.num_cores,
                )
            dataset = dataset.map(functools.partial(self.set_shapes, batch_size))
            dataset = dataset.prefetch(tf.data.experimental.AUTOTUNE)
            options = tf.data.Options()
            options.experimental_threading.max_intra_op_parallelism = 1
            options.experimental_threading.private_threadpool_size = 48
            dataset = dataset.with_options(options)
            return dataset

    for cache in (True, False):
        hosts = []
        for host in range(2):
            reader = ImageNetInput(True, str(tmp_path), cache=cache)
            dataset = reader.input_fn({"batch_size": 4, "context": (host, 2)})
            batches = list(dataset.take(12))  # four passes over the host's 12 images
            hosts.append(collections.Counter(np.concatenate([labels for _, labels in batches]).tolist()))
            for images, batch_labels in batches:
                assert images.dtype == np.float32 and images.shape == (16, 16, 3, 4)
                # A flat grey image keeps its value (JPEG noise aside). resize already gave float32, so
                # convert_image_dtype(float32) leaves 0-255 values, as in TensorFlow.
                for k, label in enumerate(batch_labels):
                    assert abs(float(images[..., k].mean()) - (label + 1) * 10) < 2
        # Files 0 and 2 on host 0, 1 and 3 on host 1 (a shard of the unshuffled list): labels 0-5 and 12-17.
        host_labels = [set(range(6)) | set(range(12, 18)), set(range(6, 12)) | set(range(18, 24))]
        if cache:  # shuffle_and_repeat over whole epochs of the cache: each image exactly four times
            assert [set(h) for h in hosts] == host_labels and [set(h.values()) for h in hosts] == [{4}, {4}]
        else:  # 48 draws from a 1024-record buffer of endlessly repeated files: some images may not come
            assert all(set(h) <= labels for h, labels in zip(hosts, host_labels))


def test_official_transformer_data_pipeline(tmp_path):
    # github.com/tensorflow/models official/legacy/transformer/data_pipeline.py (_read_and_batch_from_files,
    # _batch_examples): interleave(...).with_options(experimental_deterministic=False), VarLenFeature int64
    # parsing, a filter on lengths, then group_by_window with window_size=None and a window_size_func
    # (token-budget buckets) and padded_batch(n, ([None], [None])); or a static padded_batch.
    rng = np.random.default_rng(13)
    lengths = []
    for name in ("wmt-dev-00000", "wmt-dev-00001", "wmt-train-00000"):
        with tf.io.TFRecordWriter(str(tmp_path / name)) as writer:
            for _ in range(40):
                n, m = int(rng.integers(1, 40)), int(rng.integers(1, 40))
                writer.write(
                    tf.io.serialize_example({"inputs": np.arange(1, n + 1), "targets": np.arange(1, m + 1)})
                )
                lengths.append((name, n, m))
    _READ_RECORD_BUFFER, _MIN_BOUNDARY, _BOUNDARY_SCALE = 8 * 1000 * 1000, 8, 1.1  # noqa: N806

    def _load_records(filename):
        return tf.data.TFRecordDataset(filename, buffer_size=_READ_RECORD_BUFFER)

    def _parse_example(serialized_example):
        data_fields = {"inputs": tf.io.VarLenFeature(tf.int64), "targets": tf.io.VarLenFeature(tf.int64)}
        parsed = tf.io.parse_single_example(serialized_example, data_fields)
        return parsed["inputs"], parsed["targets"]  # tf.sparse.to_dense: already dense

    def _filter_max_length(example, max_length=256):
        return np.logical_and(example[0].size <= max_length, example[1].size <= max_length)

    def _get_example_length(example):
        return max(example[0].shape[0], example[1].shape[0])

    def _create_min_max_boundaries(max_length, min_boundary=_MIN_BOUNDARY, boundary_scale=_BOUNDARY_SCALE):
        bucket_boundaries = []
        x = min_boundary
        while x < max_length:
            bucket_boundaries.append(x)
            x = max(x + 1, int(x * boundary_scale))
        return [0] + bucket_boundaries, bucket_boundaries + [max_length + 1]

    def _batch_examples(dataset, batch_size, max_length):
        buckets_min, buckets_max = _create_min_max_boundaries(max_length)
        bucket_batch_sizes = [int(batch_size) // x for x in buckets_max]
        bucket_batch_sizes = np.array(bucket_batch_sizes, dtype=np.int64)  # tf.constant(..., dtype=tf.int64)

        def example_to_bucket_id(example_input, example_target):
            seq_length = _get_example_length((example_input, example_target))
            conditions_c = np.logical_and(
                np.less_equal(buckets_min, seq_length), np.less(seq_length, buckets_max)
            )
            return np.min(np.where(conditions_c)).astype(np.int64)

        def window_size_fn(bucket_id):
            return bucket_batch_sizes[bucket_id]

        def batching_fn(bucket_id, grouped_dataset):
            bucket_batch_size = window_size_fn(bucket_id)
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
    ):
        dataset = tf.data.Dataset.list_files(file_pattern, shuffle=shuffle)
        options = tf.data.Options()
        options.experimental_deterministic = False
        dataset = dataset.interleave(
            _load_records, cycle_length=max_io_parallelism, num_parallel_calls=tf.data.experimental.AUTOTUNE
        ).with_options(options)
        dataset = dataset.map(_parse_example, num_parallel_calls=tf.data.experimental.AUTOTUNE)
        dataset = dataset.filter(lambda x, y: _filter_max_length((x, y), max_length))
        if static_batch:
            dataset = dataset.padded_batch(
                int(batch_size // num_replicas // max_length * num_replicas),
                ([max_length], [max_length]),
                drop_remainder=True,
            )
        else:
            dataset = _batch_examples(dataset, batch_size, max_length)
        dataset = dataset.repeat(repeat)
        dataset = dataset.prefetch(buffer_size=tf.data.experimental.AUTOTUNE)
        return dataset

    batch_size, max_length = 200, 32
    dev_pattern = os.path.join(str(tmp_path), "*dev*")
    kept = collections.Counter(
        (n, m) for name, n, m in lengths if "dev" in name and n <= max_length and m <= max_length
    )
    buckets_min, buckets_max = _create_min_max_boundaries(max_length)
    seen = collections.Counter()
    for inputs, targets in _read_and_batch_from_files(dev_pattern, batch_size, max_length, 2, False, 1):
        assert inputs.dtype == np.int64 and len(inputs) == len(targets)
        bucket = {next(i for i, hi in enumerate(buckets_max) if max(n, m) < hi) for n, m in
                  zip((inputs > 0).sum(1), (targets > 0).sum(1))}  # fmt: skip
        assert len(bucket) == 1 and len(inputs) <= batch_size // buckets_max[bucket.pop()]
        for row_in, row_tgt in zip(inputs, targets):
            n, m = int((row_in > 0).sum()), int((row_tgt > 0).sum())
            assert row_in[:n].tolist() == list(range(1, n + 1)) and not row_in[n:].any()
            seen[(n, m)] += 1
    assert seen == kept

    static = _read_and_batch_from_files(dev_pattern, batch_size, max_length, 2, True, 2, static_batch=True)
    shapes = [(x.shape, y.shape) for x, y in static]
    assert shapes == [((6, 32), (6, 32))] * (2 * (sum(kept.values()) // 6))
