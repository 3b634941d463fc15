import logging
import os

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import CheckpointError, InvalidArgumentError
from headrace.core.node import UNKNOWN_CARDINALITY
from headrace.core.state import encode_element
from headrace.io import (
    RecordError,
    StaleIndexError,
    build_index,
    encode_record,
    tf_record_iterator,
    write_shards,
)
from headrace.io.records.tfrecord import DATA_CRC_MISMATCH
from tests.conftest import GOLDEN
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process
from tests.helpers.tf_fixtures import load_json

GOLDEN_DIR = os.path.normpath(GOLDEN)


def golden(name: str) -> str:
    return os.path.join(GOLDEN_DIR, name)


def make_golden_dataset():
    """Module-level factory for the fresh-process checkpoint test."""
    return hr.TFRecordDataset(
        [golden("examples.tfrecord"), golden("corrupt_length.tfrecord"), golden("sequence.tfrecord")],
        num_parallel_reads=2,
        on_corrupt="skip_record",
    ).batch(7)


@pytest.fixture
def files(tmp_path):
    """Four small files of different lengths (one empty): file k holds records b"k:i"."""
    paths = []
    for k, count in enumerate([5, 1, 0, 3]):
        path = tmp_path / f"f{k}.tfrecord"
        path.write_bytes(b"".join(encode_record(b"%d:%d" % (k, i)) for i in range(count)))
        paths.append(str(path))
    return paths


def interleaved(contents: list[list[bytes]], cycle_length: int) -> list[bytes]:
    """tf.data's interleave(cycle_length, block_length=1), written plainly as the reference."""
    slots: list = [None] * cycle_length
    pending = list(contents)
    out: list[bytes] = []
    position = 0
    while pending or any(s is not None for s in slots):
        slot = slots[position]
        if slot is None and pending:
            slots[position] = slot = iter(pending.pop(0))
            continue
        if slot is not None:
            value = next(slot, None)
            if value is None:
                slots[position] = None
            else:
                out.append(value)
        position = (position + 1) % cycle_length
    return out


def as_bytes(ds) -> list[bytes]:
    return [bytes(r) for r in ds]


def test_reads_files_in_order(files, golden_dir):
    assert as_bytes(hr.TFRecordDataset(files)) == [r for p in files for r in tf_record_iterator(p)]
    assert len(as_bytes(hr.TFRecordDataset(golden("examples_gzip.tfrecord"), "GZIP"))) == 120
    assert as_bytes(hr.TFRecordDataset([])) == []


@pytest.mark.parametrize("cycle_length", [1, 2, 3, 4, 7])
def test_parallel_reads_follow_interleave_order(files, cycle_length):
    contents = [list(tf_record_iterator(p)) for p in files]
    ds = hr.TFRecordDataset(files, num_parallel_reads=cycle_length)
    assert as_bytes(ds) == interleaved(contents, cycle_length)
    assert as_bytes(ds.batch(3).unbatch()) == interleaved(contents, cycle_length)


def test_filenames_as_a_dataset(files):
    names = hr.Dataset.from_tensor_slices(files)
    assert as_bytes(hr.TFRecordDataset(names)) == as_bytes(hr.TFRecordDataset(files))
    assert as_bytes(hr.TFRecordDataset(names, num_parallel_reads=2)) == as_bytes(
        hr.TFRecordDataset(files, num_parallel_reads=2)
    )


def test_element_spec_and_batches(files):
    ds = hr.TFRecordDataset(files)
    assert ds.element_spec == hr.TensorSpec((), hr.string)
    batches = list(ds.batch(4))
    assert [b.dtype for b in batches] == [object] * 3 and batches[0].tolist() == [
        b"0:0",
        b"0:1",
        b"0:2",
        b"0:3",
    ]


def test_construction_errors(files, tmp_path):
    with pytest.raises(InvalidArgumentError, match="does not exist"):
        hr.TFRecordDataset(str(tmp_path / "missing.tfrecord"))
    with pytest.raises(InvalidArgumentError, match="'GZIP' or 'ZLIB'"):
        hr.TFRecordDataset(files, compression_type="LZ4")
    with pytest.raises(InvalidArgumentError, match="num_parallel_reads"):
        hr.TFRecordDataset(files, num_parallel_reads=0)
    with pytest.raises(InvalidArgumentError, match="on_corrupt"):
        hr.TFRecordDataset(files, on_corrupt="ignore")
    with pytest.raises(InvalidArgumentError, match="buffer_size"):
        hr.TFRecordDataset(files, buffer_size=-1)
    with pytest.raises(InvalidArgumentError, match="filenames"):
        hr.TFRecordDataset(3)
    bad_names = hr.Dataset.from_tensor_slices(np.array([1, 2]))
    with pytest.raises(InvalidArgumentError, match="file name 0"):
        list(hr.TFRecordDataset(bad_names))


