"""AUTOTUNE against a grid of fixed settings and the serial pipeline, on four pipeline shapes.

Shapes (each has one stage slow on purpose): I/O-bound reads (3 ms wait), GIL-releasing decode
(zlib), pure Python, and mixed (decode then Python). For each shape, in one run:

- serial: every map with ``num_parallel_calls=None``;
- the grid: every map with a fixed ``num_parallel_calls`` in 1, 2, 4 ... 64 on the executor a user
  would pick by hand (threads; processes for pure Python, up to 2x the CPUs: more would only queue);
- AUTOTUNE: ``num_parallel_calls=AUTOTUNE`` with ``executor=None`` (measured choice) and
  ``prefetch(AUTOTUNE)``, built afresh for every run, so every run pays its probe and tuning;
- tf.data AUTOTUNE with ``py_function`` when TensorFlow is installed.

All of it twice: on the machine as it is, and with a second process spinning on a core (a CPU hog).
For the I/O-bound shape it also prints how long AUTOTUNE took, from its first element, to run at 0.9
of the grid's best rate (measured over 0.25 s windows).

Goals (issue 10): AUTOTUNE >= 0.95x the grid's best on every shape, quiet and with the hog; never
slower than serial; the I/O-bound shape at 0.9 of the best within 2 s. The machine is shared: rates
are medians of runs that alternate with each other, and ratios are what to compare.
Run: ``python benchmarks/autotune_shapes.py [--quick] [--no-hog]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import zlib
from collections.abc import Callable

import numpy as np

import headrace as hr
from _common import beside_hog, have

AUTO = hr.AUTOTUNE
GRID = (1, 2, 4, 8, 16, 32, 64)
STEP_SECONDS = 0.0002  # the training step: a fast consumer, so the input pipeline is what is measured


def io_read(x):
    time.sleep(0.003)  # a storage read with 3 ms latency: releases the GIL
    return np.full(64, x, np.int64)


PAYLOAD = np.random.default_rng(0).integers(0, 8, 50_000, dtype=np.uint8).tobytes()


def gil_free_decode(x):
    data = zlib.compress(PAYLOAD, 6)  # zlib lets go of the GIL
    return np.frombuffer(zlib.decompress(data), np.uint8)[: 64 + int(np.ravel(x)[0]) % 2]


def pure_python(x):
    total = 0
    value = int(np.ravel(x)[0])
    for i in range(6_000):
        total += (i * value) % 7
    return total


SHAPES: dict[str, tuple[list[Callable], str]] = {
    # name: (the slow stages' functions in order, the executor a user would set by hand)
    "I/O-bound reads": ([io_read], "thread"),
    "GIL-releasing decode": ([gil_free_decode], "thread"),
    "pure Python": ([pure_python], "process"),
    "mixed (decode + Python)": ([gil_free_decode, pure_python], "thread"),
}


def build(shape: str, parallelism, executor) -> hr.Dataset:
    functions, _ = SHAPES[shape]
    ds = hr.Dataset.range(10**9)  # runs are timed, not counted: every variant gets the same seconds
    for fn in functions:
        ds = ds.map(fn, num_parallel_calls=parallelism, executor=executor, name=fn.__name__)
    return ds.prefetch(AUTO if parallelism == AUTO else 2) if parallelism is not None else ds


def run(ds: hr.Dataset, seconds: float) -> tuple[float, list[float]]:
    """Elements/s over ``seconds`` from ``iter()`` (start-up, probing and tuning included), and each
    element's arrival time since the first."""
    arrivals = []
    it = iter(ds)
    start = time.perf_counter()
    for _ in it:
        now = time.perf_counter()
        arrivals.append(now)
        if now - start >= seconds:
            break
        time.sleep(STEP_SECONDS)
    elapsed = time.perf_counter() - start
    it.close()
    return len(arrivals) / elapsed, [t - arrivals[0] for t in arrivals]


def seconds_to_reach(arrivals: list[float], rate: float, window: float = 0.25) -> float | None:
    """Seconds from the first element until a window's rate is at least ``rate``."""
    times = np.asarray(arrivals)
    for start in np.arange(0.0, max(0.0, times[-1] - window) + 1e-9, window / 5):
        inside = np.count_nonzero((times >= start) & (times < start + window))
        if inside / window >= rate:
            return float(start + window)
    return None


