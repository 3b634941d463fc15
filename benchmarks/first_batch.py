"""Seconds from starting a fresh Python process to the first batch of the README pipeline (issue 19:
goal 2 s on the 2-core box), headrace beside tf.data doing the same work.

The pipeline is the README's: per-element ``parse_single_example``, ``decode_jpeg``,
``random_flip_left_right``, ``resize`` to 64x64, ``batch(256)``, ``prefetch``, over 512 JPEG Examples in 4
shards (written once, then read from the page cache as a training job's second run would). Each run
is a new interpreter, so imports, kernel loading (headrace's from its compiled cache) and the first
batch all count; the time is taken from just before starting the process to the moment the batch
exists (printed by the child). tf.data runs only where ``tensorflow`` imports (``--tf-python`` points
at another interpreter that has it). Medians of ``--runs`` runs, alternating, with ratios.

Run: ``python benchmarks/first_batch.py [--runs 5] [--hog] [--tf-python PATH]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _common import beside_hog

HEADRACE = """
import time
import headrace as hr
features = {"image": hr.io.FixedLenFeature([], "string"), "label": hr.io.FixedLenFeature([], "int64")}
def decode(record):
    ex = hr.io.parse_single_example(record, features)
    image = hr.io.decode_jpeg(ex["image"], channels=3)
    image = hr.image.random_flip_left_right(image)
    return hr.image.resize(image, (64, 64)), ex["label"]
ds = (
    hr.shuffled_records("train-*.tfrecord", buffer_size=10_000, seed=1)
    .map(decode, num_parallel_calls=hr.AUTOTUNE, seed=1)
    .batch(256)
    .prefetch(hr.AUTOTUNE)
)
images, labels = next(iter(ds))
print(time.time())
"""

TENSORFLOW = """
import time
import tensorflow as tf
features = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}
def decode(record):
    ex = tf.io.parse_single_example(record, features)
    image = tf.io.decode_jpeg(ex["image"], channels=3)
    image = tf.image.random_flip_left_right(image, seed=1)
    return tf.image.resize(image, (64, 64)), ex["label"]
files = tf.data.Dataset.list_files("train-*.tfrecord", shuffle=True, seed=1)
ds = (
    tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE)
    .shuffle(10_000, seed=1)
    .map(decode, num_parallel_calls=tf.data.AUTOTUNE)
    .batch(256)
    .prefetch(tf.data.AUTOTUNE)
)
images, labels = next(iter(ds))
print(time.time())
"""


def write_data(folder: str) -> None:
    import headrace as hr  # noqa: PLC0415

    records = []
    for i in range(512):
        pixels, label = hr.image.synthetic_image(i, 3, 96, 128)
        records.append(hr.io.serialize_example({"image": hr.image.encode_jpeg(pixels), "label": int(label)}))
    hr.io.write_shards(records, os.path.join(folder, "train"), num_shards=4)


def seconds_to_first_batch(python: str, code: str, folder: str) -> float:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    start = time.time()
    out = subprocess.run(
        [python, "-c", code], cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=True
    )
    return float(out.stdout.strip().splitlines()[-1]) - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--hog", action="store_true", help="a CPU-busy process beside")
    parser.add_argument("--tf-python", default=sys.executable, help="an interpreter with tensorflow")
    args = parser.parse_args()
    peers = {"headrace": (sys.executable, HEADRACE)}
    probe = subprocess.run([args.tf_python, "-c", "import tensorflow"], capture_output=True, check=False)
    if probe.returncode == 0:
        peers["tf.data"] = (args.tf_python, TENSORFLOW)
    else:
        print("tf.data: skipped (tensorflow does not import in --tf-python)")
    with beside_hog(args.hog), tempfile.TemporaryDirectory() as folder:
        write_data(folder)
        times: dict[str, list[float]] = {name: [] for name in peers}
        for _ in range(args.runs):  # alternating, so a disturbance hits both
            for name, (python, code) in peers.items():
                times[name].append(seconds_to_first_batch(python, code, folder))
    print(
        f"first batch of the README pipeline, seconds from process start, median of {args.runs}"
        f"{' beside a CPU hog' if args.hog else ''}"
    )
    base = statistics.median(times["headrace"])
    for name, values in times.items():
        median = statistics.median(values)
        spread = f"{min(values):.2f}-{max(values):.2f}"
        print(f"  {name:<9} {median:6.2f} s  (runs {spread})  {median / base:5.2f}x headrace's time")


if __name__ == "__main__":
    main()
