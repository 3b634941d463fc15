"""Public tf.data input functions whose TensorFlow math runs UNCHANGED on headrace (issue 23): the functions
below are the sources' own (comments name repository and path), written as the source writes them under
``import headrace as tf``; only what feeds them changed (TFDS / Keras loaders and downloads became small
generated arrays and files) and sizes shrank so the fixtures stay small.

``tools/record_tf_math_pipelines.py`` rebinds this module's ``tf`` to TensorFlow, runs every pipeline, and
stores what tf.data yields in tests/data/tfops_fixtures/pipelines.json; ``tests/compat/test_pipelines_tf_math.py``
runs them on headrace and compares. TF1 sources (``import tensorflow.compat.v1 as tf``) are in
``tf1_math_pipelines.py``.
"""

from __future__ import annotations

import functools
import json
import os
import types
from pathlib import Path
from typing import Any

import headrace as tf  # the port: was `import tensorflow as tf`
from tests.helpers import pipeline_data as data


def elements(ds) -> list:
    return list(ds.as_numpy_iterator())


# ---- google-research/simclr tf2/data_util.py (preprocess_image, evaluation path) and tf2/data.py ------

CROP_PROPORTION = 0.875  # Standard for ImageNet.
FLAGS = types.SimpleNamespace(image_size=40, train_mode="finetune", color_jitter_strength=0.0)


def _compute_crop_shape(image_height, image_width, aspect_ratio, crop_proportion):
    image_width_float = tf.cast(image_width, tf.float32)
    image_height_float = tf.cast(image_height, tf.float32)

    def _requested_aspect_ratio_wider_than_image():
        crop_height = tf.cast(tf.math.rint(crop_proportion / aspect_ratio * image_width_float), tf.int32)
        crop_width = tf.cast(tf.math.rint(crop_proportion * image_width_float), tf.int32)
        return crop_height, crop_width

    def _image_wider_than_requested_aspect_ratio():
        crop_height = tf.cast(tf.math.rint(crop_proportion * image_height_float), tf.int32)
        crop_width = tf.cast(tf.math.rint(crop_proportion * aspect_ratio * image_height_float), tf.int32)
        return crop_height, crop_width

    return tf.cond(
        aspect_ratio > image_width_float / image_height_float,
        _requested_aspect_ratio_wider_than_image,
        _image_wider_than_requested_aspect_ratio,
    )


def center_crop(image, height, width, crop_proportion):
    shape = tf.shape(image)
    image_height = shape[0]
    image_width = shape[1]
    crop_height, crop_width = _compute_crop_shape(image_height, image_width, width / height, crop_proportion)
    offset_height = ((image_height - crop_height) + 1) // 2
    offset_width = ((image_width - crop_width) + 1) // 2
    image = tf.image.crop_to_bounding_box(image, offset_height, offset_width, crop_height, crop_width)

    image = tf.image.resize([image], [height, width], method=tf.image.ResizeMethod.BICUBIC)[0]

    return image


def preprocess_for_eval(image, height, width, crop=True):
    if crop:
        image = center_crop(image, height, width, crop_proportion=CROP_PROPORTION)
    image = tf.reshape(image, [height, width, 3])
    image = tf.clip_by_value(image, 0.0, 1.0)
    return image


def preprocess_image(image, height, width, is_training=False, color_jitter_strength=0.0, test_crop=True):
    image = tf.image.convert_image_dtype(image, dtype=tf.float32)
    if is_training:
        raise NotImplementedError("the training path draws random crops (not compared)")
    else:
        return preprocess_for_eval(image, height, width, test_crop)


def get_preprocess_fn(is_training, is_pretrain):
    if FLAGS.image_size <= 32:
        test_crop = False
    else:
        test_crop = True
    color_jitter_strength = FLAGS.color_jitter_strength if is_pretrain else 0.0
    return functools.partial(
        preprocess_image,
        height=FLAGS.image_size,
        width=FLAGS.image_size,
        is_training=is_training,
        color_jitter_strength=color_jitter_strength,
        test_crop=test_crop,
    )


