"""Per-op cost: microseconds per call of each headrace op people call per element, against its raw kernel.

Goal (issue 21): every such op costs little more than its kernel -- ``parse_single_example`` at most
10 us a record, every image op at most 5 us above the library call or numpy expression doing its work.

Kernels (the least any implementation must pay):

- Example parsing: no protobuf-free reference parses one Example; the kernel column is headrace's own
  compiled batch parser per record, amortised over a batch of 256 (what one record costs once the
  fixed costs are shared). The goal for one record is absolute: 10 us.
- JPEG: ``simplejpeg.decode_jpeg`` with the same options; PNG: Pillow's ``Image.open`` + ``np.asarray``.
- crops, flips: the numpy slice (random ones: with the same draws from a generator made beforehand;
  with ``seed`` the op must give ``default_rng(seed)``'s draws, the kernel still draws from one made once);
  ``convert_image_dtype``: ``image.astype(np.float32) * np.float32(1 / 255)``; ``resize``: the
  compiled bilinear kernel on precomputed taps; ``decode_raw``: ``np.frombuffer(...).copy()``;
  ``decode_csv``: ``bytes.split`` and the per-field conversions.
- tf: the TensorFlow op, eager, one call per element, when TensorFlow is installed (an optional peer).

Each op and its kernel run interleaved, ``--repeats`` rounds of ``--number`` calls each; the table
shows the MINIMUM over rounds of the time per call (the least disturbed round: the machine is shared)
and, after ``|``, the median. Run: ``python benchmarks/per_op.py [--quick] [--timer wall|cpu]``.
``--timer cpu`` counts this thread's CPU time only (not the time the OS gave other processes).
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from collections.abc import Callable

import numpy as np

import headrace as hr
import headrace.image as hi
from _common import have
from io_data import import_tensorflow


def make_inputs() -> dict:
    rng = np.random.default_rng(0)
    image, _ = hi.synthetic_image(0, height=72, width=72)
    jpeg = hi.encode_jpeg(image, quality=90)
    png = hi.encode_png(image)
    image_spec = {"image": hr.io.FixedLenFeature([], "string"), "label": hr.io.FixedLenFeature([], "int64")}
    tabular_spec = {"x": hr.io.FixedLenFeature([16], "float32"), "label": hr.io.FixedLenFeature([], "int64")}
    return {
        "image": image,
        "jpeg": jpeg,
        "png": png,
        "image_record": hr.io.serialize_example({"image": jpeg, "label": 3}),
        "image_spec": image_spec,
        "tabular_record": hr.io.serialize_example(
            {"x": rng.standard_normal(16).astype(np.float32), "label": 7}
        ),
        "tabular_spec": tabular_spec,
        "raw": rng.integers(0, 256, 4 * 256, dtype=np.uint8).tobytes(),
        "csv": b"17,2.5,hello,-3",
    }


BATCH = 256  # records per call of the batch parser, the kernel of the parsing rows


def rows(inputs: dict, tf) -> list[tuple[str, Callable, Callable | None, Callable | None]]:
    """(op, headrace call, kernel call, tf call) for each op; a parsing row's kernel parses BATCH
    records a call (its time is divided by BATCH)."""
    import simplejpeg  # noqa: PLC0415 (headrace's image extra)
    from PIL import Image  # noqa: PLC0415

    from headrace.image._compiled import kernels  # noqa: PLC0415
    from headrace.image.resize import _linear_taps  # noqa: PLC0415

    image, jpeg, png = inputs["image"], inputs["jpeg"], inputs["png"]
    scale = np.float32(1 / 255)
    ours_rng, kernel_rng = np.random.default_rng(1), np.random.default_rng(1)

    def batch_per_record(record: bytes, spec: dict) -> Callable:
        batch = [record] * BATCH
        hr.io.parse_example(batch, spec)
        return lambda: hr.io.parse_example(batch, spec)

    def pillow_png() -> np.ndarray:
        with Image.open(io.BytesIO(png)) as im:
            return np.asarray(im)

    def kernel_random_crop() -> np.ndarray:
        top = int(kernel_rng.integers(0, 72 - 64 + 1))
        left = int(kernel_rng.integers(0, 72 - 64 + 1))
        return image[top : top + 64, left : left + 64]

    def kernel_random_flip() -> np.ndarray:
        return image[:, ::-1] if kernel_rng.random() < 0.5 else image

    taps = _linear_taps(72, 64), _linear_taps(72, 64)

    def kernel_resize() -> np.ndarray:
        out = np.empty((1, 64, 64, 3), dtype=np.float32)
        kernels().resize_bilinear(image[None], *taps[0], *taps[1], out)
        return out[0]

    def kernel_csv() -> list:
        a, b, c, d = inputs["csv"].split(b",")
        return [np.int32(int(a)), np.float32(float(b)), c, np.int64(int(d))]

    csv_defaults = [[0], [0.0], [""], [np.int64(0)]]
    out: list[tuple[str, Callable, Callable | None, Callable | None]] = [
        (
            "parse_single_example (bytes + int64)",
            lambda: hr.io.parse_single_example(inputs["image_record"], inputs["image_spec"]),
            batch_per_record(inputs["image_record"], inputs["image_spec"]),
            None,
        ),
        (
            "parse_single_example (16 floats + int64)",
            lambda: hr.io.parse_single_example(inputs["tabular_record"], inputs["tabular_spec"]),
            batch_per_record(inputs["tabular_record"], inputs["tabular_spec"]),
            None,
        ),
        (
            "parse_example, one record (16 floats + int64)",
            lambda: hr.io.parse_example([inputs["tabular_record"]], inputs["tabular_spec"]),
            batch_per_record(inputs["tabular_record"], inputs["tabular_spec"]),
            None,
        ),
        (
            "decode_jpeg 72x72",
            lambda: hi.decode_jpeg(jpeg),
            lambda: simplejpeg.decode_jpeg(
                jpeg, colorspace="RGB", fastdct=True, min_height=72, min_width=72, min_factor=1
            ),
            None,
        ),
        ("decode_png 72x72", lambda: hi.decode_png(png), pillow_png, None),
        (
            "decode_image (JPEG)",
            lambda: hi.decode_image(jpeg),
            lambda: simplejpeg.decode_jpeg(jpeg, fastdct=True),
            None,
        ),
        (
            "crop_to_bounding_box",
            lambda: hi.crop_to_bounding_box(image, 4, 4, 64, 64),
            lambda: image[4:68, 4:68],
            None,
        ),
        ("central_crop 0.875", lambda: hi.central_crop(image, 0.875), lambda: image[4:68, 4:68], None),
        (
            "random_crop 64x64 (rng)",
            lambda: hi.random_crop(image, (64, 64), rng=ours_rng),
            kernel_random_crop,
            None,
        ),
        ("flip_left_right", lambda: hi.flip_left_right(image), lambda: image[:, ::-1], None),
        (
            "random_flip_left_right (rng)",
            lambda: hi.random_flip_left_right(image, rng=ours_rng),
            kernel_random_flip,
            None,
        ),
        (
            "random_flip_left_right (seed=1)",  # default_rng(1)'s draws, without building it per call
            lambda: hi.random_flip_left_right(image, seed=1),
            kernel_random_flip,
            None,
        ),
        (
            "random_flip_left_right (no rng, no seed)",
            lambda: hi.random_flip_left_right(image),
            kernel_random_flip,
            None,
        ),
        (
            "random_crop 64x64 (seed=1)",
            lambda: hi.random_crop(image, (64, 64), seed=1),
            kernel_random_crop,
            None,
        ),
        ("resize bilinear 72->64", lambda: hi.resize(image, (64, 64)), kernel_resize, None),
        (
            "convert_image_dtype uint8->float32",
            lambda: hi.convert_image_dtype(image, np.float32),
            lambda: image.astype(np.float32) * scale,
            None,
        ),
        (
            "decode_raw 1 KiB as float32",
            lambda: hr.io.decode_raw(inputs["raw"], "float32"),
            lambda: np.frombuffer(inputs["raw"], np.float32).copy(),
            None,
        ),
        (
            "decode_csv one record, 4 fields",
            lambda: hr.io.decode_csv(inputs["csv"], csv_defaults),
            kernel_csv,
            None,
        ),
    ]
    if tf is not None:
        out = [(name, ours, kernel, tf_call(tf, name, inputs)) for name, ours, kernel, _ in out]
    return out


def tf_call(tf, name: str, inputs: dict) -> Callable | None:
    """TensorFlow's op for the row, eager, on tensors made beforehand (None where tf has no such op)."""
    image = tf.constant(inputs["image"])
    jpeg, png = tf.constant(inputs["jpeg"]), tf.constant(inputs["png"])
    spec_of = {
        "bytes + int64": (inputs["image_record"], inputs["image_spec"]),
        "16 floats + int64": (inputs["tabular_record"], inputs["tabular_spec"]),
    }
    for marker, (record, spec) in spec_of.items():
        if marker in name:
            dtypes = {"float32": tf.float32, "int64": tf.int64, "object": tf.string}
            their = {k: tf.io.FixedLenFeature(list(v.shape), dtypes[str(v.dtype)]) for k, v in spec.items()}
            if name.startswith("parse_example"):
                batch = tf.constant([record])
                return lambda: tf.io.parse_example(batch, their)
            scalar = tf.constant(record)
            return lambda: tf.io.parse_single_example(scalar, their)
    calls = {
        "decode_jpeg": lambda: tf.io.decode_jpeg(jpeg),
        "decode_png": lambda: tf.io.decode_png(png),
        "decode_image": lambda: tf.io.decode_image(jpeg),
        "crop_to_bounding_box": lambda: tf.image.crop_to_bounding_box(image, 4, 4, 64, 64),
        "central_crop": lambda: tf.image.central_crop(image, 0.875),
        "random_crop": lambda: tf.image.random_crop(image, (64, 64, 3)),
        "flip_left_right": lambda: tf.image.flip_left_right(image),
        "random_flip_left_right": lambda: tf.image.random_flip_left_right(image),
        "resize": lambda: tf.image.resize(image, (64, 64)),
        "convert_image_dtype": lambda: tf.image.convert_image_dtype(image, tf.float32),
        "decode_raw": lambda: tf.io.decode_raw(tf.constant(inputs["raw"]), tf.float32),
        "decode_csv": lambda: tf.io.decode_csv(
            tf.constant(inputs["csv"]), [[0], [0.0], [""], [tf.constant(0, tf.int64)]]
        ),
    }
    return calls.get(name.split(" ")[0])


