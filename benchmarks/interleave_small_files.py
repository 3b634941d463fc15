"""Parallel interleave over many small TFRecord files against serial (issue 22, item 9).

``FILES`` files of ``RECORDS`` records each (local disk, warm page cache), read with
``Dataset.list_files(...).interleave(TFRecordDataset, cycle_length=8)``: serial, with
``num_parallel_calls=AUTOTUNE`` and with ``num_parallel_calls=8``, plus tf.data's parallel interleave when
TensorFlow is importable. Opening a file costs as much as reading its few records, so the parallel
variants must not spend more on starting a reader per file than they save. Goal: parallel at least as
fast as serial. All variants alternate within each repeat; medians of ``REPEATS`` runs.

    python benchmarks/interleave_small_files.py [files] [records] [--hog] [--repeats N]

``--hog`` runs a CPU-busy process beside (a training loop always competes for the cores). Besides the
ratio of medians, each variant's median *paired* ratio (serial's time over the variant's within the same
repeat) is printed: on a machine whose speed drifts it is the steadier figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import headrace as hr
from _common import beside_hog, have

FILES = 500
RECORDS = 20
CYCLE = 8
REPEATS = 7


def make_files(directory: str, files: int, records: int) -> str:
    for index in range(files):
        with hr.io.TFRecordWriter(os.path.join(directory, f"part-{index:05d}.tfrecord")) as writer:
            for i in range(records):
                writer.write(b"%d-%d" % (index, i) * 8)
    return os.path.join(directory, "part-*.tfrecord")


VERDICTS: dict = {}  # the parallel variants' last trial verdicts (counters' executor_reason)


def headrace_run(pattern: str, calls) -> int:
    ds = hr.Dataset.list_files(pattern, shuffle=False).interleave(
        hr.TFRecordDataset, cycle_length=CYCLE, num_parallel_calls=calls
    )
    with iter(ds) as it:
        count = sum(1 for _ in it)
        if calls is not None:
            VERDICTS[calls] = it.root.counters()["executor_reason"]
    return count


def tf_run(pattern: str) -> int:
    import tensorflow as tf  # noqa: PLC0415

    ds = tf.data.Dataset.list_files(pattern, shuffle=False).interleave(
        tf.data.TFRecordDataset, cycle_length=CYCLE, num_parallel_calls=tf.data.AUTOTUNE
    )
    return sum(1 for _ in ds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", type=int, nargs="?", default=FILES)
    parser.add_argument("records", type=int, nargs="?", default=RECORDS)
    parser.add_argument("--hog", action="store_true", help="a CPU-busy process beside")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args()
    files, records, hog, repeats = args.files, args.records, args.hog, args.repeats
    with (
        tempfile.TemporaryDirectory(prefix="headrace-bench-interleave-") as directory,
        beside_hog(hog),
    ):
        pattern = make_files(directory, files, records)
        variants = {
            "serial": lambda: headrace_run(pattern, None),
            "AUTOTUNE": lambda: headrace_run(pattern, hr.AUTOTUNE),
            f"num_parallel_calls={CYCLE}": lambda: headrace_run(pattern, CYCLE),
        }
        if have("tensorflow"):
            variants["tf.data AUTOTUNE"] = lambda: tf_run(pattern)
        else:
            print("(tensorflow not importable: tf.data skipped)")
        for run in variants.values():  # warm: page cache, kernels, imports
            assert run() == files * records
        times: dict[str, list[float]] = {name: [] for name in variants}
        cpu: dict[str, list[float]] = {name: [] for name in variants}
        names = list(variants)
        for repeat in range(repeats):
            for name in names[repeat % len(names) :] + names[: repeat % len(names)]:  # no fixed order
                start, start_cpu = time.perf_counter(), time.process_time()
                variants[name]()
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
    total = files * records
    print(
        f"{files} files x {records} records, cycle_length={CYCLE}; median of {repeats} runs"
        f"{', beside a CPU hog' if hog else ''}"
    )
    serial = statistics.median(times["serial"])
    for name, values in times.items():
        seconds = statistics.median(values)
        paired = statistics.median(s / v for s, v in zip(times["serial"], values))
        print(
            f"  {name:<24} {seconds:7.3f} s  {total / seconds:10,.0f} records/s  {serial / seconds:5.2f}x serial"
            f"  (paired {paired:4.2f}x; CPU {statistics.median(cpu[name]):6.3f} s)"
        )
    for calls, why in VERDICTS.items():
        print(f"  trial, num_parallel_calls={'AUTOTUNE' if calls == hr.AUTOTUNE else calls}: {why}")
    worst = max(statistics.median(times[n]) for n in variants if n not in ("serial", "tf.data AUTOTUNE"))
    print(f"  parallel at least as fast as serial: {'yes' if worst <= serial * 1.05 else 'NO'}")


if __name__ == "__main__":
    main()
