"""``TFRecordDataset``: the records of TFRecord files, every CRC verified, exactly resumable.

Files are read in tf.data's order: one after the other, or with ``num_parallel_reads=k`` round-robin
over ``k`` open files, read in parallel. The serial read is this module's :class:`TFRecordIterator`
(many records per call, framing and CRCs in compiled code). With ``num_parallel_reads`` the read is
what tf.data's is, ``interleave(one file's records, cycle_length=k, block_length=1,
num_parallel_calls=k)``, run by the interleave op's parallel iterator (reader threads per open file
when they pay, e.g. decompression, which releases the GIL; see :mod:`.tfrecord_parallel`). Both read
a file through :class:`FileReading` (the ``on_corrupt`` policy, the counters).

The state of an iterator is exact and small: which files are open, and for each the stream offset
and number of its next record (with reader threads, rarely, records read ahead and not handed out).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ..core.args import integer, is_int
from ..core.counters import StageCounters
from ..core.cpus import interleave_cycle_length
from ..core.errors import CheckpointError, InvalidArgumentError, check, pattern_hint
from ..core.node import AUTOTUNE, UNKNOWN_CARDINALITY, Access, Context, Fields, Node, NodeIterator
from ..core.spec import TensorSpec, string
from ..core.state import ERROR, NO_INPUT
from ..io.records.compression import normalize_compression
from ..io.records.index import (
    INDEX_POLICIES,
    IndexedRecords,
    RecordIndex,
    StaleIndexError,
    check_index,
    index_path,
    load_index,
)
from ..io.storage.fs import as_path, check_storage_options, exists, is_url
from ..io.storage.publish import check_shard_files
from .tfrecord_files import (
    FileReading,
    FileSlot,
    RateLimitedLog,
    file_name,
    load_error,
    next_path,
    save_error,
    saved_offset,
)

ON_CORRUPT = ("raise", "skip_record", "skip_file")


def _file_list(filenames: Any) -> tuple[str, ...]:
    if isinstance(filenames, (str, bytes, os.PathLike)):
        return (as_path(filenames, "filenames"),)
    if hasattr(filenames, "tolist") and not isinstance(filenames, (list, tuple)):
        filenames = filenames.tolist()  # numpy arrays of names
        if not isinstance(filenames, list):
            filenames = [filenames]
    if not isinstance(filenames, (list, tuple)):
        raise InvalidArgumentError(
            f"filenames must be a path, a list of paths or a Dataset of path strings, got {type(filenames).__name__}"
        )
    return tuple(as_path(f, f"filenames[{i}]") for i, f in enumerate(filenames))


class TFRecordNode(Node):
    """Records (scalar ``bytes``) of TFRecord files given as a list of paths or by a parent node
    yielding path strings."""

    op = "tfrecord"
    fields = Fields(
        "compression",
        "buffer_size",
        "num_parallel_reads",
        "on_corrupt",
        "index_policy",
        "indexes",
        "filenames",
        "cycle_length",
        resources=("storage_options",),
    )
    reads_input = True

    def __init__(
        self,
        filenames: Sequence[Any] | Node | Any,
        compression_type: str | None = None,
        buffer_size: int | None = None,
        num_parallel_reads: int | None = None,
        on_corrupt: str = "raise",
        index: Any = None,
        name: str | None = None,
        storage_options: dict | None = None,
    ):
        storage_options = check_storage_options(storage_options, "TFRecordDataset")
        buffer_size, num_parallel_reads = integer(buffer_size), integer(num_parallel_reads)
        compression = normalize_compression(compression_type)
        check(
            buffer_size is None or is_int(buffer_size, low=0),
            "buffer_size",
            buffer_size,
            "None or a number of bytes >= 0",
        )
        check(
            num_parallel_reads is None or num_parallel_reads == AUTOTUNE or is_int(num_parallel_reads, low=1),
            "num_parallel_reads",
            num_parallel_reads,
            "None, a positive int, or AUTOTUNE",
        )
        check(on_corrupt in ON_CORRUPT, "on_corrupt", on_corrupt, "'raise', 'skip_record' or 'skip_file'")
        check(index in INDEX_POLICIES, "index", index, "None, False, 'build' or 'require'")
        if isinstance(filenames, Node):
            super().__init__(filenames)
            self.filenames: tuple[str, ...] | None = None
        else:
            super().__init__()
            self.filenames = _file_list(filenames)
            for path in self.filenames:
                if not is_url(path) and not exists(path):
                    raise InvalidArgumentError(
                        f"TFRecordDataset: file {path!r} does not exist{pattern_hint(path)}"
                    )
            # Refuse a half-published shard set (the whole set is checked when more than one file is read).
            check_shard_files(
                self.filenames,
                "TFRecordDataset",
                whole_sets=len(self.filenames) > 1,
                storage_options=storage_options,
            )
        self.compression = compression
        self.buffer_size = buffer_size
        self.num_parallel_reads = num_parallel_reads
        if num_parallel_reads is None:
            self.cycle_length = 1
        elif num_parallel_reads == AUTOTUNE:
            self.cycle_length = interleave_cycle_length(AUTOTUNE)  # tf.data's cycle, so its order
        else:
            self.cycle_length = num_parallel_reads
        self.on_corrupt = on_corrupt
        self.index_policy = index
        self.storage_options = storage_options
        self.name = name
        # Indexes of listed files, resolved when the pipeline is built: a stale one is rebuilt or
        # refused here (as the policy says), never discovered halfway through an epoch.
        self.indexes: tuple[RecordIndex | None, ...] | None = None
        if self.filenames is not None and index is not False:
            self.indexes = tuple(load_index(p, compression, index, storage_options) for p in self.filenames)

    def describe_args(self) -> str:
        if self.filenames is None:
            parts = ["filenames from a dataset"]
        elif not self.filenames:
            parts = ["no files"]
        elif len(self.filenames) == 1:
            parts = [repr(file_name(self.filenames[0]))]
        else:  # names without their folder: a stage name must stay readable in a report
            parts = [
                f"{len(self.filenames)} files {file_name(self.filenames[0])}..{file_name(self.filenames[-1])}"
            ]
        if self.compression:
            parts.append(f"compression_type={self.compression!r}")
        if self.num_parallel_reads is not None:
            parts.append(f"num_parallel_reads={self.num_parallel_reads}")
        if self.on_corrupt != "raise":
            parts.append(f"on_corrupt={self.on_corrupt!r}")
        return ", ".join(parts)

    def compute_element_spec(self) -> TensorSpec:
        return TensorSpec((), string)

    def cardinality(self) -> int:
        if self.indexes is None or any(i is None for i in self.indexes):
            return UNKNOWN_CARDINALITY
        return sum(len(i) for i in self.indexes if i is not None)

    # --- random access: indexed files read in file order --------------------------------------------
    def random_access_length(self) -> int | None:
        """The record count when every listed file is indexed and files are read one after the other
        (with ``num_parallel_reads`` the order is round-robin, which random access does not follow)."""
        if self.cycle_length != 1:
            return None
        count = self.cardinality()
        return None if count == UNKNOWN_CARDINALITY else count

    def not_random_access(self) -> Node | None:
        """None when indexed; else, when only a file's index is missing, stale or damaged, that is
        what the caller is told (StaleIndexError naming the file and why), not a generic refusal."""
        culprit = super().not_random_access()
        if culprit is None or self.cycle_length != 1 or self.filenames is None or self.indexes is None:
            return culprit
        for path, index in zip(self.filenames, self.indexes):
            if index is None:
                _, reason = check_index(path, self.compression, self.storage_options)
                raise StaleIndexError(
                    f"reading {path!r} by position (global_shuffle, random access) needs its index, which "
                    f"is {reason} ({index_path(path)}); pass TFRecordDataset(..., index='build') to build "
                    f"it, or run `headrace index {path}`"
                )
        return culprit

    def _records_by_position(self) -> IndexedRecords:
        # One set of open files per thread: random reads seek, so threads must not share a handle.
        local = self.__dict__.get("_random_access")
        if local is None:
            local = self.__dict__.setdefault("_random_access", threading.local())
        records = getattr(local, "records", None)
        if records is None:
            if self.filenames is None:
                raise InvalidArgumentError(
                    "reading TFRecords by position needs the file names up front: pass a list of paths, not a Dataset"
                )
            policy = "require" if self.index_policy in (None, False) else self.index_policy
            records = local.records = IndexedRecords(
                self.filenames, self.compression, policy, self.storage_options
            )
        return records

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        return self._records_by_position().read_many(indices)

    def read_record(self, i: int) -> bytes:
        """Record ``i`` of the files taken one after the other (needs an index for every file).

        This is file order, not the round-robin order of ``num_parallel_reads``.
        """
        return self._records_by_position()[i]

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.pop("_random_access", None)
        return state

    def iterator(self, ctx: Context) -> NodeIterator:
        if self.cycle_length > 1:  # files read in parallel: the interleave op's iterator
            from .tfrecord_parallel import ParallelTFRecordIterator  # noqa: PLC0415 (threads on demand)

            return ParallelTFRecordIterator(self, ctx)
        names = self.parents[0].iterator(ctx) if self.parents else None
        return TFRecordIterator(self, names)


class TFRecordIterator(FileReading, NodeIterator[TFRecordNode]):
    """Files read one after the other (``num_parallel_reads`` None or 1), many records per call.

    Its state keeps the format of the former round-robin cycle, with one slot."""

    state_keys = ("next_file", "names", "slots", "cycle", "end_of_input", "pending_error")

    def __init__(self, node: TFRecordNode, names: NodeIterator | None):
        super().__init__(node, *([names] if names is not None else []))
        self.names = names
        self.log = RateLimitedLog()
        self._start()

    def _start(self) -> None:
        self.slot: FileSlot | None = None
        self.next_file = 0  # files taken from the input so far
        self.end_of_input = False
        # owed: a RecordError restored from a state saved while it was pending, raised at the next call

    def _open_next(self) -> FileSlot | None:
        if self.end_of_input:
            return None
        path = next_path(self.names, self.node.filenames, self.next_file)
        if path is None:
            self.end_of_input = True
            return None
        self.next_file += 1
        self.slot = FileSlot(path, self.next_file - 1)
        return self.slot

    def _index(self, slot: FileSlot) -> RecordIndex | None:
        indexes = self.node.indexes
        return None if indexes is None else indexes[slot.file]

    def _close_slot(self) -> None:
        if self.slot is not None:
            self.slot.close()
        self.slot = None

    def next_chunk(self, n: int) -> list:
        if self.owed:
            return self.serve_owed(n)  # the error held: raised here
        while True:
            slot = self.slot
            if slot is None:
                slot = self._open_next()
                if slot is None:
                    raise StopIteration
            try:
                out = self._read(slot, n)
            except StopIteration:
                self._close_slot()
                continue
            self.produced += len(out)
            return out

    def __next__(self) -> bytes:
        return self.next_chunk(1)[0]

    def seek_forward(self, n: int) -> int | None:
        """Skip ``n`` records by seeking, when every file it passes over is indexed; else None (the
        caller reads instead, so damage is still reported)."""
        node = self.node
        if self.owed or self.names is not None or node.indexes is None or node.filenames is None:
            return None
        # Check first, move second: a partial seek could not be undone.
        remaining = n
        slot = self.slot
        if slot is not None:
            index = self._index(slot)
            if index is None:
                return None
            remaining -= len(index) - slot.position()[1]
        file = self.next_file
        while remaining > 0 and file < len(node.filenames):
            file_index = node.indexes[file]
            if file_index is None:
                return None
            remaining -= len(file_index)
            file += 1
        skipped = 0
        while skipped < n:
            slot = self.slot if self.slot is not None else self._open_next()
            if slot is None:
                break
            index = cast(RecordIndex, self._index(slot))  # checked above: every file passed over is indexed
            record = slot.position()[1]
            take = min(len(index) - record, n - skipped)
            target = record + take
            if slot.reader is None:
                slot.offset, slot.record = index.offset_of(target), target
            else:
                slot.reader.seek(index.offset_of(target), target)
            skipped += take
            if target >= len(index):
                self._close_slot()
        return skipped

    def reset(self) -> None:
        self._close_slot()
        if self.names is not None:
            self.names.reset()
        self._start()

    # --- state ----------------------------------------------------------------------------------------
    def get_state(self) -> dict:
        slot = self.slot
        saved: dict[str, Any] | None = None
        if slot is not None:
            offset, record = slot.position()
            saved = {"path": slot.path, "file": slot.file, "offset": offset, "record": record}
        return {
            "next_file": self.next_file,
            "names": None if self.names is None else self.names.get_state(),
            "slots": [saved],
            "cycle": 0,
            "end_of_input": self.end_of_input,
            "pending_error": save_error(self.owed),
        }

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        node = self.node
        if isinstance(state["slots"], list) and len(state["slots"]) != 1:
            raise CheckpointError(
                f"state for {self.name} has {len(state['slots'])} open files but this pipeline reads "
                "one at a time (num_parallel_reads); restore into the same pipeline"
            )
        files = None if node.filenames is None else len(node.filenames)
        # next_file past the end would silently drop the files after it.
        next_file = fields.int("next_file", high=files)
        names = fields.dict("names", optional=self.names is None)
        fields.int("cycle", high=0)
        end_of_input = fields.bool("end_of_input")
        slot = None
        saved = fields.list("slots", length=1)[0]
        if saved is not None:
            record = fields.record(saved, "slots[0]", ("path", "file", "offset", "record"))
            file = record.int("file", high=None if files is None else next_file - 1)
            path = saved["path"]
            if not isinstance(path, str) or (node.filenames is not None and node.filenames[file] != path):
                raise CheckpointError(
                    f"state for {self.name} reads {path!r} as file {file}, which this pipeline "
                    "does not have there; restore into a pipeline over the same files"
                )
            offset = saved_offset(fields, record, "slots[0].path", path, node.compression)
            slot = FileSlot(path, file, offset, record.int("record"))
        error = load_error(fields, bool(node.compression))
        self._close_slot()
        if self.names is not None and names is not None:  # names is a dict when self.names is set
            self.names.set_state(names)
        self.slot = slot
        self.next_file, self.end_of_input = next_file, end_of_input
        if error is not None:
            self.owed.append((-1, ERROR, (error, NO_INPUT)))

    def close(self) -> None:
        self._close_slot()
        super().close()

    def counters(self) -> StageCounters:
        out = super().counters()
        out.update(self.counts())
        out["warnings_logged"] = self.log.logged()
        return out