def test_damage_raises_and_reading_continues(golden_dir):
    it = iter(hr.TFRecordDataset([golden("corrupt_data_crc.tfrecord"), golden("examples.tfrecord")]))
    got = []
    with pytest.raises(RecordError) as raised:
        while True:
            got.append(next(it))
    assert (
        raised.value.kind == DATA_CRC_MISMATCH and raised.value.record == 37 and raised.value.offset == 6257
    )
    assert "corrupt_data_crc.tfrecord" in str(raised.value)
    got.extend(it)  # the next call goes on after the damaged record
    assert len(got) == 119 + 120


def test_ignore_errors_skips_damage(golden_dir):
    ds = hr.TFRecordDataset(
        [golden("corrupt_data_crc.tfrecord"), golden("corrupt_length.tfrecord"), golden("truncated.tfrecord")]
    ).ignore_errors()
    assert len(list(ds)) == 119 + 37 + 37


def test_on_corrupt_skip_record_and_counters(golden_dir, caplog):
    names = [
        golden("corrupt_data_crc.tfrecord"),
        golden("corrupt_length.tfrecord"),
        golden("truncated.tfrecord"),
    ]
    it = iter(hr.TFRecordDataset(names, on_corrupt="skip_record"))
    with caplog.at_level(logging.WARNING, logger="headrace.io"):
        records = list(it)
    expected = list(tf_record_iterator(golden("examples.tfrecord")))
    assert [bytes(r) for r in records] == (expected[:37] + expected[38:]) * 2 + expected[:37]
    stage = it.counters()["stages"][-1]
    assert stage["records_skipped"] == 3 and stage["files_skipped"] == 0 and stage["damage_found"] == 3
    assert stage["records_read"] == len(records) and stage["bytes_read"] == sum(map(len, records))
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3 and "resumes 187 bytes later" in messages[1] and "record 37" in messages[0]


def test_on_corrupt_skip_file(golden_dir):
    names = [golden("corrupt_length.tfrecord"), golden("examples.tfrecord")]
    it = iter(hr.TFRecordDataset(names, on_corrupt="skip_file"))
    assert len(list(it)) == 37 + 120
    assert it.counters()["stages"][-1]["files_skipped"] == 1


def test_warnings_are_rate_limited(tmp_path, caplog):
    path = tmp_path / "many_bad.tfrecord"
    frames = bytearray()
    for i in range(40):
        frame = bytearray(encode_record(b"record %d" % i))
        if i % 2:
            frame[14] ^= 0xFF  # data byte: a data CRC mismatch
        frames += frame
    path.write_bytes(bytes(frames))
    with caplog.at_level(logging.WARNING, logger="headrace.io"):
        it = iter(hr.TFRecordDataset(str(path), on_corrupt="skip_record"))
        assert len(list(it)) == 20
    stage = it.counters()["stages"][-1]
    assert stage["records_skipped"] == 20 and len(caplog.records) == 5 == stage["warnings_logged"]


def test_truncated_gzip_is_not_silent(golden_dir):
    it = iter(hr.TFRecordDataset(golden("truncated_gzip.tfrecord"), "GZIP"))
    got = []
    with pytest.raises(RecordError, match="truncated compressed stream"):
        while True:
            got.append(next(it))
    assert len(got) == 57


