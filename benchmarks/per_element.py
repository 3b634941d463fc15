"""Per-element pipelines, the form tf.data teaches: ``map(f)`` on each record, then ``batch``.

Three shapes, each written as a tf.data user writes it:

- tabular: ``TFRecordDataset -> map(parse_single_example, AUTOTUNE) -> shuffle(1024) -> batch(256) ->
  prefetch``, Examples of 16 floats + an int64 label; beside it the batch-first form
  (``batch(256).map(parse_example)``) as the ceiling of the same work, and ``map(parse_single_example,
  AUTOTUNE).batch(256)`` with the map directly before batch, vectorised (one traced ``parse_example``
  per batch, ``ops/vectorize.py``; built once and iterated per run, so the trace and the first-batch
  check fall in the warm-up) and with ``map_vectorization`` off;
- jpeg: ``TFRecordDataset -> map(parse, decode_jpeg, random_crop, random_flip_left_right,
  convert_image_dtype; AUTOTUNE) -> batch(128) -> prefetch``, 72 px JPEGs;
- python: a pure-Python function per element (string work on the record, ~100 us), then batch(256).

Rows per shape: a plain Python loop calling the same functions (the ceiling for Python on this
machine), headrace serial, 2 threads, 2 processes, AUTOTUNE (all with ``map_vectorization`` off: the
function called per element), AUTOTUNE vectorised (the default: the jpeg map traced over each batch,
the tabular one over the chunks its shuffle asks for); tf.data AUTOTUNE with the same ops in TF
(when tensorflow is installed); ``torch.utils.data.DataLoader(num_workers=2)`` over the same function
(when torch is installed). Medians of ``--runs`` interleaved runs; ratios to the plain loop, to
headrace serial and to tf.data. ``--hog`` runs a CPU-busy process beside (a training loop competes
for the CPU too). The last column is this process's CPU time per element (all its threads; process
workers' own CPU is not in it, marked ``+``): on a shared machine it shows the engine's overhead over
the plain loop when wall times are disturbed.

Run: ``python benchmarks/per_element.py [--quick] [--runs N] [--hog] [--shapes tabular,jpeg,python]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable

import numpy as np

import headrace as hr
from _common import alternate, beside_hog, have, paired, rate_rows

FLOATS = {"x": hr.io.FixedLenFeature([16], "float32"), "y": hr.io.FixedLenFeature([], "int64")}
JPEG = {"image": hr.io.FixedLenFeature([], "string"), "label": hr.io.FixedLenFeature([], "int64")}
CROP = (64, 64, 3)


# --- data -----------------------------------------------------------------------------------------
def write_tabular(folder: str, count: int) -> list[str]:
    rng = np.random.default_rng(0)
    paths = [os.path.join(folder, f"tab-{k}.tfrecord") for k in range(4)]
    for k, path in enumerate(paths):
        with hr.io.TFRecordWriter(path) as writer:
            for i in range(k, count, len(paths)):
                writer.write(hr.io.serialize_example({"x": rng.random(16, dtype=np.float32), "y": i}))
    return paths


def write_jpegs(folder: str, count: int) -> list[str]:
    images, labels = hr.image.synthetic_images(count, num_classes=10, height=72, width=72, seed=0)
    paths = [os.path.join(folder, f"jpg-{k}.tfrecord") for k in range(4)]
    for k, path in enumerate(paths):
        with hr.io.TFRecordWriter(path) as writer:
            for i in range(k, count, len(paths)):
                jpeg = hr.image.encode_jpeg(images[i], quality=90)
                writer.write(hr.io.serialize_example({"image": jpeg, "label": int(labels[i])}))
    return paths


# --- the per-element functions (headrace and the plain loop call the same ones) ------------------------
def parse_tabular(record):
    ex = hr.io.parse_single_example(record, FLOATS)
    return ex["x"], ex["y"]


def parse_batch(records):
    ex = hr.io.parse_example(records, FLOATS)
    return ex["x"], ex["y"]


def decode_augment(record, rng):
    ex = hr.io.parse_single_example(record, JPEG)
    pixels = hr.image.decode_jpeg(ex["image"], channels=3)
    pixels = hr.image.random_crop(pixels, CROP, rng=rng)
    pixels = hr.image.random_flip_left_right(pixels, rng=rng)
    return hr.image.convert_image_dtype(pixels, np.float32), ex["label"]


def python_work(record):
    # Pure Python, holds the GIL: a tokenizer-like pass over the bytes.
    text = record.hex()
    counts: dict[str, int] = {}
    for i in range(0, 400, 2):
        pair = text[i : i + 2]
        counts[pair] = counts.get(pair, 0) + 1
    return np.int64(len(counts)), np.int64(sum(counts.values()))


SHAPES = {
    # name: (writer, per-element fn, takes rng, batch size, shuffle)
    "tabular": (write_tabular, parse_tabular, False, 256, True),
    "jpeg": (write_jpegs, decode_augment, True, 128, False),
    "python": (write_tabular, python_work, False, 256, False),
}


# --- the rows -----------------------------------------------------------------------------------------
#: (row name, dataset) of the rows meant to run vectorised: after the warm-up the benchmark prints how
#: each ran, so a map that fell back to per element (a trace that failed) is seen, not just slower.
VECTORISED: list[tuple[str, hr.data.Dataset]] = []


def how_it_ran(ds: hr.data.Dataset) -> str:
    lines = ds.explain().splitlines()
    if "vectorised maps:" not in lines:
        return "no vectorisable map"
    return lines[lines.index("vectorised maps:") + 1].split(": ", 1)[-1]


def plain_loop(paths: list[str], fn: Callable, seeded: bool, batch: int) -> Callable[[], int]:
    records = [r for r in hr.TFRecordDataset(paths).as_numpy_iterator()]  # read once: the loop's ceiling

    def run() -> int:
        rng = np.random.default_rng(1)
        out, n = [], 0
        for record in records:
            out.append(fn(record, rng) if seeded else fn(record))
            if len(out) == batch:
                n += len(np.stack([o[0] for o in out]))
                out = []
        return n + len(out)

    return run


def headrace_rows(paths: list[str], fn: Callable, seeded: bool, batch: int, shuffle: bool) -> dict:
    # These rows measure the per-element map (its function called once per element): vectorisation
    # off, which would otherwise trace both shapes' functions (map+batch, map+shuffle+batch).
    per_element = hr.Options()
    per_element.experimental_optimization.map_vectorization = False

    def build(vectorise: bool, **kwargs) -> hr.data.Dataset:
        ds = hr.TFRecordDataset(paths).map(fn, seed=1 if seeded else None, **kwargs)
        if shuffle:
            ds = ds.shuffle(1024, seed=1)
        ds = ds.batch(batch).prefetch(hr.AUTOTUNE)
        return ds if vectorise else ds.with_options(per_element)

    def pipeline(vectorise: bool = False, **kwargs) -> Callable[[], int]:
        if vectorise:  # built once, iterated per run (as epochs): the trace falls in the warm-up
            ds = build(True, **kwargs)
            VECTORISED.append(("headrace AUTOTUNE, vectorised", ds))
            return lambda: sum(len(b[1]) for b in ds)
        return lambda: sum(len(b[1]) for b in build(False, **kwargs))

    return {
        "headrace serial": pipeline(),
        "headrace 2 threads": pipeline(num_parallel_calls=2, executor="thread"),
        "headrace 2 processes": pipeline(num_parallel_calls=2, executor="process"),
        "headrace AUTOTUNE": pipeline(num_parallel_calls=hr.AUTOTUNE),
        "headrace AUTOTUNE, vectorised": pipeline(True, num_parallel_calls=hr.AUTOTUNE),
    }


def tf_row(shape: str, paths: list[str], batch: int) -> Callable[[], int] | None:
    if not have("tensorflow"):
        return None
    import tensorflow as tf  # noqa: PLC0415

    if shape == "tabular":
        spec = {"x": tf.io.FixedLenFeature([16], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}

        def fn(r):
            ex = tf.io.parse_single_example(r, spec)
            return ex["x"], ex["y"]

    elif shape == "jpeg":
        spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}

        def fn(r):
            ex = tf.io.parse_single_example(r, spec)
            pixels = tf.io.decode_jpeg(ex["image"], channels=3)
            pixels = tf.image.random_crop(pixels, CROP, seed=1)
            pixels = tf.image.random_flip_left_right(pixels, seed=1)
            return tf.image.convert_image_dtype(pixels, tf.float32), ex["label"]

    else:

        def fn(r):
            out = tf.numpy_function(lambda b: python_work(bytes(b)), [r], (tf.int64, tf.int64))
            return out[0], out[1]

    def run() -> int:
        ds = tf.data.TFRecordDataset(paths).map(fn, num_parallel_calls=tf.data.AUTOTUNE)
        if shape == "tabular":
            ds = ds.shuffle(1024, seed=1)
        ds = ds.batch(batch).prefetch(tf.data.AUTOTUNE)
        return sum(int(b[1].shape[0]) for b in ds)

    return run


class _Records:
    """A torch IterableDataset over the records, split between DataLoader workers."""

    def __init__(self, paths: list[str], fn: Callable, seeded: bool):
        self.paths, self.fn, self.seeded = paths, fn, seeded

    def __iter__(self):
        import torch.utils.data as tud  # noqa: PLC0415

        info = tud.get_worker_info()
        paths = self.paths if info is None else self.paths[info.id :: info.num_workers]
        rng = np.random.default_rng(0 if info is None else info.id)
        for record in hr.TFRecordDataset(paths).as_numpy_iterator():
            yield self.fn(record, rng) if self.seeded else self.fn(record)


def torch_row(paths: list[str], fn: Callable, seeded: bool, batch: int) -> Callable[[], int] | None:
    if not have("torch"):
        return None
    import torch.utils.data as tud  # noqa: PLC0415

    records = _Records(paths, fn, seeded)
    dataset = type("RecordsDataset", (tud.IterableDataset,), {"__iter__": lambda self: iter(records)})()

    def collate(items):
        return np.stack([i[0] for i in items]), np.array([i[1] for i in items])

    def run() -> int:
        loader = tud.DataLoader(dataset, batch_size=batch, num_workers=2, collate_fn=collate)
        return sum(len(b[1]) for b in loader)

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer records")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--hog", action="store_true", help="a CPU-busy process beside")
    parser.add_argument("--shapes", default="tabular,jpeg,python")
    args = parser.parse_args(argv)
    counts = {"tabular": 20_000, "jpeg": 2_000, "python": 10_000}
    if args.quick:
        counts = {k: v // 4 for k, v in counts.items()}
    print(f"per-element pipelines: {os.cpu_count()} CPUs, runs={args.runs}, hog={args.hog}")
    with (
        beside_hog(args.hog),
        tempfile.TemporaryDirectory(prefix="headrace-per-element-") as folder,
    ):
        for shape in args.shapes.split(","):
            write, fn, seeded, batch, shuffle = SHAPES[shape]
            paths = write(folder, counts[shape])
            rows: dict[str, Callable[[], int] | None] = {"plain loop": plain_loop(paths, fn, seeded, batch)}
            rows.update(headrace_rows(paths, fn, seeded, batch, shuffle))
            if shape == "tabular":
                # Built once and iterated per run, as the map+batch rows below, so they compare alike.
                first = hr.TFRecordDataset(paths).batch(256).map(parse_batch).prefetch(hr.AUTOTUNE)
                rows["headrace batch-then-parse"] = lambda first=first: sum(len(b[1]) for b in first)

                def map_then_batch(paths=paths, vectorise: bool = True) -> Callable[[], int]:
                    # map directly followed by batch (no shuffle between): vectorised when on. The
                    # dataset is built once and iterated per run, as epochs are: its trace and its
                    # first-batch check (one batch computed per element too) happen once, at the
                    # warm-up iteration.
                    options = hr.Options()
                    options.experimental_optimization.map_vectorization = vectorise
                    ds = hr.TFRecordDataset(paths).map(parse_tabular, num_parallel_calls=hr.AUTOTUNE)
                    ds = ds.batch(256).prefetch(hr.AUTOTUNE).with_options(options)
                    if vectorise:
                        VECTORISED.append(("AUTOTUNE map+batch, vectorised", ds))
                    return lambda: sum(len(b[1]) for b in ds)

                rows["AUTOTUNE map+batch, vectorised"] = map_then_batch()
                rows["AUTOTUNE map+batch, per element"] = map_then_batch(vectorise=False)
            rows["tf.data AUTOTUNE"] = tf_row(shape, paths, batch)
            rows["DataLoader(num_workers=2)"] = torch_row(paths, fn, seeded, batch)
            live = {name: run for name, run in rows.items() if run is not None}
            # AUTOTUNE runs right after serial in each round (printed in the rows' order): their paired
            # ratio below is what a slow phase of a shared machine does not move
            order = ["headrace serial", "headrace AUTOTUNE"]
            live = {**{k: live[k] for k in order}, **{k: v for k, v in live.items() if k not in order}}
            for run in live.values():  # warm-up: kernels, workers, caches
                run()
            for name, ds in VECTORISED:
                print(f"  ({shape}) {name}: {how_it_ran(ds)}")
            VECTORISED.clear()
            times: dict[str, list[float]] = {}
            rates, cpu = alternate(live, args.runs, times)
            print(f"\n{shape} ({counts[shape]:,} records, batch {batch}), elements/s, median of {args.runs}")
            rate_rows(
                rows,
                rates,
                {"loop": "plain loop", "serial": "headrace serial", "tf.data": "tf.data AUTOTUNE"},
                "skipped (not installed)",
                # "+": the parent's CPU only (processes, DataLoader workers)
                lambda name, cpu=cpu: (
                    f"{cpu[name]:8.1f}{'+' if 'process' in name or 'DataLoader' in name else ' '}us CPU/el"
                ),
            )
            if "AUTOTUNE map+batch, vectorised" in rates:
                vectorised = rates["AUTOTUNE map+batch, vectorised"]
                print(
                    "  map(parse_single_example).batch vectorised / batch-then-parse: "
                    f"{vectorised / rates['headrace batch-then-parse']:.2f}; / per element: "
                    f"{vectorised / rates['AUTOTUNE map+batch, per element']:.2f}"
                    + (
                        f"; / tf.data: {vectorised / rates['tf.data AUTOTUNE']:.2f}"
                        if "tf.data AUTOTUNE" in rates
                        else ""
                    )
                )
            fixed = [rates[k] for k in ("headrace serial", "headrace 2 threads", "headrace 2 processes")]
            print(f"  AUTOTUNE / best fixed setting: {rates['headrace AUTOTUNE'] / max(fixed):.2f}")
            print(
                f"  AUTOTUNE / serial, paired rounds: {paired(times, 'headrace AUTOTUNE', 'headrace serial')}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
