"""Shared helpers for the benchmark scripts: timing medians and peer detection."""

from __future__ import annotations

import contextlib
import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator


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


def alternate(
    runs: dict[str, Callable[[], int]], repeats: int, times: dict[str, list[float]] | None = None
) -> tuple[dict[str, float], dict[str, float]]:
    """Run each of ``runs`` (returning how many elements it gave) ``repeats`` times, alternating, so a
    change of load hits every row alike: ``(elements/s, CPU us of this process per element)``, each
    the median over repeats. ``times``, when given, receives each row's seconds per round."""
    times = {} if times is None else times
    times.update({name: [] for name in runs})
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    counts: dict[str, int] = {}
    for _ in range(repeats):
        for name, run in runs.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            counts[name] = run()
            times[name].append(time.perf_counter() - start)
            cpu[name].append((time.process_time() - start_cpu) / max(1, counts[name]) * 1e6)
    rates = {name: counts[name] / statistics.median(ts) for name, ts in times.items()}
    return rates, {name: statistics.median(us) for name, us in cpu.items()}


def paired(times: dict[str, list[float]], row: str, baseline: str) -> str:
    """``row``'s speed over ``baseline``'s, round by round (the two run back to back in each round, so
    a slow phase of the machine hits both): median and range of the rounds' ratios."""
    ratios = sorted(b / a for a, b in zip(times[row], times[baseline]))
    return f"median {statistics.median(ratios):.2f}, rounds {ratios[0]:.2f}-{ratios[-1]:.2f}"


def rate_rows(
    names: Iterable[str],
    rates: dict[str, float],
    against: dict[str, str],
    missing: str,
    more: Callable[[str], str] | None = None,
) -> None:
    """Print each row's elements/s and its ratio to each baseline of ``against`` (label -> row) that
    ran; a row that did not run says ``missing``; ``more(name)`` adds a column."""
    for name in names:
        if name not in rates:
            print(f"  {name:<28} {missing}")
            continue
        ratios = [
            f"{rates[name] / rates[base]:5.2f}x {label}" for label, base in against.items() if base in rates
        ]
        if more is not None:
            ratios.append(more(name))
        print(f"  {name:<28} {rates[name]:>10,.0f}   " + "  ".join(ratios))


def report(title: str, rows: list[tuple[str, float]], unit: str, baseline: str) -> None:
    """Print rate rows (higher is better) and each one's ratio to ``baseline``."""
    base = dict(rows)[baseline]
    print(f"\n{title}")
    width = max(len(name) for name, _ in rows)
    for name, rate in rows:
        print(f"  {name:<{width}}  {rate:>14,.0f} {unit}   {rate / base:5.2f}x {baseline}")
