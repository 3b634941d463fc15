"""``TFRecordDataset(..., num_parallel_reads=k)``: files read by the interleave op's parallel iterator
(sources/tfrecord_parallel.py), in tf.data's order, with the TFRecord source's features.

Each test runs twice: as shipped (the interleave's trial picks inline reads or reader threads) and
with a reader thread per file from the start (``TRY_INLINE = False``), so the threads' path is
exercised whatever the trial would pick on this machine."""

import logging
import os

import pytest

import headrace as hr
import headrace.ops.interleave_parallel as interleave_parallel
from headrace.core.errors import CheckpointError
from headrace.core.node import AUTOTUNE
from headrace.core.state import encode_element
from headrace.io import RecordError, encode_record, tf_record_iterator
from tests.helpers.checkpoint import check_checkpoints
from tests.runtime.conftest import headrace_threads, wait_until
from tests.sources.test_tfrecord import as_bytes, golden, interleaved


@pytest.fixture(params=["trial", "readers"])
def mode(request, monkeypatch):
    if request.param == "readers":
        monkeypatch.setattr(interleave_parallel, "TRY_INLINE", False)
    return request.param


@pytest.fixture
def files(tmp_path):
    """Six files of different lengths (one empty, one long): file k holds records b"k:i"."""
    paths = []
    for k, count in enumerate([5, 1, 0, 3, 700, 9]):
        path = tmp_path / f"f{k}.tfrecord"
        path.write_bytes(b"".join(encode_record(b"%d:%d" % (k, i)) for i in range(count)))
        paths.append(str(path))
    return paths


def contents(paths: list[str]) -> list[list[bytes]]:
    return [list(tf_record_iterator(p)) for p in paths]


@pytest.mark.parametrize("reads", [2, 3, 4, 6, 8, AUTOTUNE])
def test_same_order_as_the_serial_cycle(files, mode, reads):
    cycle = hr.TFRecordDataset(files, num_parallel_reads=reads).node.cycle_length
    expected = interleaved(contents(files), cycle)
    assert as_bytes(hr.TFRecordDataset(files, num_parallel_reads=reads)) == expected
    names = hr.Dataset.from_tensor_slices(files)
    assert as_bytes(hr.TFRecordDataset(names, num_parallel_reads=reads)) == expected
    chunked = hr.TFRecordDataset(files, num_parallel_reads=reads).batch(7)
    assert [bytes(r) for b in chunked for r in b] == expected


def test_gzip_and_two_epochs(tmp_path, mode):
    paths = []
    for k in range(3):
        path = str(tmp_path / f"g{k}.tfrecord")
        with hr.io.TFRecordWriter(path, "GZIP") as writer:
            for i in range(300 + 50 * k):
                writer.write(b"%d:%d" % (k, i) * 20)
        paths.append(path)
    expected = interleaved([list(tf_record_iterator(p, "GZIP")) for p in paths], 3)
    ds = hr.TFRecordDataset(paths, "GZIP", num_parallel_reads=3).repeat(2)
    assert as_bytes(ds) == expected * 2


def test_counters_add_up(files, mode):
    it = iter(hr.TFRecordDataset(files, num_parallel_reads=3).batch(16))
    records = [bytes(r) for b in it for r in b]
    stage = it.counters()["stages"][-1]
    assert stage["op"] == "tfrecord" and stage["produced"] == len(records)
    assert stage["records_read"] == len(records) and stage["bytes_read"] == sum(map(len, records))
    assert stage["damage_found"] == 0 and stage["executor"] in ("inline", "thread")
    assert stage["executor_reason"]


def test_checkpoints_mid_epoch(files, mode):
    check_checkpoints(lambda: hr.TFRecordDataset(files, num_parallel_reads=3), stride=7)
    check_checkpoints(
        lambda: hr.TFRecordDataset(hr.Dataset.from_tensor_slices(files), num_parallel_reads=2).batch(5),
        stride=5,
    )


def test_restores_a_state_of_the_former_format(files):
    """The TFRecord stage kept its own cycle before: such a state restores into the interleave."""
    expected = interleaved(contents(files), 2)
    it = iter(hr.TFRecordDataset(files, num_parallel_reads=2))
    first = {"path": files[0], "file": 0, "offset": 19, "record": 1}  # after b"0:0" (16 + 3 bytes)
    former = {
        "next_file": 2,
        "names": None,
        "slots": [first, {"path": files[1], "file": 1, "offset": 0, "record": 0}],
        "cycle": 1,
        "end_of_input": False,
        "pending_error": None,
    }
    it.root.set_state(former)
    assert [bytes(r) for r in it] == expected[1:]


