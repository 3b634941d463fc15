"""Exceptions raised by headrace, the helper that adds stage context to a user's exception, the
one way to undo a step that failed (:class:`on_failure`), and the one way to catch whatever a call
raises (:func:`attempt`, :func:`attempt_all`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any


class HeadraceError(Exception):
    """Base class of every error headrace raises itself (user exceptions pass through unchanged)."""


class OpError(HeadraceError):
    """tf.errors.OpError: the base of TensorFlow's error classes that headrace raises (``tf.errors.*``).

    Takes a message, or TensorFlow's ``(node_def, op, message)``; ``message``, ``op``, ``node_def`` and
    ``error_code`` read as on TensorFlow's errors.
    """

    error_code = 2  # UNKNOWN

    def __init__(self, *args: object) -> None:
        if len(args) == 3 and not isinstance(args[0], str):  # tf's (node_def, op, message)
            self.node_def, self.op = args[0], args[1]
            args = (args[2],)
        super().__init__(*args)

    node_def: object = None
    op: object = None

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidArgumentError(OpError, ValueError):
    """An argument given when building a pipeline is not allowed; the message names it and what is."""

    error_code = 3


class StructureError(HeadraceError, ValueError):
    """Elements do not have the structure, shape or dtype a stage needs (e.g. batching ragged shapes)."""


class CheckpointError(HeadraceError, ValueError):
    """A saved iterator state cannot be restored into this pipeline."""


class DataLossError(OpError, IOError):
    """Stored data is damaged: bad checksum, truncated record, bad compressed stream."""

    error_code = 15


class UserStopIteration(HeadraceError, RuntimeError):
    """A user function raised ``StopIteration``. tf.data treats that as an error, not as the end of the
    dataset (and Python itself turns it into RuntimeError inside generators, PEP 479)."""


class WorkerError(HeadraceError, RuntimeError):
    """A background worker thread or process died or could not be started."""


def add_note(exc: BaseException, note: str) -> None:
    """Attach ``note`` to ``exc`` (``BaseException.add_note`` on 3.11+, ``__notes__`` before)."""
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10: keep the note where 3.11's traceback would look for it
        notes = getattr(exc, "__notes__", None)
        if notes is None:
            try:
                # 3.10's stubs have no BaseException.__notes__ (this branch only runs on 3.10)
                exc.__notes__ = notes = []  # type: ignore[attr-defined]
            except AttributeError:  # some builtin exceptions refuse new attributes
                return
        notes.append(note)


class on_failure:  # noqa: N801 (used as a statement: ``with on_failure(undo):``)
    """``with on_failure(undo, *args):`` calls ``undo(*args)`` when the block raises anything (an
    interrupt too), then lets the error go on unchanged: the one shape of "remove the temporary file,
    abandon the set, release the workers, then re-raise" that writers and pools share.

    >>> undone = []
    >>> with on_failure(undone.append, "temporary"):
    ...     pass
    >>> try:
    ...     with on_failure(undone.append, "temporary"):
    ...         raise OSError("disk full")
    ... except OSError as exc:
    ...     print(exc, undone)
    disk full ['temporary']
    """

    __slots__ = ("args", "undo")

    def __init__(self, undo: Callable[..., Any], *args: Any):
        self.undo, self.args = undo, args

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is not None:
            self.undo(*self.args)  # the error goes on (None: not swallowed)


def attempt(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
    """``(True, fn(*args, **kwargs))``, or ``(False, the exception)`` when the call raised any
    ``Exception``: the one shape of "try it; on any error fall back, report it or hold it" where the
    call is code whose errors cannot be listed (a user's function, pickling a user's value, an object
    store, a probe of a foreign object). An interrupt (KeyboardInterrupt, SystemExit) goes on.

    >>> attempt(int, "7"), attempt(int, "x")[0]
    ((True, 7), False)
    """
    try:
        return True, fn(*args, **kwargs)
    except Exception as exc:
        return False, exc


def attempt_all(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
    """:func:`attempt` that catches interrupts too, for a call whose error is raised somewhere else:
    in the thread that waits for this one, in the parent of this worker process, or after the rest of
    a loop of closes ran. The caller raises (or sends) the exception it gets, whatever it is."""
    try:
        return True, fn(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 (handed to the caller, who raises or sends it)
        return False, exc


def shown(value: object) -> str:
    """``repr`` of an argument as the user would write it: numpy scalars and 0-d arrays by value.

    >>> import numpy as np
    >>> print(shown(np.int64(-3)), shown(np.array(2.5)), shown("a"))
    -3 2.5 'a'
    """
    item = getattr(value, "item", None)
    if item is not None and getattr(value, "shape", None) == ():
        return repr(item())
    return repr(value)


def check(condition: bool, name: str, value: object, allowed: str) -> None:
    """Raise InvalidArgumentError naming the argument, its value and what is allowed."""
    if not condition:
        raise InvalidArgumentError(f"{name}={shown(value)} is not allowed: {allowed}")


def user_stacklevel() -> int:
    """``stacklevel`` for ``warnings.warn`` that names the user's line: the first frame outside
    headrace, however many headrace frames (timed stage calls, chunks, adapters) lie between.

    Called from the function that calls ``warnings.warn``.
    """
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "headrace":
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def pattern_hint(path: str) -> str:
    """What to add to a "no such file" error whose name looks like a glob pattern: readers take file
    names, as tf.data's do, and never expand ``*``, ``?`` or ``[...]``.

    >>> pattern_hint("data/train-*.tfrecord").split(": ")[1]
    'pass Dataset.list_files(pattern) or hr.io.matching_files(pattern)'
    >>> pattern_hint("data/train.tfrecord")
    ''
    """
    if not any(char in path for char in "*?["):
        return ""
    return (
        "; file names are not expanded as patterns: pass Dataset.list_files(pattern) or "
        "hr.io.matching_files(pattern)"
    )
