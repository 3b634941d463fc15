import os
import shutil

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError
from headrace.io.records.index import (
    IndexedRecords,
    StaleIndexError,
    build_index,
    check_index,
    index_path,
    load_index,
)
from headrace.io.records.tfrecord import RecordError, encode_record, tf_record_iterator
from headrace.io.records.writer import write_shards


@pytest.fixture
def examples(tmp_path, golden_dir):
    path = tmp_path / "examples.tfrecord"
    shutil.copy(os.path.join(golden_dir, "examples.tfrecord"), path)
    return str(path)


def test_offsets_match_the_manifest_and_sidecar_round_trips(examples, manifest):
    progress = []
    index = build_index(examples, progress=progress.append)
    assert index.offsets.tolist() == manifest["record_offsets_examples_tfrecord"]
    assert index.end == os.path.getsize(examples) and progress[-1] == index.end
    assert os.path.exists(index_path(examples))
    loaded, status = check_index(examples)
    assert status == "fresh" and np.array_equal(loaded.offsets, index.offsets) and len(loaded) == 120


def test_compressed_index_is_in_the_decompressed_stream(tmp_path, golden_dir, manifest):
    path = tmp_path / "gz.tfrecord"
    shutil.copy(os.path.join(golden_dir, "examples_gzip.tfrecord"), path)
    index = build_index(path, "GZIP")
    assert index.offsets.tolist() == manifest["record_offsets_examples_tfrecord"]
    assert check_index(path)[1].startswith("stale: it was built for compression 'GZIP'")


def test_building_verifies_every_crc(tmp_path, golden_dir):
    path = tmp_path / "bad.tfrecord"
    shutil.copy(os.path.join(golden_dir, "corrupt_data_crc.tfrecord"), path)
    with pytest.raises(RecordError, match="record 37"):
        build_index(path)
    assert not os.path.exists(index_path(path))


def test_stale_after_append_and_after_same_size_change(examples):
    build_index(examples)
    with open(examples, "ab") as f:
        f.write(encode_record(b"one more"))
    index, reason = check_index(examples)
    assert index is None and "size changed" in reason
    build_index(examples)
    with open(examples, "r+b") as f:
        f.seek(20)
        byte = f.read(1)
        f.seek(20)
        f.write(bytes([byte[0] ^ 1]))
    assert "contents changed" in check_index(examples)[1]


def test_policies(examples):
    assert load_index(examples, policy=None) is None
    with pytest.raises(StaleIndexError, match="missing.*headrace index"):
        load_index(examples, policy="require")
    assert len(load_index(examples, policy="build")) == 120
    assert len(load_index(examples, policy="require")) == 120
    assert load_index(examples, policy=False) is None
    with open(examples, "ab") as f:
        f.write(encode_record(b"x"))
    assert load_index(examples, policy=None) is None  # stale: never used silently
    with pytest.raises(StaleIndexError, match="stale: the file's size changed"):
        load_index(examples, policy="require")
    assert len(load_index(examples, policy="build")) == 121
    with pytest.raises(InvalidArgumentError, match="index="):
        load_index(examples, policy="sometimes")


def test_unreadable_sidecar(examples):
    with open(index_path(examples), "wb") as f:
        f.write(b"garbage")
    assert check_index(examples)[1].startswith("unreadable")


def test_a_list_of_paths_indexes_each_file(tmp_path):
    # as docs/state.md and docs/io.md call it, with what write_shards returns
    paths = write_shards([b"r%d" % i for i in range(7)], str(tmp_path / "train"), num_shards=3)
    for kind in (list, tuple):
        for path in paths:
            if os.path.exists(index_path(path)):
                os.remove(index_path(path))
        indexes = build_index(kind(paths))
        assert [index.path for index in indexes] == paths and [len(i) for i in indexes] == [3, 2, 2]
        assert all(check_index(path)[1] == "fresh" for path in paths)
    assert hr.TFRecordDataset(paths, index="require").cardinality() == 7
    assert build_index([]) == []
    with pytest.raises(InvalidArgumentError, match="path"):
        build_index([paths[0], None])


