"""``python -m headrace.warmup``: compile headrace's kernels ahead of the first run.

Runs the record, parsing and image operations a pipeline uses, on tiny inputs, so that numba compiles
their kernels for the common argument types into the kernel cache (``core/jit.py``). The wheel build
(``setup.py``) and ``make`` run it, so the first batch of a fresh install does not wait for the compiler.
Kernels for argument types not covered here compile on first use, once, and are cached too.

Prints how many kernel signatures were compiled or loaded.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import Any

import numpy as np


def _records() -> None:
    from . import io  # noqa: PLC0415
    from .dataset import TFRecordDataset  # noqa: PLC0415

    examples = [
        io.serialize_example(
            {
                "image": b"\xff\xd8" + bytes(20),
                "label": index,
                "floats": np.arange(4, dtype=np.float32) + index,
                "ids": list(range(index % 3)),
                "words": [b"a", b"bc"][: index % 3],
            }
        )
        for index in range(8)
    ]
    with tempfile.TemporaryDirectory(prefix="headrace-warmup-") as folder:
        for compression in ("", "GZIP"):
            path = os.path.join(folder, f"w{compression}.tfrecord")
            with io.TFRecordWriter(path, compression_type=compression) as writer:
                for record in examples:
                    writer.write(record)
            for batch in TFRecordDataset(path, compression_type=compression).batch(4):
                io.parse_example(
                    batch,
                    {
                        "image": io.FixedLenFeature([], "string"),
                        "label": io.FixedLenFeature([], "int64"),
                        "floats": io.FixedLenFeature([4], "float32"),
                        "ids": io.VarLenFeature("int64"),
                        "words": io.VarLenFeature("string"),
                        "ragged": io.RaggedFeature("float32", "floats"),
                    },
                )
        index_path = os.path.join(folder, "w.tfrecord")
        io.build_index(index_path)
        for record in examples[:2]:
            io.parse_single_example(
                record,
                {"label": io.FixedLenFeature([], "int64"), "floats": io.FixedLenFeature([4], "float32")},
            )


def _images() -> None:
    from . import image  # noqa: PLC0415

    rng = np.random.default_rng(0)
    for dtype in (np.uint8, np.float32):
        pixels = (rng.random((2, 12, 12, 3)) * (255 if dtype == np.uint8 else 1)).astype(dtype)
        for batch in (pixels, pixels[0]):
            for method in ("bilinear", "nearest", "bicubic", "area", "lanczos3", "mitchellcubic"):
                image.resize(batch, (7, 9), method=method)
            image.resize(batch, (7, 9), antialias=True)
            image.resize(batch[..., ::-1, :], (7, 9))  # a flipped view (random_flip, then resize)
            image.adjust_brightness(batch, 0.1)
            image.adjust_contrast(batch, 1.3)
            image.adjust_saturation(batch, 1.3)
            image.adjust_hue(batch, 0.1)
            image.random_flip_left_right(batch, rng=rng)
            image.random_flip_up_down(batch[..., 1:, :], rng=rng)  # a window (a crop's view)
            image.random_crop(batch, (8, 8, 3) if batch.ndim == 3 else (2, 8, 8, 3), rng=rng)
            image.rot90(batch)
    image.normalize(np.ones((4, 4, 3), np.float32), (0.5, 0.5, 0.5), (0.2, 0.2, 0.2))


def _kernel_modules() -> list[Any]:
    modules = []
    for name in (
        "headrace.io.records.crc_kernels",
        "headrace.io.records.framing_kernels",
        "headrace.io.codec.example_kernels",
    ):
        modules.append(__import__(name, fromlist=["_"]))
    try:
        modules.append(__import__("headrace.image.kernels", fromlist=["_"]))
    except ImportError:  # pragma: no cover (numba always brings numpy; the image extra is optional)
        pass
    return modules


def run(verbose: bool = True) -> dict[str, Any]:
    """Compile (or load) the kernels; returns how many signatures are ready and the seconds taken."""
    start = time.perf_counter()
    _records()
    try:
        _images()
    except ImportError as exc:  # the image extra is not installed: its kernels compile on first use
        if verbose:
            print(f"headrace warmup: images skipped ({exc})", file=sys.stderr)
    # Kernels loaded from the cache count too; callees inlined into them have no signatures of their own.
    signatures = sum(
        len(value.signatures)
        for module in _kernel_modules()
        for value in vars(module).values()
        if hasattr(value, "signatures") and hasattr(value, "py_func")
    )
    seconds = time.perf_counter() - start
    if verbose:
        from .core.jit import writable_dir  # noqa: PLC0415

        print(
            f"headrace warmup: {signatures} kernel signatures ready in {seconds:.1f} s "
            f"(cache: {writable_dir() or 'none writable'})",
            file=sys.stderr,
        )
    return {"signatures": signatures, "seconds": seconds}


if __name__ == "__main__":
    run()
