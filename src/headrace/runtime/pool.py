"""The kept pool of worker processes, shared by every process stage of this process.

A stage *acquires* the workers it needs (idle ones first, new ones forked by the :mod:`.launcher`
for the rest) and *releases* them when its iterator closes. A released worker that finished all its
work goes back to the pool, so the next epoch's iterator, or a new pipeline, starts at once; one
still inside a user call is killed (its result is no longer wanted). Idle workers exit after
:data:`IDLE_SECONDS` unused (``HEADRACE_POOL_IDLE_SECONDS``), and everything stops at interpreter
exit. After ``os.fork`` the child gets a pool of its own.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection

from ..core.errors import on_failure
from ..core.process import PROCESS
from . import shm
from . import shutdown as registry
from .launcher import Launcher
from .messages import End, pack

IDLE_SECONDS = float(os.environ.get("HEADRACE_POOL_IDLE_SECONDS", "1.0"))


class WorkerProcess:
    """One worker: its pid and the parent's end of its socket.

    Messages are framed (a length, then the body). Every send and receive goes through :meth:`send`
    and :meth:`recv`, which know when a frame was cut short: an interrupt (Ctrl-C) or an error inside
    one leaves ``mid_frame`` set, and such a worker is never reused (:meth:`Pool.release` kills it), so
    a later pipeline can never read the rest of that frame as its own message."""

    def __init__(self, pid: int, conn: Connection):
        self.pid, self.conn = pid, conn
        self.idle_since = 0.0
        self.mid_frame = False

    def send(self, data: bytes) -> None:
        self.mid_frame = True
        self.conn.send_bytes(data)
        self.mid_frame = False

    def recv(self) -> bytes:
        self.mid_frame = True
        data = self.conn.recv_bytes()
        self.mid_frame = False
        return data

    def __repr__(self) -> str:
        return f"<worker process {self.pid}>"


class Pool:
    def __init__(self) -> None:
        self.owner = os.getpid()
        self.lock = threading.Lock()
        self.launcher: Launcher | None = None
        self.idle: list[WorkerProcess] = []
        self.started = 0  # workers forked so far (the benchmarks and tests read it)
        self.timer: threading.Timer | None = None
        self.closed = False

    def acquire(self, count: int) -> list[WorkerProcess]:
        """``count`` workers for one stage: idle ones first, then new ones (all start at once)."""
        with self.lock:
            if self.closed:
                self.closed = False  # a pipeline run from an atexit handler after ours
            taken: list[WorkerProcess] = []
            if self.launcher is not None and not self.launcher.alive():
                # It died (SIGKILL, or a SIGTERM before it ignored them): its workers die with it
                # (PR_SET_PDEATHSIG), maybe not yet, so none is reused; a new launcher starts below,
                # never leaving every later process pipeline failing with "could not reach it".
                dead, self.launcher = self.launcher, None
                for worker in self.idle:
                    self._kill(worker)
                self.idle = []
                dead.shutdown()
            while self.idle and len(taken) < count:
                worker = self.idle.pop()  # the most recently used first: warm caches
                if worker.conn.poll():  # EOF: it died while idle
                    self._kill(worker)
                else:
                    taken.append(worker)
            taken.reverse()  # a stage given back its workers gets them in the same order
            # Files of processes killed before they could clean up (a SIGKILLed process group):
            # a directory listing, cheap next to starting a stage.
            shm.reclaim_dead()
            if len(taken) < count and self.launcher is None:
                self.launcher = Launcher()
                registry.register(self)
            launcher = self.launcher
        with on_failure(lambda: self.release(taken, [True] * len(taken))):
            while len(taken) < count:
                if launcher is None:  # never: started above whenever workers were missing
                    raise RuntimeError("worker pool: no launcher to start worker processes")
                parent_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    pid = launcher.start_worker(worker_end)
                finally:
                    worker_end.close()
                taken.append(WorkerProcess(pid, Connection(parent_end.detach())))
                self.started += 1
        return taken

    def release(
        self, workers: list[WorkerProcess], reusable: list[bool], then: Callable[[], object] | None = None
    ) -> None:
        """Give workers back: those with nothing in flight are kept, the others killed. ``then``
        runs once the killed ones are reaped (so nothing of theirs writes any more): at once when
        none was killed, else in a short-lived thread, so that closing an iterator never waits."""
        killed = []
        now = time.monotonic()
        for worker, keep in zip(workers, reusable):
            keep = keep and not worker.mid_frame  # its stream's state is unknown: never reused
            if keep and not self.closed:
                try:
                    worker.send(pack(End()))
                except OSError:
                    keep = False
            if keep and not self.closed:
                worker.idle_since = now
                with self.lock:
                    self.idle.append(worker)
            else:
                self._kill(worker)
                killed.append(worker)
        self._schedule()
        if not killed:
            if then is not None:
                then()
            return

        def reap() -> None:
            for worker in killed:
                self.exit_code(worker.pid, 2.0)
            if then is not None:
                then()

        threading.Thread(target=reap, name="headrace reaper", daemon=True).start()

    def _kill(self, worker: WorkerProcess) -> None:
        try:
            os.kill(worker.pid, signal.SIGKILL)
        except OSError:
            pass
        worker.conn.close()

    def exit_code(self, pid: int, timeout: float) -> int | None:
        """The exit status of a worker that ended (negative: the signal), None if not yet known."""
        launcher = self.launcher
        return None if launcher is None else launcher.exit_code(pid, timeout)

    def _schedule(self) -> None:
        with self.lock:
            if not self.idle or self.timer is not None:
                return
            delay = max(0.0, self.idle[0].idle_since + IDLE_SECONDS - time.monotonic()) + 0.01
            self.timer = threading.Timer(delay, self._retire_idle)
            self.timer.name = "headrace pool idle timer"
            self.timer.daemon = True
            self.timer.start()

    def _retire_idle(self) -> None:
        now = time.monotonic()
        with self.lock:
            self.timer = None
            old = [w for w in self.idle if now - w.idle_since >= IDLE_SECONDS]
            self.idle = [w for w in self.idle if now - w.idle_since < IDLE_SECONDS]
        for worker in old:
            worker.conn.close()  # an idle worker reads EOF and exits at once
        self._schedule()

    def pids(self) -> list[int]:
        with self.lock:
            return [w.pid for w in self.idle]

    def shutdown(self) -> None:
        """Stop every idle worker and the launcher (at exit; stages release their own first)."""
        if self.owner != os.getpid():
            return  # a forked child must never touch its parent's workers
        with self.lock:
            self.closed = True
            idle, self.idle = self.idle, []
            timer, self.timer = self.timer, None
            launcher = self.launcher
            self.launcher = None
        if timer is not None:
            timer.cancel()
        for worker in idle:
            worker.conn.close()
        if launcher is not None:
            launcher.shutdown()  # kills and reaps whatever is left
        registry.unregister(self)


_pool_lock = threading.Lock()


def get_pool() -> Pool:
    """This process's pool (a forked child gets its own, never its parent's workers)."""
    with _pool_lock:
        pool = PROCESS.pool
        if pool is None or pool.owner != os.getpid():
            pool = PROCESS.pool = Pool()
        return pool


def processes_unavailable() -> str | None:
    """Why this process cannot start worker processes, or None when it can."""
    import multiprocessing  # noqa: PLC0415

    if PROCESS.inside_worker:
        return "this process is already a headrace worker (parallelize): its cores are taken"
    if multiprocessing.current_process().daemon:
        return (
            "this process is a daemonic worker (e.g. of a PyTorch DataLoader), whose children would "
            "be killed with it"
        )
    return None