def test_index_gives_cardinality_and_seeking_skip(files, monkeypatch):
    for path in files:
        build_index(path)
    ds = hr.TFRecordDataset(files)
    assert (
        ds.cardinality() == 9 and hr.TFRecordDataset(files, index=False).cardinality() == UNKNOWN_CARDINALITY
    )
    opened = []
    original = hr.io.records.tfrecord.RecordReader.__init__

    def spy(self, path, *args, **kwargs):
        opened.append(os.path.basename(str(path)))
        original(self, path, *args, **kwargs)

    monkeypatch.setattr(hr.io.records.tfrecord.RecordReader, "__init__", spy)
    everything = as_bytes(hr.TFRecordDataset(files, index=False))
    opened.clear()
    for n in (0, 3, 5, 6, 7, 9, 20):
        assert as_bytes(ds.skip(n)) == everything[n:], n
    assert as_bytes(ds.skip(7).take(1)) == [b"3:1"]
    opened.clear()
    as_bytes(ds.skip(6))  # files 0 and 1 are passed over without being opened
    assert opened == ["f2.tfrecord", "f3.tfrecord"]
    opened.clear()
    as_bytes(ds.take(2).skip(1))  # a seek inside an opened file
    assert opened == ["f0.tfrecord"]
    assert as_bytes(ds.skip(2).skip(2)) == everything[4:]
    assert (
        as_bytes(hr.TFRecordDataset(files, num_parallel_reads=2).skip(3))
        == as_bytes(hr.TFRecordDataset(files, num_parallel_reads=2))[3:]
    )


def test_skip_without_index_and_with_damage(golden_dir):
    ds = hr.TFRecordDataset(
        [golden("corrupt_data_crc.tfrecord"), golden("examples.tfrecord")], on_corrupt="skip_record"
    )
    assert len(as_bytes(ds.skip(100))) == 239 - 100
    with pytest.raises(RecordError):
        list(hr.TFRecordDataset(golden("corrupt_length.tfrecord")).skip(50))


def test_stale_index_policies(files):
    build_index(files[0])
    with open(files[0], "ab") as f:
        f.write(encode_record(b"new"))
    assert hr.TFRecordDataset(files).cardinality() == UNKNOWN_CARDINALITY  # stale: not used
    with pytest.raises(StaleIndexError, match="stale"):
        hr.TFRecordDataset(files, index="require")
    ds = hr.TFRecordDataset(files, index="build")
    assert ds.cardinality() == 10
    assert as_bytes(ds.skip(5)) == [b"new", b"1:0", b"3:0", b"3:1", b"3:2"]


def test_read_record_by_position_and_global_shuffle(files):
    ds = hr.TFRecordDataset(files, index="build")
    everything = as_bytes(hr.TFRecordDataset(files))
    assert [ds.node.read_record(i) for i in range(9)] == everything
    assert ds.node.random_access_length() == 9
    assert hr.TFRecordDataset(files, num_parallel_reads=2).node.random_access_length() is None
    assert hr.TFRecordDataset(files, index=False).node.random_access_length() is None
    shuffled = as_bytes(ds.global_shuffle(seed=3))
    assert sorted(shuffled) == sorted(everything) and shuffled != everything
    assert shuffled == as_bytes(ds.global_shuffle(seed=3))
    with pytest.raises(InvalidArgumentError, match="global_shuffle"):
        hr.TFRecordDataset(files, index=False).global_shuffle()
    with pytest.raises(InvalidArgumentError, match="list of paths"):
        hr.TFRecordDataset(hr.Dataset.from_tensor_slices(files)).node.read_record(0)


def test_checkpoints_sequential(files):
    check_checkpoints(lambda: hr.TFRecordDataset(files))
    check_checkpoints(lambda: hr.TFRecordDataset(files).repeat(2))


def test_checkpoints_round_robin_and_filename_dataset(files):
    check_checkpoints(lambda: hr.TFRecordDataset(files, num_parallel_reads=3))
    check_checkpoints(lambda: hr.TFRecordDataset(hr.Dataset.from_tensor_slices(files), num_parallel_reads=2))


def test_checkpoints_compressed_damaged_and_batched(golden_dir):
    check_checkpoints(lambda: hr.TFRecordDataset(golden("examples_zlib.tfrecord"), "ZLIB"), stride=13)
    check_checkpoints(
        lambda: hr.TFRecordDataset(
            [golden("corrupt_length.tfrecord"), golden("corrupt_data_crc.tfrecord")], on_corrupt="skip_record"
        ),
        max_elements=300,
        stride=17,
    )
    check_checkpoints(make_golden_dataset, stride=3)


def test_checkpoint_restores_into_another_pipeline_fail(files):
    it = iter(hr.TFRecordDataset(files, num_parallel_reads=2))
    next(it)
    state = it.get_state()
    other = iter(hr.TFRecordDataset(files, num_parallel_reads=2))
    slot = state["state"]["files"]["slots"][0]
    slot["input"] = encode_element((0, "elsewhere.tfrecord"))
    with pytest.raises(CheckpointError, match="same files"):
        other.root.set_state(state["state"])


