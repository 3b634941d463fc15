"""``Dataset.cache``: keep the elements of the first complete pass, in memory or in a file.

``cache()`` keeps them in memory (:class:`CacheIterator`); ``cache(filename)`` streams them to a file as
they pass (:class:`DiskCacheIterator`, format in :mod:`headrace.ops.support.cache_file`), keyed by the
fingerprint of the pipeline above it (:mod:`headrace.core.fingerprint`). See docs/cache.md.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import secrets
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core.counters import StageCounters
from ..core.errors import CheckpointError, InvalidArgumentError, WorkerError, on_failure, user_stacklevel
from ..core.fingerprint import blind_spots, fingerprint
from ..core.node import Context, Fields, Node, NodeIterator
from ..core.state import Choice, Field, Int, SavedState, StateFields
from ..core.structure import map_structure
from ..io.storage.fs import check_storage_options, filesystem, is_url
from ..io.storage.mirror import RemoteMirror
from ..io.storage.publish import process_identity, reclaim_temporaries
from .support.cache_file import (
    CacheFileError,
    CacheFileReader,
    CacheFileWriter,
    temp_name,
)
from .support.cache_lock import WriterLock

_REPLAY_CHUNK = 256
_MAX_REPLAY_ERRORS = 10_000
_warned_blind: set[tuple[str, str]] = set()


class CacheWarning(UserWarning):
    """A disk cache was rebuilt or could not be written; the message names the file and why."""


class CacheStore:
    """The cached elements of one ``cache()`` node: a per-process resource shared by its iterators.

    Filled once, by the first iterator that reads its input to the end; never filled in part.
    """

    def __init__(self) -> None:
        self.elements: list | None = None
        self.start: dict | None = None  # the input's state when the filling pass began, for replays
        self._lock = threading.Lock()

    def publish(self, elements: list, start: dict | None) -> None:
        with self._lock:
            if self.elements is None:
                self.elements, self.start = elements, start

    def clear(self) -> None:
        with self._lock:
            self.elements, self.start = None, None


def _frozen_copy(leaf: Any) -> Any:
    if isinstance(leaf, np.ndarray):
        leaf = leaf.copy()  # the cache owns its memory: nothing upstream or downstream can reach it
        leaf.flags.writeable = False
    return leaf


def owned(element: Any) -> Any:
    """What the memory cache keeps of an element: read-only copies of its arrays. The same arrays are
    handed out every pass, so an in-place op in a training loop fails loudly instead of changing the
    next epoch's data (copy an array to change it: ``x = x.copy()``)."""
    if isinstance(element, np.ndarray):
        return _frozen_copy(element)
    if isinstance(element, (tuple, dict)):
        return map_structure(_frozen_copy, element)
    return element


def _has_dict(element: Any) -> bool:
    if isinstance(element, dict):
        return True
    return isinstance(element, tuple) and any(_has_dict(item) for item in element)


def _same(leaf: Any) -> Any:
    return leaf


def _state_or_none(iterator: NodeIterator) -> dict | None:
    try:
        return iterator.get_state()
    except NotImplementedError:  # a stage without checkpoints: caching still works, saving will not
        return None


