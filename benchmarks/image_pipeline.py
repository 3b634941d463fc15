"""Image pipeline throughput: decode + augment + batch of JPEGs, headrace side by side with tf.data.

Data: labelled synthetic JPEGs (quality 90) generated here, 64x64 and 224x224. Every pipeline does
the same work per image: decode, random crop to 7/8 of the side, random left-right flip, random
brightness and contrast (and, in the "colour" recipe, random saturation and hue), bilinear resize back
to the full side, per-channel normalisation to float32, and batches of 32 with the labels.

Pipelines (each row is one full pass over the images; medians of interleaved runs):

- headrace serial: ``from_tensor_slices((jpegs, labels)).map(decode_and_augment, seed=1).batch(32)``
- headrace batched: decode per element, augment per batch of 32 (each op one vectorised call, still
  drawing every random value per image): ``.map(decode).batch(32).map(augment, seed=1)``
- headrace threads: the serial pipeline with ``num_parallel_calls=2, executor="thread"`` (decoders
  and the compiled kernels release the GIL), and the batched one with a threaded decode
- headrace AUTOTUNE: the per-element pipeline as users write it, ``map(decode_and_augment,
  num_parallel_calls=AUTOTUNE, seed=1).batch(32).prefetch(AUTOTUNE)``; the executor is chosen by
  measuring and the workers by the autotuner (goal, issue 10: at least 1.0x tf.data AUTOTUNE)
- tf.data serial (``map`` without ``num_parallel_calls``) and tf.data AUTOTUNE
  (``num_parallel_calls=AUTOTUNE`` and ``prefetch(AUTOTUNE)``), with tf.io.decode_jpeg and tf.image ops

Also: JPEG decoding alone through simplejpeg, Pillow and tf.io.decode_jpeg (the measurement behind
choosing simplejpeg). Run: ``python benchmarks/image_pipeline.py [--quick] [--runs N]``.
The machine's other load adds noise: compare the ratios, which come from interleaved runs.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial

import numpy as np

import headrace as hr
import headrace.image as hi
from _common import have

BATCH = 32
MEAN = (0.485 * 255, 0.456 * 255, 0.406 * 255)
STD = (0.229 * 255, 0.224 * 255, 0.225 * 255)


def make_jpegs(size: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    images, labels = hi.synthetic_images(count, num_classes=10, height=size, width=size, seed=0)
    encoded = np.empty(count, dtype=object)
    encoded[:] = [hi.encode_jpeg(image, quality=90) for image in images]
    return encoded, labels


# --- headrace ------------------------------------------------------------------------------------------------


def augment(images: np.ndarray, rng: np.random.Generator, size: int, colour: bool) -> np.ndarray:
    """The recipe, for one (H, W, 3) image or an (N, H, W, 3) batch (random values drawn per image)."""
    crop = size * 7 // 8
    images = hi.random_crop(images, (crop, crop), rng=rng)
    images = hi.random_flip_left_right(images, rng=rng)
    images = hi.random_brightness(images, 0.2, rng=rng)
    images = hi.random_contrast(images, 0.8, 1.2, rng=rng)
    if colour:
        images = hi.random_saturation(images, 0.8, 1.2, rng=rng)
        images = hi.random_hue(images, 0.05, rng=rng)
    images = hi.resize(images, (size, size))
    return hi.normalize(images, MEAN, STD)


def decode_and_augment(data, label, *, rng, size, colour):
    return augment(hi.decode_jpeg(data, channels=3), rng, size, colour), label


def decode(data, label):
    return hi.decode_jpeg(data, channels=3), label


def augment_batch(images, labels, *, rng, size, colour):
    return augment(images, rng, size, colour), labels


def headrace_pipelines(jpegs, labels, size: int, colour: bool) -> dict[str, Callable[[], hr.Dataset]]:
    source = lambda: hr.Dataset.from_tensor_slices((jpegs, labels))  # noqa: E731
    element = partial(decode_and_augment, size=size, colour=colour)
    batch_fn = partial(augment_batch, size=size, colour=colour)
    return {
        "headrace serial": lambda: source().map(element, seed=1).batch(BATCH),
        "headrace batched": lambda: source().map(decode).batch(BATCH).map(batch_fn, seed=1),
        "headrace threads(2)": lambda: (
            source().map(element, num_parallel_calls=2, executor="thread", seed=1).batch(BATCH)
        ),
        "headrace AUTOTUNE (per element)": lambda: (
            source().map(element, num_parallel_calls=hr.AUTOTUNE, seed=1).batch(BATCH).prefetch(hr.AUTOTUNE)
        ),
        "headrace batched, threaded decode(2)": lambda: (
            source()
            .map(decode, num_parallel_calls=2, executor="thread")
            .batch(BATCH)
            .map(batch_fn, seed=1)
            .prefetch(2)
        ),
    }


# --- tf.data -------------------------------------------------------------------------------------------------


def tf_pipelines(tf, jpegs, labels, size: int, colour: bool) -> dict[str, Callable[[], object]]:
    crop = size * 7 // 8
    mean = tf.constant(MEAN, tf.float32)
    std = tf.constant(STD, tf.float32)

    def element(data, label):
        image = tf.io.decode_jpeg(data, channels=3)
        image = tf.image.random_crop(image, [crop, crop, 3])
        image = tf.image.random_flip_left_right(image)
        image = tf.image.random_brightness(image, 0.2)
        image = tf.image.random_contrast(image, 0.8, 1.2)
        if colour:
            image = tf.image.random_saturation(image, 0.8, 1.2)
            image = tf.image.random_hue(image, 0.05)
        image = tf.image.resize(image, [size, size])
        return (image - mean) / std, label

    source = tf.data.Dataset.from_tensor_slices((list(jpegs), labels))
    return {
        "tf.data serial": lambda: source.map(element).batch(BATCH),
        "tf.data AUTOTUNE": lambda: (
            source.map(element, num_parallel_calls=tf.data.AUTOTUNE).batch(BATCH).prefetch(tf.data.AUTOTUNE)
        ),
    }


# --- measuring -----------------------------------------------------------------------------------------------


def epoch_seconds(make: Callable[[], object]) -> float:
    dataset = make()
    start = time.perf_counter()
    for _ in dataset:
        pass
    return time.perf_counter() - start


def interleaved(pipelines: dict[str, Callable[[], object]], count: int, runs: int) -> dict[str, float]:
    """Images/s per pipeline: one warm-up pass each, then ``runs`` rounds alternating the pipelines."""
    for make in pipelines.values():
        epoch_seconds(make)
    times: dict[str, list[float]] = {name: [] for name in pipelines}
    for _ in range(runs):
        for name, make in pipelines.items():
            times[name].append(epoch_seconds(make))
    return {name: count / statistics.median(values) for name, values in times.items()}


def print_rows(title: str, rates: dict[str, float], baselines: list[str]) -> None:
    print(f"\n{title}")
    width = max(len(name) for name in rates)
    present = [b for b in baselines if b in rates]
    for name, rate in rates.items():
        ratios = "   ".join(f"{rate / rates[b]:5.2f}x {b}" for b in present)
        print(f"  {name:<{width}}  {rate:>9,.0f} images/s   {ratios}")


def decode_only(jpegs: np.ndarray, tf, runs: int) -> dict[str, float]:
    from PIL import Image

    items = list(jpegs)

    def pillow():
        for data in items:
            np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))

    loops = {
        "simplejpeg (headrace.image.decode_jpeg)": lambda: [hi.decode_jpeg(d) for d in items],
        "Pillow": pillow,
    }
    times: dict[str, list[float]] = {name: [] for name in loops}
    if tf is not None:
        dataset = tf.data.Dataset.from_tensor_slices(items).map(tf.io.decode_jpeg)
        loops["tf.data map(tf.io.decode_jpeg)"] = lambda: [None for _ in dataset]
        times["tf.data map(tf.io.decode_jpeg)"] = []
    for fn in loops.values():
        fn()
    for _ in range(runs):
        for name, fn in loops.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: len(items) / statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="interleaved timed passes per pipeline")
    parser.add_argument("--quick", action="store_true", help="fewer images and runs (a smoke test)")
    parser.add_argument("--sizes", default="64,224", help="image sides to measure, comma separated")
    args = parser.parse_args()
    runs = 2 if args.quick else args.runs
    counts = {64: 512 if args.quick else 2048, 224: 96 if args.quick else 384}

    tf = None
    if have("tensorflow"):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf
    else:
        print("tensorflow not installed: tf.data rows skipped (pip install tensorflow-cpu)")
    print(f"{os.cpu_count()} CPUs; batch {BATCH}; medians of {runs} interleaved passes")

    for size in (int(s) for s in args.sizes.split(",")):
        count = counts.get(size, 256)
        jpegs, labels = make_jpegs(size, count)
        print(
            f"\n=== {size}x{size} JPEGs: {count} images, {np.mean([len(j) for j in jpegs]) / 1024:.1f} KiB each ==="
        )
        print_rows(
            "decode only",
            decode_only(jpegs, tf, runs),
            ["tf.data map(tf.io.decode_jpeg)", "Pillow"],
        )
        for colour in (False, True):
            pipelines: dict[str, Callable[[], object]] = dict(headrace_pipelines(jpegs, labels, size, colour))
            if tf is not None:
                pipelines.update(tf_pipelines(tf, jpegs, labels, size, colour))
            recipe = "crop+flip+brightness+contrast+resize+normalise" + ("+saturation+hue" if colour else "")
            print_rows(
                f"{recipe}, batch {BATCH}",
                interleaved(pipelines, count, runs),
                ["tf.data AUTOTUNE", "tf.data serial"],
            )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
