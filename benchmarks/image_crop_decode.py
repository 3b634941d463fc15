"""The ImageNet training crop: decode-then-crop against decode_and_crop_jpeg and the reduced-scale decode.

Data: JPEGs (quality 90) generated here: ``synthetic_images`` (shapes on gradients with pixel noise,
0.25 bytes per pixel, like a detailed photo) at a typical ImageNet size (375x500) and a large-photo
size (1200x1600), and smooth sine patterns at 1200x1600 (0.08 bytes per pixel). Which part of a decode
JPEG DCT scaling saves depends on the content: it skips inverse-DCT and colour work, not the entropy
decoding, which dominates detailed (large) files. Each image gets one crop window from ``sample_distorted_bounding_box``
(the whole image as the object, area 8%..100%, aspect 3/4..4/3, seeded), the same windows for every row.

Rows, in images per second (single thread, medians of interleaved runs):

- crop only: ``decode_jpeg`` then slice (baseline), ``decode_and_crop_jpeg``; with tensorflow, also
  ``tf.io.decode_jpeg`` then ``tf.slice`` and ``tf.io.decode_and_crop_jpeg`` (which decodes only the
  window's rows and columns);
- crop and resize to 224x224 (bilinear): decode, crop, ``resize`` (baseline) against
  ``decode_crop_and_resize_jpeg`` (JPEG DCT scaling when the window is at least twice the output), and
  the same two through tf (``decode_and_crop_jpeg`` + ``tf.image.resize``).

Also printed: how far the reduced-scale output is from decode-crop-resize (mean and max absolute
difference in 0..255 levels) and how often each DCT scale was used.
Run: ``python benchmarks/image_crop_decode.py [--quick]``. Other load on the machine adds noise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

import headrace.image as hi
from _common import have
from headrace.image.decode_crop import dct_ratio

OUTPUT = (224, 224)


def make_data(height: int, width: int, count: int, smooth: bool) -> tuple[list[bytes], list[list[int]]]:
    if smooth:
        ys, xs = np.mgrid[0:height, 0:width]
        images = [
            np.stack([128 + 90 * np.sin(xs / (30 + i) + c) * np.cos(ys / 55) for c in range(3)], -1).astype(
                np.uint8
            )
            for i in range(count)
        ]
    else:
        images, _ = hi.synthetic_images(count, height=height, width=width, seed=3)
    jpegs = [hi.encode_jpeg(image, quality=90) for image in images]
    rng = np.random.default_rng(0)
    windows = []
    for _ in jpegs:
        begin, size, _ = hi.sample_distorted_bounding_box(
            [height, width, 3], [[[0.0, 0.0, 1.0, 1.0]]], area_range=(0.08, 1.0), rng=rng
        )
        windows.append([int(begin[0]), int(begin[1]), int(size[0]), int(size[1])])
    return jpegs, windows


def per_second(fn: Callable[[], object], items: int, runs: int) -> float:
    fn()  # warm-up: numba compilation, caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return items / statistics.median(times)


def rows_for(jpegs: list[bytes], windows: list[list[int]], runs: int) -> list[tuple[str, str, float]]:
    def decode_then_crop():
        for data, (y, x, h, w) in zip(jpegs, windows):
            np.ascontiguousarray(hi.decode_jpeg(data, channels=3)[y : y + h, x : x + w])

    def decode_and_crop():
        for data, window in zip(jpegs, windows):
            hi.decode_and_crop_jpeg(data, window, channels=3)

    def decode_crop_resize():
        for data, (y, x, h, w) in zip(jpegs, windows):
            hi.resize(hi.decode_jpeg(data, channels=3)[y : y + h, x : x + w], OUTPUT)

    def reduced_scale():
        for data, window in zip(jpegs, windows):
            hi.decode_crop_and_resize_jpeg(data, window, OUTPUT)

    n = len(jpegs)
    rows = [
        ("crop", "headrace decode_jpeg + slice", per_second(decode_then_crop, n, runs)),
        ("crop", "headrace decode_and_crop_jpeg", per_second(decode_and_crop, n, runs)),
        ("crop+resize", "headrace decode + slice + resize", per_second(decode_crop_resize, n, runs)),
        ("crop+resize", "headrace decode_crop_and_resize_jpeg", per_second(reduced_scale, n, runs)),
    ]
    if have("tensorflow"):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        tensors = [tf.constant(data) for data in jpegs]
        crops = [tf.constant(window, tf.int32) for window in windows]

        def tf_decode_then_crop():
            for data, (y, x, h, w) in zip(tensors, windows):
                tf.slice(tf.io.decode_jpeg(data, channels=3), [y, x, 0], [h, w, 3])

        def tf_decode_and_crop():
            for data, window in zip(tensors, crops):
                tf.io.decode_and_crop_jpeg(data, window, channels=3)

        def tf_crop_resize():
            for data, window in zip(tensors, crops):
                tf.image.resize(tf.io.decode_and_crop_jpeg(data, window, channels=3), OUTPUT)

        rows += [
            ("crop", "tf decode_jpeg + slice", per_second(tf_decode_then_crop, n, runs)),
            ("crop", "tf decode_and_crop_jpeg", per_second(tf_decode_and_crop, n, runs)),
            ("crop+resize", "tf decode_and_crop_jpeg + resize", per_second(tf_crop_resize, n, runs)),
        ]
    else:
        print("  (tensorflow not installed: tf rows skipped)")
    return rows


def accuracy(jpegs: list[bytes], windows: list[list[int]]) -> str:
    means, worst, ratios = [], 0.0, []
    for data, window in zip(jpegs, windows):
        fast = hi.decode_crop_and_resize_jpeg(data, window, OUTPUT, antialias=True)
        exact = hi.decode_crop_and_resize_jpeg(data, window, OUTPUT, antialias=True, max_ratio=1)
        difference = np.abs(fast - exact)
        means.append(float(difference.mean()))
        worst = max(worst, float(difference.max()))
        ratios.append(dct_ratio(window[2], window[3], *OUTPUT))
    used = {r: ratios.count(r) for r in sorted(set(ratios))}
    return (
        f"  reduced scale vs decode-crop-resize (both antialiased): mean |diff| {statistics.mean(means):.2f} levels, "
        f"max {worst:.0f}; DCT scales used {used}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer images and runs")
    args = parser.parse_args()
    count, runs = (16, 3) if args.quick else (64, 7)
    for height, width, smooth in [(375, 500, False), (1200, 1600, False), (1200, 1600, True)]:
        jpegs, windows = make_data(height, width, count, smooth)
        kind = "smooth" if smooth else "detailed"
        size = sum(map(len, jpegs)) / count / 1024
        print(
            f"\n{height}x{width} {kind} JPEGs ({size:.0f} KiB each), {count} random crops (images/s, higher is better)"
        )
        rows = rows_for(jpegs, windows, runs)
        for task in ("crop", "crop+resize"):
            task_rows = [(name, rate) for t, name, rate in rows if t == task]
            base = task_rows[0][1]
            for name, rate in task_rows:
                print(f"  {task:<12} {name:<42} {rate:>9,.0f}/s  {rate / base:5.2f}x first row")
        print(accuracy(jpegs, windows))


if __name__ == "__main__":
    sys.exit(main())