def simclr_eval_input(tmp) -> Any:
    is_training = False
    batch_size = 3
    preprocess_fn_pretrain = get_preprocess_fn(is_training, is_pretrain=True)
    preprocess_fn_finetune = get_preprocess_fn(is_training, is_pretrain=False)
    num_classes = 10  # builder.info.features['label'].num_classes

    def map_fn(image, label):
        """Produces multiple transformations of the same batch."""
        if is_training and FLAGS.train_mode == "pretrain":
            xs = []
            for _ in range(2):  # Two transformations
                xs.append(preprocess_fn_pretrain(image))
            image = tf.concat(xs, -1)
        else:
            image = preprocess_fn_finetune(image)
        label = tf.one_hot(label, num_classes)
        return image, label

    dataset = tf.data.Dataset.from_tensor_slices(data.images(5, 44, 52))  # builder.as_dataset(as_supervised)
    dataset = dataset.map(map_fn, num_parallel_calls=tf.data.experimental.AUTOTUNE)
    dataset = dataset.batch(batch_size, drop_remainder=is_training)
    dataset = dataset.prefetch(tf.data.experimental.AUTOTUNE)
    return elements(dataset)


# ---- google-research/text-to-text-transfer-transformer t5/data/preprocessors.py -----------------------


def glue(x, benchmark_name, label_names, feature_names=None, id_key="idx"):
    feature_keys = feature_names or sorted(set(x.keys()).difference(["label", "idx"]))
    strs_to_join = []
    for key in feature_keys:
        strs_to_join.append(f"{key}:")
        strs_to_join.append(x[key])
    strs_to_join.insert(0, benchmark_name)
    label_name = tf.cond(
        tf.equal(x["label"], -1),
        lambda: tf.constant("<unk>"),
        lambda: tf.gather(label_names, x["label"]),
    )
    joined = tf.strings.join(strs_to_join, separator=" ")

    ex = {}

    if benchmark_name == "multirc":
        joined = tf.strings.regex_replace(joined, "<br>", " ")
        joined = tf.strings.regex_replace(joined, "<(/)?b>", "")

        ex["idx/paragraph"] = x["idx"]["paragraph"]
        ex["idx/question"] = x["idx"]["question"]
        ex["idx/answer"] = x["idx"]["answer"]
    else:
        if id_key:
            ex["idx"] = x[id_key]

    ex["inputs"] = joined
    ex["targets"] = label_name

    return ex


def t5_glue(tmp) -> Any:
    rte = tf.data.Dataset.from_tensor_slices(data.glue_rte())
    rte = rte.map(functools.partial(glue, benchmark_name="rte", label_names=["entailment", "not_entailment"]))
    multirc = tf.data.Dataset.from_tensor_slices(data.glue_multirc())
    multirc = multirc.map(
        functools.partial(
            glue,
            benchmark_name="multirc",
            label_names=["False", "True"],
            feature_names=["question", "answer", "paragraph"],
        )
    )
    return [elements(rte), elements(multirc)]


def stsb(x):
    strs_to_join = ["stsb sentence1:", x["sentence1"], "sentence2:", x["sentence2"]]
    label_string = tf.as_string(tf.round(x["label"] * 5) / 5, precision=1)
    joined = tf.strings.join(strs_to_join, separator=" ")
    return {"inputs": joined, "targets": label_string, "idx": x["idx"]}


def summarize(x, article_key, summary_key):
    strs_to_join = ["summarize:", x[article_key]]
    return {
        "inputs": tf.strings.join(strs_to_join, separator=" "),
        "targets": x[summary_key],
    }


def t5_stsb_and_summarize(tmp) -> Any:
    scores = tf.data.Dataset.from_tensor_slices(data.glue_stsb()).map(stsb)
    articles = tf.data.Dataset.from_tensor_slices(data.articles())
    articles = articles.map(functools.partial(summarize, article_key="article", summary_key="highlights"))
    return [elements(scores), elements(articles)]


