"""Reading one TFRecord file for the ``TFRecordDataset`` stages: the ``on_corrupt`` policy, the
counters, the rate-limited warnings and the saved pieces of a state (a held error, a checked offset).
Shared by the serial iterator (:mod:`.tfrecord`) and each file of a parallel read
(:mod:`.tfrecord_parallel`)."""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, cast

from ..core.counters import StageCounters
from ..core.node import NodeIterator
from ..core.state import ERROR
from ..io.records.tfrecord import LENGTH_CRC_MISMATCH, RecordError, RecordReader
from ..io.storage.fs import as_path, is_url

logger = logging.getLogger("headrace.io")


class RateLimitedLog:
    """Log the first ``burst`` warnings, then at most one per ``interval`` seconds with a count of
    the ones held back, so a badly damaged dataset cannot flood the log."""

    def __init__(self, burst: int = 5, interval: float = 10.0):
        self.burst, self.interval = burst, interval
        self.count = 0
        self.suppressed = 0
        self._last = 0.0
        self._lock = threading.Lock()  # the files of a parallel read warn from their reader threads

    def warning(self, message: str) -> None:
        with self._lock:
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

    def logged(self) -> int:
        """Warnings written so far (the rest were held back)."""
        with self._lock:
            return self.count - self.suppressed


def file_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


class FileSlot:
    """One open file; the reader is opened on first use (after a restore, lazily)."""

    __slots__ = ("path", "file", "offset", "record", "reader")

    def __init__(self, path: str, file: int, offset: int = 0, record: int = 0):
        self.path, self.file, self.offset, self.record = path, file, offset, record
        self.reader: RecordReader | None = None

    def position(self) -> tuple[int, int]:
        if self.reader is None:
            return self.offset, self.record
        return self.reader.offset, self.reader.record

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()


#: What a reading iterator counts, summed over files by :meth:`FileReading.counts`.
READ_COUNTS = ("records_read", "bytes_read", "records_skipped", "files_skipped", "damage_found")


def next_path(names: NodeIterator | None, filenames: tuple[str, ...] | None, taken: int) -> str | None:
    """The path of file number ``taken`` (from the list, or the next name of the ``names`` dataset),
    or None when there is none."""
    if names is None:
        listed = cast("tuple[str, ...]", filenames)  # a node with no names dataset lists them
        return listed[taken] if taken < len(listed) else None
    try:
        value = next(names)
    except StopIteration:
        return None
    return as_path(value, f"file name {taken} from the filenames dataset")


def saved_offset(fields: Any, slot: Any, field: str, path: str, compression: str | None) -> int:
    """A saved stream offset of ``path``, checked: a local uncompressed file shorter than it is another
    file (offsets of compressed files count uncompressed bytes, so only their sign is checked)."""
    size = None
    if not is_url(path):
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            raise fields.fail(field, path, f"a file that can be read ({exc.strerror or exc})") from None
        if compression:
            size = None
    return int(slot.int("offset", high=size))


class FileReading:
    """Reading one open file's records with the ``on_corrupt`` policy applied, counting what was read
    and skipped: shared by the serial iterator and each file of a parallel read
    (:mod:`.tfrecord_parallel`). Its ``node`` holds compression, buffer_size, storage_options and
    on_corrupt (the TFRecord node, or one file's); ``log`` warns (rate-limited, shared by the files of one iteration)."""

    node: Any
    log: RateLimitedLog
    records_read = bytes_read = records_skipped = files_skipped = damage_found = 0

    def counts(self) -> StageCounters:
        # READ_COUNTS are names of StageCounters (tests/profile/test_stats.py: no undeclared key)
        return cast(StageCounters, {key: getattr(self, key) for key in READ_COUNTS})

    def _reader(self, slot: FileSlot) -> RecordReader:
        if slot.reader is None:
            node = self.node
            slot.reader = RecordReader(
                slot.path,
                node.compression,
                node.buffer_size,
                offset=slot.offset,
                record=slot.record,
                storage_options=node.storage_options,
            )
        return slot.reader

    def _on_damage(self, error: RecordError, slot: FileSlot) -> None:
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

    def _read(self, slot: FileSlot, n: int) -> list[bytes]:
        """Up to ``n`` records of ``slot``'s file; StopIteration at its end (or a skipped rest)."""
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


def save_error(owed: Any) -> dict | None:
    """The RecordError held in ``owed`` (raised at the next call), as saved in a state."""
    for _, kind, value in owed:
        if kind == ERROR:
            error = value[0]
            return {"path": error.path, "record": error.record, "offset": error.offset, "kind": error.kind}
    return None


def load_error(fields: Any, compressed: bool) -> RecordError | None:
    """The RecordError a state saved as pending (:func:`save_error`), checked, or None."""
    saved = fields.dict("pending_error", optional=True)
    if saved is None:
        return None
    error_fields = fields.record(saved, "pending_error", ("path", "record", "offset", "kind"))
    return RecordError(
        str(saved["path"]),
        error_fields.int("record"),
        error_fields.int("offset"),
        str(saved["kind"]),
        compressed=compressed,
    )
