"""Reading sharded TFRecord files as tf.data users write it: ``TFRecordDataset(shards,
num_parallel_reads=4).batch(256)`` (round-robin over 4 files, tf.data's order), against the same
files read one after the other, on plain and GZIP shards of ~400-byte records.

Rows: headrace files in order, headrace ``num_parallel_reads=4``, and tf.data both ways when
TensorFlow is installed (``PYTHONPATH=src /work/tfvenv/bin/python benchmarks/io_read_shards.py``).
The cycle takes whole rounds (one record from each file) at once while every file has records framed
already, so reading round-robin costs about what reading in order does; it reads on one thread (a
parallel interleave's per-record hand-offs measured slower than that here). Medians of ``--runs``
alternating runs; ratios to headrace in order and to tf.data's same form.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable

import numpy as np

import headrace as hr
from _common import alternate, have, rate_rows

SHARDS, RECORDS = 4, 20_000


def write_shards(folder: str, compression: str) -> list[str]:
    rng = np.random.default_rng(0)
    paths = []
    for k in range(SHARDS):
        path = os.path.join(folder, f"shard-{k}-{compression or 'plain'}.tfrecord")
        with hr.io.TFRecordWriter(path, compression) as writer:
            for _ in range(RECORDS):
                writer.write(rng.integers(0, 50, 400, dtype=np.uint8).tobytes())
        paths.append(path)
    return paths


def rows_for(paths: list[str], compression: str) -> dict[str, Callable[[], int] | None]:
    def ours(reads: int | None) -> Callable[[], int]:
        return lambda: sum(
            len(b) for b in hr.TFRecordDataset(paths, compression, num_parallel_reads=reads).batch(256)
        )

    rows: dict[str, Callable[[], int] | None] = {
        "headrace in order": ours(None),
        "headrace num_parallel_reads=4": ours(4),
        "tf.data in order": None,
        "tf.data num_parallel_reads=4": None,
    }
    if have("tensorflow"):
        import tensorflow as tf  # noqa: PLC0415

        def theirs(reads: int | None) -> Callable[[], int]:
            def run() -> int:
                ds = tf.data.TFRecordDataset(paths, compression, num_parallel_reads=reads).batch(256)
                return sum(int(b.shape[0]) for b in ds)

            return run

        rows["tf.data in order"] = theirs(None)
        rows["tf.data num_parallel_reads=4"] = theirs(4)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="headrace-shards-") as folder:
        for compression in ("", "GZIP"):
            paths = write_shards(folder, compression)
            rows = rows_for(paths, compression)
            live = {name: run for name, run in rows.items() if run is not None}
            for run in live.values():  # warm-up: kernels, page cache
                run()
            rates, _ = alternate(live, args.runs)
            print(
                f"\n{SHARDS} {compression or 'plain'} shards x {RECORDS:,} records of 400 bytes, records/s, median of {args.runs}"
            )
            rate_rows(
                rows,
                rates,
                {"in order": "headrace in order", "tf.data same form": "tf.data num_parallel_reads=4"},
                "skipped (tensorflow not installed)",
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
