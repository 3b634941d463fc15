"""``record_calls()``: keep every stage call and every worker chunk as a slice for the trace (off by default).

The timing template (``core/counters.py``) times every call anyway; while a recording is on, it
also logs one tuple per call, and the workers of parallel maps, ``parallelize`` and parallel
interleave log one per chunk of work, so the trace shows each call, each batch and each worker
chunk on the thread or process that did it. Costs about one tuple per call or chunk and
``max_calls`` tuples of memory; when no recording runs, workers pay one check per chunk.

>>> import headrace as hr
>>> with hr.profile.record_calls() as log:
...     it = iter(hr.Dataset.range(8).batch(4))
...     _ = list(it)
>>> len(it.stats().slices) >= 2
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ..core.args import is_int
from ..core.counters import CallLog
from ..core.errors import check
from ..core.process import PROCESS


@contextlib.contextmanager
def record_calls(max_calls: int = 1_000_000) -> Iterator[CallLog]:
    """Record each stage call, batch and worker chunk for the trace while the block runs; keeps
    the newest ``max_calls``. Start it before ``iter(ds)``: a stage that ran before the recording
    began shows its first recorded call without an element count."""
    check(
        is_int(max_calls, low=1),
        "record_calls: max_calls",
        max_calls,
        "an int of at least 1 (how many of the newest calls and chunks to keep)",
    )
    outer = PROCESS.recorder
    log = CallLog(max_calls)
    PROCESS.recorder = log
    try:
        yield log
    finally:
        PROCESS.recorder = outer
        PROCESS.last_recording = log


def current_log() -> CallLog | None:
    """The recording in progress, else the last one that ended, else None."""
    return PROCESS.recorder if PROCESS.recorder is not None else PROCESS.last_recording
