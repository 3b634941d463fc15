"""``TFRecordDataset(files, num_parallel_reads=k)``: the files read in parallel by the interleave op.

tf.data reads ``num_parallel_reads`` files as ``interleave(one file's records, cycle_length=k,
block_length=1, num_parallel_calls=k)``, and so does this: the files (listed, or named by a dataset)
are the input of an interleave node whose iterator is the op's own
(:mod:`headrace.ops.interleave_parallel`: slots read inline first, then by a reader thread each, kept
when they pay, as for decompressed shards or slow storage), and each slot reads one file
(:class:`RecordFileIterator`, reading through the serial source's :class:`~.tfrecord.FileReading`).
The order is tf.data's (deterministic), whatever the threads do.

The TFRecord stage is :class:`ParallelTFRecordIterator`, which owns the interleave's iterator: the
profiler sees one stage with the files' counters summed (records and bytes read, damage met: files
fold theirs in when they close) and the interleave's executor figures, and ``next_chunk(n)`` gathers
up to ``n`` records. Its state is ``{"files": the interleave's state, "owed", "pending_error"}``: a
slot saves its file's ``(number, path)`` as its input and ``{"offset", "record"}`` (plus, rarely,
records a reader thread read ahead). A state of the former format (one cycle of ``slots`` kept by
the TFRecord stage itself) is converted when restored.

The interleave op is imported here, by a source: the one place that puts a source over an op, so
that ``TFRecordDataset`` stays one stage whatever ``num_parallel_reads`` says.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, cast

from ..core.counters import StageCounters, report_as_own
from ..core.errors import CheckpointError
from ..core.node import AUTOTUNE, UNKNOWN_CARDINALITY, Context, Fields, Node, NodeIterator
from ..core.spec import TensorSpec, string
from ..core.state import (
    ERROR,
    NO_INPUT,
    OUTPUT,
    Child,
    Field,
    Int,
    StateFields,
    decode_element,
    encode_element,
)
from ..ops.interleave import InterleaveIterator, split_slot_state
from ..ops.interleave_node import InterleaveNode
from ..ops.interleave_parallel import ParallelInterleaveIterator
from .tfrecord_files import (
    READ_COUNTS,
    FileReading,
    FileSlot,
    RateLimitedLog,
    file_name,
    load_error,
    next_path,
    save_error,
    saved_offset,
)

if TYPE_CHECKING:
    from .tfrecord import TFRecordNode

#: Records a file's reader thread may read ahead (the interleave's default, 2, hands off every other
#: record: a thread switch per record when they are small).
READ_AHEAD = 64

#: The interleave's counters shown as the TFRecord stage's own (which executor reads the files, why).
CYCLE_COUNTERS = (
    "executor",
    "executor_reason",
    "parallelism",
    "deterministic",
    "open_slots",
    "buffer_capacity",
    "buffered",
    "input_wait_seconds",
)


class FileTally:
    """What the files of one iteration read, summed: files fold their counts in when they close, and
    the open ones are added when asked. One warning log for them all."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.log = RateLimitedLog()
        self.closed = dict.fromkeys(READ_COUNTS, 0)
        self.open: set[RecordFileIterator] = set()

    def opened(self, file: RecordFileIterator) -> None:
        with self.lock:
            self.open.add(file)

    def fold(self, file: RecordFileIterator) -> None:
        with self.lock:
            if file in self.open:
                self.open.discard(file)
                for key in READ_COUNTS:
                    self.closed[key] += getattr(file, key)

    def totals(self) -> StageCounters:
        with self.lock:
            sums = dict(self.closed)
            for file in self.open:
                for key in READ_COUNTS:
                    sums[key] += getattr(file, key)
        out = cast(StageCounters, sums)  # READ_COUNTS are names of StageCounters
        out["warnings_logged"] = self.log.logged()
        return out


class FileListNode(Node):
    """The interleave's input: ``(file number, path)`` of each file, listed or named by a dataset."""

    op = "tfrecord_files"
    fields = Fields(resources=("source",))

    def __init__(self, source: TFRecordNode):
        super().__init__(*source.parents)
        self.source = source

    def describe_args(self) -> str:
        return self.source.describe_args()

    def cardinality(self) -> int:
        if self.source.filenames is not None:
            return len(self.source.filenames)
        return self.parents[0].cardinality() if self.parents else UNKNOWN_CARDINALITY

    def iterator(self, ctx: Context) -> FileListIterator:
        return FileListIterator(self, self.parents[0].iterator(ctx) if self.parents else None)


def _listed(stage: FileListIterator, values: dict) -> int | None:
    listed = stage.node.source.filenames
    return None if listed is None else len(listed)  # past the end would silently drop files


