"""``progress(ds)``: a live line while training: throughput, how long the loop waited, and the
stage holding it back, over the last interval (not since the start, so it follows the run).

When the length is known (``ds.cardinality()``, or the count of an earlier epoch of the same
pipeline) the line shows the total and an ETA. Startup (building the stages, compiling, the first
element) is shown on its own and kept out of the rates, the ETA and the verdict: a slow first batch
must not make a training-bound run look input-bound.

>>> import io, headrace as hr
>>> out = io.StringIO()
>>> total = sum(int(x) for x in hr.profile.progress(hr.Dataset.range(100), every_seconds=0, file=out))
>>> total, "elements/s" in out.getvalue(), "of 100" in out.getvalue()
(4950, True, True)
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import IO, Any

from ..core import counters
from ..core.errors import attempt
from .stats import Stats

#: elements per epoch of pipelines seen by ``progress`` (by signature): the total of a later epoch
#: whose cardinality is unknown (a filter, a text file). Bounded: the newest pipelines are kept.
_epoch_lengths: OrderedDict[str, int] = OrderedDict()
_MAX_REMEMBERED = 256


def _remember_length(signature: str, produced: int) -> None:
    _epoch_lengths[signature] = produced
    _epoch_lengths.move_to_end(signature)
    while len(_epoch_lengths) > _MAX_REMEMBERED:
        _epoch_lengths.popitem(last=False)


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _busiest(now: Stats, before: Stats | None, seconds: float) -> tuple[str, float] | None:
    """The stage busiest over the interval, with its busy share of its workers' capacity. One-time
    costs (a first call's compile) are startup, not load: they are left out."""
    earlier = {s.name: s for s in before.stages} if before else {}
    best = None
    for stage in now.stages:
        old = earlier.get(stage.name)
        if old is None:
            busy = stage.busy_seconds
        elif old.produced:  # its first call was already in ``before``'s total
            busy = stage.busy_seconds + stage.one_time_seconds - old.busy_seconds - old.one_time_seconds
        else:
            busy = stage.busy_seconds - old.busy_seconds
        share = min(1.0, max(0.0, busy) / max(seconds * stage.parallelism, 1e-9))
        if best is None or share > best[1]:
            best = (stage.name, share)
    return best


def _steady(stats: Stats) -> tuple[float, int, float]:
    """Seconds, elements and consumer wait after the first element (startup left out)."""
    start = stats.first_element_seconds
    if start is None:
        return 0.0, 0, 0.0
    seconds = max(0.0, stats.elapsed_seconds - start)
    return seconds, max(0, stats.produced - 1), max(0.0, stats.consumer_wait_seconds - start)


def progress_line(now: Stats, before: Stats | None, total: int | None = None) -> str:
    """One status line comparing two snapshots of the same iterator (``before`` None: since the
    first element, startup shown apart). ``total``: elements expected in the run, for an ETA."""
    if before is None or before.first_element_seconds is None:
        seconds, produced, waited = _steady(now)
    else:
        seconds = now.elapsed_seconds - before.elapsed_seconds
        produced = now.produced - before.produced
        waited = now.consumer_wait_seconds - before.consumer_wait_seconds
        if before.produced == 0:  # the interval holds the first element: its wait is startup
            steady_seconds, steady_produced, steady_waited = _steady(now)
            seconds, produced, waited = steady_seconds, steady_produced, steady_waited
    count = f"{now.produced:,}" if total is None else f"{now.produced:,} of {total:,}"
    line = f"headrace: {count} elements"
    if produced <= 0 or seconds <= 0:
        # Nothing steady to measure yet: the first element is startup.
        first = now.first_element_seconds
        line += f", starting ({now.elapsed_seconds:.1f} s"
        line += f", first element after {first:.1f} s)" if first is not None else ")"
        return line
    rate = produced / seconds
    wait = min(1.0, max(0.0, waited / seconds))
    line += f", {rate:,.0f} elements/s, waited {100 * wait:.0f}%"
    if total is not None and now.produced < total:
        line += f", ETA {_duration((total - now.produced) / rate)}"
    busiest = _busiest(now, before, seconds)
    if busiest is not None and wait >= 0.10:
        line += f", input-bound on {busiest[0]} ({100 * busiest[1]:.0f}% busy)"
    elif busiest is not None:
        line += f", training-bound (busiest stage {busiest[0]}, {100 * busiest[1]:.0f}% busy)"
    first = now.first_element_seconds
    if before is None and first is not None and first >= 0.05:
        line += f"; startup {first:.1f} s before the first element (not in these figures)"
    return line


def _known_length(dataset: Iterable, signature: str) -> int | None:
    cardinality = getattr(dataset, "cardinality", None)
    if callable(cardinality):
        known, n = attempt(lambda: int(cardinality()))  # a length is a nicety: never stop the run for it
        if known and n >= 0:
            return n
    return _epoch_lengths.get(signature)


def progress(
    dataset: Iterable, every_seconds: float = 1.0, file: IO[str] | None = None, total: int | None = None
) -> Iterator[Any]:
    """Iterate ``dataset`` (a Dataset or headrace Iterator), printing a status line every
    ``every_seconds`` to ``file`` (stderr by default; rewritten in place on a terminal). ``total``:
    the elements expected (default: the cardinality, else what the last epoch of this pipeline gave)."""
    if every_seconds < 0:
        raise ValueError(f"progress: every_seconds must be >= 0, got {every_seconds}")
    if total is not None and (not isinstance(total, int) or isinstance(total, bool) or total < 0):
        raise ValueError(f"progress: total must be a non-negative int or None, got {total!r}")
    out = file if file is not None else sys.stderr
    it: Any = iter(dataset)
    if not hasattr(it, "stats"):
        raise TypeError(f"progress: expected a headrace Dataset or Iterator, got {type(dataset).__name__}")
    signature = it.node.signature()
    if total is None:
        total = _known_length(dataset, signature)
    in_place = hasattr(out, "isatty") and out.isatty()
    before: Stats | None = None
    every_ns = round(every_seconds * 1e9)
    due = counters.perf_ns() + every_ns
    finished = False
    try:
        for element in it:
            yield element
            if counters.perf_ns() >= due:
                now = it.stats()
                line = progress_line(now, before, total)
                out.write(f"\r\x1b[K{line}" if in_place else line + "\n")
                out.flush()
                before, due = now, counters.perf_ns() + every_ns
        finished = True
        final = it.stats()
        _remember_length(signature, final.produced)
        out.write(("\r\x1b[K" if in_place else "") + progress_line(final, None, total) + " (whole run)\n")
        out.flush()
    finally:
        if in_place and not finished:
            out.write("\n")
