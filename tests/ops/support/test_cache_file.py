import collections
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

from headrace.core.errors import DataLossError, InvalidArgumentError
from headrace.io.records.crc import crc32c
from headrace.io.storage.publish import process_identity
from headrace.ops.support import cache_file
from headrace.ops.support.cache_file import (
    CacheFileError,
    CacheFileReader,
    CacheFileWriter,
)
from headrace.ops.support.cache_lock import WriterLock
from tests.helpers.elements import assert_elements_equal

Point = collections.namedtuple("Point", "x y")


def write(path, elements, **kwargs) -> None:
    writer = CacheFileWriter(str(path), {"test": True}, **kwargs)
    for element in elements:
        writer.append(element)
    writer.commit()


def read(path) -> list:
    with CacheFileReader(str(path)) as reader:
        return list(reader)


def varied(i: int, rng) -> dict:
    return {
        "image": rng.integers(0, 255, (4, 5, 3), dtype=np.uint8),
        "label": np.int64(i),
        "ragged": rng.normal(size=(i % 4, 2)).astype(np.float32),
        "scalar_array": np.array(i / 2),
        "empty": np.zeros((0, 3), np.int16),
        "text": b"ab" * i,
        "unicode": "é" * (i % 3),
        "strings": np.array([b"x" * i, b"yz"], dtype=object),
        "ragged_strings": np.array(["s"] * (i % 3), dtype=object),
        "point": Point(i, 1.5),
        "flags": (True, None, (), 2**40),
        7: np.datetime64("2024-01-01") + i,
    }


def test_round_trip_of_every_kind_of_leaf(tmp_path):
    rng = np.random.default_rng(0)
    elements = [varied(i, rng) for i in range(40)]
    write(tmp_path / "c", elements, block_records=16)
    got = read(tmp_path / "c")
    assert_elements_equal(got, elements)
    assert type(got[3]["point"]) is Point and list(got[3]) == list(elements[3])  # key order kept
    assert got[5]["unicode"] == "éé" and isinstance(got[5]["text"], bytes)
    assert got[0]["image"].flags.writeable and not got[0]["image"].flags.owndata  # a view of the block buffer
    assert type(got[1]["flags"][3]) is int and got[1]["label"].dtype == np.int64


def test_structure_changes_between_records_start_new_blocks(tmp_path):
    elements = [np.int64(1), (b"a", 2.5), {"k": np.ones(3)}, np.int64(2), np.int32(3), "s", None]
    write(tmp_path / "c", elements)
    assert_elements_equal(read(tmp_path / "c"), elements)
    with CacheFileReader(str(tmp_path / "c")) as reader:
        assert len(reader.blocks) == len(elements)


def test_big_endian_arrays_come_back_equal_in_native_order(tmp_path):
    values = np.arange(6, dtype=">f4").reshape(2, 3)
    write(tmp_path / "c", [values])
    (got,) = read(tmp_path / "c")
    assert got.dtype == np.float32 and got.tolist() == values.tolist()


@pytest.mark.parametrize(
    "make, raw_bytes",
    [
        (lambda i, rng: (rng.integers(0, 255, (32, 32, 3), dtype=np.uint8), np.int64(i)), 32 * 32 * 3 + 8),
        (lambda i, rng: (rng.normal(size=8).astype(np.float32), np.int64(i)), 8 * 4 + 8),
        (lambda i, rng: {"x": rng.normal(size=3), "y": np.float32(i)}, 3 * 8 + 4),
    ],
    ids=["image+label", "float-vector+label", "dict-of-small"],
)
def test_compact_at_most_1_1x_the_raw_array_bytes(tmp_path, make, raw_bytes):
    rng = np.random.default_rng(1)
    count = 3000
    write(tmp_path / "c", (make(i, rng) for i in range(count)))
    size = os.path.getsize(tmp_path / "c")
    assert size <= 1.1 * count * raw_bytes, f"{size / (count * raw_bytes):.3f}x the raw bytes"


def test_locate_and_read_block_seek_by_record_number(tmp_path):
    write(tmp_path / "c", [np.int64(i) for i in range(25)], block_records=10)
    with CacheFileReader(str(tmp_path / "c")) as reader:
        assert reader.records == 25 and len(reader.blocks) == 3
        assert [reader.locate(p) for p in (0, 9, 10, 24, 25)] == [(0, 0), (0, 9), (1, 0), (2, 4), (3, 0)]
        assert [int(x) for x in reader.read_block(2)] == [20, 21, 22, 23, 24]