def _check_cache_path(filename: str, storage_options: dict | None = None) -> None:
    """Refuse, where the pipeline is built, a disk cache path that can never be written."""
    if is_url(filename):
        if filename.endswith("/"):
            raise InvalidArgumentError(
                f"cache(filename={filename!r}) names a directory; pass a file path such as "
                f"{filename + 'train.hrcache'!r}"
            )
        filesystem(filename, storage_options)  # fsspec and the protocol's package are installed
        return
    if filename.endswith(("/", os.sep)) or os.path.isdir(filename):
        raise InvalidArgumentError(
            f"cache(filename={filename!r}) names a directory; pass a file path such as "
            f"{os.path.join(filename, 'train.hrcache')!r}"
        )
    if os.path.exists(filename):
        return  # a finished cache can be read from a read-only place
    directory = os.path.dirname(os.path.abspath(filename))
    existing = directory
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise InvalidArgumentError(
            f"cache(filename={filename!r}): cannot create the directory {directory} because {existing} is a file"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InvalidArgumentError(
            f"cache(filename={filename!r}): the directory {existing} is not writable; pass a filename in a "
            "writable directory"
        )


class CacheNode(Node):
    """``cache(filename="")``: tf.data's cache, in memory or (with a filename) on disk.

    The first pass that reads the input to its end fills the cache; later passes (a new ``iter()``,
    or the next epoch under ``repeat``) read from it and never touch the input, so an upstream
    shuffle is frozen in its first order. A pass abandoned part way leaves nothing behind; the next
    pass reads the input again.

    In memory the cache is ``self.store``, a mutable resource on this otherwise immutable node (like a
    shuffle's iteration counter): per process, not pickled, emptied with ``store.clear()``.
    Checkpoints hold a position, never elements. Restoring where the cache is filled reads from it;
    restoring where it is not (a fresh process, or a pass that was still filling it) replays the
    input from the start of that pass up to the position, refilling the cache as it goes. That
    replay is exact when the input yields the same elements from the same state (true for seeded
    pipelines), and costs reading the input up to the position once.

    On disk (``filename``) see :class:`DiskCacheIterator` and docs/cache.md: the file appears only
    when a pass completes, is keyed by the fingerprint of the pipeline above it, and is safe to read.
    """

    op = "cache"
    fields = Fields("filename", resources=("storage_options", "store"))

    def __init__(
        self, parent: Node, filename: str = "", name: str | None = None, storage_options: dict | None = None
    ):
        storage_options = check_storage_options(storage_options, "cache")
        if isinstance(filename, os.PathLike):
            filename = os.fspath(filename)
        if not isinstance(filename, str):
            raise InvalidArgumentError(
                f"filename={filename!r} is not allowed: use a str path ('' for an in-memory cache)"
            )
        if filename.startswith("file://"):
            filename = filename[len("file://") :]
        if filename:
            _check_cache_path(filename, storage_options)
        super().__init__(parent)
        self.filename = filename
        self.name = name
        self.storage_options = storage_options
        self.store = CacheStore()

    def describe_args(self) -> str:
        return repr(self.filename) if self.filename else ""

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def cardinality(self) -> int:
        return self.parents[0].cardinality()

    def iterator(self, ctx: Context) -> NodeIterator:
        if self.filename:
            return DiskCacheIterator(self, ctx)
        return CacheIterator(self, ctx)

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.pop("store", None)  # the cache stays in the process that filled it
        return state

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self.store = CacheStore()


class _StorePosition(Int):
    """The position in the pass; one in a pass that read the in-memory cache must be within it."""

    def load(self, fields: StateFields, stage: Any, values: dict) -> int:
        position = super().load(fields, stage, values)
        cached = stage.node.store.elements
        if values["mode"] == "read" and cached is not None and position > len(cached):
            raise CheckpointError(
                f"{stage.name}: the checkpoint is at element {position} but the cache holds {len(cached)}"
            )
        return position


class PassIterator(NodeIterator[CacheNode]):
    """A pass of a cache, memory or disk: in mode ``read`` it reads what is cached
    (:meth:`read_cached`), in the others it reads the input and keeps what passes (:meth:`kept`,
    :meth:`input_ended`). This class pulls the chunks and counts ``position`` and ``produced``."""

    mode: str
    complete: bool  # the pass read its input to the end

    def __init__(self, node: CacheNode, ctx: Context):
        super().__init__(node)
        self.ctx = ctx
        self.parent: NodeIterator | None = None  # built only when the input is read
        self.start: dict | None = None  # the input's state when the pass that fills the cache began
        self.position = 0

    def _input(self) -> NodeIterator:
        if self.parent is None:
            self.parent = self.node.parents[0].iterator(self.ctx)
            self.inputs.append(self.parent)
        return self.parent

    def next_chunk(self, n: int) -> list:
        if self.mode == "read":
            out = self.read_cached(n)
        else:
            try:
                chunk = self._input().next_chunk(n)  # built by every pass that reads the input
            except StopIteration:
                self.input_ended()
                raise
            out = self.kept(chunk)
        self.position += len(out)
        self.produced += len(out)
        return out

    def __next__(self) -> Any:
        return self.next_chunk(1)[0]

    def read_cached(self, n: int) -> list:
        """Up to ``n`` cached elements from ``position`` on; StopIteration after the last."""
        raise NotImplementedError

    def kept(self, chunk: list) -> list:
        """Keep ``chunk``, read from the input at ``position``; returns the elements to hand out."""
        raise NotImplementedError

    def input_ended(self) -> None:
        """The input ended (and is asked again at each later call): complete the pass, once."""
        raise NotImplementedError


class CacheIterator(PassIterator):
    """Reads from the store when it is filled at the start of a pass, else from the input (writing)."""

    state_fields = (
        Choice("mode", ("read", "write")),
        _StorePosition("position"),
        SavedState("start", optional=True),
    )

    def __init__(self, node: CacheNode, ctx: Context):
        super().__init__(node, ctx)
        self.fresh_state: dict | None = None
        self._begin_pass()

    def _input(self) -> NodeIterator:
        parent = self.parent
        if parent is None:
            parent = super()._input()
            self.fresh_state = _state_or_none(parent)  # where a replay starts when no pass saved one
        return parent

    def _begin_pass(self) -> None:
        self.position = 0
        self.complete = False
        store = self.node.store
        if store.elements is not None:
            # Keep where the filling pass started, so a checkpoint can replay it where no cache is.
            self.mode, self.elements, self.start = "read", store.elements, store.start
        else:
            self.mode, self.elements = "write", []
            self.start = _state_or_none(self._input())

    def __next__(self) -> Any:
        position, elements = self.position, self.elements
        if self.mode == "read" and position < len(elements):  # the common case, without a list slice
            element = elements[position]
            if not _has_dict(element):
                self.position = position + 1
                self.produced += 1
                return element
        return self.next_chunk(1)[0]

    def read_cached(self, n: int) -> list:
        if self.position >= len(self.elements):
            raise StopIteration
        out = self.elements[self.position : self.position + n]
        if _has_dict(out[0]):  # a fresh dict per element: the cached one must not be edited
            out = [map_structure(_same, element) for element in out]
        return out

    def kept(self, chunk: list) -> list:
        out = [owned(element) for element in chunk]
        self.elements.extend(out)
        if out and _has_dict(out[0]):
            out = [map_structure(_same, element) for element in out]
        return out

    def input_ended(self) -> None:
        if not self.complete:
            self.complete = True
            self.node.store.publish(self.elements, self.start)

    def reset(self) -> None:
        if self.mode == "write" and not self.complete:
            self._input().reset()  # an unfinished pass: the input starts over
        self._begin_pass()

    def restored(self) -> None:
        self.complete = False
        cached = self.node.store.elements
        if self.mode == "read" and cached is not None:
            self.elements = cached  # the position was checked against it
            return
        self._replay(self.position)

    def _replay(self, position: int) -> None:
        """Refill the cache up to ``position`` by reading the input from the start of the saved pass."""
        parent = self._input()
        origin = self.start if self.start is not None else self.fresh_state
        if origin is None:
            raise CheckpointError(f"{self.name}: the input has no checkpoint state to replay from")
        parent.set_state(origin)
        self.start = origin
        self.mode, self.elements, self.position = "write", [], 0
        for chunk in _replayed(self.name, parent, 0, position):
            self.elements.extend(owned(element) for element in chunk)
        self.position = position


def _replayed(name: str, parent: NodeIterator, done: int, position: int) -> Iterator[list]:
    """The input's chunks from element ``done`` up to ``position``, replaying a saved pass: an element
    that fails is skipped, as the saved pass skipped it (up to ``_MAX_REPLAY_ERRORS`` of them)."""
    errors = 0
    while done < position:
        try:
            chunk = parent.next_chunk(min(_REPLAY_CHUNK, position - done))
        except StopIteration:
            raise CheckpointError(
                f"{name}: restoring position {position} replays the input, which ended after "
                f"{done} elements; the input does not repeat itself (seed its random stages)"
            ) from None
        except (CheckpointError, WorkerError):
            raise
        except Exception:  # noqa: BLE001 (the saved pass skipped this failed element too)
            errors += 1
            if errors > _MAX_REPLAY_ERRORS:
                raise
            continue
        done += len(chunk)
        yield chunk


def _warn(message: str) -> None:
    warnings.warn(message, CacheWarning, stacklevel=user_stacklevel())


class _ResumeState(SavedState):
    """Out of ``read`` mode, the input's state, which a restored pass continues from (None in
    ``read`` mode); kept in ``resume_state`` until ``restored``."""

    def __init__(self, name: str):
        super().__init__(name, "resume_state", optional=True)

    def save(self, stage: Any) -> dict | None:
        return (
            None if stage.mode == "read" else stage._input().get_state()
        )  # built by every pass that reads the input

    def load(self, fields: StateFields, stage: Any, values: dict) -> dict | None:
        state = super().load(fields, stage, values)
        if state is None and values["mode"] != "read":
            raise CheckpointError(f"{stage.name}: the checkpoint holds no input state to continue from")
        return state


class _FileId(Field):
    """In ``read`` mode, the id of the file being read (a restore reads on only from that file, else
    replays the pass); kept in ``resume_file`` until ``restored``."""

    def __init__(self, name: str):
        super().__init__(name, "resume_file")

    def save(self, stage: Any) -> str | None:
        return stage.file_id if stage.mode == "read" else None

    def load(self, fields: StateFields, stage: Any, values: dict) -> Any:
        return fields.state[self.name]  # compared with the file's id only


class DiskCacheIterator(PassIterator):
    """``cache(filename)``: each pass reads the complete cache file, or reads the input and writes it.

    Modes: ``read`` (from a complete file whose key matches), ``write`` (input to a temporary file,
    published by one atomic rename when the input ends), ``pass`` (input only: another live iterator
    or process holds ``<filename>.lock``, or this pass was restored mid-way). The key is the
    fingerprint of the pipeline above the cache plus the options that change its output; a file with
    another key, or one that is damaged, incomplete or from another format version, is rebuilt with
    a :class:`CacheWarning`. Damage found while reading blocks raises ``CacheFileError`` naming the
    file and offset.

    Checkpoints: in ``read`` mode a position (restoring seeks to the block holding it); if the file
    was rebuilt or removed since, the saved pass is replayed from the input's state at its start,
    rewriting the cache. In ``write`` or ``pass`` mode the input's own state: the restored pass
    continues at once from there without writing (its first part is gone); the next pass writes.
    """

    state_fields = (
        Choice("mode", ("read", "write", "pass")),
        Int("position"),
        _ResumeState("parent"),
        SavedState("start", optional=True),
        _FileId("file"),
    )

    def __init__(self, node: CacheNode, ctx: Context):
        super().__init__(node, ctx)
        # A remote cache is read and written as a local copy, uploaded when a pass completes.
        self.mirror = RemoteMirror(node.filename, node.storage_options) if is_url(node.filename) else None
        self.path = node.filename if self.mirror is None else self.mirror.local
        self.input_used = False  # the input has been read from (or restored) and must rewind for a new pass
        self.reader: CacheFileReader | None = None
        self.writer: CacheFileWriter | None = None
        self.lock: WriterLock | None = None
        self.block: list = []
        self.block_index = 0  # the next block to read
        self.block_offset = 0
        self.file_id: str | None = None  # the id of the file being read, from its header
        # A restored state's input state and file id, between its fields' restore and ``restored``.
        self.resume_state: dict | None = None
        self.resume_file: Any = None
        self._key: str | None = None
        with on_failure(self.close):  # the input may hold workers already
            self._begin_pass()

    # --- the cache key and the file ----------------------------------------------------------------
    def cache_key(self) -> str:
        """Fingerprint of the pipeline above the cache and of the options that change its output."""
        if self._key is None:
            upstream = self.node.parents[0]
            for spot in blind_spots(upstream):
                if (self.path, spot) not in _warned_blind:
                    _warned_blind.add((self.path, spot))
                    _warn(
                        f"disk cache {self.path}: the pipeline fingerprint cannot see inside {spot}; a change "
                        "there will not rebuild the cache (change the filename, or delete the file, to rebuild)"
                    )
            options = json.dumps(self.ctx.options.to_dict(), sort_keys=True, default=repr)
            self._key = hashlib.sha256(f"{fingerprint(upstream)} {options}".encode()).hexdigest()
        return self._key

    def _open_complete(self) -> CacheFileReader | None:
        """The complete cache file for this pipeline, or None (warning when one is there but unusable)."""
        if self.mirror is not None and not self._fetch(self.mirror):
            return None
        if not os.path.exists(self.path):
            return None
        try:
            reader = CacheFileReader(self.path)
        except CacheFileError as exc:
            _warn(f"disk cache: {exc}; it is rebuilt by the next complete pass")
            return None
        if reader.header.get("fingerprint") != self.cache_key():
            reader.close()
            _warn(
                f"disk cache {self.path} was written by a different pipeline (a function, captured value, "
                "argument or option above the cache changed); it is rebuilt by the next complete pass"
            )
            return None
        return reader

    def _fetch(self, mirror: RemoteMirror) -> bool:
        """Bring the remote cache's current version to the local copy; False when there is none."""
        try:
            return mirror.fetch()
        except OSError as exc:
            _warn(f"disk cache {self.node.filename} cannot be downloaded ({exc}); the input is read instead")
            return False

    def _reading(self) -> CacheFileReader:
        """The complete file being read: there is one whenever the mode is ``read``."""
        if self.reader is None:
            raise RuntimeError(f"{self.name}: no cache file is open in mode {self.mode!r}")
        return self.reader

    def _begin_pass(self) -> None:
        self._drop_pass()
        self.position = 0
        self.complete = False
        reader = self._open_complete()
        if reader is not None:
            self.mode, self.reader = "read", reader
            self.file_id, self.start = reader.header.get("id"), reader.header.get("start")
            self.block, self.block_index, self.block_offset = [], 0, 0
            return
        parent = self._input()
        if self.input_used:
            # Every pass yields what the cache holds: with no file (this iterator's previous pass was
            # not written, or the file went), run the pass it holds, or would hold, again.
            if self.start is not None:
                parent.set_state(self.start)
            else:
                parent.reset()
        self.input_used = True
        self.start = _state_or_none(parent)
        self._start_writing()

    def _start_writing(self) -> None:
        """Write this pass to a temporary file if no live writer holds the lock, else only read the input."""
        temp = temp_name(self.path)
        lock = WriterLock(self.path)
        if self.ctx.probe or not lock.acquire(temp):  # probing for element_spec never writes
            self.mode = "pass"
            return
        # Writers killed before they could clean up (their lock long since taken over) left these.
        reclaim_temporaries(os.path.dirname(os.path.abspath(self.path)), os.path.basename(self.path) + ".")
        header = {
            "id": secrets.token_hex(8),
            "fingerprint": self.cache_key(),
            "pipeline": self.node.parents[0].signature()[:4000],
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "writer": process_identity(),
            "start": self.start,
        }
        try:
            self.writer = CacheFileWriter(self.path, header, temp=temp)
        except OSError:
            lock.release()
            raise
        self.lock, self.mode = lock, "write"

    def _drop_pass(self) -> None:
        """Forget the current pass: an unfinished write leaves nothing behind."""
        self._abort_write()
        if self.reader is not None:
            self.reader.close()
            self.reader = None
        self.block = []

    # --- iteration ------------------------------------------------------------------------------------
    def read_cached(self, n: int) -> list:
        while self.block_offset >= len(self.block):
            reader = self._reading()
            if self.block_index >= len(reader.blocks):
                raise StopIteration
            self.block = reader.read_block(self.block_index)
            self.block_index += 1
            self.block_offset = 0
        out = self.block[self.block_offset : self.block_offset + n]
        self.block_offset += len(out)
        return out

    def kept(self, chunk: list) -> list:
        if self.writer is not None:
            self._write(self.writer, chunk)
        return chunk

    def __next__(self) -> Any:
        offset = self.block_offset
        if self.mode == "read" and offset < len(self.block):  # the common case, without a list slice
            self.block_offset = offset + 1
            self.position += 1
            self.produced += 1
            return self.block[offset]
        return self.next_chunk(1)[0]

    def _seek(self, position: int) -> None:
        """Move to record ``position`` of the file being read: one block read."""
        reader = self._reading()
        block, offset = reader.locate(position)
        if block < len(reader.blocks) and not (block == self.block_index - 1 and self.block):
            self.block = reader.read_block(block)
        self.block_index, self.block_offset = block + 1, offset
        if block >= len(reader.blocks):
            self.block, self.block_index, self.block_offset = [], block, 0
        self.position = position

    def seek_forward(self, n: int) -> int | None:
        """O(1) skip while reading a complete file (``skip`` after the cache); None while writing."""
        if self.mode != "read":
            return None
        target = min(self.position + n, self._reading().records)
        skipped = target - self.position
        self._seek(target)
        return skipped

    def _write(self, writer: CacheFileWriter, elements: list) -> None:
        try:
            writer.extend(elements, self.position)
        except InvalidArgumentError as exc:
            self._stop_writing()
            raise InvalidArgumentError(f"{self.name}: {exc}") from None
        except OSError as exc:
            self._stop_writing()
            _warn(f"{exc}; this pass continues without writing the cache")

    def _abort_write(self) -> None:
        """Discard the file being written (nothing of it stays) and let others write the cache."""
        if self.writer is not None:
            self.writer.abort()
            self.writer = None
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def _stop_writing(self) -> None:
        self._abort_write()
        self.mode = "pass"

    def input_ended(self) -> None:
        if self.complete:
            return
        self.complete = True
        if self.writer is None:
            return
        try:
            self.writer.commit()
            if self.mirror is not None:
                self._upload(self.mirror)
        except OSError as exc:
            _warn(f"{exc}; the next pass reads the input again")
        finally:
            self.writer = None
            if self.lock is not None:  # (always: the writer holds it)
                self.lock.release()
                self.lock = None

    def _upload(self, mirror: RemoteMirror) -> None:
        try:
            mirror.publish()
        except Exception as exc:  # fsspec backends raise their own types: a failed upload costs a re-read
            raise OSError(
                f"disk cache {self.node.filename}: uploading the finished cache failed "
                f"({type(exc).__name__}: {exc}); check the path and storage_options"
            ) from exc

    def reset(self) -> None:
        self._begin_pass()

    # --- checkpoints ---------------------------------------------------------------------------------
    def restored(self) -> None:
        parent, file = self.resume_state, self.resume_file
        self.resume_state = self.resume_file = None
        self._drop_pass()
        self.complete = False
        if self.mode == "read":
            reader = self._open_complete()
            if reader is not None and reader.header.get("id") == file and self.position <= reader.records:
                self.reader, self.file_id = reader, file
                self._seek(self.position)
                return
            if reader is not None:
                reader.close()
            self._replay(self.position)
            return
        # The saved pass continues from the input's own state; it no longer writes (its first part is
        # gone), and the next pass writes the cache from the start.
        assert parent is not None  # checked on load: every mode but read saves one
        self._input().set_state(parent)
        self.input_used = True
        self.mode = "pass"

    def _replay(self, position: int) -> None:
        """Read the saved pass again from its start up to ``position``, writing the cache as it goes."""
        if self.start is None:
            raise CheckpointError(
                f"{self.name}: the cache file this checkpoint was reading is gone or was rebuilt, and the input "
                "has no checkpoint state to replay the pass from"
            )
        parent = self._input()
        parent.set_state(self.start)
        self.input_used = True
        self.position = 0
        self._start_writing()
        for chunk in _replayed(self.name, parent, self.position, position):
            if self.writer is not None:
                self._write(self.writer, chunk)
            self.position += len(chunk)

    def counters(self) -> StageCounters:
        return {**super().counters(), "cache_mode": self.mode, "cache_file": self.node.filename}

    def close(self) -> None:
        if not self.closed:
            self._drop_pass()
        super().close()