def per_call(fn: Callable, number: int, timer: Callable[[], float]) -> float:
    start = timer()
    for _ in range(number):
        fn()
    return (timer() - start) / number * 1e6


def measure(
    calls: list[Callable | None], number: int, repeats: int, timer
) -> list[tuple[float, float] | None]:
    """(min, median) us per call of each call, rounds interleaved so that load hits them alike."""
    times: list[list[float]] = [[] for _ in calls]
    for fn in calls:
        if fn is not None:
            per_call(fn, max(number // 10, 1), timer)  # warm up: compile, fill caches
    order = [i for i, fn in enumerate(calls) if fn is not None]
    for round_ in range(repeats):
        for i in order[round_ % len(order) :] + order[: round_ % len(order)]:  # each goes first in turn
            times[i].append(per_call(calls[i], number, timer))
    return [(min(s), statistics.median(s)) if s else None for s in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (a smoke run)")
    parser.add_argument("--number", type=int, default=1000, help="calls per round")
    parser.add_argument("--repeats", type=int, default=15, help="rounds")
    parser.add_argument("--timer", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--only", default="", help="only the ops whose name contains this text")
    args = parser.parse_args()
    number, repeats = (50, 3) if args.quick else (args.number, args.repeats)
    timer = time.perf_counter if args.timer == "wall" else time.thread_time
    tf = import_tensorflow()
    if tf is None:
        print("(tensorflow is not installed: its column is empty; `make peers` installs it)")
    if not (have("simplejpeg") and have("PIL")):
        raise SystemExit("per_op.py needs headrace's image extra (simplejpeg, Pillow)")
    table = [row for row in rows(make_inputs(), tf) if args.only in row[0]]
    print(
        f"\nus per call, min | median of {repeats} rounds of {number} calls ({args.timer} clock); "
        "added = headrace - kernel (min)"
    )
    header = f"{'op':<48} {'headrace':>15} {'kernel':>15} {'added':>7} {'ratio':>6} {'tf':>15}"
    print(header)
    print("-" * len(header))
    for name, ours, kernel, theirs in table:
        batched = name.startswith("parse")
        # A call of the batch parser does BATCH records' work: fewer calls keep the rounds alike.
        calls = [ours, kernel, theirs]
        if batched:
            ours_t, tf_t = measure([ours, theirs], number, repeats, timer)
            (kernel_t,) = measure([kernel], max(number // BATCH, 2), repeats, timer)
            kernel_t = kernel_t and (kernel_t[0] / BATCH, kernel_t[1] / BATCH)
        else:
            ours_t, kernel_t, tf_t = measure(calls, number, repeats, timer)
        assert ours_t is not None

        def cell(t: tuple[float, float] | None) -> str:
            return f"{t[0]:6.1f} | {t[1]:6.1f}" if t else f"{'-':>15}"

        added = f"{ours_t[0] - kernel_t[0]:7.1f}" if kernel_t else f"{'-':>7}"
        ratio = f"{ours_t[0] / kernel_t[0]:5.2f}x" if kernel_t else f"{'-':>6}"
        print(f"{name:<48} {cell(ours_t)} {cell(kernel_t)} {added} {ratio} {cell(tf_t)}", flush=True)


if __name__ == "__main__":
    main()