def test_nothing_appears_at_the_path_until_commit_and_abort_leaves_nothing(tmp_path):
    path = str(tmp_path / "c")
    writer = CacheFileWriter(path, {}, block_records=2)
    for i in range(5):
        writer.append(np.int64(i))
    assert not os.path.exists(path) and os.path.exists(writer.temp)
    writer.abort()
    assert os.listdir(tmp_path) == []
    writer = CacheFileWriter(path, {})
    writer.append(b"x")
    writer.commit()
    assert os.listdir(tmp_path) == ["c"]


def test_elements_a_cache_cannot_store_are_named(tmp_path):
    writer = CacheFileWriter(str(tmp_path / "c"), {})
    with pytest.raises(InvalidArgumentError, match=r"element 3\[1\] is a list"):
        writer.append((1, [1, 2]), "element 3")
    with pytest.raises(InvalidArgumentError, match="object array holding"):
        writer.append(np.array([1, "a"], dtype=object))
    with pytest.raises(InvalidArgumentError, match="dtype"):
        writer.append(np.zeros(2, dtype=[("a", "i4")]))
    writer.abort()


# --- damaged and hostile files ---------------------------------------------------------------------------
@pytest.fixture
def good_file(tmp_path):
    path = tmp_path / "c"
    write(path, [(np.arange(4, dtype=np.int64) + i, b"v") for i in range(30)], block_records=10)
    return path