class FileListIterator(NodeIterator[FileListNode]):
    state_fields = (Int("next_file", high=_listed), Child("names", optional=True))

    def __init__(self, node: FileListNode, names: NodeIterator | None):
        super().__init__(node, *([names] if names is not None else []))
        self.names = names
        self.next_file = 0

    def __next__(self) -> tuple[int, str]:
        path = next_path(self.names, self.node.source.filenames, self.next_file)
        if path is None:
            raise StopIteration
        self.next_file += 1
        self.produced += 1
        return self.next_file - 1, path

    def reset(self) -> None:
        if self.names is not None:
            self.names.reset()
        self.next_file = 0


class OpenFile:
    """The interleave's ``map_func``: file ``(number, path)`` -> the node reading it."""

    def __init__(self, source: TFRecordNode, tally: FileTally):
        self.source, self.tally = source, tally

    def __call__(self, file: int, path: str) -> RecordFileNode:
        return RecordFileNode(self.source, file, path, self.tally)

    def __repr__(self) -> str:
        return "open_file"


class RecordFileNode(Node):
    """One file of a parallel read (a slot of the interleave), read as the serial source reads it."""

    op = "tfrecord_file"
    fields = Fields(
        "path",
        "file",
        "compression",
        "buffer_size",
        "on_corrupt",
        resources=("storage_options", "tally"),
    )

    def __init__(self, source: TFRecordNode, file: int, path: str, tally: FileTally):
        super().__init__()
        self.path, self.file, self.tally = path, file, tally
        self.compression, self.buffer_size = source.compression, source.buffer_size
        self.on_corrupt, self.storage_options = source.on_corrupt, source.storage_options

    def describe_args(self) -> str:
        return repr(file_name(self.path))

    def compute_element_spec(self) -> TensorSpec:
        return TensorSpec((), string)

    def iterator(self, ctx: Context) -> RecordFileIterator:
        return RecordFileIterator(self)


class _Position(Int):
    """The file's stream offset (``index`` 0) or next record's number (1): read from its reader,
    restored by ``RecordFileIterator.restored`` (which reopens the file there)."""

    def __init__(self, name: str, index: int):
        super().__init__(name)
        self.index = index

    def save(self, stage: Any) -> int:
        return stage.slot.position()[self.index]

    def restore(self, stage: Any, value: int) -> None:
        stage.restoring[self.index] = value


class RecordFileIterator(FileReading, NodeIterator[RecordFileNode]):
    """One file's records; read by one thread at a time (its slot's reader, or the consumer). Its
    offset was checked against the file by the TFRecord stage, which saw the file's path."""

    state_fields = (_Position("offset", 0), _Position("record", 1))

    def __init__(self, node: RecordFileNode):
        super().__init__(node)
        self.log = node.tally.log
        self.slot = FileSlot(node.path, node.file)
        self.restoring = [0, 0]  # offset and record while a state is restored
        node.tally.opened(self)

    def next_chunk(self, n: int) -> list:
        out = self._read(self.slot, n)  # StopIteration: the file ended (or its rest was skipped)
        self.produced += len(out)
        return out

    def __next__(self) -> bytes:
        return self.next_chunk(1)[0]

    def ready_elements(self) -> int:
        """Records framed and verified already: the interleave takes whole rounds of them at once."""
        reader = self.slot.reader
        return 0 if reader is None else reader.buffered()

    def reset(self) -> None:
        self.slot.close()
        self.slot = FileSlot(self.node.path, self.node.file)

    def restored(self) -> None:
        self.slot.close()
        self.slot = FileSlot(self.node.path, self.node.file, *self.restoring)

    def close(self) -> None:
        self.slot.close()
        self.node.tally.fold(self)
        super().close()


def _cycle_node(node: TFRecordNode, tally: FileTally) -> InterleaveNode:
    calls = AUTOTUNE if node.num_parallel_reads == AUTOTUNE else node.cycle_length
    return InterleaveNode(
        FileListNode(node),
        OpenFile(node, tally),
        cycle_length=node.cycle_length,
        block_length=1,
        num_parallel_calls=calls,
        deterministic=True,  # tf.data's order, which checkpoints and tests rely on
        name="open_file",
    )


class _Files(Child):
    """The interleave's state, each slot checked against this pipeline's files before anything changes."""

    def load(self, fields: StateFields, stage: Any, values: dict) -> dict:
        files = fields.dict(self.name)
        stage._check_slots(fields, files)
        return files


class _OwedOutputs(Field):
    """Records gathered before an interrupt and not yet handed out (``owed``), served first."""

    def save(self, stage: Any) -> list:
        return [encode_element(value) for _, kind, value in stage.owed if kind == OUTPUT]

    def load(self, fields: StateFields, stage: Any, values: dict) -> list:
        return fields.elements(self.name)

    def restore(self, stage: Any, value: list) -> None:
        stage.owed.extend((0, OUTPUT, element) for element in value)