def _pad_punctuation(text):
    """Adds spaces around punctuation."""
    # Add space around punctuation.
    text = tf.strings.regex_replace(text, r"([[:punct:]])", r" \1 ")
    # Collapse consecutive whitespace into one space.
    text = tf.strings.regex_replace(text, r"\s+", " ")
    return text


def _string_join(lst):
    # Join on space, but collapse consecutive spaces.
    out = tf.strings.join(lst, separator=" ")
    return tf.strings.regex_replace(out, r"\s+", " ")


def squad(x, include_context=True):
    a = _pad_punctuation(x["answers"]["text"])
    q = _pad_punctuation(x["question"])
    c = _pad_punctuation(x["context"])
    if include_context:
        inputs = _string_join(["question:", q, "context:", c])
    else:
        inputs = _string_join(["squad trivia question:", q])
    return {
        "inputs": inputs,
        "targets": a[0],
        "id": x["id"],
        "context": c,
        "question": q,
        "answers": a,
    }


def t5_squad(tmp) -> Any:
    ds = tf.data.Dataset.from_tensor_slices(data.squad())
    return [elements(ds.map(squad)), elements(ds.map(functools.partial(squad, include_context=False)))]


# ---- tensorflow/docs site/en/tutorials/audio/simple_audio.ipynb ---------------------------------------


def squeeze(audio, labels):
    audio = tf.squeeze(audio, axis=-1)
    return audio, labels


def get_spectrogram(waveform):
    # Convert the waveform to a spectrogram via a STFT.
    spectrogram = tf.signal.stft(waveform, frame_length=255, frame_step=128)
    # Obtain the magnitude of the STFT.
    spectrogram = tf.abs(spectrogram)
    # Add a `channels` dimension, so that the spectrogram can be used
    # as image-like input data with convolution layers (which expect
    # shape (`batch_size`, `height`, `width`, `channels`).
    spectrogram = spectrogram[..., tf.newaxis]
    return spectrogram


def make_spec_ds(ds):
    return ds.map(
        map_func=lambda audio, label: (get_spectrogram(audio), label), num_parallel_calls=tf.data.AUTOTUNE
    )


def docs_simple_audio(tmp) -> Any:
    # tf.keras.utils.audio_dataset_from_directory(batch_size=..., output_sequence_length=...) yields
    # batches of (audio [batch, samples, 1], label)
    train_ds = tf.data.Dataset.from_tensor_slices(data.waveforms(6, 1200)).batch(4)
    train_ds = train_ds.map(squeeze, tf.data.AUTOTUNE)
    test_ds = train_ds.shard(num_shards=2, index=0)
    test_spectrogram_ds = make_spec_ds(test_ds)
    return elements(test_spectrogram_ds.cache().prefetch(tf.data.AUTOTUNE))


# ---- tensorflow/docs site/en/tutorials/generative/pix2pix.ipynb (the test split) ---------------------

IMG_WIDTH = 24  # 256 in the tutorial; smaller keeps the fixture small
IMG_HEIGHT = 24


def load(image_file):
    # Read and decode an image file to a uint8 tensor
    image = tf.io.read_file(image_file)
    image = tf.io.decode_jpeg(image)

    # Split each image tensor into two tensors:
    # - one with a real building facade image
    # - one with an architecture label image
    w = tf.shape(image)[1]
    w = w // 2
    input_image = image[:, w:, :]
    real_image = image[:, :w, :]

    # Convert both images to float32 tensors
    input_image = tf.cast(input_image, tf.float32)
    real_image = tf.cast(real_image, tf.float32)

    return input_image, real_image


def resize(input_image, real_image, height, width):
    input_image = tf.image.resize(input_image, [height, width], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)
    real_image = tf.image.resize(real_image, [height, width], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)

    return input_image, real_image


def normalize(input_image, real_image):
    input_image = (input_image / 127.5) - 1
    real_image = (real_image / 127.5) - 1

    return input_image, real_image


def load_image_test(image_file):
    input_image, real_image = load(image_file)
    input_image, real_image = resize(input_image, real_image, IMG_HEIGHT, IMG_WIDTH)
    input_image, real_image = normalize(input_image, real_image)

    return input_image, real_image


