"""The messages between the parent and its worker processes, one typed class each, for both ends.

A worker serves one *job* at a time (:class:`MapJob` or :class:`PipelineJob`), then goes back to its
pool for the next; :class:`End` finishes a job.

- map: :class:`Tasks` chunks, each answered by one :class:`Done`;
- pipeline (``parallelize``): :class:`Pull`, :class:`Reset` and :class:`SetState`, each answered by
  one :class:`Chunk`;
- a job that cannot be loaded is answered by :class:`InitFailed`, a message that cannot be decoded
  by :class:`BadMessage`.

On the wire a message is the plain tuple ``(tag, *fields)``: the same bytes as a hand-written tuple,
with no class reference to pickle or look up (:func:`pack`, :func:`unpack`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .shm import SegmentWriter, dump, load

Where = tuple[list[str], str]  # the parent's sys.path and working directory
Span = tuple[int, int]  # a chunk's (start, end), perf_counter_ns (one clock for all processes on Linux)
PackedError = tuple[bytes | None, str, str, str]  # pickle (or None), type, message, traceback text


class MapJob(NamedTuple):
    """Start a map job: ``function`` (cloudpickled) applied to each element of later tasks."""

    function: bytes
    where: Where
    prefix: str  # the worker's shared memory file prefix


class PipelineJob(NamedTuple):
    """Start a parallelize job: this worker's copy of the pipeline (cloudpickled)."""

    pipeline: bytes
    options: Any
    iteration: int  # the parent's iteration number: random stages draw their seeds from it
    where: Where
    prefix: str


class End(NamedTuple):
    """The job is over; the worker waits for the next one."""


class Tasks(NamedTuple):
    """Elements to map: ``(task, rng_key, element)`` each."""

    items: list[tuple[int, Any, Any]]


class Done(NamedTuple):
    """Answer to :class:`Tasks`: ``(task, ok, busy_ns, payload)`` each, payload encoded on its own."""

    results: list[tuple[int, bool, int, bytes]]
    span: Span


class Pull(NamedTuple):
    """Ask for up to ``size`` elements, or as many as ``seconds`` of work give."""

    generation: int
    size: int
    seconds: float


class Reset(NamedTuple):
    generation: int


class SetState(NamedTuple):
    generation: int
    state: dict


class Chunk(NamedTuple):
    """Answer to :class:`Pull`, :class:`Reset` or :class:`SetState`: ``(ok, payload)`` items, the
    pipeline's state after them (None after a reset or restore) and whether its share ended."""

    generation: int
    items: list[tuple[bool, bytes]]
    state: dict | None
    ended: bool
    span: Span


class InitFailed(NamedTuple):
    """The job (function or pipeline) could not be loaded."""

    error: PackedError


class BadMessage(NamedTuple):
    """A message could not be decoded."""

    error: PackedError


ToWorker = MapJob | PipelineJob | End | Tasks | Pull | Reset | SetState
ToParent = Done | Chunk | InitFailed | BadMessage
Message = ToWorker | ToParent

TAGS: dict[type, str] = {
    MapJob: "map",
    PipelineJob: "pipeline",
    End: "end",
    Tasks: "tasks",
    Done: "done",
    Pull: "pull",
    Reset: "reset",
    SetState: "set_state",
    Chunk: "chunk",
    InitFailed: "init_failed",
    BadMessage: "bad_message",
}
KINDS: dict[str, type] = {tag: kind for kind, tag in TAGS.items()}
_DECODE: dict[str, tuple[type, int]] = {tag: (kind, 1 + len(kind._fields)) for tag, kind in KINDS.items()}  # type: ignore[attr-defined]


def pack(message: Message, writer: SegmentWriter | None = None) -> bytes:
    """The bytes of ``message``; its large array buffers go through ``writer``'s shared memory."""
    return dump((TAGS[type(message)],) + message, writer)


def unpack(data: bytes) -> Message | None:
    """The message in ``data``; None for a tag this version does not know (a stray, ignored)."""
    raw = load(data)
    decode = _DECODE.get(raw[0]) if type(raw) is tuple and raw else None
    if decode is None:
        return None
    kind, size = decode
    if len(raw) != size:
        raise TypeError(f"a {kind.__name__} message has {size - 1} fields, this one {len(raw) - 1}")
    return tuple.__new__(kind, raw[1:])  # a NamedTuple, without the cost of calling its __new__