class _PendingError(Field):
    """The RecordError held after the records before it (raised at the next call), or None."""

    def save(self, stage: Any) -> dict | None:
        return save_error(stage.owed)

    def load(self, fields: StateFields, stage: Any, values: dict) -> Any:
        return load_error(fields, bool(stage.node.compression))

    def restore(self, stage: Any, value: Any) -> None:
        if value is not None:  # after the records owed before it (restored first)
            stage.owed.append((-1, ERROR, (value, NO_INPUT)))


class ParallelTFRecordIterator(NodeIterator["TFRecordNode"]):
    """The TFRecord stage over the interleave op's iterator (module docstring)."""

    state_fields = (_Files("files", "cycle"), _OwedOutputs("owed"), _PendingError("pending_error"))

    def __init__(self, node: TFRecordNode, ctx: Context):
        self.tally = FileTally()
        self.cycle = cast(InterleaveIterator, _cycle_node(node, self.tally).iterator(ctx))
        self.cycle.whole_rounds = True  # files say how many records they have framed (ready_elements)
        if isinstance(self.cycle, ParallelInterleaveIterator):  # not when probing the element spec
            self.cycle.capacity = READ_AHEAD  # a reader thread per file: fewer hand-offs per record
        self.files = cast(FileListIterator, self.cycle.parent)
        names = self.files.names
        super().__init__(node, *([names] if names is not None else []))

    def next_chunk(self, n: int) -> list:
        if self.owed:
            return self.serve_owed(n)  # records an interrupt left, or the error held: raised here
        cycle = self.cycle
        out = cycle.next_chunk(n)
        while len(out) < n:
            try:
                out += cycle.next_chunk(n - len(out))
            except StopIteration:
                break
            except BaseException as exc:  # noqa: BLE001 (held after the records gathered before it)
                return self.interrupted(out, exc)
        self.produced += len(out)
        return out

    def __next__(self) -> bytes:
        return self.next_chunk(1)[0]

    def reset(self) -> None:
        self.cycle.reset()

    def tunable_knobs(self) -> dict[str, tuple[int, int]]:
        return self.cycle.tunable_knobs()

    def set_knob(self, name: str, value: int) -> None:
        self.cycle.set_knob(name, value)

    # --- state ----------------------------------------------------------------------------------------
    def _check_slots(self, fields: Any, files: dict) -> None:
        """Each saved slot reads a file this pipeline has at that number, from an offset inside it."""
        node = self.node
        slots = files.get("slots")
        if not isinstance(slots, list):
            return  # the interleave refuses it
        for index, saved in enumerate(slots):
            if not isinstance(saved, dict) or "input" not in saved or "state" not in saved:
                continue  # the interleave refuses it
            field = f"files.slots[{index}]"
            try:
                file, path = decode_element(saved["input"])
            except (CheckpointError, TypeError, ValueError):
                raise fields.fail(f"{field}.input", saved["input"], "a file number and path") from None
            listed = node.filenames
            if not isinstance(file, int) or not isinstance(path, str) or file < 0:
                raise fields.fail(f"{field}.input", saved["input"], "a file number and path")
            if listed is not None and (file >= len(listed) or listed[file] != path):
                raise CheckpointError(
                    f"state for {self.name} reads {path!r} as file {file}, which this pipeline "
                    "does not have there; restore into a pipeline over the same files"
                )
            inner, _ = split_slot_state(saved["state"], f"{self.name} {field}")
            record = fields.record(inner, f"{field}.state", ("offset", "record"))
            saved_offset(fields, record, f"{field}.input", path, node.compression)
            record.int("record")

    def upgraded_state(self, state: Any) -> Any:
        """A state of the former format (the TFRecord stage's own cycle: ``next_file``, ``names``,
        ``slots`` of ``{path, file, offset, record}``, ``cycle``, ``end_of_input``) as the interleave's."""
        if not isinstance(state, dict) or "files" in state or "slots" not in state:
            return state
        try:
            slots = [
                None
                if slot is None
                else {
                    "input": encode_element((int(slot["file"]), str(slot["path"]))),
                    "position": slot["file"],
                    "state": {"offset": slot["offset"], "record": slot["record"]},
                }
                for slot in state["slots"]
            ]
            files = {
                "parent": {"next_file": state["next_file"], "names": state["names"]},
                "position": state["next_file"],
                "cycle_index": state["cycle"],
                "block_index": 0,
                "end_of_input": state["end_of_input"],
                "slots": slots,
            }
            return {"files": files, "owed": [], "pending_error": state["pending_error"]}
        except (KeyError, TypeError, ValueError):
            return state  # refused by the checks, naming what is missing

    def close(self) -> None:
        self.cycle.close()
        super().close()

    def counters(self) -> StageCounters:
        out = super().counters()
        out.update(self.tally.totals())
        cycle = self.cycle.counters()
        report_as_own(out, cycle, CYCLE_COUNTERS)
        if cycle.get("executor") == "thread":  # reader threads: their reading time is the stage's work
            out["busy_seconds"], out["cpu_seconds"] = cycle["busy_seconds"], cycle["cpu_seconds"]
        return out
