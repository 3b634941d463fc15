"""``TFRecordDataset``: the records of TFRecord files, every CRC verified, exactly resumable.

Files are read in tf.data's order: one after the other, or with ``num_parallel_reads=k`` round-robin
over ``k`` open files (tf.data's ``interleave(cycle_length=k, block_length=1)``). The reading itself is
serial for now: the order is the parallel one, the speed is one core's (framing and CRCs run in
compiled code, many records per call, so one core already outpaces tf.data on small records).

The state of an iterator is exact and small: which files are open, and for each the stream offset
and number of its next record.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ..core.args import integer, is_int
from ..core.cpus import interleave_cycle_length
from ..core.errors import CheckpointError, InvalidArgumentError, check, pattern_hint
from ..core.node import AUTOTUNE, UNKNOWN_CARDINALITY, Access, Context, Fields, Node, NodeIterator
from ..core.spec import TensorSpec, string
from ..core.state import ERROR, NO_INPUT
from ..io.compression import normalize_compression
from ..io.fs import as_path, check_storage_options, exists, is_url
from ..io.index import (
    INDEX_POLICIES,
    IndexedRecords,
    RecordIndex,
    StaleIndexError,
    check_index,
    index_path,
    load_index,
)
from ..io.publish import check_shard_files
from ..io.tfrecord import LENGTH_CRC_MISMATCH, RecordError, RecordReader

ON_CORRUPT = ("raise", "skip_record", "skip_file")
logger = logging.getLogger("headrace.io")


class RateLimitedLog:
    """Log the first ``burst`` warnings, then at most one per ``interval`` seconds with a count of
    the ones held back, so a badly damaged dataset cannot flood the log."""

    def __init__(self, burst: int = 5, interval: float = 10.0):
        self.burst, self.interval = burst, interval
        self.count = 0
        self.suppressed = 0
        self._last = 0.0

    def warning(self, message: str) -> None:
        self.count += 1
        now = time.monotonic()
        if self.count <= self.burst or now - self._last >= self.interval:
            if self.suppressed:
                message += f" ({self.suppressed} similar warnings suppressed)"
                self.suppressed = 0
            logger.warning(message)
            self._last = now
        else:
            self.suppressed += 1


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
            parts = [repr(_short(self.filenames[0]))]
        else:  # names without their folder: a stage name must stay readable in a report
            parts = [f"{len(self.filenames)} files {_short(self.filenames[0])}..{_short(self.filenames[-1])}"]
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

    def iterator(self, ctx: Context) -> TFRecordIterator:
        names = self.parents[0].iterator(ctx) if self.parents else None
        return TFRecordIterator(self, names)


def _short(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


class _Slot:
    """One open file of the cycle; the reader is opened on first use (after a restore, lazily)."""

    __slots__ = ("path", "file", "offset", "record", "reader")

    def __init__(self, path: str, file: int, offset: int = 0, record: int = 0):
        self.path, self.file, self.offset, self.record = path, file, offset, record
        self.reader: RecordReader | None = None

    def position(self) -> tuple[int, int]:
        if self.reader is None:
            return self.offset, self.record
        return self.reader.offset, self.reader.record


class TFRecordIterator(NodeIterator[TFRecordNode]):
    state_keys = ("next_file", "names", "slots", "cycle", "end_of_input", "pending_error")

    def __init__(self, node: TFRecordNode, names: NodeIterator | None):
        super().__init__(node, *([names] if names is not None else []))
        self.names = names
        self.log = RateLimitedLog()
        self.records_read = 0
        self.bytes_read = 0
        self.records_skipped = 0  # damaged records passed over (a rescanned region counts as one)
        self.files_skipped = 0  # files whose rest was abandoned after damage
        self.damage_found = 0  # damaged places met, whatever the policy did with them
        self._start()

    def _start(self) -> None:
        self.slots: list[_Slot | None] = [None] * self.node.cycle_length
        self.cycle = 0
        self.next_file = 0  # files taken from the input so far
        self.end_of_input = False
        # owed: a RecordError met after some records of a chunk, raised at the next call

    # --- files ---------------------------------------------------------------------------------------
    def _next_name(self) -> str | None:
        node = self.node
        if self.names is None:
            filenames = cast("tuple[str, ...]", node.filenames)  # a node with no names dataset lists them
            if self.next_file >= len(filenames):
                return None
            path = filenames[self.next_file]
        else:
            try:
                value = next(self.names)
            except StopIteration:
                return None
            path = as_path(value, f"file name {self.next_file} from the filenames dataset")
        self.next_file += 1
        return path

    def _reader(self, slot: _Slot) -> RecordReader:
        if slot.reader is None:
            slot.reader = RecordReader(
                slot.path,
                self.node.compression,
                self.node.buffer_size,
                offset=slot.offset,
                record=slot.record,
                storage_options=self.node.storage_options,
            )
        return slot.reader

    def _index(self, slot: _Slot) -> RecordIndex | None:
        indexes = self.node.indexes
        return None if indexes is None else indexes[slot.file]

    def _close_slot(self, position: int) -> None:
        slot = self.slots[position]
        if slot is not None and slot.reader is not None:
            slot.reader.close()
        self.slots[position] = None

    def _advance(self) -> None:
        self.cycle = (self.cycle + 1) % len(self.slots)

    # --- damage ---------------------------------------------------------------------------------------
    def _on_damage(self, error: RecordError, slot: _Slot) -> None:
        """Apply ``on_corrupt``: re-raise, or skip (StopIteration means: the rest of this file)."""
        self.damage_found += 1
        policy = self.node.on_corrupt
        if policy == "raise":
            raise error
        where = f"{error.path}: {error.kind} at record {error.record}, offset {error.offset}"
        if policy == "skip_file":
            self.files_skipped += 1
            self.log.warning(f"skipping the rest of the file after damage: {where}")
            raise StopIteration
        self.records_skipped += 1
        if error.recoverable:
            self.log.warning(f"skipping a damaged record: {where}")
            return
        if error.kind == LENGTH_CRC_MISMATCH:
            skipped = self._reader(slot).resync()
            if skipped is not None:
                found = f"reading resumes {skipped} bytes later"
            elif self.node.compression:  # see RecordReader.resync: a scan could repeat earlier records
                found = (
                    "the rest of this compressed file is skipped (its records cannot be located safely): "
                    + self._reader(slot).lost
                )
            else:
                found = "no intact record follows"
            self.log.warning(f"skipping damaged data: {where}; {found}")
            return
        self.log.warning(f"skipping a damaged record: {where}; nothing after it can be read")
        raise StopIteration

    def _read(self, slot: _Slot, n: int) -> list[bytes]:
        reader = self._reader(slot)
        while True:
            try:
                records = reader.next_chunk(n)
            except RecordError as error:
                self._on_damage(error, slot)
                continue
            self.records_read += len(records)
            self.bytes_read += sum(map(len, records))
            return records

    # --- iteration -----------------------------------------------------------------------------------
    def _step(self, n: int) -> list[bytes]:
        """Records from the file at the current cycle position (tf.data's interleave loop)."""
        slots = self.slots
        while True:
            slot = slots[self.cycle]
            if slot is not None:
                try:
                    records = self._read(slot, n if len(slots) == 1 else 1)
                except StopIteration:
                    self._close_slot(self.cycle)
                    self._advance()
                    continue
                if len(slots) > 1:
                    self._advance()
                return records
            if not self.end_of_input:
                path = self._next_name()
                if path is None:
                    self.end_of_input = True
                else:
                    slots[self.cycle] = _Slot(path, self.next_file - 1)
                continue
            if all(s is None for s in slots):
                raise StopIteration
            self._advance()

    def next_chunk(self, n: int) -> list:
        if self.owed:
            return self.serve_owed(n)  # the error held: raised here
        if len(self.slots) == 1:
            out = self._step(n)
        else:
            out = []
            while len(out) < n:
                rounds = self._whole_rounds(n - len(out))
                if rounds:
                    out += self._take_rounds(rounds)
                    continue
                try:
                    out.extend(self._step(1))
                except StopIteration:
                    if not out:
                        raise
                    break
                except RecordError as error:
                    if not out:
                        raise
                    self.hold(out, error)  # served after the records read before it
                    break
        self.produced += len(out)
        return out

    def _whole_rounds(self, wanted: int) -> int:
        """How many whole rounds of the cycle (one record from each file) can be taken at once: every
        slot open with that many records framed and verified already, so nothing can fail or end
        midway. 0 sends the caller one record at a time (opening, filling, ending or damage)."""
        slots = self.slots
        rounds = wanted // len(slots)
        for slot in slots:
            if not rounds or slot is None or slot.reader is None:
                return 0
            rounds = min(rounds, slot.reader.buffered())
        return rounds

    def _take_rounds(self, rounds: int) -> list[bytes]:
        """``rounds`` whole rounds from the current cycle position: the records one at a time would
        give, in the same order, and the cycle ends where it began."""
        slots, at = self.slots, self.cycle
        chunks = [
            cast("RecordReader", cast("_Slot", slots[(at + i) % len(slots)]).reader).next_chunk(rounds)
            for i in range(len(slots))
        ]
        self.records_read += rounds * len(slots)
        self.bytes_read += sum(len(record) for chunk in chunks for record in chunk)
        return [record for group in zip(*chunks) for record in group]

    def __next__(self) -> bytes:
        return self.next_chunk(1)[0]

    def seek_forward(self, n: int) -> int | None:
        """Skip ``n`` records by seeking, when every file it passes over is indexed and files are read
        one after the other; else None (the caller reads instead, so damage is still reported)."""
        node = self.node
        if (
            len(self.slots) > 1
            or self.owed
            or self.names is not None
            or node.indexes is None
            or node.filenames is None  # (never, when names is None)
        ):
            return None
        # Check first, move second: a partial seek could not be undone.
        remaining = n
        slot = self.slots[0]
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
            slot = self.slots[0]
            if slot is None:
                path = self._next_name()
                if path is None:
                    self.end_of_input = True
                    break
                slot = self.slots[0] = _Slot(path, self.next_file - 1)
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
                self._close_slot(0)
        return skipped

    def reset(self) -> None:
        for position in range(len(self.slots)):
            self._close_slot(position)
        if self.names is not None:
            self.names.reset()
        self._start()

    # --- state ----------------------------------------------------------------------------------------
    def get_state(self) -> dict:
        slots: list[dict[str, Any] | None] = []
        for slot in self.slots:
            if slot is None:
                slots.append(None)
                continue
            offset, record = slot.position()
            slots.append({"path": slot.path, "file": slot.file, "offset": offset, "record": record})
        error = self.owed[0][2][0] if self.owed else None
        return {
            "next_file": self.next_file,
            "names": None if self.names is None else self.names.get_state(),
            "slots": slots,
            "cycle": self.cycle,
            "end_of_input": self.end_of_input,
            "pending_error": None
            if error is None
            else {"path": error.path, "record": error.record, "offset": error.offset, "kind": error.kind},
        }

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        node = self.node
        if isinstance(state["slots"], list) and len(state["slots"]) != len(self.slots):
            raise CheckpointError(
                f"state for {self.name} has {len(state['slots'])} open files but this pipeline reads "
                f"{len(self.slots)} at a time (num_parallel_reads); restore into the same pipeline"
            )
        files = None if node.filenames is None else len(node.filenames)
        # next_file past the end would silently drop the files after it.
        next_file = fields.int("next_file", high=files)
        names = fields.dict("names", optional=self.names is None)
        cycle = fields.int("cycle", high=len(self.slots) - 1)
        end_of_input = fields.bool("end_of_input")
        slots: list[_Slot | None] = []
        for index, saved in enumerate(fields.list("slots", length=len(self.slots))):
            if saved is None:
                slots.append(None)
                continue
            slot = fields.record(saved, f"slots[{index}]", ("path", "file", "offset", "record"))
            file = slot.int("file", high=None if files is None else next_file - 1)
            path = saved["path"]
            if not isinstance(path, str) or (node.filenames is not None and node.filenames[file] != path):
                raise CheckpointError(
                    f"state for {self.name} reads {path!r} as file {file}, which this pipeline "
                    "does not have there; restore into a pipeline over the same files"
                )
            size = None
            if not is_url(path):
                try:
                    size = os.path.getsize(path)  # a shorter file than the saved offset is another file
                except OSError as exc:
                    raise fields.fail(
                        f"slots[{index}].path", path, f"a file that can be read ({exc.strerror or exc})"
                    ) from None
                if node.compression:
                    size = None  # offsets of compressed files count uncompressed bytes
            slots.append(_Slot(path, file, slot.int("offset", high=size), slot.int("record")))
        saved_error = fields.dict("pending_error", optional=True)
        error = None
        if saved_error is not None:
            error_fields = fields.record(saved_error, "pending_error", ("path", "record", "offset", "kind"))
            error = RecordError(
                str(saved_error["path"]),
                error_fields.int("record"),
                error_fields.int("offset"),
                str(saved_error["kind"]),
                compressed=bool(node.compression),
            )
        for position in range(len(self.slots)):
            self._close_slot(position)
        if self.names is not None and names is not None:  # names is a dict when self.names is set
            self.names.set_state(names)
        self.slots = slots
        self.next_file, self.cycle, self.end_of_input = next_file, cycle, end_of_input
        if error is not None:
            self.owed.append((-1, ERROR, (error, NO_INPUT)))

    def close(self) -> None:
        for position in range(len(self.slots)):
            self._close_slot(position)
        super().close()

    def counters(self) -> dict:
        out = super().counters()
        out.update(
            records_read=self.records_read,
            bytes_read=self.bytes_read,
            records_skipped=self.records_skipped,
            files_skipped=self.files_skipped,
            damage_found=self.damage_found,
            warnings_logged=self.log.count - self.log.suppressed,
        )
        return out