def test_a_damaged_file_in_a_list_is_named(tmp_path, golden_dir):
    good = tmp_path / "good.tfrecord"
    bad = tmp_path / "bad.tfrecord"
    with open(good, "wb") as f:
        f.write(encode_record(b"x"))
    shutil.copy(os.path.join(golden_dir, "corrupt_data_crc.tfrecord"), bad)
    with pytest.raises(RecordError, match="bad.tfrecord.*record 37"):
        build_index([good, bad])
    assert os.path.exists(index_path(good)) and not os.path.exists(index_path(bad))


def test_random_access_across_files(tmp_path, golden_dir):
    first = tmp_path / "a.tfrecord"
    second = tmp_path / "b.tfrecord"
    shutil.copy(os.path.join(golden_dir, "examples.tfrecord"), first)
    with open(second, "wb") as f:
        f.write(b"".join(encode_record(b"b%d" % i) for i in range(5)))
    expected = list(tf_record_iterator(first)) + [b"b%d" % i for i in range(5)]
    with IndexedRecords([first, second]) as records:  # default policy builds the indexes
        assert len(records) == 125
        for i in (0, 119, 120, 124, 37, 3, 121):
            assert records[i] == expected[i]
        assert records[-1] == b"b4" and records.locate(121) == (1, 1)
        with pytest.raises(IndexError, match="125 records"):
            records[125]


def test_random_access_in_a_compressed_file(tmp_path, golden_dir):
    path = tmp_path / "z.tfrecord"
    shutil.copy(os.path.join(golden_dir, "examples_zlib.tfrecord"), path)
    expected = list(tf_record_iterator(path, "ZLIB"))
    records = IndexedRecords(path, "ZLIB")
    for i in (50, 10, 119, 0, 60):
        assert records[i] == expected[i]


def test_batched_random_reads_verify_crcs_and_name_the_damage(tmp_path):
    import headrace as hr
    from headrace.io import write_shards
    from headrace.ops.support.permutation import IndexPermutation

    records = [b"record-%03d" % i for i in range(500)]
    path = write_shards(records, str(tmp_path / "d"), num_shards=1)[0]
    hr.io.build_index(path)
    assert sorted(hr.TFRecordDataset(path).global_shuffle(seed=1)) == records
    # Damage a record after the index was checked (as a disk error would): reads must still verify CRCs.
    victim = int(IndexPermutation(500, [1, 0, 0])(np.array([300]))[0])  # read well after the first chunk
    offset = victim * (16 + len(records[0]))
    it = iter(hr.TFRecordDataset(path, index="require").global_shuffle(seed=1))
    next(it)
    with open(path, "r+b") as f:
        f.seek(offset + 12 + 3)  # a byte inside the victim's data
        byte = f.read(1)
        f.seek(offset + 12 + 3)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(
        hr.DataLossError, match=rf"record {victim} at byte offset {offset}: data CRC mismatch"
    ):
        list(it)


# --- integrity of the sidecar itself (issue 11) ------------------------------------------------------
def sidecar_bytes(path) -> bytearray:
    with open(index_path(path), "rb") as f:
        return bytearray(f.read())


def write_sidecar(path, blob: bytes) -> None:
    with open(index_path(path), "wb") as f:
        f.write(blob)