def test_refused_states_change_nothing(files):
    ds = hr.TFRecordDataset(files, num_parallel_reads=2)
    it = iter(ds)
    head = [bytes(next(it)) for _ in range(2)]  # both slots open
    state = it.get_state()["state"]
    other = iter(ds)
    next(other)
    for slot, bad in (
        (0, {"input": encode_element((0, "elsewhere.tfrecord"))}),
        (0, {"input": encode_element((9, files[0]))}),
        (1, {"state": {"offset": 10**9, "record": 1}}),
    ):
        tampered = {**state, "files": {**state["files"], "slots": list(state["files"]["slots"])}}
        tampered["files"]["slots"][slot] = {**tampered["files"]["slots"][slot], **bad}
        with pytest.raises(CheckpointError):
            other.root.set_state(tampered)
    expected = interleaved(contents(files), 2)
    assert head == expected[:2]
    assert [bytes(r) for r in other] == expected[1:]  # read on from where it was


@pytest.mark.parametrize("policy", ["skip_record", "skip_file"])
def test_on_corrupt_with_parallel_reads(golden_dir, mode, policy, caplog):
    names = [
        golden("corrupt_data_crc.tfrecord"),
        golden("corrupt_length.tfrecord"),
        golden("examples.tfrecord"),
    ]
    per_file = [as_bytes(hr.TFRecordDataset(name, on_corrupt=policy)) for name in names]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="headrace.io"):
        it = iter(hr.TFRecordDataset(names, num_parallel_reads=3, on_corrupt=policy))
        records = [bytes(r) for r in it]
    assert records == interleaved(per_file, 3)
    stage = it.counters()["stages"][-1]
    assert stage["records_read"] == len(records) and stage["damage_found"] == 2
    assert stage["files_skipped"] == (2 if policy == "skip_file" else 0)
    assert stage["records_skipped"] == (2 if policy == "skip_record" else 0)
    assert stage["warnings_logged"] == len(caplog.records) == 2


def test_damage_names_the_file_and_loses_nothing_before_it(golden_dir, mode):
    # The held error keeps its place after the records before it, through a checkpoint (both modes).
    ds = hr.TFRecordDataset(
        [golden("corrupt_data_crc.tfrecord"), golden("examples.tfrecord")], num_parallel_reads=2
    )
    it = iter(ds)
    first = it.root.next_chunk(100)
    assert len(first) == 74  # 37 from each file, then the damaged record ends the chunk
    state = it.get_state()
    with pytest.raises(RecordError) as raised:
        it.root.next_chunk(100)
    assert raised.value.record == 37 and raised.value.offset == 6257
    assert "corrupt_data_crc.tfrecord" in str(raised.value) and "6257" in str(raised.value)
    rest = [bytes(r) for r in it]
    assert len(rest) == 239 - 74
    restored = iter(ds)
    restored.set_state(state)
    with pytest.raises(RecordError, match="record 37"):  # the held error survives a checkpoint
        next(restored)
    assert [bytes(r) for r in restored] == rest
    it.close()
    restored.close()


def test_close_leaves_no_threads(files, mode):
    for _ in range(3):
        it = iter(hr.TFRecordDataset(files, num_parallel_reads=4))
        for _ in range(5):
            next(it)
        it.close()
    wait_until(lambda: not headrace_threads())


def test_files_are_read_at_once_by_reader_threads(tmp_path, monkeypatch):
    """With a reader thread per file, files are open at the same time (the serial read opens one)."""
    monkeypatch.setattr(interleave_parallel, "TRY_INLINE", False)
    paths = []
    for k in range(4):
        path = tmp_path / f"p{k}.tfrecord"
        path.write_bytes(b"".join(encode_record(os.urandom(100)) for _ in range(50)))
        paths.append(str(path))
    it = iter(hr.TFRecordDataset(paths, num_parallel_reads=4))
    next(it)
    stage = it.counters()["stages"][-1]
    assert stage["executor"] == "thread" and stage["parallelism"] == 4
    assert len(list(it)) == 199