def docs_pix2pix_test(tmp) -> Any:
    PATH = data.facade_jpegs(tmp)  # noqa: N806 (the tutorial's name)
    BATCH_SIZE = 1  # noqa: N806
    try:
        test_dataset = tf.data.Dataset.list_files(str(os.path.join(PATH, "test/*.jpg")))
    except tf.errors.InvalidArgumentError:
        test_dataset = tf.data.Dataset.list_files(str(os.path.join(PATH, "val/*.jpg")))
    test_dataset = test_dataset.map(load_image_test)
    test_dataset = test_dataset.batch(BATCH_SIZE)
    return data.unordered(elements(test_dataset))  # list_files shuffles: compare as a multiset


# ---- tensorflow/docs site/en/tutorials/images/segmentation.ipynb -------------------------------------


def normalize_image_and_mask(input_image, input_mask):  # the tutorial's `normalize`
    input_image = tf.cast(input_image, tf.float32) / 255.0
    input_mask -= 1
    return input_image, input_mask


def load_image(datapoint):
    input_image = tf.image.resize(datapoint["image"], (128, 128))
    input_mask = tf.image.resize(
        datapoint["segmentation_mask"],
        (128, 128),
        method=tf.image.ResizeMethod.NEAREST_NEIGHBOR,
    )

    input_image, input_mask = normalize_image_and_mask(input_image, input_mask)

    return input_image, input_mask


def add_sample_weights(image, label):
    # The weights for each class, with the constraint that:
    #     sum(class_weights) == 1.0
    class_weights = tf.constant([2.0, 2.0, 1.0])
    class_weights = class_weights / tf.reduce_sum(class_weights)

    # Create an image of `sample_weights` by using the label at each pixel as an
    # index into the `class weights` .
    sample_weights = tf.gather(class_weights, indices=tf.cast(label, tf.int32))

    return image, label, sample_weights


def docs_segmentation(tmp) -> Any:
    dataset = {
        "test": tf.data.Dataset.from_tensor_slices(data.pets(3, 20, 30))
    }  # tfds.load('oxford_iiit_pet')
    BATCH_SIZE = 2  # noqa: N806
    test_images = dataset["test"].map(load_image, num_parallel_calls=tf.data.AUTOTUNE)
    test_batches = test_images.batch(BATCH_SIZE)
    return elements(test_batches.map(add_sample_weights))


# ---- google-research/big_vision big_vision/pp/ops_general.py ------------------------------------------
# The ops as registered there; ``utils.InKeyOutKey`` (big_vision's plumbing: apply to data[inkey], store
# in data[outkey]) is the small ``_in_key_out_key`` below, and the pp string's ops are chained by hand.


def get_value_range(vmin=-1, vmax=1, in_min=0, in_max=255.0, clip_values=False):
    def _value_range(image):
        """Scales values in given range."""
        in_min_t = tf.constant(in_min, tf.float32)
        in_max_t = tf.constant(in_max, tf.float32)
        image = tf.cast(image, tf.float32)
        image = (image - in_min_t) / (in_max_t - in_min_t)
        image = vmin + image * (vmax - vmin)
        if clip_values:
            image = tf.clip_by_value(image, vmin, vmax)
        return image

    return _value_range


def get_keep(*keys):
    def _keep(data):
        return {k: v for k, v in data.items() if k in keys}

    return _keep


def get_squeeze_last_dim():
    def _squeeze_last_dim(x):
        return tf.squeeze(x, axis=-1)

    return _squeeze_last_dim


def get_concat(inkeys, outkey=None, axis=-1):
    def _concat(data):
        data[outkey or inkeys[0]] = tf.concat([data[k] for k in inkeys], axis)
        return data

    return _concat


def get_reshape(new_shape):
    def _reshape(tensor):
        """Reshapes a tensor to a given shape."""
        dtype = tensor.dtype
        tensor = tf.reshape(tensor, new_shape)
        return tf.cast(tensor, dtype)

    return _reshape


