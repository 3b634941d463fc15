"""The interface every parallel map executor implements: inline, threads and processes.

The parallel map hands tasks (an id, an input element and its random key) to an executor and takes
results back as ``(task, ok, output or exception)``, in any order; it never looks behind this protocol.
``tests/runtime/test_executors.py`` checks that each executor conforms.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..core.counters import StageCounters

Result = tuple[int, bool, Any]  # (task, ok, output or the exception it raised)


@runtime_checkable
class Executor(Protocol):
    kind: str  # "inline", "thread" or "process"
    chunk_size: int  # tasks that travel together: the map takes this many inputs per refill
    closed: bool
    firsts: dict[int, int]  # while recording calls: a chunk's first task -> its slice number

    def submit(self, task: int, element: Any, rng_key: tuple | None) -> None:
        """Start computing ``element`` (it may wait for a chunk to fill: :meth:`flush` sends it)."""
        ...

    def flush(self) -> None:
        """Send what was submitted, even a chunk not yet full."""
        ...

    def wait(self, timeout: float | None) -> list[Result]:
        """Results finished so far; blocks up to ``timeout`` seconds for the first one."""
        ...

    def poll(self) -> list[Result]:
        """Results finished so far, without waiting."""
        ...

    def resize(self, workers: int) -> None:
        """Compute with ``workers`` workers from now on (a process pool keeps its size)."""
        ...

    def busy_seconds(self) -> float:
        """Time spent in the function, over all workers."""
        ...

    def cpu_seconds(self) -> float:
        """CPU time spent in the function, over all workers."""
        ...

    def pids(self) -> list[int]:
        """The worker processes' ids (none for threads or inline)."""
        ...

    def delay_seconds(self) -> float | None:
        """Time the workers sat runnable waiting for a core another program had (thread workers on
        Linux); None where it is not measured."""
        ...

    def counters(self) -> StageCounters:
        """What this kind of executor adds to the stage's counters."""
        ...

    def shutdown(self) -> None:
        """Stop: workers go back to the pool or leave; results not taken are dropped."""
        ...