def grid_for(shape: str, cpus: int) -> list[int]:
    _, executor = SHAPES[shape]
    return [p for p in GRID if executor == "thread" or p <= max(2, 2 * cpus)]


def measure(shape: str, seconds: float, repeats: int, cpus: int) -> dict:
    _, executor = SHAPES[shape]
    variants: dict[str, Callable[[], hr.Dataset]] = {
        "serial": lambda: build(shape, None, None),
        "AUTOTUNE": lambda: build(shape, AUTO, None),
    }
    for p in grid_for(shape, cpus):
        variants[f"fixed {p}"] = lambda p=p: build(shape, p, executor)
    rates: dict[str, list[float]] = {name: [] for name in variants}
    reach: list[float | None] = []
    auto_arrivals = []
    for _ in range(repeats):  # alternate the variants so load changes hit them alike
        for name, make in variants.items():
            rate, arrivals = run(make(), seconds)
            rates[name].append(rate)
            if name == "AUTOTUNE":
                auto_arrivals.append(arrivals)
    median = {name: statistics.median(values) for name, values in rates.items()}
    best = max((k for k in median if k.startswith("fixed")), key=median.get)
    for arrivals in auto_arrivals:
        reach.append(seconds_to_reach(arrivals, 0.9 * median[best]))
    return {"rates": median, "best": best, "reach": reach}


def tf_rate(shape: str, seconds: float) -> float | None:
    if not have("tensorflow"):
        return None
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    functions, _ = SHAPES[shape]

    def wrap(f):
        return lambda x: tf.py_function(
            lambda v: np.asarray(f(v.numpy()), dtype=np.int64).reshape(-1)[:1], [x], tf.int64
        )

    ds = tf.data.Dataset.range(10**9)
    for fn in functions:
        ds = ds.map(wrap(fn), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.prefetch(tf.data.AUTOTUNE)

    def once() -> float:
        start, seen = time.perf_counter(), 0
        for _ in ds:
            seen += 1
            if time.perf_counter() - start >= seconds:
                break
            time.sleep(STEP_SECONDS)
        return seen / (time.perf_counter() - start)

    once()
    return statistics.median(once() for _ in range(3))


def report(shape: str, result: dict, tf: float | None) -> None:
    rates, best = result["rates"], result["best"]
    top = rates[best]
    print(f"\n  {shape}")
    for name, rate in rates.items():
        mark = "  <- grid best" if name == best else ""
        print(f"    {name:<10} {rate:9,.0f} elements/s  {rate / top:5.2f}x grid best{mark}")
    auto = rates["AUTOTUNE"]
    print(
        f"    AUTOTUNE: {auto / top:.2f}x the grid's best ({best}), {auto / rates['serial']:.2f}x serial"
        + (f", {auto / tf:.2f}x tf.data AUTOTUNE" if tf else "")
    )
    if shape.startswith("I/O"):
        shown = ", ".join("never" if r is None else f"{r:.2f} s" for r in result["reach"])
        print(f"    AUTOTUNE at 0.9x the grid's best after: {shown} (per run, from the first element)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer elements and repeats (a smoke test)")
    parser.add_argument("--no-hog", action="store_true", help="skip the runs beside a CPU hog")
    parser.add_argument("--shapes", default="", help="comma-separated prefixes of shape names to run")
    args = parser.parse_args()
    cpus = hr.tune.budget.cpu_budget()
    seconds, repeats = (0.75, 1) if args.quick else (2.0, 3)
    shapes = [s for s in SHAPES if not args.shapes or any(s.startswith(p) for p in args.shapes.split(","))]
    print(f"CPU budget {cpus}; {seconds} s per run; medians of {repeats} alternating runs")
    conditions = [("quiet (the machine as it is)", False)] + (
        [] if args.no_hog else [("beside a CPU hog", True)]
    )
    for title, with_hog in conditions:
        print(f"\n=== {title} ===")
        with beside_hog(with_hog):
            for shape in shapes:
                result = measure(shape, seconds, repeats, cpus)
                report(shape, result, None if with_hog else tf_rate(shape, seconds))
                sys.stdout.flush()
    if not have("tensorflow"):
        print("\ntensorflow not installed: tf.data rows skipped (make peers)")


if __name__ == "__main__":
    main()