def get_setdefault(key, value):
    def _setdefault(data):
        x = data.get(key, tf.constant(value))
        v = tf.constant(value, dtype=x.dtype)
        v = tf.broadcast_to(v, [s or 1 for s in x.shape])
        data[key] = tf.cond(tf.size(x) > 0, lambda: x, lambda: v)
        return data

    return _setdefault


def _in_key_out_key(op, key, key_result=None):
    def apply(data):
        data = dict(data)
        data[key_result or key] = op(data[key])
        return data

    return apply


def big_vision_pp_general(tmp) -> Any:
    ops = [
        _in_key_out_key(get_value_range(-1, 1), "image"),
        _in_key_out_key(
            get_value_range(0, 1, in_min=[0, 0, 0], in_max=[255, 128, 64], clip_values=True),
            "image",
            "clipped",
        ),
        _in_key_out_key(get_squeeze_last_dim(), "mask"),
        _in_key_out_key(get_reshape([2, -1]), "mask", "mask2"),
        get_concat(["image", "clipped"], "both"),
        get_setdefault("tags", -1),
        get_keep("both", "mask", "mask2", "tags"),
    ]

    def preprocess(data):
        for op in ops:
            data = op(data)
        return data

    ds = tf.data.Dataset.from_tensor_slices(data.tagged_images(4, 3, 4))
    return elements(ds.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE).batch(2))


# ---- keras-team/keras-io examples/vision/handwriting_recognition.py (the image half of the map) -----------


def distortion_free_resize(image, img_size):
    w, h = img_size
    image = tf.image.resize(image, size=(h, w), preserve_aspect_ratio=True)

    # Check tha amount of padding needed to be done.
    pad_height = h - tf.shape(image)[0]
    pad_width = w - tf.shape(image)[1]

    # Only necessary if you want to do same amount of padding on both sides.
    if pad_height % 2 != 0:
        height = pad_height // 2
        pad_height_top = height + 1
        pad_height_bottom = height
    else:
        pad_height_top = pad_height_bottom = pad_height // 2

    if pad_width % 2 != 0:
        width = pad_width // 2
        pad_width_left = width + 1
        pad_width_right = width
    else:
        pad_width_left = pad_width_right = pad_width // 2

    image = tf.pad(
        image,
        paddings=[
            [pad_height_top, pad_height_bottom],
            [pad_width_left, pad_width_right],
            [0, 0],
        ],
    )

    image = tf.transpose(image, perm=[1, 0, 2])
    image = tf.image.flip_left_right(image)
    return image


batch_size = 64
padding_token = 99
image_width = 128
image_height = 32


def preprocess_image_path(image_path, img_size=(image_width, image_height)):  # the example's preprocess_image
    image = tf.io.read_file(image_path)
    image = tf.image.decode_png(image, 1)
    image = distortion_free_resize(image, img_size)
    image = tf.cast(image, tf.float32) / 255.0
    return image


def keras_io_handwriting_images(tmp) -> Any:
    # the example maps (path, label) pairs; the label half needs Keras' StringLookup, so only paths here
    image_paths = data.word_pngs(tmp)
    AUTOTUNE = tf.data.AUTOTUNE  # noqa: N806 (the example's name)
    dataset = tf.data.Dataset.from_tensor_slices(image_paths).map(
        preprocess_image_path, num_parallel_calls=AUTOTUNE
    )
    return elements(dataset.batch(batch_size).cache().prefetch(AUTOTUNE))


# ---- tensorflow/docs site/en/tutorials/images/data_augmentation.ipynb ("Using tf.image") --------------

IMG_SIZE = 18  # 180 in the tutorial


def resize_and_rescale(image, label):
    image = tf.cast(image, tf.float32)
    image = tf.image.resize(image, [IMG_SIZE, IMG_SIZE])
    image = image / 255.0
    return image, label


