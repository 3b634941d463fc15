"""A per-element function of about ten TF ops, traced (``map(f).batch(n)`` vectorised), against the same
computation written by hand in numpy over whole batches (``batch(n).map(g)``).

Rows, over the same records (Examples of 16 floats + an int64 label, read from memory):

- ``hand-written numpy``: ``batch(256).map(g)``, ``g`` parses the batch with ``parse_example`` and does
  the math on columns: the ceiling of the work;
- ``traced per-element fn``: ``map(f).batch(256)``, ``f`` written per element with ``tf.*`` ops
  (``import headrace as tf``), run as one traced call per batch (``ops/vectorize.py``);
- ``per-element fn, not traced``: the same with ``map_vectorization`` off (one call per element), on
  the first 2,560 records only (it is two orders of magnitude slower);
- ``traced, map+shuffle+batch``: ``map(f).shuffle(1024).batch(256)``, the map vectorised over the chunks
  of input the shuffle asks for; and the same not traced (first 2,560 records; identical batches, checked).

``--shapes jitter`` (in the default run too): the colour jitter of TF's augmentation tutorials, per
element without ``rng`` (random flips both ways, ``random_brightness``, ``random_contrast``,
``central_crop``, ``resize_with_crop_or_pad`` to 64x64, ``per_image_standardization``), in the same rows.

``--shapes jpeg`` (in the default run too): the decode-and-augment function of ``per_element.py``'s JPEG
shape (``parse_single_example``, ``decode_jpeg``, ``random_crop`` to 64x64, ``random_flip_left_right``,
``convert_image_dtype``; 72 px JPEGs, batch 128, ``map(f, seed=1)``), traced (one decode of the batch's
JPEGs into one array, in threads with ``num_parallel_calls=AUTOTUNE``, crops and flips row by row from
each element's stream) against the same map run
per element (serial and AUTOTUNE, ``map_vectorization`` off) and tf.data (AUTOTUNE, when TensorFlow is
installed: ``PYTHONPATH=src /work/tfvenv/bin/python benchmarks/vectorized_map.py``). The traced and
per-element rows give identical batches (checked before timing).

Each row's dataset is iterated once untimed (the trace and the first-batch check, once per pipeline,
happen there), then once per run, as epochs are. Medians of ``--runs`` interleaved runs; the ratio of the traced row's time to the hand-written one's
(the goal: at most 1.5x) and the traced row's speed-up over the per-element run.

Run: ``python benchmarks/vectorized_map.py [--quick] [--runs N] [--shapes tabular,jpeg,jitter]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import numpy as np

import headrace as tf
from _common import alternate, have, rate_rows

FEATURES = {"x": tf.io.FixedLenFeature([16], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}


def per_element(record):
    # Eleven ops, as a tf.data user writes them for one element.
    ex = tf.io.parse_single_example(record, FEATURES)
    x = tf.cast(ex["x"], tf.float64)
    x = tf.clip_by_value((x - 0.5) * 2.0, -0.9, 0.9)
    norm = tf.sqrt(tf.reduce_sum(tf.square(x), axis=0))
    x = tf.cast(x / (norm + 1e-6), tf.float32)
    label = tf.one_hot(ex["y"] % 10, 10)
    features = tf.concat([x, tf.reshape(tf.cast(norm, tf.float32), [1])], axis=0)
    return features, label


def by_hand(records):
    # The same computation on a batch, in numpy.
    ex = tf.io.parse_example(records, FEATURES)
    x = np.clip((ex["x"].astype(np.float64) - 0.5) * 2.0, -0.9, 0.9)
    norm = np.sqrt(np.sum(np.square(x), axis=1))
    x = (x / (norm[:, None] + 1e-6)).astype(np.float32)
    label = np.zeros((len(records), 10), np.float32)
    label[np.arange(len(records)), ex["y"] % 10] = 1.0
    return np.concatenate([x, norm.astype(np.float32)[:, None]], axis=1), label


JPEG = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}
CROP = [64, 64, 3]


def decode_augment(record, rng):
    ex = tf.io.parse_single_example(record, JPEG)
    pixels = tf.io.decode_jpeg(ex["image"], channels=3)
    pixels = tf.image.random_crop(pixels, CROP, rng=rng)
    pixels = tf.image.random_flip_left_right(pixels, rng=rng)
    return tf.image.convert_image_dtype(pixels, tf.float32), ex["label"]


def jitter(record):
    # The colour jitter of TF's augmentation tutorials, written per element with no rng: in
    # map(f, seed=S) each random op draws from the element's stream.
    ex = tf.io.parse_single_example(record, JPEG)
    pixels = tf.io.decode_jpeg(ex["image"], channels=3)
    pixels = tf.image.random_flip_up_down(tf.image.random_flip_left_right(pixels))
    pixels = tf.image.convert_image_dtype(pixels, tf.float32)
    pixels = tf.image.random_contrast(tf.image.random_brightness(pixels, max_delta=0.2), 0.6, 1.4)
    pixels = tf.image.resize_with_crop_or_pad(tf.image.central_crop(pixels, 0.875), 64, 64)
    return tf.image.per_image_standardization(pixels), ex["label"]


def tf_data_jpeg(records: list[bytes], shape: str) -> Callable[[], int] | None:
    if not have("tensorflow"):
        return None
    import tensorflow as real  # noqa: PLC0415

    spec = {
        "image": real.io.FixedLenFeature([], real.string),
        "label": real.io.FixedLenFeature([], real.int64),
    }

    def crop_flip(record):
        ex = real.io.parse_single_example(record, spec)
        pixels = real.io.decode_jpeg(ex["image"], channels=3)
        pixels = real.image.random_crop(pixels, CROP, seed=1)
        pixels = real.image.random_flip_left_right(pixels, seed=1)
        return real.image.convert_image_dtype(pixels, real.float32), ex["label"]

    def colour(record):
        ex = real.io.parse_single_example(record, spec)
        pixels = real.io.decode_jpeg(ex["image"], channels=3)
        pixels = real.image.random_flip_up_down(real.image.random_flip_left_right(pixels, seed=1), seed=1)
        pixels = real.image.convert_image_dtype(pixels, real.float32)
        pixels = real.image.random_brightness(pixels, max_delta=0.2, seed=1)
        pixels = real.image.random_contrast(pixels, 0.6, 1.4, seed=1)
        pixels = real.image.resize_with_crop_or_pad(real.image.central_crop(pixels, 0.875), 64, 64)
        return real.image.per_image_standardization(pixels), ex["label"]

    fn = crop_flip if shape == "jpeg" else colour
    source = real.data.Dataset.from_tensor_slices(records)
    ds = source.map(fn, num_parallel_calls=real.data.AUTOTUNE).batch(128).prefetch(real.data.AUTOTUNE)
    return lambda: sum(int(b[1].shape[0]) for b in ds)


def jpeg(args: argparse.Namespace, shape: str = "jpeg") -> None:
    """``shape`` "jpeg": ``decode_augment`` (crop and flip); "jitter": ``jitter`` (colour jitter)."""
    function = decode_augment if shape == "jpeg" else jitter
    count = 500 if args.quick else 2_000
    images, labels = tf.image.synthetic_images(count, num_classes=10, height=72, width=72, seed=0)
    records = [
        tf.io.serialize_example(
            {"image": tf.image.encode_jpeg(images[i], quality=90), "label": int(labels[i])}
        )
        for i in range(count)
    ]
    off = tf.data.Options()
    off.experimental_optimization.map_vectorization = False

    def pipeline(vectorise: bool, parallel: int | None = None) -> Callable[[], int]:
        ds = tf.data.Dataset.from_tensor_slices(np.array(records, dtype=object))
        ds = ds.map(function, seed=1, num_parallel_calls=parallel).batch(128).prefetch(tf.data.AUTOTUNE)
        ds = ds if vectorise else ds.with_options(off)
        return lambda: sum(len(b[1]) for b in ds)

    rows: dict[str, Callable[[], int] | None] = {
        "traced per-element fn": pipeline(True),
        "traced, AUTOTUNE": pipeline(True, tf.data.AUTOTUNE),
        "per element, serial": pipeline(False),
        "per element, AUTOTUNE": pipeline(False, tf.data.AUTOTUNE),
        "tf.data AUTOTUNE": tf_data_jpeg(records, shape),
    }

    # The traced row's batches are the per-element ones (same draws from each element's stream).
    def first(n: int = 512) -> tf.data.Dataset:  # a fresh pipeline each: a second iteration draws anew
        return tf.data.Dataset.from_tensor_slices(np.array(records[:n], dtype=object)).map(function, seed=1)

    check = first().batch(128)
    for (a, b), (c, d) in zip(check, first().batch(128).with_options(off)):
        assert np.array_equal(a, c) and np.array_equal(b, d)
    assert "vectorised, one traced call per batch" in check.explain()
    live = {name: run for name, run in rows.items() if run is not None}
    for run in live.values():  # warm-up: the trace, the first-batch check, kernels, workers
        run()
    rates, _ = alternate(live, args.runs)
    what = "crop and flip" if shape == "jpeg" else "colour jitter"
    print(
        f"\nvectorised decode, {what}: {count:,} JPEGs of 72x72, batch 128, elements/s, median of {args.runs}"
    )
    against = {
        "per element serial": "per element, serial",
        "per element AUTOTUNE": "per element, AUTOTUNE",
        "tf.data": "tf.data AUTOTUNE",
    }
    rate_rows(rows, rates, against, "skipped (tensorflow not installed)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer records")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--shapes", default="tabular,jpeg,jitter")
    args = parser.parse_args(argv)
    if "tabular" in args.shapes.split(","):
        tabular(args)
    if "jpeg" in args.shapes.split(","):
        jpeg(args)
    if "jitter" in args.shapes.split(","):
        jpeg(args, "jitter")
    return 0


def tabular(args: argparse.Namespace) -> None:
    count = 5_000 if args.quick else 20_000
    rng = np.random.default_rng(0)
    records = [tf.io.serialize_example({"x": rng.random(16, dtype=np.float32), "y": i}) for i in range(count)]
    off = tf.data.Options()
    off.experimental_optimization.map_vectorization = False

    def source():
        return tf.data.Dataset.from_tensor_slices(np.array(records, dtype=object))

    rows: dict[str, Callable[[], tf.data.Dataset]] = {
        "hand-written numpy": lambda: source().batch(256).map(by_hand),
        "traced per-element fn": lambda: source().map(per_element).batch(256),
        "per-element fn, not traced": lambda: (
            source().take(2560).map(per_element).batch(256).with_options(off)
        ),
        "traced, map+shuffle+batch": lambda: source().map(per_element).shuffle(1024, seed=1).batch(256),
        "map+shuffle+batch, not traced": lambda: (
            source().take(2560).map(per_element).shuffle(1024, seed=1).batch(256).with_options(off)
        ),
    }
    # The rows agree: the traced one exactly with the per-element one, both closely with numpy by hand
    # (tf.clip_by_value converts its Python-float bounds through float32; np.clip does not).
    results = {name: list(make()) for name, make in rows.items()}
    for (a, b), (c, d) in zip(results["traced per-element fn"], results["per-element fn, not traced"]):
        assert np.array_equal(a, c) and np.array_equal(b, d)
    for (a, b), (c, d) in zip(results["traced per-element fn"], results["hand-written numpy"]):
        assert np.allclose(a, c, rtol=1e-5, atol=1e-6) and np.array_equal(b, d)
    shuffled = source().take(2560).map(per_element).shuffle(1024, seed=1).batch(256)
    for (a, b), (c, d) in zip(shuffled, results["map+shuffle+batch, not traced"]):
        assert np.array_equal(a, c) and np.array_equal(b, d)
    assert "one traced call per chunk of its input" in shuffled.explain()
    # Each row's dataset is built once and iterated once per run, as epochs are: the trace and the
    # first-batch check (one per-element pass over the first batch) happen at its first iteration.
    datasets = {name: make() for name, make in rows.items()}
    for ds in datasets.values():
        for _ in ds:
            pass
    rates, _ = alternate(
        {name: (lambda ds=ds: sum(len(b[1]) for b in ds)) for name, ds in datasets.items()}, args.runs
    )
    print(f"vectorised map: {count:,} records, batch 256, elements/s, median of {args.runs}")
    for name in rows:
        print(f"  {name:<28} {rates[name]:>12,.0f}")
    traced, hand = rates["traced per-element fn"], rates["hand-written numpy"]
    print(f"  traced time / hand-written numpy time: {hand / traced:.2f} (goal <= 1.5)")
    print(f"  traced / per element, not traced: {traced / rates['per-element fn, not traced']:.1f}x")
    chunked = rates["traced, map+shuffle+batch"]
    print(
        f"  map+shuffle+batch: traced / not traced {chunked / rates['map+shuffle+batch, not traced']:.1f}x; "
        f"/ traced map+batch {chunked / traced:.2f}"
    )


if __name__ == "__main__":
    sys.exit(main())
