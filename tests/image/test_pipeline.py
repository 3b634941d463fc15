"""headrace.image inside Dataset pipelines: per-element decode, per-batch augmentation, purity."""

from __future__ import annotations

import pickle

import numpy as np

import headrace as hr
import headrace.image as hi


def _encoded(count: int, size: int = 16) -> tuple[np.ndarray, np.ndarray]:
    images, labels = hi.synthetic_images(count, num_classes=4, height=size, width=size, seed=1)
    encoded = np.empty(count, dtype=object)
    encoded[:] = [hi.encode_jpeg(image) for image in images]
    return encoded, labels


def augment(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One augmentation recipe; works on an image or a batch, a pure function of (image, rng)."""
    image = hi.random_crop(hi.pad(image, 2, mode="reflect"), (16, 16), rng=rng)
    image = hi.random_flip_left_right(image, rng=rng)
    image = hi.random_brightness(image, 0.2, rng=rng)
    image = hi.random_hue(image, 0.05, rng=rng)
    return hi.normalize(image, mean=127.5, std=127.5)


def test_serial_pipeline_decode_augment_batch():
    encoded, labels = _encoded(10)
    rng = np.random.default_rng(0)
    ds = (
        hr.Dataset.from_tensor_slices((encoded, labels))
        .map(lambda data, label: (augment(hi.decode_jpeg(data), rng), label))
        .batch(4)
    )
    batches = list(ds)
    assert [b[0].shape for b in batches] == [(4, 16, 16, 3), (4, 16, 16, 3), (2, 16, 16, 3)]
    assert batches[0][0].dtype == np.float32
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]), labels)


def test_batched_variant_decodes_per_element_and_augments_per_batch():
    encoded, labels = _encoded(8)
    rng = np.random.default_rng(0)
    ds = (
        hr.Dataset.from_tensor_slices((encoded, labels))
        .map(lambda data, label: (hi.decode_jpeg(data), label))
        .batch(4)
        .map(lambda images, batch_labels: (augment(images, rng), batch_labels))
    )
    out = list(ds)
    assert [b[0].shape for b in out] == [(4, 16, 16, 3)] * 2
    # each image of a batch got its own random draw: no two augmented images are identical
    assert len({image.tobytes() for image in out[0][0]}) == 4


def test_augment_is_a_pure_function_of_image_and_rng():
    image = hi.synthetic_image(0, height=16, width=16)[0]
    batch = np.stack([image] * 3)
    first = augment(batch, np.random.default_rng(11))
    second = augment(batch, np.random.default_rng(11))
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, augment(batch, np.random.default_rng(12)))


def test_functions_pickle_for_process_workers():
    for fn in (hi.decode_jpeg, hi.random_crop, hi.adjust_hue, hi.resize, augment):
        assert pickle.loads(pickle.dumps(fn)) is fn


def _augment_element(data, label, *, rng):
    return augment(hi.decode_jpeg(data), rng), label


def test_seeded_map_gives_the_same_images_for_any_parallelism():
    encoded, labels = _encoded(12)
    source = hr.Dataset.from_tensor_slices((encoded, labels))
    serial = [image for image, _ in source.map(_augment_element, seed=5)]
    threads = [
        image for image, _ in source.map(_augment_element, num_parallel_calls=2, executor="thread", seed=5)
    ]
    assert len(serial) == 12
    for a, b in zip(serial, threads):
        np.testing.assert_array_equal(a, b)
    other_seed = [image for image, _ in source.map(_augment_element, seed=6)]
    assert not all(np.array_equal(a, b) for a, b in zip(serial, other_seed))


def test_undecodable_elements_can_be_skipped_with_ignore_errors():
    encoded, labels = _encoded(5)
    encoded[1] = b"not a jpeg"
    encoded[3] = encoded[3][:20]  # truncated inside the header
    ds = (
        hr.Dataset.from_tensor_slices((encoded, labels))
        .map(lambda d, y: (hi.decode_jpeg(d), y))
        .ignore_errors()
    )
    kept = [int(label) for _, label in ds]
    assert kept == [int(labels[i]) for i in (0, 2, 4)]


def _imagenet_crop(data, label, *, rng):
    """TF1's Inception training crop, ported by changing the imports."""
    begin, size, _ = hi.sample_distorted_bounding_box(
        hi.extract_jpeg_shape(data),
        [[[0.0, 0.0, 1.0, 1.0]]],
        area_range=(0.08, 1.0),
        use_image_if_no_bounding_boxes=True,
        rng=rng,
    )
    image = hi.decode_and_crop_jpeg(data, [begin[0], begin[1], size[0], size[1]], channels=3)
    return hi.random_flip_left_right(hi.resize(image, (12, 12)), rng=rng), label


def test_imagenet_crop_recipe_is_deterministic_and_checkpoints():
    from tests.helpers.checkpoint import check_checkpoints

    encoded, labels = _encoded(8, size=32)
    source = hr.Dataset.from_tensor_slices((encoded, labels))
    serial = list(source.map(_imagenet_crop, seed=3))
    threads = list(source.map(_imagenet_crop, num_parallel_calls=2, executor="thread", seed=3))
    assert [image.shape for image, _ in serial] == [(12, 12, 3)] * 8
    for (a, _), (b, _) in zip(serial, threads):
        np.testing.assert_array_equal(a, b)
    check_checkpoints(lambda: source.map(_imagenet_crop, seed=3).batch(3), stride=1)


def test_stateless_functions_need_no_rng_in_a_pipeline():
    encoded, labels = _encoded(4)
    ds = hr.Dataset.from_tensor_slices((encoded, labels)).map(
        lambda data, label: (
            hi.stateless_random_brightness(hi.decode_jpeg(data), 0.2, seed=(int(label), 7)),
            label,
        )
    )
    first, second = list(ds), list(ds)
    for (a, _), (b, _) in zip(first, second):
        np.testing.assert_array_equal(a, b)
