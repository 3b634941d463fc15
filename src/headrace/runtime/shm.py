"""Moving elements between processes: pickle protocol 5, with large buffers in shared memory.

A message is the pickle of an element with its array buffers taken out of band. Small messages
(at most :data:`INLINE_LIMIT` bytes in all) travel inline through the worker's pipe. Larger ones are
written once into a fresh file under :data:`SHM_DIR` (``/dev/shm``, a RAM file system) and only the
file's name goes through the pipe; the reader maps the file, unlinks it at once, and unpickles arrays
that point straight into the mapping, so array buffers are never pickled, piped or copied again. The
mapping is freed when the last array using it is.

Every file is named ``headrace-<owner pid>-<executor>-...``; whoever shuts an executor down removes
what is left under its prefix, so a killed worker leaks nothing; and :func:`reclaim_dead` (run when
a process pool starts) removes the files of owners that were killed before they could.

Space is reserved with ``posix_fallocate`` and written with ``pwrite``: a full ``/dev/shm`` is an
``OSError`` turned into a clear :class:`~headrace.WorkerError`, never the ``SIGBUS`` that writing
through a mapping of a full RAM file system gives.

>>> import numpy as np
>>> writer = SegmentWriter(segment_prefix(0, "doctest"))
>>> element = {"image": np.arange(20_000, dtype=np.float32), "label": 3}
>>> message = dump(element, writer)
>>> message[:1], len(message) < 100
(b'S', True)
>>> back = load(message)
>>> bool((back["image"] == element["image"]).all()), back["label"], back["image"].flags.writeable
(True, 3, True)
"""

from __future__ import annotations

import errno
import mmap
import os
import pickle
import shutil
import struct
import tempfile
from typing import Any

from ..core.errors import WorkerError, on_failure

INLINE_LIMIT = 32 * 1024  # bytes; keeps every pipe message small, so pipes never fill up and block
ALIGN = 64  # array buffers start on cache-line boundaries, so numpy sees them aligned
PREFIX = "headrace-"


def _default_dir() -> str:
    configured = os.environ.get("HEADRACE_SHM_DIR")
    if configured:
        return configured
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    return tempfile.gettempdir()  # no RAM file system (macOS): still one copy, via the page cache


SHM_DIR = _default_dir()
_POPULATE = getattr(mmap, "MAP_POPULATE", 0)


def segment_prefix(owner_pid: int, executor: str) -> str:
    """File name prefix of one executor's segments (``cleanup`` removes them all)."""
    return f"{PREFIX}{owner_pid}-{executor}-"


def _allocate(fd: int, size: int) -> None:
    """Reserve ``size`` bytes now, so a full file system fails here with ENOSPC."""
    if hasattr(os, "posix_fallocate"):
        try:
            os.posix_fallocate(fd, 0, size)
            return
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                raise
    os.ftruncate(fd, size)


def _full_message(size: int, directory: str, exc: OSError) -> str:
    try:
        free = f"{shutil.disk_usage(directory).free / 2**20:.0f} MB free"
    except OSError:
        free = "free space unknown"
    return (
        f"not enough shared memory: could not reserve {size / 2**20:.1f} MB in {directory} "
        f"({free}; {exc.strerror}). Free space there, give the machine or container more "
        "(docker run --shm-size=...), lower num_parallel_calls or the element size, set "
        "HEADRACE_SHM_DIR to a larger RAM file system, or pass executor='thread'"
    )