def augment(image_label, seed):
    image, label = image_label
    image, label = resize_and_rescale(image, label)
    image = tf.image.resize_with_crop_or_pad(image, IMG_SIZE + 6, IMG_SIZE + 6)
    # Make a new seed.
    new_seed = tf.random.split(seed, num=1)[0, :]
    # Random crop back to the original size.
    image = tf.image.stateless_random_crop(image, size=[IMG_SIZE, IMG_SIZE, 3], seed=seed)
    # Random brightness.
    image = tf.image.stateless_random_brightness(image, max_delta=0.5, seed=new_seed)
    image = tf.clip_by_value(image, 0, 1)
    return image, label


def docs_data_augmentation(tmp) -> Any:
    AUTOTUNE = tf.data.AUTOTUNE  # noqa: N806
    batch_size = 2
    train_ds = test_ds = tf.data.Dataset.from_tensor_slices(data.images(3, 25, 31))  # tfds tf_flowers
    counter = tf.data.experimental.Counter()
    train_ds = tf.data.Dataset.zip((train_ds, (counter, counter)))
    train_ds = (
        train_ds.shuffle(1000).map(augment, num_parallel_calls=AUTOTUNE).batch(batch_size).prefetch(AUTOTUNE)
    )
    test_ds = (
        test_ds.map(resize_and_rescale, num_parallel_calls=AUTOTUNE).batch(batch_size).prefetch(AUTOTUNE)
    )
    # stateless random draws are headrace's, not TF's (docs/porting.md): the training batches are compared
    # by dtype, shape and value range; the test batches by value
    return [elements(test_ds), data.summary(elements(train_ds))]


PIPELINES = {
    "simclr_eval_input": simclr_eval_input,
    "t5_glue": t5_glue,
    "t5_stsb_and_summarize": t5_stsb_and_summarize,
    "t5_squad": t5_squad,
    "docs_simple_audio": docs_simple_audio,
    "docs_pix2pix_test": docs_pix2pix_test,
    "docs_segmentation": docs_segmentation,
    "big_vision_pp_general": big_vision_pp_general,
    "keras_io_handwriting_images": keras_io_handwriting_images,
    "docs_data_augmentation": docs_data_augmentation,
}

#: float tolerances (absolute): bicubic and bilinear resizes and the STFT sum in float32 in both
TOLERANCE = {
    "simclr_eval_input": 1e-5,
    "docs_simple_audio": 2e-5,
    "docs_segmentation": 1e-5,
    "keras_io_handwriting_images": 1e-5,
    "docs_data_augmentation": 1e-5,
}


def _flat(values: Any) -> list:
    return [v for item in values for v in _flat(item)] if isinstance(values, list) else [values]


def differs_from_recorded(fixture: str, name: str) -> Any:
    """A ``STILL_DIFFERS`` check: whether a pipeline's output still differs from what TensorFlow gave
    (recorded into ``fixture`` under ``name``)."""

    def check(out: Any) -> bool:
        from tests.helpers.tf_fixtures import assert_matches  # noqa: PLC0415

        path = Path(__file__).resolve().parents[1] / "data" / "tfops_fixtures" / fixture
        recorded = json.loads(path.read_text())["pipelines"][name]
        try:
            assert_matches(fixture_form(out), recorded, 0.0, name)
        except AssertionError:
            return True
        return False

    return check


def fixture_form(value: Any) -> Any:
    """``canon(value)``, with arrays of more than 1024 values cut to every k-th of their flat values (at
    most 512, key ``"stride"``), so the fixture stays small."""
    from tests.helpers.tf_fixtures import canon  # noqa: PLC0415

    def shrink(c: Any) -> Any:
        if isinstance(c, dict) and "dtype" in c and "values" in c:
            flat = _flat(c["values"]) if isinstance(c["values"], list) else [c["values"]]
            if len(flat) <= 1024:
                return c
            stride = -(-len(flat) // 512)
            return {**c, "values": flat[::stride], "stride": stride}
        if isinstance(c, dict):
            return {k: shrink(v) for k, v in c.items()}
        if isinstance(c, list):
            return [shrink(v) for v in c]
        return c

    return shrink(canon(value))
