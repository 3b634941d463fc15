"""``headrace demo``: the image-classification story end to end, on data generated on the fly.

1. Write a sharded TFRecord dataset of JPEG ``tf.train.Example``s (synthetic labelled images).
2. Train a small numpy model (softmax regression on downscaled pixels) for one epoch with a naive
   serial pipeline, then with the optimised one as a tf.data user writes it: files interleaved and
   shuffled, each Example parsed, decoded and augmented by a per-element ``map`` with
   ``num_parallel_calls=AUTOTUNE``, batched, prefetched. Then the expert's form beside it: batch
   first, one vectorised call per batch.
3. Print epoch times, the speed-up, how long the training loop waited, and headrace's bottleneck report
   for each pipeline.
4. Checkpoint mid-epoch, restore into a fresh iterator, and check against an uninterrupted run.
5. Train a PyTorch model from the same pipeline through ``headrace.torch`` (when torch is installed).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time

import numpy as np

from . import image
from .core.node import AUTOTUNE
from .dataset import Dataset, TFRecordDataset
from .io import FixedLenFeature, parse_example, parse_single_example, serialize_example, write_shards
from .profile.record import record_calls
from .recipes import shuffled_records

NUM_CLASSES = 10
IMAGE_SIZE = 64
CROP = 56
FEATURE_SIZE = 12  # the model sees FEATURE_SIZE x FEATURE_SIZE x 3 pixels
BATCH_SIZE = 64
STEP_SECONDS = 0.004  # simulated accelerator time per batch
FEATURES = {"image": FixedLenFeature([], "string"), "label": FixedLenFeature([], "int64")}
MEAN, STD = (0.45, 0.45, 0.45), (0.25, 0.25, 0.25)


def write_dataset(folder: str, num_images: int, num_shards: int = 8, seed: int = 0) -> str:
    """Synthetic labelled JPEGs as Examples in ``folder/train-0000k-of-0000n.tfrecord``; returns the glob."""

    def examples():
        for index in range(num_images):
            pixels, label = image.synthetic_image(index, NUM_CLASSES, IMAGE_SIZE, IMAGE_SIZE, seed=seed)
            yield serialize_example({"image": image.encode_jpeg(pixels, quality=90), "label": label})

    write_shards(examples(), os.path.join(folder, "train"), num_shards=num_shards)
    return os.path.join(folder, "train-*.tfrecord")


# --- the naive pipeline: one element at a time, in the training loop's thread -------------------------
def parse_decode_augment(record: bytes, rng: np.random.Generator):
    example = parse_single_example(record, FEATURES)
    pixels = image.decode_jpeg(example["image"])
    pixels = image.random_flip_left_right(pixels, rng=rng)
    pixels = image.random_crop(pixels, (CROP, CROP), rng=rng)
    pixels = image.random_brightness(pixels, 0.15, rng=rng)
    pixels = image.resize(pixels, (FEATURE_SIZE, FEATURE_SIZE), method="area")
    features = image.normalize(pixels / 255.0, MEAN, STD)
    return features.reshape(-1).astype(np.float32), example["label"]


def naive_pipeline(pattern: str) -> Dataset:
    files = sorted(Dataset.list_files(pattern, shuffle=False).as_numpy_iterator())
    return TFRecordDataset(files).shuffle(1024, seed=1).map(parse_decode_augment, seed=1).batch(BATCH_SIZE)


# --- the optimised pipeline, as tf.data teaches: per element, AUTOTUNE, batch, prefetch --------------
def optimised_pipeline(pattern: str) -> Dataset:
    return (
        shuffled_records(pattern, buffer_size=1024, seed=1)  # file order shuffled, files interleaved
        # headrace measures the function and picks the executor (threads here: the decoders and
        # kernels release the GIL), or runs it inline where hand-offs would cost more than they gain.
        .map(parse_decode_augment, num_parallel_calls=AUTOTUNE, seed=1)
        .batch(BATCH_SIZE)
        .prefetch(AUTOTUNE)
    )


# --- the expert's form: batch first, one vectorised call per batch, parallel workers --------------------
def parse_decode_augment_batch(records: np.ndarray, rng: np.random.Generator):
    examples = parse_example(records, FEATURES)  # one compiled pass over the batch
    pixels = image.decode_batch(examples["image"])  # libjpeg-turbo, releases the GIL
    pixels = image.random_flip_left_right(pixels, rng=rng)  # per-image randomness, one call
    pixels = image.random_crop(pixels, (CROP, CROP), rng=rng)
    pixels = image.random_brightness(pixels, 0.15, rng=rng)
    pixels = image.resize(pixels, (FEATURE_SIZE, FEATURE_SIZE), method="area")
    features = image.normalize(pixels / 255.0, MEAN, STD)
    return features.reshape(len(records), -1).astype(np.float32), examples["label"]


def batch_first_pipeline(pattern: str) -> Dataset:
    return (
        shuffled_records(pattern, buffer_size=1024, seed=1)
        .batch(BATCH_SIZE)
        # Threads: parsing, decoding and augmenting run in compiled code that releases the GIL.
        .map(parse_decode_augment_batch, num_parallel_calls=AUTOTUNE, executor="thread", seed=1)
        .prefetch(AUTOTUNE)
    )


class SoftmaxRegression:
    """The simulated trainer: softmax regression by SGD in numpy."""

    def __init__(self, num_features: int, num_classes: int, learning_rate: float = 0.05):
        self.weights = np.zeros((num_features, num_classes), np.float32)
        self.bias = np.zeros(num_classes, np.float32)
        self.learning_rate = learning_rate

    def step(self, features: np.ndarray, labels: np.ndarray) -> float:
        logits = features @ self.weights + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        rows = np.arange(len(labels))
        loss = -np.log(probs[rows, labels] + 1e-9).mean()
        probs[rows, labels] -= 1
        grad = probs / len(labels)
        self.weights -= self.learning_rate * features.T @ grad
        self.bias -= self.learning_rate * grad.sum(axis=0)
        return float(loss)

    def accuracy(self, features: np.ndarray, labels: np.ndarray) -> float:
        return float(((features @ self.weights + self.bias).argmax(axis=1) == labels).mean())


def train_one_epoch(dataset: Dataset, epochs: int = 1):
    """Train on ``dataset``; returns (model, seconds of the last epoch, stats of its iterator)."""
    model = SoftmaxRegression(FEATURE_SIZE * FEATURE_SIZE * 3, NUM_CLASSES)
    for _ in range(epochs):
        start = time.perf_counter()
        iterator = iter(dataset)
        losses = []
        for features, labels in iterator:
            losses.append(model.step(features, labels))
            time.sleep(STEP_SECONDS)  # the accelerator's share of the step
        seconds = time.perf_counter() - start
        stats = iterator.stats()
        iterator.close()
    return model, seconds, stats, float(np.mean(losses))


def holdout(folder: str, count: int) -> tuple[np.ndarray, np.ndarray]:
    pattern = write_dataset(os.path.join(folder, "holdout"), count, num_shards=1, seed=99)
    records = np.array(
        list(TFRecordDataset(sorted(Dataset.list_files(pattern, shuffle=False).as_numpy_iterator()))),
        dtype=object,
    )
    examples = parse_example(records, FEATURES)
    pixels = image.central_crop(image.decode_batch(examples["image"]), CROP / IMAGE_SIZE)
    pixels = image.resize(pixels, (FEATURE_SIZE, FEATURE_SIZE), method="area")
    return image.normalize(pixels / 255.0, MEAN, STD).reshape(count, -1).astype(np.float32), examples["label"]


def run_demo(quick: bool = False, out: str | None = None) -> int:
    """Run the demo. Its data goes to a fresh temporary folder, deleted at the end; the profile pages,
    traces and TensorBoard files go to ``out`` (default: a fresh temporary folder, kept and named)."""
    num_images = 1_280 if quick else 6_400
    if out is None:
        out = tempfile.mkdtemp(prefix="headrace-demo-profile-")
    else:
        os.makedirs(out, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="headrace-demo-")
    try:
        print(
            f"headrace demo: {num_images:,} synthetic {IMAGE_SIZE}x{IMAGE_SIZE} JPEGs, {NUM_CLASSES} classes\n"
        )
        start = time.perf_counter()
        pattern = write_dataset(os.path.join(folder, "data"), num_images)
        size = sum(
            os.path.getsize(os.path.join(folder, "data", f)) for f in os.listdir(os.path.join(folder, "data"))
        )
        print(
            f"wrote 8 TFRecord shards of tf.train.Example ({size / 2**20:.1f} MiB) in {time.perf_counter() - start:.1f} s"
        )
        test_x, test_y = holdout(folder, 500)

        results = {}
        pipelines = (
            ("naive", naive_pipeline),
            ("optimised", optimised_pipeline),
            ("batch_first", batch_first_pipeline),
        )
        for title, build in pipelines:
            dataset = build(pattern)
            print(f"\n=== {title} pipeline (input first) ===")
            print("  " + dataset.describe().replace("\n", "\n  "))
            with record_calls():  # a slice per stage call in the trace saved below
                model, seconds, stats, loss = train_one_epoch(dataset)
            results[title] = seconds
            print(
                f"\nepoch: {seconds:.2f} s, {stats.produced * BATCH_SIZE / seconds:,.0f} images/s, training loop waited "
                f"{100 * stats.wait_fraction:.0f}% of the time; loss {loss:.3f}, "
                f"holdout accuracy {model.accuracy(test_x, test_y):.3f}\n"
            )
            print(stats.report())
            # Kept after the demo's data is deleted: the page, the trace and TensorBoard files.
            page = stats.save_html(os.path.join(out, f"{title}.html"))
            trace = stats.save_trace(os.path.join(out, f"{title}.trace.json"))
            stats.save_tensorboard(os.path.join(out, "tensorboard"), run=title)
            print(
                f"\nsee it: open {page} in a browser; drag {trace} onto https://ui.perfetto.dev; "
                f"tensorboard --logdir {os.path.join(out, 'tensorboard')}"
            )
        print(
            f"\nspeed-up of the optimised pipeline: {results['naive'] / results['optimised']:.1f}x per epoch; "
            f"the batch-first form: {results['naive'] / results['batch_first']:.1f}x "
            f"(an epoch cannot be faster than the simulated accelerator: "
            f"{num_images / BATCH_SIZE * STEP_SECONDS:.2f} s)"
        )
        resumed = checkpoint_check(pattern)
        torch_loop(pattern)
        return 0 if resumed else 1
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def checkpoint_check(pattern: str) -> bool:
    """Save mid-epoch, restore in a fresh iterator (as a restarted job would), compare to one run."""
    interrupted = iter(optimised_pipeline(pattern))
    seen = [next(interrupted)[1] for _ in range(5)]
    state = json.dumps(interrupted.get_state())
    interrupted.close()
    resumed = iter(optimised_pipeline(pattern))
    resumed.set_state(json.loads(state))
    delivered = seen + [labels for _, labels in resumed]
    uninterrupted = [labels for _, labels in optimised_pipeline(pattern)]
    same = len(delivered) == len(uninterrupted) and all(
        np.array_equal(a, b) for a, b in zip(delivered, uninterrupted)
    )
    print(
        f"\ncheckpoint after 5 batches of the optimised pipeline: {len(state):,} bytes of JSON (its shuffle buffer "
        f"holds records; global_shuffle over indexed files needs a few integers); the resumed run equals an "
        f"uninterrupted one: {same}"
    )
    return same


def torch_loop(pattern: str) -> None:
    """The same optimised pipeline feeding a PyTorch training loop through ``headrace.torch`` (skipped
    when torch is not installed: ``pip install 'headrace[torch]'``)."""
    try:
        import torch  # noqa: F401, PLC0415 (optional)
    except ImportError:
        print(
            "\nPyTorch is not installed: skipping the PyTorch training loop (pip install 'headrace[torch]')"
        )
        return
    from .demo_torch import train  # noqa: PLC0415 (imports torch)

    start = time.perf_counter()
    result = train(optimised_pipeline(pattern), num_classes=NUM_CLASSES, epochs=1)
    print(
        f"\nPyTorch loop fed through headrace.torch.to_torch: {result['batches_per_epoch']} batches in "
        f"{time.perf_counter() - start:.1f} s, loss {result['losses'][-1]:.3f}, waited "
        f"{result['data_wait_seconds'][-1]:.2f} s for data; a mid-epoch state_dict resumes exactly: "
        f"{result['resumed_exactly']}"
    )
