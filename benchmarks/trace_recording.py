"""What ``record_calls`` costs: elements/s of the same pipelines with and without a recording.

Recording keeps one tuple per stage call and per worker chunk (the trace's slices); without one,
workers pay one check per chunk. Compared in one run, per pipeline: a serial map + batch, a thread
map, a process map and ``parallelize``, each not recorded (the baseline) and recorded. There is no
peer: tf.data's profiler needs TensorFlow and records a different trace.

    .venv/bin/python benchmarks/trace_recording.py --elements 20000 --repeats 3
"""

from __future__ import annotations

import argparse

import headrace as hr
from _common import median_seconds, report


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
}


def consume(ds: hr.Dataset, recorded: bool) -> None:
    if recorded:
        with hr.profile.record_calls():
            for _ in ds:
                pass
    else:
        for _ in ds:
            pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = args.elements
    for name, make in PIPELINES.items():
        ds = make(n)
        rows = [
            (label, n / median_seconds(lambda r=recorded, d=ds: consume(d, r), repeats=args.repeats))
            for label, recorded in (("not recorded", False), ("recorded", True))
        ]
        report(f"{name}, {n} elements", rows, "elements/s", "not recorded")


if __name__ == "__main__":
    main()
