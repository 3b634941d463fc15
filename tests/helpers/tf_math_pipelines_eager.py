"""Ported public pipelines whose functions use ``tf.Tensor``'s methods on their values (``.numpy()``,
``set_shape``, ``get_shape().merge_with``), TensorFlow's element dtypes (a Python int state is int32,
a string tensor compared with a numpy ``str`` array) or Keras preprocessing in a map (``StringLookup``,
``preprocess_input``): they port by changing the import to ``import headrace.compat.eager as tf``
(issue 23; docs/porting.md). Sources as in the modules they came
from (tests/helpers/tf_math_pipelines_guides.py and tf_math_pipelines_repos.py): the functions below
are the sources' own, comments name repository and path; only what feeds them changed.

``tools/record_tf_math_pipelines.py pipelines_eager.json`` rebinds ``tf`` to TensorFlow and records
what tf.data yields (docs_load_csv needs pandas beside TensorFlow, see the guides module; TensorFlow
2.21 itself fails the TFRecord tutorial's writing half under numpy 2, numpy.bool in an Int64List, so
the fixture was recorded in a venv with numpy 1.26: ``pip install tensorflow-cpu==2.21.0 "numpy<2"
pandas pillow``);
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


# ---- tensorflow/docs site/en/tutorials/distribute/input.ipynb (sharding options, a dataset_fn called
# with its tf.distribute.InputContext) and tutorials/distribute/multi_worker_with_keras.ipynb
# (mnist_setup.mnist_dataset) ----------------------------------------------------------------------------


def mnist_dataset(batch_size):
    (x_train, y_train) = data.images(40, 4, 4)  # tf.keras.datasets.mnist.load_data()
    # The `x` arrays are in uint8 and have values in the [0, 255] range.
    # You need to convert them to float32 with values in the [0, 1] range.
    x_train = x_train / np.float32(255)
    y_train = y_train.astype(np.int64)
    train_dataset = (
        tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(60000).repeat().batch(batch_size)
    )
    return train_dataset


def docs_distribute_input(tmp) -> Any:
    global_batch_size = 16
    dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(64).batch(16)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    dataset = dataset.with_options(options)
    out = [elements(dataset)]

    def dataset_fn(input_context):
        batch_size = input_context.get_per_replica_batch_size(global_batch_size)
        dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(64).batch(16)
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        dataset = dataset.batch(batch_size)
        dataset = dataset.prefetch(2)  # This prefetches 2 batches per device.
        return dataset

    # mirrored_strategy.distribute_datasets_from_function(dataset_fn) calls it once per input pipeline
    for pipeline_id in range(2):
        context = tf.distribute.InputContext(
            num_input_pipelines=2, input_pipeline_id=pipeline_id, num_replicas_in_sync=4
        )
        out.append(elements(dataset_fn(context)))

    def dataset_fn_strings(input_context):
        # a tf.data.Dataset
        dataset = tf.data.Dataset.from_tensor_slices(["a", "c", "e"]).repeat()

        # Custom your batching, sharding, prefetching, etc.
        global_batch_size = 4
        batch_size = input_context.get_per_replica_batch_size(global_batch_size)
        dataset = dataset.batch(batch_size)
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return dataset  # then .map(preprocess_with_kpl): see docs_distribute_input_kpl

    context = tf.distribute.InputContext(num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=2)
    out.append(elements(dataset_fn_strings(context).take(3)))

    dataset_size = 24
    batch_size = 6
    dataset = tf.data.Dataset.range(dataset_size).enumerate().batch(batch_size)
    out.append(elements(dataset))

    train_dataset = mnist_dataset(16)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    train_dataset = train_dataset.with_options(options)
    first = elements(train_dataset.take(5))  # 80 of a repeated 40: two epochs
    out.append(sorted(np.concatenate([y for _, y in first]).tolist()))
    out.append(data.summary(first))
    return out


def docs_distribute_input_kpl(tmp) -> Any:
    # the tutorial's dataset_fn with its Keras preprocessing layer (tf.keras.layers.StringLookup)
    vocab = ["a", "b", "c", "d", "f"]
    layer = tf.keras.layers.StringLookup(vocabulary=vocab)

    def dataset_fn(input_context):
        # a tf.data.Dataset
        dataset = tf.data.Dataset.from_tensor_slices(["a", "c", "e"]).repeat()

        # Custom your batching, sharding, prefetching, etc.
        global_batch_size = 4
        batch_size = input_context.get_per_replica_batch_size(global_batch_size)
        dataset = dataset.batch(batch_size)
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)

        # Apply the preprocessing layer(s) to the tf.data.Dataset
        def preprocess_with_kpl(input):  # noqa: A002 (the tutorial's name)
            return layer(input)

        processed_ds = dataset.map(preprocess_with_kpl)
        return processed_ds

    context = tf.distribute.InputContext(num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=2)
    return elements(dataset_fn(context).take(3))


# ---- keras-team/keras-io examples/vision/retinanet.py (the input pipeline) -------------------------------
# LabelEncoder.encode_batch calls tf.keras.applications.resnet.preprocess_input (this module's import).


def swap_xy(boxes):
    """Swaps order the of x and y coordinates of the boxes."""
    return tf.stack([boxes[:, 1], boxes[:, 0], boxes[:, 3], boxes[:, 2]], axis=-1)


def convert_to_xywh(boxes):
    """Changes the box format to center, width and height."""
    return tf.concat([(boxes[..., :2] + boxes[..., 2:]) / 2.0, boxes[..., 2:] - boxes[..., :2]], axis=-1)


def convert_to_corners(boxes):
    """Changes the box format to corner coordinates"""
    return tf.concat([boxes[..., :2] - boxes[..., 2:] / 2.0, boxes[..., :2] + boxes[..., 2:] / 2.0], axis=-1)


def compute_iou(boxes1, boxes2):
    """Computes pairwise IOU matrix for given two sets of boxes"""
    boxes1_corners = convert_to_corners(boxes1)
    boxes2_corners = convert_to_corners(boxes2)
    lu = tf.maximum(boxes1_corners[:, None, :2], boxes2_corners[:, :2])
    rd = tf.minimum(boxes1_corners[:, None, 2:], boxes2_corners[:, 2:])
    intersection = tf.maximum(0.0, rd - lu)
    intersection_area = intersection[:, :, 0] * intersection[:, :, 1]
    boxes1_area = boxes1[:, 2] * boxes1[:, 3]
    boxes2_area = boxes2[:, 2] * boxes2[:, 3]
    union_area = tf.maximum(boxes1_area[:, None] + boxes2_area - intersection_area, 1e-8)
    return tf.clip_by_value(intersection_area / union_area, 0.0, 1.0)


class AnchorBox:
    """Generates anchor boxes."""

    def __init__(self):
        self.aspect_ratios = [0.5, 1.0, 2.0]
        self.scales = [2**x for x in [0, 1 / 3, 2 / 3]]

        self._num_anchors = len(self.aspect_ratios) * len(self.scales)
        self._strides = [2**i for i in range(3, 8)]
        self._areas = [x**2 for x in [32.0, 64.0, 128.0, 256.0, 512.0]]
        self._anchor_dims = self._compute_dims()

    def _compute_dims(self):
        """Computes anchor box dimensions for all ratios and scales at all levels of the feature pyramid."""
        anchor_dims_all = []
        for area in self._areas:
            anchor_dims = []
            for ratio in self.aspect_ratios:
                anchor_height = tf.math.sqrt(area / ratio)
                anchor_width = area / anchor_height
                dims = tf.reshape(tf.stack([anchor_width, anchor_height], axis=-1), [1, 1, 2])
                for scale in self.scales:
                    anchor_dims.append(scale * dims)
            anchor_dims_all.append(tf.stack(anchor_dims, axis=-2))
        return anchor_dims_all

    def _get_anchors(self, feature_height, feature_width, level):
        """Generates anchor boxes for a given feature map size and level"""
        rx = tf.range(feature_width, dtype=tf.float32) + 0.5
        ry = tf.range(feature_height, dtype=tf.float32) + 0.5
        centers = tf.stack(tf.meshgrid(rx, ry), axis=-1) * self._strides[level - 3]
        centers = tf.expand_dims(centers, axis=-2)
        centers = tf.tile(centers, [1, 1, self._num_anchors, 1])
        dims = tf.tile(self._anchor_dims[level - 3], [feature_height, feature_width, 1, 1])
        anchors = tf.concat([centers, dims], axis=-1)
        return tf.reshape(anchors, [feature_height * feature_width * self._num_anchors, 4])

    def get_anchors(self, image_height, image_width):
        """Generates anchor boxes for all the feature maps of the feature pyramid."""
        anchors = [
            self._get_anchors(tf.math.ceil(image_height / 2**i), tf.math.ceil(image_width / 2**i), i)
            for i in range(3, 8)
        ]
        return tf.concat(anchors, axis=0)


def random_flip_horizontal(image, boxes):
    """Flips image and boxes horizontally with 50% chance"""
    if tf.random.uniform(()) > 0.5:
        image = tf.image.flip_left_right(image)
        boxes = tf.stack([1 - boxes[:, 2], boxes[:, 1], 1 - boxes[:, 0], boxes[:, 3]], axis=-1)
    return image, boxes


def resize_and_pad_image(image, min_side=800.0, max_side=1333.0, jitter=[640, 1024], stride=128.0):  # noqa: B006
    """Resizes and pads image while preserving aspect ratio."""
    image_shape = tf.cast(tf.shape(image)[:2], dtype=tf.float32)
    if jitter is not None:
        min_side = tf.random.uniform((), jitter[0], jitter[1], dtype=tf.float32)
    ratio = min_side / tf.reduce_min(image_shape)
    if ratio * tf.reduce_max(image_shape) > max_side:
        ratio = max_side / tf.reduce_max(image_shape)
    image_shape = ratio * image_shape
    image = tf.image.resize(image, tf.cast(image_shape, dtype=tf.int32))
    padded_image_shape = tf.cast(tf.math.ceil(image_shape / stride) * stride, dtype=tf.int32)
    image = tf.image.pad_to_bounding_box(image, 0, 0, padded_image_shape[0], padded_image_shape[1])
    return image, image_shape, ratio


def preprocess_data(sample):
    """Applies preprocessing step to a single sample"""
    image = sample["image"]
    bbox = swap_xy(sample["objects"]["bbox"])
    class_id = tf.cast(sample["objects"]["label"], dtype=tf.int32)

    image, bbox = random_flip_horizontal(image, bbox)
    image, image_shape, _ = resize_and_pad_image(image)

    bbox = tf.stack(
        [
            bbox[:, 0] * image_shape[1],
            bbox[:, 1] * image_shape[0],
            bbox[:, 2] * image_shape[1],
            bbox[:, 3] * image_shape[0],
        ],
        axis=-1,
    )
    bbox = convert_to_xywh(bbox)
    return image, bbox, class_id


class LabelEncoder:
    """Transforms the raw labels into targets for training."""

    def __init__(self):
        self._anchor_box = AnchorBox()
        self._box_variance = tf.convert_to_tensor([0.1, 0.1, 0.2, 0.2], dtype=tf.float32)

    def _match_anchor_boxes(self, anchor_boxes, gt_boxes, match_iou=0.5, ignore_iou=0.4):
        """Matches ground truth boxes to anchor boxes based on IOU."""
        iou_matrix = compute_iou(anchor_boxes, gt_boxes)
        max_iou = tf.reduce_max(iou_matrix, axis=1)
        matched_gt_idx = tf.argmax(iou_matrix, axis=1)
        positive_mask = tf.greater_equal(max_iou, match_iou)
        negative_mask = tf.less(max_iou, ignore_iou)
        ignore_mask = tf.logical_not(tf.logical_or(positive_mask, negative_mask))
        return (
            matched_gt_idx,
            tf.cast(positive_mask, dtype=tf.float32),
            tf.cast(ignore_mask, dtype=tf.float32),
        )

    def _compute_box_target(self, anchor_boxes, matched_gt_boxes):
        """Transforms the ground truth boxes into targets for training"""
        box_target = tf.concat(
            [
                (matched_gt_boxes[:, :2] - anchor_boxes[:, :2]) / anchor_boxes[:, 2:],
                tf.math.log(matched_gt_boxes[:, 2:] / anchor_boxes[:, 2:]),
            ],
            axis=-1,
        )
        box_target = box_target / self._box_variance
        return box_target

    def _encode_sample(self, image_shape, gt_boxes, cls_ids):
        """Creates box and classification targets for a single sample"""
        anchor_boxes = self._anchor_box.get_anchors(image_shape[1], image_shape[2])
        cls_ids = tf.cast(cls_ids, dtype=tf.float32)
        matched_gt_idx, positive_mask, ignore_mask = self._match_anchor_boxes(anchor_boxes, gt_boxes)
        matched_gt_boxes = tf.gather(gt_boxes, matched_gt_idx)
        box_target = self._compute_box_target(anchor_boxes, matched_gt_boxes)
        matched_gt_cls_ids = tf.gather(cls_ids, matched_gt_idx)
        cls_target = tf.where(tf.not_equal(positive_mask, 1.0), -1.0, matched_gt_cls_ids)
        cls_target = tf.where(tf.equal(ignore_mask, 1.0), -2.0, cls_target)
        cls_target = tf.expand_dims(cls_target, axis=-1)
        label = tf.concat([box_target, cls_target], axis=-1)
        return label

    def encode_batch(self, batch_images, gt_boxes, cls_ids):
        """Creates box and classification targets for a batch"""
        images_shape = tf.shape(batch_images)
        batch_size = images_shape[0]

        labels = tf.TensorArray(dtype=tf.float32, size=batch_size, dynamic_size=True)
        for i in range(batch_size):
            label = self._encode_sample(images_shape, gt_boxes[i], cls_ids[i])
            labels = labels.write(i, label)
        batch_images = tf.keras.applications.resnet.preprocess_input(batch_images)
        return batch_images, labels.stack()


def keras_io_retinanet_input(tmp) -> Any:
    # tfds.load("coco/2017") in the example: its features (uint8 image, normalised [ymin, xmin, ymax, xmax]
    # boxes, int64 labels) from a generator of small images
    def coco():
        for i in range(5):
            n = i % 3 + 1
            lo = (np.arange(n * 2, dtype=np.float32).reshape(n, 2) + i) / 20
            boxes = np.concatenate([lo, lo + np.float32(0.3)], axis=1)
            image = np.full((12 + i, 16, 3), 10 * i, np.uint8)
            yield {"image": image, "objects": {"bbox": boxes, "label": np.arange(n, dtype=np.int64) + i}}

    train_dataset = tf.data.Dataset.from_generator(
        coco,
        output_signature={
            "image": tf.TensorSpec([None, None, 3], tf.uint8),
            "objects": {
                "bbox": tf.TensorSpec([None, 4], tf.float32),
                "label": tf.TensorSpec([None], tf.int64),
            },
        },
    )
    label_encoder = LabelEncoder()
    batch_size = 2
    autotune = tf.data.experimental.AUTOTUNE
    train_dataset = train_dataset.map(preprocess_data, num_parallel_calls=autotune)
    train_dataset = train_dataset.shuffle(8 * batch_size)
    train_dataset = train_dataset.padded_batch(
        batch_size=batch_size, padding_values=(0.0, 1e-8, -1), drop_remainder=True
    )
    train_dataset = train_dataset.map(label_encoder.encode_batch, num_parallel_calls=autotune)
    train_dataset = train_dataset.apply(tf.data.experimental.ignore_errors())
    train_dataset = train_dataset.prefetch(autotune)
    # sizes are drawn at random (the resize jitter: headrace's draws, not TF's): compared by what holds
    # for any draw: dtypes, ranks, batch and channel sizes, sizes padded to the 128-pixel stride, and
    # one label row per anchor of the five pyramid levels (strides 8 to 128, 9 anchors each)
    out = []
    for images, labels in elements(train_dataset):
        _, height, width, channels = images.shape
        anchors = sum(-(-height // 2**i) * -(-width // 2**i) * 9 for i in range(3, 8))
        out.append(
            [str(images.dtype), images.ndim, len(images), channels, height % 128, width % 128]
            + [str(labels.dtype), labels.ndim, len(labels), labels.shape[2], labels.shape[1] == anchors]
        )
    return out


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
    "docs_distribute_input": docs_distribute_input,
    "docs_distribute_input_kpl": docs_distribute_input_kpl,
    "keras_io_retinanet_input": keras_io_retinanet_input,
}
TOLERANCE: dict[str, float] = {}
