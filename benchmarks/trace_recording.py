"""What ``record_calls`` costs: elements/s of the same pipelines with and without a recording.

Recording keeps one tuple per stage call and per worker chunk (the trace's slices), and the
stages that hand elements across threads or processes (parallel map, ``parallelize``, prefetch)
note which chunk or producer call each element came from, so the trace's arrows are exact; without
a recording, workers pay one check per chunk and those stages one check per element. Compared in
one run, per pipeline: a serial map + batch, a thread map, a process map, ``parallelize`` and a
prefetch, each not recorded (the baseline) and recorded. The two are run alternately, repeat by
repeat, so a load that changes during the run weighs on both alike; besides elements/s (wall
time), elements per CPU-second of this process (all its threads, not worker processes) is printed:
recording's cost is paid in this process, and CPU time moves less than wall time on a shared
machine. There is no peer: tf.data's profiler needs TensorFlow and records a different trace.

    .venv/bin/python benchmarks/trace_recording.py --elements 20000 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time

import headrace as hr
from _common import report


def work(x):
    total = 0
    for i in range(200):  # about 10 us of pure Python per element
        total += i
    return int(x) + total * 0


PIPELINES = {
    "serial map + batch": lambda n: hr.Dataset.range(n).map(work).batch(64),
    "thread map (2)": lambda n: hr.Dataset.range(n).map(work, 2, executor="thread").batch(64),
    "process map (2)": lambda n: hr.Dataset.range(n).map(work, 2, executor="process").batch(64),
    "parallelize(2)": lambda n: hr.Dataset.range(n).map(work).parallelize(2).batch(64),
    "map + prefetch (per element)": lambda n: hr.Dataset.range(n).map(work).prefetch(8),
}


def consume(ds: hr.Dataset, recorded: bool) -> tuple[float, float]:
    """Wall and CPU seconds (this process) to read ``ds`` once."""
    start, cpu = time.perf_counter(), time.process_time()
    if recorded:
        with hr.profile.record_calls():
            for _ in ds:
                pass
    else:
        for _ in ds:
            pass
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="run the pipelines whose name contains this")
    args = parser.parse_args()
    n = args.elements
    for name, make in PIPELINES.items():
        if args.only not in name:
            continue
        ds = make(n)
        consume(ds, False)  # warm up: worker processes, first-call costs
        times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        for repeat in range(args.repeats):
            for recorded in (False, True) if repeat % 2 == 0 else (True, False):
                times[recorded].append(consume(ds, recorded))
        labels = (("not recorded", False), ("recorded", True))
        for what, unit in ((0, "elements/s"), (1, "elements/CPU-s")):
            rows = [
                (label, n / statistics.median(t[what] for t in times[recorded])) for label, recorded in labels
            ]
            report(f"{name}, {n} elements ({unit})", rows, unit, "not recorded")


if __name__ == "__main__":
    main()
