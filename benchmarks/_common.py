"""Shared helpers for the benchmark scripts: timing medians and peer detection."""

from __future__ import annotations

import contextlib
import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def hog() -> subprocess.Popen:
    """A second process keeping one core busy (a training loop always competes for CPU)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


@contextlib.contextmanager
def beside_hog(on: bool = True) -> Iterator[subprocess.Popen | None]:
    """A CPU hog while the block runs (``on``), killed and reaped after it whatever happens: the one
    way the benchmarks run beside a busy core."""
    busy = hog() if on else None
    try:
        yield busy
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()


def median_seconds(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs after ``warmup`` untimed runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def report(title: str, rows: list[tuple[str, float]], unit: str, baseline: str) -> None:
    """Print rate rows (higher is better) and each one's ratio to ``baseline``."""
    base = dict(rows)[baseline]
    print(f"\n{title}")
    width = max(len(name) for name, _ in rows)
    for name, rate in rows:
        print(f"  {name:<{width}}  {rate:>14,.0f} {unit}   {rate / base:5.2f}x {baseline}")
