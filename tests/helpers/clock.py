"""A fake stage clock: tests of time accounting advance it instead of sleeping, so what they check
(which stage a second is booked to, what a sampled call stands for) holds exactly on any machine, at
any load. Wall-clock speed is never asserted in unit tests; benchmarks/ measures it."""

from __future__ import annotations

import threading

import pytest

#: Modules that read the stage clock by name (``headrace.core.counters.perf_ns``): the timing template,
#: the consumer (``headrace.Iterator``) and prefetch's producer thread.
CLOCK_READERS = ("headrace.core.counters", "headrace.iterator", "headrace.runtime.producer")


class FakeClock:
    """``perf_counter_ns`` whose time moves only by :meth:`advance` (from any thread)."""

    def __init__(self) -> None:
        self.now = 1_000_000_000
        self._lock = threading.Lock()

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += round(seconds * 1e9)


def install_fake_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """Swap the stage clock for a :class:`FakeClock` in every module that reads it (undone by
    ``monkeypatch`` at the end of the test)."""
    clock = FakeClock()
    for module in CLOCK_READERS:
        monkeypatch.setattr(f"{module}.perf_ns", clock)
    return clock
