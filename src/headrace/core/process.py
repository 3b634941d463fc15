"""What one process keeps across its pipelines, in one object: :data:`PROCESS`.

A pipeline's own memory is its session (``core.run.Session``) and each iteration's is its
``Run``; what outlives them, and is shared by every pipeline of the process, lives here and nowhere
else:

- ``recorder``: the trace recording in progress (``headrace.profile.record_calls``), else None. The
  timing template, the executors' workers and the producer threads check it (once per call or chunk).
  ``last_recording``: the newest one that ended (what a report made after the block shows).
- ``inside_worker``: this process is one of headrace's worker processes (its stages use threads).
- ``pool``: the worker processes (``runtime.pool.Pool``), made on first use; a forked child makes its
  own (``runtime.pool.get_pool``), never using its parent's.
- ``verdicts``: the executor choices earlier pipelines tried (``runtime.choose.Verdicts``), so a
  pipeline built again (a new iterator each epoch) does not probe again.

The ops reach it through their iteration's context (``Run.process``); the timing template and the
workers, which check ``recorder`` on their hot paths, by this name, where a look-up through each
stage's context would cost a call more. Tests swap its fields (``monkeypatch.setattr(PROCESS, ...)``)
rather than module globals. The consumer's sampling of stage timing is a per-pipeline setting, not a
process one: ``Options().profiling``.

>>> PROCESS.recorder is None and not PROCESS.inside_worker
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .counters import CallLog


class ProcessRuntime:
    """The process-wide state of headrace (module docstring); one instance, :data:`PROCESS`."""

    __slots__ = ("recorder", "last_recording", "inside_worker", "pool", "verdicts")

    def __init__(self) -> None:
        self.recorder: CallLog | None = None
        self.last_recording: CallLog | None = None  # the newest that ended (profile.current_log)
        self.inside_worker = False
        self.pool: Any = None  # runtime.pool.Pool (core does not import runtime)
        self.verdicts: Any = None  # runtime.choose.Verdicts, set when that module loads

    def __repr__(self) -> str:
        return (
            f"ProcessRuntime(recording={self.recorder is not None}, inside_worker={self.inside_worker}, "
            f"pool={self.pool!r}, verdicts={self.verdicts!r})"
        )


PROCESS = ProcessRuntime()