class SegmentWriter:
    """Creates the shared memory files of one process for one executor; counts what it wrote."""

    def __init__(self, prefix: str, directory: str | None = None):
        self.prefix = prefix
        self.directory = directory or SHM_DIR
        self.created = 0
        self.bytes = 0

    def write(self, pieces: list[tuple[int, memoryview]], size: int) -> str:
        name = f"{self.prefix}{self.created}"
        self.created += 1
        path = os.path.join(self.directory, name)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        with on_failure(_unlink, path):
            try:
                _allocate(fd, size)
                for offset, piece in pieces:
                    done = 0
                    while done < piece.nbytes:
                        done += os.pwrite(fd, piece[done:], offset + done)
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.ENOMEM, errno.EFBIG):
                    raise WorkerError(_full_message(size, self.directory, exc)) from exc
                raise
            finally:
                os.close(fd)
        self.bytes += size
        return name


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def dump(obj: Any, writer: SegmentWriter | None) -> bytes:
    """Encode ``obj`` as a message; large ones go through a shared memory file from ``writer``."""
    buffers: list[pickle.PickleBuffer] = []
    try:
        head = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    except (pickle.PicklingError, AttributeError, TypeError):
        # Classes and functions defined in __main__ (or in a function) travel by value.
        from .pickling import dumps  # noqa: PLC0415

        buffers.clear()
        head = dumps(obj, protocol=5, buffer_callback=buffers.append)
    raws = [buffer.raw() for buffer in buffers]
    total = len(head) + sum(raw.nbytes for raw in raws)
    if writer is None or total <= INLINE_LIMIT:
        if not raws:
            return b"P" + head
        lengths = [len(head)] + [raw.nbytes for raw in raws]
        return b"B" + struct.pack(f"<I{len(lengths)}Q", len(raws), *lengths) + head + b"".join(raws)
    pieces = [(0, memoryview(head))]
    layout: list[int] = []
    offset = len(head)
    for raw in raws:
        offset = -(-offset // ALIGN) * ALIGN
        pieces.append((offset, raw))
        layout.extend((offset, raw.nbytes))
        offset += raw.nbytes
    name = writer.write(pieces, max(offset, 1)).encode()
    return (
        b"S"
        + struct.pack("<H", len(name))
        + name
        + struct.pack(f"<I{1 + len(layout)}Q", len(raws), len(head), *layout)
        + writer.directory.encode()
    )


def _parse_segment(message: bytes) -> tuple[str, int, list[int]]:
    (name_length,) = struct.unpack_from("<H", message, 1)
    name = message[3 : 3 + name_length].decode()
    at = 3 + name_length
    (count,) = struct.unpack_from("<I", message, at)
    numbers = struct.unpack_from(f"<{1 + 2 * count}Q", message, at + 4)
    directory = message[at + 4 + 8 * len(numbers) :].decode()
    return os.path.join(directory, name), numbers[0], list(numbers[1:])


def load(message: bytes) -> Any:
    """Decode a message from :func:`dump`; arrays come back writable."""
    kind = message[:1]
    if kind == b"P":
        return pickle.loads(memoryview(message)[1:])
    if kind == b"B":
        (count,) = struct.unpack_from("<I", message, 1)
        lengths = struct.unpack_from(f"<{count + 1}Q", message, 5)
        view = memoryview(message)
        at = 5 + 8 * (count + 1)
        head = view[at : at + lengths[0]]
        at += lengths[0]
        buffers = []
        for length in lengths[1:]:
            buffers.append(bytearray(view[at : at + length]))  # a writable copy, as a fresh array
            at += length
        return pickle.loads(head, buffers=buffers)
    if kind == b"S":
        path, head_length, layout = _parse_segment(message)
        fd = os.open(path, os.O_RDWR)
        try:
            size = os.fstat(fd).st_size
            mapping = mmap.mmap(fd, size, flags=mmap.MAP_SHARED | _POPULATE)
        finally:
            os.close(fd)
            _unlink(path)  # the mapping stays valid; nothing is left behind in the directory
        view = memoryview(mapping)
        segments = [view[offset : offset + length] for offset, length in zip(layout[::2], layout[1::2])]
        return pickle.loads(view[:head_length], buffers=segments)
    raise WorkerError(f"corrupt message between headrace processes (starts with {message[:8]!r})")


def discard(message: bytes) -> None:
    """Drop a message without decoding it, removing its shared memory file if it has one."""
    if message[:1] == b"S":
        _unlink(_parse_segment(message)[0])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, someone else's
        return True
    return True


def reclaim_dead(directory: str | None = None) -> int:
    """Remove the files of owners that no longer run (a SIGKILL of a whole process group leaves
    them: nobody was left to clean up); returns how many. Every name carries its owner's pid.

    >>> reclaim_dead() >= 0
    True
    """
    directory = directory or SHM_DIR
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        if not name.startswith(PREFIX):
            continue
        owner = name[len(PREFIX) :].split("-", 1)[0]
        if owner.isdigit() and not _alive(int(owner)):
            try:
                os.unlink(os.path.join(directory, name))
                removed += 1
            except OSError:
                pass
    return removed


def cleanup(prefix: str, directory: str | None = None) -> int:
    """Remove every shared memory file whose name starts with ``prefix``; returns how many."""
    directory = directory or SHM_DIR
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        if name.startswith(prefix):
            try:
                os.unlink(os.path.join(directory, name))
                removed += 1
            except OSError:
                pass
    return removed