def patch(path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


@pytest.mark.parametrize(
    "damage, offset, message",
    [
        (lambda p, size: patch(p, 0, b"NOTCACHE"), 0, "not a headrace cache file"),
        (
            lambda p, size: patch(p, 8, struct.pack("<I", 99)),
            8,
            "format version 99, this headrace reads version 1",
        ),
        (lambda p, size: os.truncate(p, size - 100), None, "no end marker"),
        (lambda p, size: os.truncate(p, 20), 0, "too short"),
        (lambda p, size: patch(p, 20, b"#"), 16, "header checksum mismatch"),
        (lambda p, size: patch(p, size - 40, b"#"), None, "footer checksum mismatch"),
    ],
    ids=["bad-magic", "version", "truncated", "short", "header", "footer"],
)
def test_a_damaged_file_is_refused_naming_the_file_and_offset(good_file, damage, offset, message):
    damage(good_file, os.path.getsize(good_file))
    with pytest.raises(CacheFileError, match=message) as info:
        CacheFileReader(str(good_file))
    assert isinstance(info.value, DataLossError) and str(good_file) in str(info.value)
    assert "at byte offset" in str(info.value)
    if offset is not None:
        assert info.value.offset == offset


def test_a_damaged_block_is_found_when_read(good_file):
    with CacheFileReader(str(good_file)) as reader:
        offset = reader.blocks[1][0]
    patch(good_file, offset + 200, b"\xff")
    with CacheFileReader(str(good_file)) as reader:
        assert len(reader.read_block(0)) == 10
        with pytest.raises(CacheFileError, match="block 1 checksum mismatch") as info:
            reader.read_block(1)
    assert info.value.offset == offset and str(good_file) in str(info.value)


def rewrite_spec(path, old: bytes, new: bytes) -> None:
    """Edit the first block's spec in place and fix its checksum, as a hostile writer could."""
    assert len(old) == len(new)
    with CacheFileReader(str(path)) as reader:
        offset, length, _ = reader.blocks[0]
    with open(path, "r+b") as f:
        f.seek(offset)
        block = bytearray(f.read(length))
        at = block.index(old)
        block[at : at + len(old)] = new
        magic, spec_length, data_length, records, _ = struct.unpack_from("<4sIQII", block)
        struct.pack_into(
            "<4sIQII", block, 0, magic, spec_length, data_length, records, crc32c(bytes(block[24:]))
        )
        f.seek(offset)
        f.write(block)


def test_a_hostile_file_cannot_ask_for_object_arrays_or_wrong_sizes(good_file):
    rewrite_spec(good_file, b'"dt":"<i8"', b'"dt":"|O8"')
    with (
        CacheFileReader(str(good_file)) as reader,
        pytest.raises(CacheFileError, match="'|O8' is not allowed"),
    ):
        reader.read_block(0)


def test_a_hostile_file_cannot_claim_more_data_than_it_has(good_file):
    rewrite_spec(good_file, b'"shape":[4]', b'"shape":[9]')
    with CacheFileReader(str(good_file)) as reader, pytest.raises(CacheFileError, match="the spec implies"):
        reader.read_block(0)


def test_a_namedtuple_from_a_module_not_imported_comes_back_as_a_tuple(tmp_path):
    Hostile = collections.namedtuple("Hostile", "a")
    Hostile.__module__ = "headrace_never_imported_module"
    write(tmp_path / "c", [Hostile(1)])
    (got,) = read(tmp_path / "c")
    assert type(got) is tuple and got == (1,)
    assert "headrace_never_imported_module" not in sys.modules


# --- the writer lock ---------------------------------------------------------------------------------
def dead_process_identity() -> dict:
    child = subprocess.Popen([sys.executable, "-c", "import os; print(os.getpid())"], stdout=subprocess.PIPE)
    pid = int(child.communicate(timeout=30)[0])
    return {**process_identity(), "pid": pid, "started": 1}


def test_lock_held_by_a_live_process_is_respected_and_released(tmp_path):
    cache = str(tmp_path / "c")
    first, second = WriterLock(cache), WriterLock(cache)
    assert first.acquire(cache + ".tmp-1")
    assert not second.acquire(cache + ".tmp-2")
    assert second.holder["pid"] == os.getpid() and second.holder["temp"] == cache + ".tmp-1"
    first.release()
    assert not os.path.exists(cache + ".lock")
    assert second.acquire(cache + ".tmp-2")
    second.release()


@pytest.mark.parametrize(
    "change",
    [
        lambda me: dead_process_identity(),
        lambda me: {**me, "started": (me["started"] or 0) + 1},  # our pid, reused by another process
        lambda me: {**me, "boot": "another-boot"},
    ],
    ids=["dead-pid", "reused-pid", "rebooted"],
)
def test_a_stale_lock_is_taken_over_and_its_temporary_file_removed(tmp_path, change):
    cache = str(tmp_path / "c")
    stale_temp = cache + ".incomplete-123-abcd"
    open(stale_temp, "wb").close()
    with open(cache + ".lock", "w") as f:
        json.dump({**change(process_identity()), "temp": stale_temp}, f)
    lock = WriterLock(cache)
    assert lock.acquire(cache + ".tmp-mine")
    assert not os.path.exists(stale_temp)
    assert json.load(open(cache + ".lock"))["temp"] == cache + ".tmp-mine"
    lock.release()


def test_a_lock_from_another_host_counts_as_alive(tmp_path):
    cache = str(tmp_path / "c")
    with open(cache + ".lock", "w") as f:
        json.dump({**dead_process_identity(), "host": "elsewhere", "temp": cache + ".tmp-x"}, f)
    assert not WriterLock(cache).acquire(cache + ".tmp-mine")


def test_a_stale_lock_never_deletes_files_outside_the_cache(tmp_path):
    cache = str(tmp_path / "sub" / "c")
    os.makedirs(tmp_path / "sub")
    victim = tmp_path / "precious"
    victim.write_bytes(b"keep")
    with open(cache + ".lock", "w") as f:
        json.dump({**dead_process_identity(), "temp": str(victim)}, f)
    lock = WriterLock(cache)
    assert lock.acquire(cache + ".tmp-mine")
    assert victim.read_bytes() == b"keep"
    lock.release()


def test_an_unreadable_lock_is_fresh_for_a_while_then_stale(tmp_path):
    cache = str(tmp_path / "c")
    with open(cache + ".lock", "w") as f:
        f.write("{half-writ")
    assert not WriterLock(cache).acquire(cache + ".tmp-a")
    old = time.time() - 2 * WriterLock.FRESH_SECONDS
    os.utime(cache + ".lock", (old, old))
    lock = WriterLock(cache)
    assert lock.acquire(cache + ".tmp-b")
    lock.release()


def test_block_size_limits_are_read_when_the_writer_is_made(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_file, "BLOCK_RECORDS", 3)
    write(tmp_path / "c", [np.int64(i) for i in range(7)])
    with CacheFileReader(str(tmp_path / "c")) as reader:
        assert [count for _, _, count in reader.blocks] == [3, 3, 1]
