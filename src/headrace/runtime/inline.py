"""The inline executor: a parallel map's function called in the consumer's own thread.

Chosen when measuring shows that neither threads nor processes would beat one worker (cheap calls
that hold the GIL: the hand-offs would cost more than they gain), or when running ones delivered less
than the serial estimate. The map stage keeps its bookkeeping (order, held errors, checkpoints in the
serial map's format); in steady state it takes chunks from its input and computes them directly
(``ParallelMapIterator`` fast path), so it runs at the serial map's speed.

>>> executor = InlineExecutor(lambda x: x * 2)
>>> executor.submit(0, 5, None); executor.wait(0)
[(0, True, 10)]
"""

from __future__ import annotations

from collections.abc import Callable
from time import thread_time_ns
from typing import Any

from ..core.counters import StageCounters
from ..core.node import perf_ns
from .calls import apply


class InlineExecutor:
    kind = "inline"
    chunk_size = 64  # inputs taken per parent call: nothing travels, so larger is only cheaper

    def __init__(self, fn: Callable):
        self.fn = fn
        self.results: list[tuple[int, bool, Any]] = []
        self.busy_ns = 0
        self.cpu_ns = 0
        self.firsts: dict[int, int] = {}
        self.closed = False

    def submit(self, task: int, element: Any, rng_key: tuple | None) -> None:
        start, cpu = perf_ns(), thread_time_ns()
        try:
            self.results.append((task, True, apply(self.fn, element, rng_key)))
        except Exception as exc:  # noqa: BLE001 (delivered in order, as a worker's would be)
            self.results.append((task, False, exc))
        self.busy_ns += perf_ns() - start
        self.cpu_ns += thread_time_ns() - cpu

    def wait(self, timeout: float | None) -> list[tuple[int, bool, Any]]:
        results, self.results = self.results, []
        return results

    def poll(self) -> list[tuple[int, bool, Any]]:
        return self.wait(0)

    def flush(self) -> None:
        pass

    def resize(self, workers: int) -> None:
        pass

    def busy_seconds(self) -> float:
        return self.busy_ns / 1e9

    def cpu_seconds(self) -> float:
        return self.cpu_ns / 1e9

    def delay_seconds(self) -> float | None:
        return None  # measured for thread workers only

    def pids(self) -> list[int]:
        return []

    def counters(self) -> StageCounters:
        return {}

    def shutdown(self) -> None:
        self.closed = True
        self.results = []
