"""Ported public pipelines whose functions use ``tf.Tensor``'s methods on their values (``.numpy()``,
``set_shape``, ``get_shape().merge_with``) or TensorFlow's element dtypes (a Python int state is int32,
a string tensor compared with a numpy ``str`` array): they port by changing the import to
``import headrace.compat.eager as tf`` (issue 23; docs/porting.md). Sources as in the modules they came
from (tests/helpers/tf_math_pipelines_guides.py and tf_math_pipelines_repos.py): the functions below
are the sources' own, comments name repository and path; only what feeds them changed.

``tools/record_tf_math_pipelines.py pipelines_eager.json`` rebinds ``tf`` to TensorFlow and records
what tf.data yields (docs_load_csv needs pandas beside TensorFlow, see the guides module);
tests/compat/test_pipelines_tf_math.py replays them on headrace.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import os
import pathlib
import re
from typing import Any

import numpy as np

import headrace.compat.eager as tf  # the port: was `import tensorflow as tf`
from tests.helpers import pipeline_data as data
from tests.helpers import pipeline_data_repos as repo_data
from tests.helpers.tf_math_pipelines_guides import _pandas, _titanic_csv, _write, elements, unordered_rows

# ---- tensorflow/docs site/en/guide/data.ipynb ("Resampling": dataset sampling, rejection resampling) --


def _creditcard_csv(path: pathlib.Path, rows: int) -> str:
    header = ["Time"] + [f"V{k}" for k in range(1, 29)] + ["Amount", "Class"]
    lines = [",".join(header)]
    for i in range(rows):
        values = [f"{i}.0"] + [f"{((i * 7 + k * 3) % 19 - 9) / 10:.1f}" for k in range(1, 29)]
        lines.append(",".join([*values, f"{i % 50 * 1.25:.2f}", "1" if i % 16 == 3 else "0"]))
    return _write(path, "\n".join(lines) + "\n")


def count(counts, batch):
    features, labels = batch
    class_1 = labels == 1
    class_1 = tf.cast(class_1, tf.int32)

    class_0 = labels == 0
    class_0 = tf.cast(class_0, tf.int32)

    counts["class_0"] += tf.reduce_sum(class_0)
    counts["class_1"] += tf.reduce_sum(class_1)

    return counts


def class_func(features, label):
    return label


def creditcard_dataset(tmp):
    # 256 rows (1 in 16 positive): take(10) of the repeated batches of 1024 is exactly 40 epochs
    csv_path = _creditcard_csv(pathlib.Path(tmp) / "creditcard.csv", 256)
    creditcard_ds = tf.data.experimental.make_csv_dataset(
        csv_path,
        batch_size=1024,
        label_name="Class",
        # Set the column types: 30 floats and an int.
        column_defaults=[float()] * 30 + [int()],  # noqa: UP018 (the guide's spelling)
    )
    return creditcard_ds


def docs_data_resampling_count(tmp) -> Any:
    creditcard_ds = creditcard_dataset(tmp)
    counts = creditcard_ds.take(10).reduce(initial_state={"class_0": 0, "class_1": 0}, reduce_func=count)
    return tf.nest.map_structure(np.asarray, counts)


def docs_data_sampling(tmp) -> Any:  # "Datasets sampling"
    creditcard_ds = creditcard_dataset(tmp)
    negative_ds = creditcard_ds.unbatch().filter(lambda features, label: label == 0).repeat()
    positive_ds = creditcard_ds.unbatch().filter(lambda features, label: label == 1).repeat()
    positives = [labels for _, labels in elements(positive_ds.batch(10).take(1))]
    balanced_ds = tf.data.Dataset.sample_from_datasets([negative_ds, positive_ds], [0.5, 0.5]).batch(10)
    sampled = [labels for _, labels in elements(balanced_ds.take(10))]
    # draws differ from TF's: labels by dtype, shape and range, and every label is 0 or 1
    return [positives, data.summary(sampled), sorted(set(np.concatenate(sampled).tolist()))]


def docs_data_resampling(tmp) -> Any:
    # `.numpy()` on reduce's result: a tensor method (this module's import)
    creditcard_ds = creditcard_dataset(tmp)
    counts = creditcard_ds.take(10).reduce(initial_state={"class_0": 0, "class_1": 0}, reduce_func=count)

    counts = np.array([counts["class_0"].numpy(), counts["class_1"].numpy()]).astype(np.float32)

    fractions = counts / counts.sum()

    resample_ds = (
        creditcard_ds.unbatch()
        .rejection_resample(class_func, target_dist=[0.5, 0.5], initial_dist=fractions)
        .batch(10)
    )
    balanced_ds = resample_ds.map(lambda extra_label, features_and_label: features_and_label)
    resampled = [labels for _, labels in elements(balanced_ds.take(10))]
    # random draws differ from TF's: labels by dtype, shape and value range
    return [fractions, data.summary(resampled)]


# ---- tensorflow/docs site/en/tutorials/load_data/tfrecord.ipynb ("Reading a TFRecord file Using
# tf.data"); the file is the tutorial's four features, written as its serialize_example writes them -----


def tfrecord_parse_function():  # the tutorial's feature_description and _parse_function
    feature_description = {
        "feature0": tf.io.FixedLenFeature([], tf.int64, default_value=0),
        "feature1": tf.io.FixedLenFeature([], tf.int64, default_value=0),
        "feature2": tf.io.FixedLenFeature([], tf.string, default_value=""),
        "feature3": tf.io.FixedLenFeature([], tf.float32, default_value=0.0),
    }

    def _parse_function(example_proto):
        # Parse the input `tf.train.Example` proto using the dictionary above.
        return tf.io.parse_single_example(example_proto, feature_description)

    return _parse_function


def docs_tfrecord_read(tmp) -> Any:
    _parse_function = tfrecord_parse_function()
    filename = data.tf_records_tutorial(os.path.join(tmp, "test.tfrecord"), 12)
    filenames = [filename]
    raw_dataset = tf.data.TFRecordDataset(filenames)
    raw = elements(raw_dataset.take(10))
    parsed_dataset = raw_dataset.map(_parse_function)
    return [raw, elements(parsed_dataset.take(10))]


# The tutorial's writing half: `.numpy()` on py_function's result and on its arguments.


def _bytes_feature(value):
    """Returns a bytes_list from a string / byte."""
    if isinstance(value, type(tf.constant(0))):
        value = value.numpy()  # BytesList won't unpack a string from an EagerTensor.
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def _float_feature(value):
    """Returns a float_list from a float / double."""
    return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))


def _int64_feature(value):
    """Returns an int64_list from a bool / enum / int / uint."""
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def docs_tfrecord_write(tmp) -> Any:
    @tf.py_function(Tout=tf.string)
    def serialize_example(feature0, feature1, feature2, feature3):
        feature = {
            "feature0": _int64_feature(feature0),
            "feature1": _int64_feature(feature1),
            "feature2": _bytes_feature(feature2),
            "feature3": _float_feature(feature3),
        }
        example_proto = tf.train.Example(features=tf.train.Features(feature=feature))
        return example_proto.SerializeToString()

    n_observations = 12
    feature0 = np.arange(n_observations) % 2 == 0
    feature1 = np.arange(n_observations) % 5
    strings = np.array([b"cat", b"dog", b"chicken", b"horse", b"goat"])
    feature2 = strings[feature1]
    feature3 = np.arange(n_observations) * 0.37 - 1
    filename = os.path.join(tmp, "test.tfrecord")
    with tf.io.TFRecordWriter(filename) as writer:
        for i in range(n_observations):
            example = serialize_example(feature0[i], feature1[i], feature2[i], feature3[i])
            writer.write(example.numpy())
    return elements(tf.data.TFRecordDataset([filename]).map(tfrecord_parse_function()))


# ---- tensorflow/docs site/en/tutorials/load_data/images.ipynb ("Using tf.data for finer control") -----


def docs_load_images(tmp) -> Any:
    data_dir = pathlib.Path(tmp) / "flower_photos"  # tf.keras.utils.get_file(..., untar=True)
    for k, name in enumerate(["daisy", "roses", "tulips"]):
        (data_dir / name).mkdir(parents=True)
        for i in range(3):
            pixels = data._pixels(1, 14 + i, 17, salt=40 * k + i)[0]
            (data_dir / name / f"{i}.jpg").write_bytes(data._jpeg(pixels))
    (data_dir / "LICENSE.txt").write_text("CC-BY")
    image_count = len(list(data_dir.glob("*/*.jpg")))
    batch_size = 4
    img_height = 6
    img_width = 8
    AUTOTUNE = tf.data.AUTOTUNE  # noqa: N806

    list_ds = tf.data.Dataset.list_files(str(data_dir / "*/*"), shuffle=False)
    list_ds = list_ds.shuffle(image_count, reshuffle_each_iteration=False)
    class_names = np.array(sorted([item.name for item in data_dir.glob("*") if item.name != "LICENSE.txt"]))
    val_size = int(image_count * 0.2)
    train_ds = list_ds.skip(val_size)
    val_ds = list_ds.take(val_size)
    out = [int(tf.data.experimental.cardinality(train_ds)), int(tf.data.experimental.cardinality(val_ds))]

    def get_label(file_path):
        # Convert the path to a list of path components
        parts = tf.strings.split(file_path, os.path.sep)
        # The second to last is the class-directory
        one_hot = parts[-2] == class_names
        # Integer encode the label
        return tf.argmax(one_hot)

    def decode_img(img):
        # Convert the compressed string to a 3D uint8 tensor
        img = tf.io.decode_jpeg(img, channels=3)
        # Resize the image to the desired size
        return tf.image.resize(img, [img_height, img_width])

    def process_path(file_path):
        label = get_label(file_path)
        # Load the raw data from the file as a string
        img = tf.io.read_file(file_path)
        img = decode_img(img)
        return img, label

    # Set `num_parallel_calls` so multiple images are loaded/processed in parallel.
    train_ds = train_ds.map(process_path, num_parallel_calls=AUTOTUNE)
    val_ds = val_ds.map(process_path, num_parallel_calls=AUTOTUNE)

    def configure_for_performance(ds):
        ds = ds.cache()
        ds = ds.shuffle(buffer_size=1000)
        ds = ds.batch(batch_size)
        ds = ds.prefetch(buffer_size=AUTOTUNE)
        return ds

    train_ds = configure_for_performance(train_ds)
    val_ds = configure_for_performance(val_ds)
    train = elements(train_ds)
    val = elements(val_ds)
    out.append([len(batch[1]) for batch in train])
    out.append(unordered_rows(train + val))  # the split is random; train and val together are every image
    return out


# ---- tensorflow/docs site/en/tutorials/load_data/csv.ipynb ("Using tf.data" onwards) ------------------


def make_images(features):
    image = [None] * 400
    new_feats = {}

    for name, value in features.items():
        match = re.match(r"r(\d+)c(\d+)", name)
        if match:
            image[int(match.group(1)) * 20 + int(match.group(2))] = value
        else:
            new_feats[name] = value

    image = tf.stack(image, axis=0)
    image = tf.reshape(image, [20, 20, -1])
    new_feats["image"] = image

    return new_feats


def _fonts(tmp) -> pathlib.Path:  # fonts.zip, extracted: one CSV per font, a 20x20 glyph per row
    fonts = pathlib.Path(tmp) / "fonts"
    fonts.mkdir()
    pixels = [f"r{r}c{c}" for r in range(20) for c in range(20)]
    header = ",".join(["font", "fontVariant", "m_label", "strength", "italic", *pixels])
    for k, font in enumerate(["AGENCY", "ARIAL", "BAHNSCHRIFT"]):
        rows = [header]
        for i in range(3):
            values = [str((r * 20 + c + 17 * i + 5 * k) % 256) for r in range(20) for c in range(20)]
            rows.append(",".join([font, f"{font} FB", str(65 + i), f"0.{4 + k}", str(i % 2), *values]))
        (fonts / f"{font}.csv").write_text("\n".join(rows) + "\n")
    return fonts


def font_files_interleave(font_column_types):
    font_files = tf.data.Dataset.list_files("fonts/*.csv")

    def make_font_csv_ds(path):
        return tf.data.experimental.CsvDataset(path, record_defaults=font_column_types, header=True)

    font_rows = font_files.interleave(make_font_csv_ds, cycle_length=3)
    return font_rows


def docs_load_csv_font_rows(tmp) -> Any:
    # the tutorial's loop over font_rows: `.numpy()` on the elements
    with contextlib.chdir(tmp):
        _fonts(tmp)
        font_rows = font_files_interleave([str(), str()] + [float()] * 403)  # noqa: UP018
        fonts_dict = {"font_name": [], "character": []}

        for row in font_rows.take(10):
            fonts_dict["font_name"].append(row[0].numpy().decode())
            fonts_dict["character"].append(chr(int(row[2].numpy())))
        return sorted(zip(fonts_dict["font_name"], fonts_dict["character"]))


FONT_KEYS = ("font", "fontVariant", "m_label", "strength", "italic", "r0c0", "r7c13", "r19c19")  # of 405


def docs_load_csv(tmp) -> Any:
    with contextlib.chdir(tmp):  # the source reads and writes files relative to its directory
        return _docs_load_csv(tmp)


def _docs_load_csv(tmp) -> Any:
    pd = _pandas()  # the tutorial's `import pandas as pd`

    out = []
    titanic_file_path = _titanic_csv(pathlib.Path(tmp) / "train.csv", 12)
    titanic = pd.read_csv(titanic_file_path)
    titanic_features = titanic.copy()
    titanic_labels = titanic_features.pop("survived")
    titanic_features_dict = {name: np.array(value) for name, value in titanic_features.items()}

    def slices(features):
        for i in itertools.count():
            # For each feature take index `i`
            example = {name: values[i] for name, values in features.items()}
            yield example

    out.append(next(slices(titanic_features_dict)))
    features_ds = tf.data.Dataset.from_tensor_slices(titanic_features_dict)
    out.append(elements(features_ds.take(1)))
    titanic_ds = tf.data.Dataset.from_tensor_slices((titanic_features_dict, titanic_labels))
    titanic_batches = titanic_ds.shuffle(len(titanic_labels)).batch(32)
    out.append(unordered_rows(elements(titanic_batches)))

    titanic_csv_ds = tf.data.experimental.make_csv_dataset(
        titanic_file_path,
        batch_size=5,  # Artificially small to make examples easier to show.
        label_name="survived",
        num_epochs=1,
        ignore_errors=True,
    )
    out.append(unordered_rows(elements(titanic_csv_ds)))

    traffic_volume_csv_gz = os.path.join(tmp, "Metro_Interstate_Traffic_Volume.csv.gz")
    with gzip.open(traffic_volume_csv_gz, "wt") as f:
        f.write("holiday,temp,rain_1h,weather_main,date_time,traffic_volume\n")
        f.writelines(
            f"None,{280 + i / 10:.2f},0.0,Clouds,2012-10-02 {i % 24:02d}:00:00,{5000 + i}\n"
            for i in range(40)
        )
    traffic_volume_csv_gz_ds = tf.data.experimental.make_csv_dataset(
        traffic_volume_csv_gz,
        batch_size=16,
        label_name="traffic_volume",
        num_epochs=1,
        compression_type="GZIP",
    )
    out.append(unordered_rows(elements(traffic_volume_csv_gz_ds)))
    out.append(unordered_rows(elements(traffic_volume_csv_gz_ds.cache().shuffle(1000))))
    snapshotting = traffic_volume_csv_gz_ds.snapshot(os.path.join(tmp, "titanic.tfsnap")).shuffle(1000)
    out.append(unordered_rows(elements(snapshotting)))

    _fonts(tmp)
    fonts_ds = tf.data.experimental.make_csv_dataset(
        file_pattern="fonts/*.csv",
        batch_size=10,
        num_epochs=1,
        num_parallel_reads=20,
        shuffle_buffer_size=10000,
    )
    font_batches = elements(fonts_ds)
    out.append([len(batch["font"]) for batch in font_batches])
    out.append(unordered_rows([{k: batch[k] for k in FONT_KEYS} for batch in font_batches]))
    fonts_image_ds = fonts_ds.map(make_images)
    images = [
        {"m_label": b["m_label"], "image": np.moveaxis(b["image"], -1, 0)} for b in elements(fonts_image_ds)
    ]
    out.append(unordered_rows(images))  # make_images stacks the batch last: rows are image[..., k]

    text = pathlib.Path(titanic_file_path).read_text()
    lines = text.split("\n")[1:-1]

    all_strings = [str()] * 10  # noqa: UP018 (the tutorial's spelling)
    features = tf.io.decode_csv(lines, record_defaults=all_strings)
    out.append([np.asarray(f) for f in features])
    titanic_types = [int(), str(), float(), int(), int(), float(), str(), str(), str(), str()]  # noqa: UP018
    features = tf.io.decode_csv(lines, record_defaults=titanic_types)
    out.append([np.asarray(f) for f in features])

    simple_titanic = tf.data.experimental.CsvDataset(
        titanic_file_path, record_defaults=titanic_types, header=True
    )
    out.append(elements(simple_titanic.take(3)))

    def decode_titanic_line(line):
        return tf.io.decode_csv(line, titanic_types)

    manual_titanic = (
        # Load the lines of text
        tf.data.TextLineDataset(titanic_file_path)
        # Skip the header row.
        .skip(1)
        # Decode the line.
        .map(decode_titanic_line)
    )
    out.append(elements(manual_titanic.take(3)))

    font_line = pathlib.Path("fonts/AGENCY.csv").read_text().splitlines()[1]
    num_font_columns = len(font_line.split(","))
    font_column_types = [str(), str()] + [float()] * (num_font_columns - 2)  # noqa: UP018
    font_csvs = sorted(str(p) for p in pathlib.Path("fonts").glob("*.csv"))
    simple_font_ds = tf.data.experimental.CsvDataset(
        font_csvs, record_defaults=font_column_types, header=True
    )
    out.append([row[0] for row in elements(simple_font_ds)])

    font_rows = font_files_interleave(font_column_types)
    out.append(data.unordered([(*row[:6], row[-1]) for row in elements(font_rows.take(9))]))  # 7 of 405

    BATCH_SIZE = 2  # noqa: N806 (2048 in the tutorial)
    fonts_files = tf.data.Dataset.list_files("fonts/*.csv")
    fonts_lines = fonts_files.interleave(
        lambda fname: tf.data.TextLineDataset(fname).skip(1), cycle_length=100
    ).batch(BATCH_SIZE)
    fonts_fast = fonts_lines.map(lambda x: tf.io.decode_csv(x, record_defaults=font_column_types))
    out.append(unordered_rows([(*b[:6], b[-1]) for b in elements(fonts_fast)]))  # 7 of 405 columns
    return out


# ---- tensorflow/models official/vision/dataloaders/tf_example_decoder.py (TfExampleDecoder) --------------
# _decode_image calls `image.set_shape(...)`, a tf.Tensor method (this module's import).


def _generate_source_id(image_bytes):
    # Hashing using 22 bits since float32 has only 23 mantissa bits.
    return tf.strings.as_string(tf.strings.to_hash_bucket_fast(image_bytes, 2**22 - 1))


class TfExampleDecoder:  # decoder.Decoder: an abstract base with `decode`
    """Tensorflow Example proto decoder."""

    def __init__(
        self,
        include_mask=False,
        regenerate_source_id=False,
        mask_binarize_threshold=None,
        attribute_names=None,
    ):
        self._include_mask = include_mask
        self._regenerate_source_id = regenerate_source_id
        self._keys_to_features = {
            "image/encoded": tf.io.FixedLenFeature((), tf.string),
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
        attribute_names = attribute_names or []
        for attr_name in attribute_names:
            self._keys_to_features[f"image/object/attribute/{attr_name}"] = tf.io.VarLenFeature(tf.int64)
        self._attribute_names = attribute_names

        self._mask_binarize_threshold = mask_binarize_threshold
        if include_mask:
            self._keys_to_features.update({"image/object/mask": tf.io.VarLenFeature(tf.string)})
        if not regenerate_source_id:
            self._keys_to_features.update({"image/source_id": tf.io.FixedLenFeature((), tf.string)})

    def _decode_image(self, parsed_tensors):
        """Decodes the image and set its static shape."""
        image = tf.io.decode_image(parsed_tensors["image/encoded"], channels=3)
        image.set_shape([None, None, 3])
        return image

    def _decode_boxes(self, parsed_tensors):
        """Concat box coordinates in the format of [ymin, xmin, ymax, xmax]."""
        xmin = parsed_tensors["image/object/bbox/xmin"]
        xmax = parsed_tensors["image/object/bbox/xmax"]
        ymin = parsed_tensors["image/object/bbox/ymin"]
        ymax = parsed_tensors["image/object/bbox/ymax"]
        return tf.stack([ymin, xmin, ymax, xmax], axis=-1)

    def _decode_classes(self, parsed_tensors):
        return parsed_tensors["image/object/class/label"]

    def _decode_attributes(self, parsed_tensors):
        attribute_dict = dict()
        for attr_name in self._attribute_names:
            attr_array = parsed_tensors[f"image/object/attribute/{attr_name}"]
            attribute_dict[attr_name] = tf.expand_dims(attr_array, -1)
        return attribute_dict

    def _decode_areas(self, parsed_tensors):
        xmin = parsed_tensors["image/object/bbox/xmin"]
        xmax = parsed_tensors["image/object/bbox/xmax"]
        ymin = parsed_tensors["image/object/bbox/ymin"]
        ymax = parsed_tensors["image/object/bbox/ymax"]
        height = tf.cast(parsed_tensors["image/height"], dtype=tf.float32)
        width = tf.cast(parsed_tensors["image/width"], dtype=tf.float32)
        return tf.cond(
            tf.greater(tf.shape(parsed_tensors["image/object/area"])[0], 0),
            lambda: parsed_tensors["image/object/area"],
            lambda: (xmax - xmin) * (ymax - ymin) * height * width,
        )

    def decode(self, serialized_example):
        """Decode the serialized example (without the include_mask branch, not used here)."""
        parsed_tensors = tf.io.parse_single_example(
            serialized=serialized_example, features=self._keys_to_features
        )
        for k in parsed_tensors:
            if isinstance(parsed_tensors[k], tf.SparseTensor):
                if parsed_tensors[k].dtype == tf.string:
                    parsed_tensors[k] = tf.sparse.to_dense(parsed_tensors[k], default_value="")
                else:
                    parsed_tensors[k] = tf.sparse.to_dense(parsed_tensors[k], default_value=0)

        if self._regenerate_source_id:
            source_id = _generate_source_id(parsed_tensors["image/encoded"])
        else:
            source_id = tf.cond(
                tf.greater(tf.strings.length(parsed_tensors["image/source_id"]), 0),
                lambda: parsed_tensors["image/source_id"],
                lambda: _generate_source_id(parsed_tensors["image/encoded"]),
            )
        image = self._decode_image(parsed_tensors)
        boxes = self._decode_boxes(parsed_tensors)
        classes = self._decode_classes(parsed_tensors)
        areas = self._decode_areas(parsed_tensors)

        decode_image_shape = tf.logical_or(
            tf.equal(parsed_tensors["image/height"], -1), tf.equal(parsed_tensors["image/width"], -1)
        )
        image_shape = tf.cast(tf.shape(image), dtype=tf.int64)

        parsed_tensors["image/height"] = tf.where(
            decode_image_shape, image_shape[0], parsed_tensors["image/height"]
        )
        parsed_tensors["image/width"] = tf.where(
            decode_image_shape, image_shape[1], parsed_tensors["image/width"]
        )

        is_crowds = tf.cond(
            tf.greater(tf.shape(parsed_tensors["image/object/is_crowd"])[0], 0),
            lambda: tf.cast(parsed_tensors["image/object/is_crowd"], dtype=tf.bool),
            lambda: tf.zeros_like(classes, dtype=tf.bool),
        )

        decoded_tensors = {
            "source_id": source_id,
            "image": image,
            "height": parsed_tensors["image/height"],
            "width": parsed_tensors["image/width"],
            "groundtruth_classes": classes,
            "groundtruth_is_crowd": is_crowds,
            "groundtruth_area": areas,
            "groundtruth_boxes": boxes,
        }
        return decoded_tensors


def official_vision_tf_example_decoder(tmp) -> Any:
    decoder = TfExampleDecoder()
    dataset = tf.data.TFRecordDataset(repo_data.coco_records(tmp)).map(decoder.decode)
    return elements(dataset)


PIPELINES = {
    "docs_data_resampling_count": docs_data_resampling_count,
    "docs_data_sampling": docs_data_sampling,
    "docs_data_resampling": docs_data_resampling,
    "docs_tfrecord_read": docs_tfrecord_read,
    "docs_tfrecord_write": docs_tfrecord_write,
    "docs_load_images": docs_load_images,
    "docs_load_csv_font_rows": docs_load_csv_font_rows,
    "docs_load_csv": docs_load_csv,
    "official_vision_tf_example_decoder": official_vision_tf_example_decoder,
}
TOLERANCE: dict[str, float] = {}