def test_a_flipped_bit_in_an_offset_is_a_clear_error_not_a_duplicate(examples):
    index = build_index(examples)
    blob = sidecar_bytes(examples)
    offset_bytes = len(blob) - 4 - 8 * len(index)  # where the offsets start (before the checksum)
    for bit in (0, 3, 9, 17):
        damaged = bytearray(blob)
        damaged[offset_bytes + 8 * 50 + bit // 8] ^= 1 << (bit % 8)
        write_sidecar(examples, bytes(damaged))
        loaded, reason = check_index(examples)
        assert loaded is None and reason.startswith("damaged: its checksum does not match"), reason
        with pytest.raises(StaleIndexError, match="damaged.*headrace index"):
            load_index(examples, policy="require")
        assert load_index(examples, policy=None) is None  # never used silently
    assert len(load_index(examples, policy="build")) == 120  # and rebuilt when asked


@pytest.mark.parametrize(
    "change",
    [
        lambda header: header.pop("end"),
        lambda header: header.pop("num_records"),
        lambda header: header.update(end="12"),
        lambda header: header.update(fingerprint=[1, 2]),
        lambda header: header.clear(),
    ],
    ids=["no end", "no count", "end a string", "fingerprint a list", "empty"],
)
def test_a_damaged_header_with_a_valid_checksum_gives_a_reason_not_a_key_error(examples, change):
    import json

    from headrace.io.records.crc import crc32c
    from headrace.io.records.index import MAGIC

    build_index(examples)
    blob = bytes(sidecar_bytes(examples))
    newline = blob.index(b"\n", len(MAGIC))
    header = json.loads(blob[len(MAGIC) : newline])
    change(header)
    body = MAGIC + json.dumps(header).encode() + blob[newline:-4]
    write_sidecar(examples, body + crc32c(body).to_bytes(4, "little"))
    loaded, reason = check_index(examples)
    assert loaded is None and reason.startswith("damaged: its header"), reason


@pytest.mark.parametrize("cut", [len(b"HRIDX1\n") + 3, 20, -1, -5])
def test_a_cut_or_garbled_sidecar_gives_a_reason(examples, cut):
    build_index(examples)
    blob = sidecar_bytes(examples)
    write_sidecar(examples, bytes(blob[:cut]))
    loaded, reason = check_index(examples)
    assert loaded is None and (reason.startswith("damaged") or reason.startswith("unreadable")), reason


def test_an_index_of_the_older_format_is_rebuilt_not_trusted(examples):
    build_index(examples)
    blob = bytes(sidecar_bytes(examples)).replace(b'"format": 2', b'"format": 1')
    write_sidecar(examples, blob[:-4])  # format 1 had no checksum
    assert "format 1" in check_index(examples)[1]
    assert len(load_index(examples, policy="build")) == 120 and check_index(examples)[1] == "fresh"


def test_a_stale_index_is_reported_as_stale_by_global_shuffle(examples):
    import headrace as hr

    build_index(examples)
    with open(examples, "ab") as f:
        f.write(encode_record(b"appended"))
    with pytest.raises(StaleIndexError, match=r"needs its index, which is stale: the file's size changed"):
        hr.TFRecordDataset(examples).global_shuffle(seed=1)
    os.remove(index_path(examples))
    with pytest.raises(StaleIndexError, match=r"which is missing .*index='build'"):
        hr.TFRecordDataset(examples).global_shuffle(seed=1)
    shuffled = list(hr.TFRecordDataset(examples, index="build").global_shuffle(seed=1))
    assert len(shuffled) == 121


def test_temporaries_of_dead_writers_are_reclaimed_by_the_next_build(examples):
    from headrace.io.storage.publish import temporary_path

    directory = os.path.dirname(examples)
    target = index_path(examples)
    dead = (
        target
        + ".incomplete-"
        + temporary_path("x").split(".incomplete-")[1].split("-", 1)[0]
        + "-999999999-1-ab"
    )
    alive = temporary_path(target)  # this process: still writing, must stay
    stray = target + ".incomplete-0a1b"  # not a name this writer makes: left alone
    for path in (dead, alive, stray):
        with open(path, "wb") as f:
            f.write(b"partial")
    build_index(examples)
    left = sorted(name for name in os.listdir(directory) if ".incomplete-" in name)
    assert left == sorted(os.path.basename(p) for p in (alive, stray))
    assert check_index(examples)[1] == "fresh"


def test_a_failed_write_leaves_no_temporary(examples, monkeypatch):
    import headrace.io.records.index as index_module

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(index_module, "replace", full_disk)
    with pytest.raises(OSError, match="No space"):
        build_index(examples)
    assert not [name for name in os.listdir(os.path.dirname(examples)) if ".incomplete-" in name]
    assert not os.path.exists(index_path(examples))


def test_random_access_refuses_an_index_policy_that_gives_no_index(tmp_path, golden_dir):
    path = tmp_path / "a.tfrecord"
    shutil.copy(os.path.join(golden_dir, "examples.tfrecord"), path)
    with pytest.raises(
        InvalidArgumentError, match="index=False is not allowed: random access needs an index"
    ):
        IndexedRecords(path, index=False)