def test_state_is_small_and_exact(golden_dir):
    it = iter(hr.TFRecordDataset(golden("examples.tfrecord")))
    for _ in range(10):
        next(it)
    state = it.get_state()["state"]
    assert state["slots"] == [{"path": golden("examples.tfrecord"), "file": 0, "offset": 1693, "record": 10}]


@pytest.mark.slow
def test_checkpoint_in_a_fresh_process():
    check_fresh_process("tests.sources.test_tfrecord:make_golden_dataset", after=9)


def test_memory_filesystem(files):
    fsspec = pytest.importorskip("fsspec")
    remote = []
    for path in files:
        name = "memory://tfrecord-source/" + os.path.basename(path)
        with fsspec.open(name, "wb") as f, open(path, "rb") as local:
            f.write(local.read())
        remote.append(name)
    assert as_bytes(hr.TFRecordDataset(remote, num_parallel_reads=2)) == as_bytes(
        hr.TFRecordDataset(files, num_parallel_reads=2)
    )
    paths = write_shards([b"x", b"y"], "memory://tfrecord-source/out", num_shards=2, index=True)
    assert hr.TFRecordDataset(paths).cardinality() == 2


@pytest.mark.slow
def test_order_and_records_equal_tf_data(files, golden_dir):
    tf = pytest.importorskip("tensorflow")
    for cycle in (None, 1, 2, 3):
        expected = [r.numpy() for r in tf.data.TFRecordDataset(files, num_parallel_reads=cycle)]
        assert as_bytes(hr.TFRecordDataset(files, num_parallel_reads=cycle)) == expected, cycle
    for name, compression in (("examples_gzip.tfrecord", "GZIP"), ("raw.tfrecord", "")):
        expected = [r.numpy() for r in tf.data.TFRecordDataset(golden(name), compression)]
        assert as_bytes(hr.TFRecordDataset(golden(name), compression)) == expected


def test_order_and_records_equal_recorded_tf_data(files, golden_dir):
    # tf.data's reads of the same four files and of the golden files (tools/record_tf_fixtures.py)
    import hashlib

    recorded = load_json("datasets.json")
    assert recorded["tfrecord_reads"]["counts"] == [5, 1, 0, 3]  # what the `files` fixture writes
    for cycle, expected in recorded["tfrecord_reads"]["orders"].items():
        cycle_length = None if cycle == "None" else int(cycle)
        assert [
            r.hex() for r in as_bytes(hr.TFRecordDataset(files, num_parallel_reads=cycle_length))
        ] == expected
    for name, reads in recorded["golden_reads"].items():
        ours = as_bytes(hr.TFRecordDataset(golden(name), reads["compression"]))
        assert [hashlib.sha256(r).hexdigest() for r in ours] == reads["sha256"], name


@pytest.mark.parametrize("cycle", [2, 3, 4])
def test_whole_rounds_taken_at_once_keep_the_order_and_checkpoints(tmp_path, cycle):
    # Files long enough that the cycle takes whole rounds at once (every open file's records framed
    # already): the same records in the same order as one at a time (whose order is tf.data's: see
    # test_order_and_records_equal_recorded_tf_data), for chunks of any size, and exact checkpoints.
    counts = [300, 7, 120, 0, 333, 64]
    paths = []
    for k, count in enumerate(counts):
        path = tmp_path / f"r{k}.tfrecord"
        path.write_bytes(b"".join(encode_record(b"%d:%d" % (k, i)) for i in range(count)))
        paths.append(str(path))
    expected = None
    for size in (1, 5, 64, 1000):
        it = iter(hr.TFRecordDataset(paths, num_parallel_reads=cycle))
        got = []
        while True:
            try:
                got += [bytes(r) for r in it.root.next_chunk(size)]
            except StopIteration:
                break
        expected = expected or got  # one at a time first
        assert got == expected, size
    assert sorted(expected) == sorted(b"%d:%d" % (k, i) for k, n in enumerate(counts) for i in range(n))
    counters = it.root.counters()
    assert counters["records_read"] == sum(counts)
    check_checkpoints(lambda: hr.TFRecordDataset(paths, num_parallel_reads=cycle).batch(37), stride=5)
