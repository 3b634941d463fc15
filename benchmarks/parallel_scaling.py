"""Scaling of pure-Python work over worker processes, against the machine's ceiling and peers.

For each worker count N (1, 2, 4, ... up to the CPUs, or ``--workers``), in steady state (workers
already started, second epoch timed):

- ceiling: a ``fork`` ``multiprocessing.Pool`` given one big chunk per worker: the best this
  machine does with N processes (issue 10's yardstick);
- ``map(f, N, executor="process")``: headrace's per-element process map (chunked inside);
- ``map(f).parallelize(N)``: whole-pipeline workers;
- ``torch DataLoader(num_workers=N)`` per element (``batch_size=None``) and batched (64), if torch is
  installed; ``grain`` ``mp_prefetch`` if grain is installed.

Rates are speed-ups over a serial loop; "of ceiling" divides by the Pool's. Then the start-up: a
script whose main module imports torch builds a pipeline with N process workers; the time to its
first element, and to the first element of a later epoch, are printed.

    python benchmarks/parallel_scaling.py                      # this machine
    python benchmarks/parallel_scaling.py --workers 4,8,16     # a 16-core machine (see README.md)

Timings on a shared machine are noisy: compare ratios taken in the same run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import textwrap
import time

import headrace as hr
from _common import have

LOOPS = 6_000  # about 250 us of interpreter work on a current x86 core (calibrated below)


def work(i):
    """Pure Python, holds the GIL."""
    base = int(i)
    total = 0
    for j in range(LOOPS):
        total += (j * j + base) % 7
    return total


def work_chunk(bounds):
    start, stop = bounds
    return [work(i) for i in range(start, stop)]


def calibrate(target_us: float) -> None:
    global LOOPS
    start = time.perf_counter()
    for i in range(50):
        work(i)
    per = (time.perf_counter() - start) / 50
    LOOPS = max(100, int(LOOPS * target_us * 1e-6 / per))


def timed(run, repeats: int) -> float:
    run()  # warm: workers started, imports done
    return statistics.median(_once(run) for _ in range(repeats))


def _once(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def variants(n: int, workers: int) -> dict:
    out = {}
    pool = multiprocessing.get_context("fork").Pool(workers)
    step = -(-n // workers)
    bounds = [(k, min(n, k + step)) for k in range(0, n, step)]
    out["ceiling: fork Pool, 1 chunk/worker"] = (lambda: pool.map(work_chunk, bounds, chunksize=1), pool)
    mapped = hr.Dataset.range(n).map(work, num_parallel_calls=workers, executor="process")
    out["headrace map(process), per element"] = (lambda: sum(1 for _ in mapped), None)
    whole = hr.Dataset.range(n).map(work).parallelize(workers)
    out["headrace parallelize"] = (lambda: sum(1 for _ in whole), None)
    if have("torch"):
        import torch.utils.data as tud

        class Calls(tud.Dataset):
            def __len__(self):
                return n

            def __getitem__(self, index):
                return work(index)

        per_element = tud.DataLoader(Calls(), batch_size=None, num_workers=workers, persistent_workers=True)
        batched = tud.DataLoader(Calls(), batch_size=64, num_workers=workers, persistent_workers=True)
        out["torch DataLoader, per element"] = (lambda: sum(1 for _ in per_element), None)
        out["torch DataLoader, batch 64"] = (lambda: sum(1 for _ in batched), None)
    if have("grain"):
        import grain.python as grain

        source = grain.MapDataset.range(n).map(work).to_iter_dataset()
        prefetched = source.mp_prefetch(grain.MultiprocessingOptions(num_workers=workers))
        out["grain mp_prefetch"] = (lambda: sum(1 for _ in prefetched), None)
    return out


STARTUP = textwrap.dedent(
    """
    import sys, time
    import torch  # the main module imports torch: workers must not pay for it
    import headrace as hr

    def work(x):
        return int(x) * 2

    workers = int(sys.argv[1])
    ds = hr.Dataset.range(10_000).map(work, num_parallel_calls=workers, executor="process")
    start = time.perf_counter()
    it = iter(ds)
    next(it)
    first = time.perf_counter() - start
    for _ in it:
        pass
    start = time.perf_counter()
    next(iter(ds))
    later = time.perf_counter() - start
    print(first, later)
    """
)


def startup(workers: int) -> tuple[float, float]:
    done = subprocess.run(
        [sys.executable, "-c", STARTUP, str(workers)], capture_output=True, text=True, check=True
    )
    first, later = map(float, done.stdout.split())
    return first, later


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    default = [n for n in (1, 2, 4, 8, 16) if n <= cpus]
    parser.add_argument("--workers", default=",".join(map(str, default)))
    parser.add_argument("--elements", type=int, default=2000)
    parser.add_argument("--work-us", type=float, default=250.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    calibrate(args.work_us)
    n = args.elements
    serial = timed(lambda: [work(i) for i in range(n)], args.repeats)
    print(f"{cpus} CPUs; {n} elements of ~{args.work_us:.0f} us; serial loop {n / serial:,.0f} elements/s")
    for workers in map(int, args.workers.split(",")):
        print(f"\nN = {workers} workers")
        measured = variants(n, workers)
        ceiling = None
        for name, (run, resource) in measured.items():
            seconds = timed(run, args.repeats)
            speedup = serial / seconds
            if ceiling is None:
                ceiling = speedup
            print(f"  {name:<38} {speedup:5.2f}x serial   {speedup / ceiling:5.2f} of ceiling")
            if resource is not None:
                resource.terminate()
    if have("torch"):
        print("\nstart-up, main module imports torch")
        for workers in map(int, args.workers.split(",")):
            first, later = startup(workers)
            print(
                f"  N = {workers:<3} first element {first * 1000:6.0f} ms (goal <= 500)   "
                f"later epoch {later * 1000:5.1f} ms (goal <= 50)"
            )
    else:
        print("\ntorch is not installed: start-up with a torch main module skipped")


if __name__ == "__main__":
    main()
