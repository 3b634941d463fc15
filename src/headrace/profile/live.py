"""``progress(ds)``: a live line while training: throughput, how long the loop waited, and the
stage holding it back, over the last interval (not since the start, so it follows the run).

>>> import io, headrace as hr
>>> out = io.StringIO()
>>> total = sum(int(x) for x in hr.profile.progress(hr.Dataset.range(100), every_seconds=0, file=out))
>>> total, "elements/s" in out.getvalue()
(4950, True)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import IO, Any

from .stats import Stats


def _busiest(now: Stats, before: Stats | None, seconds: float) -> tuple[str, float] | None:
    """The stage busiest over the interval, with its busy share of its workers' capacity."""
    earlier = {s.name: s.busy_seconds + s.one_time_seconds for s in before.stages} if before else {}
    best = None
    for stage in now.stages:
        busy = stage.busy_seconds + stage.one_time_seconds - earlier.get(stage.name, 0.0)
        share = min(1.0, busy / max(seconds * stage.parallelism, 1e-9))
        if best is None or share > best[1]:
            best = (stage.name, share)
    return best


def progress_line(now: Stats, before: Stats | None) -> str:
    """One status line comparing two snapshots of the same iterator (``before`` None: since start)."""
    seconds = now.elapsed_seconds - (before.elapsed_seconds if before else 0.0)
    produced = now.produced - (before.produced if before else 0)
    waited = now.consumer_wait_seconds - (before.consumer_wait_seconds if before else 0.0)
    seconds = max(seconds, 1e-9)
    wait = min(1.0, max(0.0, waited / seconds))
    line = (
        f"headrace: {now.produced:,} elements, {produced / seconds:,.0f} elements/s, waited {100 * wait:.0f}%"
    )
    busiest = _busiest(now, before, seconds)
    if busiest is not None and wait >= 0.10:
        line += f", input-bound on {busiest[0]} ({100 * busiest[1]:.0f}% busy)"
    elif busiest is not None:
        line += f", training-bound (busiest stage {busiest[0]}, {100 * busiest[1]:.0f}% busy)"
    return line


def progress(dataset: Iterable, every_seconds: float = 1.0, file: IO[str] | None = None) -> Iterator[Any]:
    """Iterate ``dataset`` (a Dataset or headrace Iterator), printing a status line every
    ``every_seconds`` to ``file`` (stderr by default; rewritten in place on a terminal)."""
    if every_seconds < 0:
        raise ValueError(f"progress: every_seconds must be >= 0, got {every_seconds}")
    out = file if file is not None else sys.stderr
    it = iter(dataset)
    if not hasattr(it, "stats"):
        raise TypeError(f"progress: expected a headrace Dataset or Iterator, got {type(dataset).__name__}")
    in_place = hasattr(out, "isatty") and out.isatty()
    end = "\r" if in_place else "\n"
    before: Stats | None = None
    due = time.perf_counter() + every_seconds
    try:
        for element in it:
            yield element
            if time.perf_counter() >= due:
                now = it.stats()
                out.write(progress_line(now, before) + end)
                out.flush()
                before, due = now, time.perf_counter() + every_seconds
        out.write(progress_line(it.stats(), None) + " (whole run)\n")
        out.flush()
    finally:
        if in_place:
            out.write("\n")
