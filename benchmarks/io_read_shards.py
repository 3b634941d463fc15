"""Reading sharded TFRecord files as tf.data users write it: ``TFRecordDataset(shards,
num_parallel_reads=4).batch(256)`` (round-robin over 4 files, tf.data's order, files read by the
interleave op's parallel iterator), against the same files read one after the other.

Sections: plain and GZIP shards of ~400-byte records (reads that compute briefly: the interleave's
trial keeps the files inline, taking whole rounds at once, so reading round-robin costs about what
reading in order does), GZIP shards of 16 KB records (decompression, which releases the GIL, is most
of the work), and plain shards on a simulated store with ``LATENCY_MS`` per read (reads that wait:
reader threads overlap them). tf.data rows run when TensorFlow is installed
(``PYTHONPATH=src:benchmarks /work/tfvenv/bin/python benchmarks/io_read_shards.py``); it cannot read
the simulated store, so that section has none. Medians of ``--runs`` alternating runs; ratios to
headrace in order and to tf.data's same form. ``--hog`` runs a CPU-busy process beside, as a training
loop competes for the cores.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

import headrace as hr
from _common import alternate, beside_hog, have, rate_rows

SHARDS = 4
LATENCY_MS = 2.0  # per read call of the simulated store
#: (title, compression, records per shard, record bytes, on the simulated store)
CASES = (
    ("plain", "", 20_000, 400, False),
    ("GZIP", "GZIP", 20_000, 400, False),
    ("GZIP, 16 KB records", "GZIP", 1_000, 16_000, False),
    (f"plain, store with {LATENCY_MS:g} ms a read", "", 2_000, 4_000, True),
)


def write_shards(folder: str, compression: str, records: int, size: int) -> list[str]:
    rng = np.random.default_rng(0)
    paths = []
    for k in range(SHARDS):
        path = os.path.join(folder, f"shard-{k}-{compression or 'plain'}-{size}.tfrecord")
        with hr.io.TFRecordWriter(path, compression) as writer:
            for _ in range(records):
                writer.write(rng.integers(0, 50, size, dtype=np.uint8).tobytes())
        paths.append(path)
    return paths


def on_slow_store(paths: list[str]) -> list[str]:
    """The files copied to ``slowmem://``: fsspec's memory store, each read waiting ``LATENCY_MS``
    first (as a network or object store read would; the wait does not hold the GIL)."""
    import fsspec  # noqa: PLC0415
    from fsspec.implementations.memory import MemoryFileSystem  # noqa: PLC0415

    class SlowFile:
        def __init__(self, inner: object):
            self.inner = inner

        def read(self, n: int = -1) -> bytes:
            time.sleep(LATENCY_MS / 1000)
            return self.inner.read(n)  # type: ignore[attr-defined]

        def __getattr__(self, name: str) -> object:
            return getattr(self.inner, name)

        def __enter__(self) -> SlowFile:
            return self

        def __exit__(self, *exc: object) -> None:
            self.inner.close()  # type: ignore[attr-defined]

    class SlowMemoryFileSystem(MemoryFileSystem):
        protocol = "slowmem"

        @classmethod
        def _strip_protocol(cls, path: str) -> str:
            return super()._strip_protocol("memory://" + path.removeprefix("slowmem://"))

        def _open(self, path: str, mode: str = "rb", **kwargs: object) -> SlowFile:
            return SlowFile(super()._open(path, mode, **kwargs))

    fsspec.register_implementation("slowmem", SlowMemoryFileSystem, clobber=True)
    memory = fsspec.filesystem("memory")
    out = []
    for path in paths:
        name = f"/headrace-bench/{os.path.basename(path)}"
        with open(path, "rb") as f:
            memory.pipe(name, f.read())
        out.append("slowmem://" + name.lstrip("/"))
    return out


def rows_for(paths: list[str], compression: str, slow: bool) -> dict[str, Callable[[], int] | None]:
    buffer_size = 64 * 1024 if slow else None  # several reads a file on the store

    def ours(reads: int | None) -> Callable[[], int]:
        return lambda: sum(
            len(b)
            for b in hr.TFRecordDataset(paths, compression, buffer_size, num_parallel_reads=reads).batch(256)
        )

    rows: dict[str, Callable[[], int] | None] = {
        "headrace in order": ours(None),
        "headrace num_parallel_reads=4": ours(4),
        "tf.data in order": None,
        "tf.data num_parallel_reads=4": None,
    }
    if have("tensorflow") and not slow:
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
    parser.add_argument("--hog", action="store_true", help="a CPU-busy process beside (a training loop)")
    args = parser.parse_args(argv)
    print(f"sharded reads: {os.cpu_count()} CPUs, runs={args.runs}, hog={args.hog}")
    with tempfile.TemporaryDirectory(prefix="headrace-shards-") as folder, beside_hog(args.hog):
        for title, compression, records, size, slow in CASES:
            paths = write_shards(folder, compression, records, size)
            if slow:
                paths = on_slow_store(paths)
            rows = rows_for(paths, compression, slow)
            live = {name: run for name, run in rows.items() if run is not None}
            for run in live.values():  # warm-up: kernels, page cache
                run()
            rates, _ = alternate(live, args.runs)
            print(
                f"\n{SHARDS} {title} shards x {records:,} records of {size:,} bytes, records/s, "
                f"median of {args.runs}"
            )
            rate_rows(
                rows,
                rates,
                {"in order": "headrace in order", "tf.data same form": "tf.data num_parallel_reads=4"},
                "skipped (tensorflow not installed)"
                if not slow
                else "skipped (tf.data cannot read the simulated store)",
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
