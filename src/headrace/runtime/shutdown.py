"""Stopping background work at interpreter exit.

Every executor and background producer registers here while it runs. At exit (normal end,
``sys.exit``, an uncaught exception or KeyboardInterrupt) they are all shut down, and this process's
leftover shared memory files are removed, before ``multiprocessing`` tears down its children.
Garbage collection and ``close()`` stop them earlier; this is the last line.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from typing import Protocol

from ..core.errors import attempt
from . import shm


class Stoppable(Protocol):
    def shutdown(self) -> None:
        """Stop; threads are told to stop (never joined), processes are reaped."""


_live: weakref.WeakSet = weakref.WeakSet()
_lock = threading.Lock()
_owner_pid = os.getpid()


def register(obj: Stoppable) -> None:
    with _lock:
        _live.add(obj)


def unregister(obj: Stoppable) -> None:
    with _lock:
        _live.discard(obj)


def live() -> list:
    """What is running now (for tests and the profiler)."""
    with _lock:
        return list(_live)


def shutdown_all() -> None:
    for obj in live():
        attempt(obj.shutdown)  # exit must go on whatever one executor does
    if os.getpid() == _owner_pid:
        shm.cleanup(f"{shm.PREFIX}{_owner_pid}-")


atexit.register(shutdown_all)
