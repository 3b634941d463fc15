"""Parallel map throughput on this machine's cores, with peers, in one run.

1. A CPU-bound pure-Python function (holds the GIL): serial map, ``executor="process"`` with 2
   workers, ``parallelize(2)``, and PyTorch's ``DataLoader(num_workers=2)`` doing the same calls when
   torch is installed. Goals (issues 4 and 10): processes >= 1.8x serial and >= the DataLoader.
   Then the time to the first element: of a first pipeline (the launcher starts), and of a later
   epoch (workers come from the kept pool).
2. A GIL-releasing function (zlib compression and a numpy sort): serial map and
   ``executor="thread"`` with 2 workers. Goal: >= 1.7x serial.

Every variant runs the whole epoch including starting its workers; variants alternate within each
repeat so machine load hits them alike; rates are medians over the repeats. As a reference for how
much of the second core was free during the run (the machine is shared), a ``multiprocessing.Pool``
started beforehand runs the same calls: no framework gets above it.
"""

from __future__ import annotations

import statistics
import sys
import time
import zlib

import numpy as np

import headrace as hr
from _common import have

REPEATS = 7
N_PYTHON = 1000
N_NUMPY = 200
WORKERS = 2


def pure_python(i):
    """About 2 ms of interpreter work, no GIL release."""
    base = int(i)  # headrace passes numpy int64 scalars, the peers Python ints: convert once
    total = 0
    for j in range(45_000):
        total += (j * j + base) % 7
    return total


_PAYLOAD = np.random.default_rng(0).integers(0, 16, 1 << 19, dtype=np.uint8).tobytes()


def gil_releasing(i):
    """zlib and numpy: the heavy parts run without the GIL."""
    packed = zlib.compress(_PAYLOAD, 6)
    keys = np.frombuffer(_PAYLOAD, dtype=np.uint32).copy()
    keys.sort()
    return len(packed) + int(keys[int(i) % len(keys)])


def headrace_epoch(fn, n, **kwargs):
    def run():
        return sum(1 for _ in hr.Dataset.range(n).map(fn, **kwargs))

    return run


def torch_epoch(fn, n):
    import torch.utils.data as tud

    class Calls(tud.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, index):
            return fn(index)

    def run():
        loader = tud.DataLoader(Calls(), batch_size=None, num_workers=WORKERS)
        return sum(1 for _ in loader)

    return run


def pool_epoch(fn, n):
    import multiprocessing

    pools = []

    def run():
        if not pools:  # created on first use, like headrace's workers
            pools.append(multiprocessing.get_context("forkserver").Pool(WORKERS))
        return sum(1 for _ in pools[0].imap(fn, range(n), chunksize=1))

    return run


def first_element_seconds(make_iterator) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        it = iter(make_iterator())
        next(it)
        times.append(time.perf_counter() - start)
        del it
    return statistics.median(times)


def measure(variants: dict, n: int) -> dict[str, float]:
    """Median elements per second of each variant, alternating variants within each repeat."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    for run in variants.values():
        run()  # warm up: imports, fork server, caches
    for _ in range(REPEATS):
        for name, run in variants.items():
            start = time.perf_counter()
            assert run() == n
            times[name].append(time.perf_counter() - start)
    return {name: n / statistics.median(values) for name, values in times.items()}


def show(title: str, rates: dict[str, float], baseline: str, goals: dict[str, tuple[str, float]]) -> None:
    print(f"\n{title}")
    width = max(map(len, rates))
    for name, rate in rates.items():
        line = f"  {name:<{width}}  {rate:8.1f} elements/s  {rate / rates[baseline]:5.2f}x {baseline}"
        if name in goals:
            other, ratio = goals[name]
            if other in rates:
                met = rate >= ratio * rates[other]
                line += f"   goal >= {ratio}x {other}: {'met' if met else 'NOT met'}"
        print(line)


def main() -> None:
    print(f"{WORKERS} workers; {REPEATS} repeats, medians; python {sys.version.split()[0]}")
    variants = {
        "serial map": headrace_epoch(pure_python, N_PYTHON),
        "process map": headrace_epoch(pure_python, N_PYTHON, num_parallel_calls=WORKERS, executor="process"),
        "parallelize": lambda: sum(
            1 for _ in hr.Dataset.range(N_PYTHON).map(pure_python).parallelize(WORKERS)
        ),
    }
    if have("torch"):
        variants["torch DataLoader"] = torch_epoch(pure_python, N_PYTHON)
    else:
        print("torch is not installed: DataLoader comparison skipped")
    variants["Pool, pre-started (reference)"] = pool_epoch(pure_python, N_PYTHON)
    rates = measure(variants, N_PYTHON)
    show(
        "pure-Python function (~2 ms per call, holds the GIL)",
        rates,
        "serial map",
        {"process map": ("serial map", 1.8), "parallelize": ("serial map", 1.8)},
    )
    if "torch DataLoader" in rates:
        ratio = rates["process map"] / rates["torch DataLoader"]
        print(
            f"  process map / torch DataLoader: {ratio:.2f}x   goal >= 1.0: {'met' if ratio >= 1 else 'NOT met'}"
        )
    start_ours = first_element_seconds(
        lambda: hr.Dataset.range(10).map(pure_python, num_parallel_calls=WORKERS, executor="process")
    )
    line = f"  time to the first element of a later epoch (pooled workers): process map {start_ours * 1000:.0f} ms"
    if have("torch"):
        import torch.utils.data as tud

        class Ten(tud.Dataset):
            def __len__(self):
                return 10

            def __getitem__(self, index):
                return pure_python(index)

        start_torch = first_element_seconds(
            lambda: tud.DataLoader(Ten(), batch_size=None, num_workers=WORKERS)
        )
        line += f", torch DataLoader {start_torch * 1000:.0f} ms"
    print(line)

    variants = {
        "serial map": headrace_epoch(gil_releasing, N_NUMPY),
        "thread map": headrace_epoch(gil_releasing, N_NUMPY, num_parallel_calls=WORKERS, executor="thread"),
    }
    rates = measure(variants, N_NUMPY)
    show("zlib + numpy function (releases the GIL)", rates, "serial map", {"thread map": ("serial map", 1.7)})


if __name__ == "__main__":
    main()
