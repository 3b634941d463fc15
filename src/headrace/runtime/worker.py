"""The loop a worker process runs (forked from :mod:`.launcher`, never importing ``__main__``).

A worker serves one *job* at a time and then goes back to its pool for the next, so a later epoch or
a new pipeline reuses it. The messages of a job are the typed classes of :mod:`.messages`.

Each element's result is encoded on its own (``payload``): a value that cannot be pickled here, or
unpickled in the parent, costs only its element, as an error naming the stage and the element.
Messages go through :mod:`.shm` (large arrays by shared memory). The worker exits when its socket
closes or the parent dies, removing any shared memory file it wrote that nobody read.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from ..core.errors import WorkerError, attempt, attempt_all
from ..core.node import perf_ns
from ..core.process import PROCESS
from ..core.run import Run, Seeds
from .calls import apply
from .messages import (
    BadMessage,
    Chunk,
    Done,
    End,
    InitFailed,
    MapJob,
    Message,
    PipelineJob,
    Pull,
    Reset,
    SetState,
    Tasks,
    pack,
    unpack,
)
from .shm import SegmentWriter, cleanup, dump


def where() -> tuple[list[str], str]:
    """The parent's import path and working directory, sent with every job (``where``). A worker
    starts in ``/`` (nothing in the user's folder may shadow numpy while it boots), then runs each job
    where the parent is, as threads would: relative file names in user functions, and modules beside
    a script fed on stdin (``""`` on ``sys.path``), resolve as they do in the parent."""
    return list(sys.path), os.getcwd()


def pack_error(exc: BaseException) -> tuple[bytes | None, str, str, str]:
    """What the parent needs to re-raise ``exc``: its pickle (if possible), type, message and the
    traceback as text (traceback objects cannot cross processes)."""
    try:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except SystemError:  # CPython < 3.11.8's AST race: the error must still reach the parent
        text = _plain_traceback(exc)
    pickled, data = attempt(_dumps, exc)  # an unpicklable exception still reaches the parent as text
    return data if pickled else None, f"{type(exc).__module__}.{type(exc).__qualname__}", str(exc), text


def _dumps(value: object) -> bytes:
    from .pickling import dumps  # noqa: PLC0415 (exceptions defined in __main__ travel by value)

    return dumps(value)


def _plain_traceback(exc: BaseException) -> str:
    """``exc``'s traceback without the caret lines: CPython 3.11 before 3.11.8 draws those by parsing
    the source, and two threads parsing at once can fail one with a SystemError (gh-106905)."""
    lines = ["Traceback (most recent call last):\n"]
    for frame in traceback.extract_tb(exc.__traceback__):
        lines.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}\n')
        if frame.line:
            lines.append(f"    {frame.line}\n")
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return "".join(lines)


class UnsendableResult(WorkerError):
    """A result that cannot be pickled to travel to the parent process."""


#: ``value`` of a task whose function raised (its result was never computed)
_UNSET: Any = object()


def packed_error(exc: BaseException, value: Any = _UNSET) -> bytes:
    """A task's error as sent to the parent: what its function (or the pipeline) raised, or, when its
    ``value`` was computed and encoding it raised, why the result cannot be sent (only this element
    is lost). Each element is encoded in the loop that computes it (``dump`` in the same ``try`` as
    the call: one handler per element, no call of its own on the way of a result)."""
    if value is not _UNSET and isinstance(exc, Exception) and not isinstance(exc, WorkerError):
        # (a WorkerError, e.g. /dev/shm is full, goes as it is: its message says what to do)
        exc = UnsendableResult(
            f"the result ({type(value).__name__}) cannot be sent from the worker process "
            f"({type(exc).__name__}: {exc}); return picklable values (numpy arrays, Python "
            "containers, importable classes) or pass executor='thread'"
        )
    return pickle.dumps(pack_error(exc))


def serve(sock: Any) -> None:
    """Serve jobs on ``sock`` until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the group; the parent stops us
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # so does a scheduler's SIGTERM: we leave with the parent
    faulthandler.enable()  # a crash in native code prints this worker's Python stack to stderr
    conn = Connection(sock.detach())
    PROCESS.inside_worker = True  # stages inside a worker use threads
    prefixes: set[str] = set()
    stray_messages = 0  # messages outside any job (see below); kept for a debugger's eyes
    try:
        while True:
            try:
                job = _receive(conn)
            except EOFError:
                return
            if isinstance(job, End):
                continue
            if not isinstance(job, (MapJob, PipelineJob)):
                # Meant for a job that ended (a parent that gave up on it): ignored and counted,
                # never read as the start of a new job.
                stray_messages += 1
                continue
            sys.path[:], cwd = job.where
            try:
                os.chdir(cwd)
            except OSError:  # the parent's folder is gone: relative names fail as they would there
                pass
            writer = SegmentWriter(job.prefix)
            prefixes.add(writer.prefix)
            done = (
                _map_job(conn, job, writer) if isinstance(job, MapJob) else _pipeline_job(conn, job, writer)
            )
            if not done:
                return
    finally:
        for prefix in prefixes:
            cleanup(prefix)


def _set_up(conn: Connection, make: Callable[[], Any]) -> tuple[bool, Any]:
    """``(True, make())``: a job's function or pipeline loaded, or its iterator built; or ``(False,
    None)`` once the error is reported to the parent, which raises it (WorkerError)."""
    made, value = attempt_all(make)  # an error (any) is reported to the parent, which raises it
    if made:
        return True, value
    conn.send_bytes(pack(InitFailed(pack_error(value))))
    return False, None


def _receive(conn: Connection) -> Message | None:
    """The next message of the job (None: one of an unknown kind); raises EOFError when the socket
    closed."""
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            raise EOFError from None
        read, message = attempt(unpack, data)
        if read:
            return message
        if isinstance(message, (EOFError, OSError)):  # e.g. a shared memory file gone: as a closed socket
            raise EOFError from None
        conn.send_bytes(pack(BadMessage(pack_error(message))))


def _map_job(conn: Connection, job: MapJob, writer: SegmentWriter) -> bool:
    """Serve a map job; False when the socket closed."""
    loaded, fn = _set_up(conn, lambda: pickle.loads(job.function))
    while True:
        try:
            message = _receive(conn)
        except EOFError:
            return False
        if isinstance(message, End):
            return True
        if not loaded or not isinstance(message, Tasks):  # a stray message of another job: ignored
            continue
        results = []
        chunk_start = perf_ns()
        for task, rng_key, element in message.items:
            start = perf_ns()
            value = _UNSET
            try:
                value = apply(fn, element, rng_key)
                ok, payload = True, dump(value, writer)
            except BaseException as exc:  # noqa: BLE001 (the consumer re-raises it as itself)
                ok, payload = False, packed_error(exc, value)
            results.append((task, ok, perf_ns() - start, payload))
            element = value = None
        message = None
        try:
            conn.send_bytes(pack(Done(results, (chunk_start, perf_ns()))))
        except OSError:
            return False


def _pipeline_job(conn: Connection, job: PipelineJob, writer: SegmentWriter) -> bool:
    """Serve a parallelize job: this worker's copy of the pipeline; False when the socket closed."""
    loaded, node = _set_up(conn, lambda: pickle.loads(job.pipeline))
    it = None
    if loaded:
        options, iteration = job.options, job.iteration
        # Random stages draw one seed per iteration: the parent's iteration number, so a new
        # iter() of the dataset reshuffles as it would serially.
        it = _set_up(conn, lambda: node.iterator(Run(options, seeds=Seeds(node, iteration))))[1]
    try:
        while True:
            try:
                message = _receive(conn)
            except EOFError:
                return False
            if isinstance(message, End):
                return True
            if it is None or not isinstance(message, (Pull, Reset, SetState)):
                continue  # nothing loaded, or a stray message of another job: ignored
            if isinstance(message, Pull):
                reply = _pull(it, message, writer)
            else:  # any error is the parent's to raise
                done, error = (
                    attempt_all(it.reset)
                    if isinstance(message, Reset)
                    else attempt_all(it.set_state, message.state)
                )
                items = [] if done else [(False, pickle.dumps(pack_error(error)))]
                reply = Chunk(message.generation, items, None, not done, (0, 0))
            try:
                conn.send_bytes(pack(reply))
            except OSError:
                return False
    finally:
        if it is not None:
            it.close()


def _pull(it: Any, message: Pull, writer: SegmentWriter) -> Chunk:
    generation, count, seconds = message
    start = perf_ns()
    deadline = start + int(seconds * 1e9)
    items: list[tuple[bool, bytes]] = []
    ended = False
    while len(items) < count and perf_ns() < deadline:
        value = _UNSET
        try:
            value = next(it)  # one at a time: an error loses nothing but its element
            items.append((True, dump(value, writer)))
        except Exception as exc:  # noqa: BLE001 (delivered in order; the pipeline goes on after it)
            if value is not _UNSET:  # its result cannot be sent: only this element is lost
                items.append((False, packed_error(exc, value)))
            else:  # the pipeline ended or raised: the next pull goes on after it
                ended = isinstance(exc, StopIteration)
                if not ended:
                    items.append((False, packed_error(exc)))
                break
        value = None
    saved, state = attempt(it.get_state)
    if not saved:  # a checkpoint of the parallelize stage says why
        state = {"__unavailable__": f"{type(state).__name__}: {state}"}
    return Chunk(generation, items, state, ended, (start, perf_ns()))
