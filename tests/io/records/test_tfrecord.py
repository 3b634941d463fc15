import gzip
import hashlib
import os
import struct

import pytest

from headrace.core.errors import DataLossError
from headrace.io.records.crc import masked_crc32c
from headrace.io.records.tfrecord import (
    DATA_CRC_MISMATCH,
    LENGTH_CRC_MISMATCH,
    RECORD_TOO_LARGE,
    TRUNCATED_RECORD,
    TRUNCATED_STREAM,
    RecordError,
    RecordReader,
    encode_record,
    tf_record_iterator,
)
from tests.io.conftest import peak_memory

CLEAN = [
    "examples.tfrecord",
    "examples_gzip.tfrecord",
    "examples_zlib.tfrecord",
    "raw.tfrecord",
    "empty.tfrecord",
    "sequence.tfrecord",
]


def read_everything(reader: RecordReader, chunk: int = 7) -> list:
    return [record for records in reader.chunks(chunk) for record in records]


@pytest.mark.parametrize("name", CLEAN)
def test_every_clean_golden_file_reads_completely(golden_dir, manifest, name):
    info = manifest["files"][name]
    records = list(tf_record_iterator(os.path.join(golden_dir, name), info["compression"]))
    assert len(records) == info["num_records"]
    if name == "raw.tfrecord":
        assert [len(r) for r in records] == info["lengths"]
        assert [hashlib.sha256(r).hexdigest() for r in records] == info["sha256"]


def test_compressed_golden_files_hold_the_same_records(golden_dir):
    plain = list(tf_record_iterator(os.path.join(golden_dir, "examples.tfrecord")))
    for name, kind in (("examples_gzip.tfrecord", "GZIP"), ("examples_zlib.tfrecord", "ZLIB")):
        assert list(tf_record_iterator(os.path.join(golden_dir, name), kind)) == plain


def test_offsets_and_record_numbers_match_the_manifest(golden_dir, manifest):
    reader = RecordReader(os.path.join(golden_dir, "examples.tfrecord"))
    offsets = []
    while True:
        offsets.append((reader.offset, reader.record))
        try:
            next(reader)
        except StopIteration:
            break
    expected = manifest["record_offsets_examples_tfrecord"]
    assert [o for o, _ in offsets[:-1]] == expected
    assert [r for _, r in offsets] == list(range(len(expected) + 1))
    assert offsets[-1][0] == os.path.getsize(os.path.join(golden_dir, "examples.tfrecord"))


def test_encoding_reproduces_tensorflows_bytes(golden_dir):
    path = os.path.join(golden_dir, "examples.tfrecord")
    with open(path, "rb") as f:
        original = f.read()
    assert b"".join(encode_record(r) for r in tf_record_iterator(path)) == original


@pytest.mark.parametrize("chunk", [1, 5, 1000])
def test_reading_at_any_chunk_size_and_buffer_size(golden_dir, chunk):
    path = os.path.join(golden_dir, "raw.tfrecord")  # holds a 1 MiB record, larger than the buffer
    expected = list(tf_record_iterator(path))
    for buffer_size in (1, 4096, 10_000_000):
        assert read_everything(RecordReader(path, buffer_size=buffer_size), chunk) == expected


def test_damaged_data_crc(golden_dir, manifest):
    info = manifest["files"]["corrupt_data_crc.tfrecord"]
    path = os.path.join(golden_dir, "corrupt_data_crc.tfrecord")
    reader = RecordReader(path)
    good = []
    with pytest.raises(RecordError) as raised:
        while True:
            good.extend(reader.next_chunk(50))
    error = raised.value
    assert isinstance(error, DataLossError)
    assert (error.kind, error.record, error.offset) == (
        DATA_CRC_MISMATCH,
        info["bad_record_index"],
        info["bad_record_offset"],
    )
    assert error.recoverable and path in str(error) and "record 37" in str(error) and "6257" in str(error)
    assert len(good) == info["bad_record_index"]
    rest = read_everything(reader)  # the frame is intact: reading continues with the next record
    assert len(good) + len(rest) == info["num_good_records"]
    expected = list(tf_record_iterator(os.path.join(golden_dir, "examples.tfrecord")))
    assert good + rest == expected[:37] + expected[38:]


def test_damaged_length_then_resync(golden_dir, manifest):
    info = manifest["files"]["corrupt_length.tfrecord"]
    reader = RecordReader(os.path.join(golden_dir, "corrupt_length.tfrecord"))
    good = []
    with pytest.raises(RecordError) as raised:
        while True:
            good.extend(reader.next_chunk(1000))
    assert (raised.value.kind, raised.value.record, raised.value.offset) == (
        LENGTH_CRC_MISMATCH,
        37,
        info["bad_record_offset"],
    )
    assert not raised.value.recoverable
    # without a rescan nothing more is located; with one, reading resumes at the next intact frame
    skipped = reader.resync()
    assert skipped == manifest["record_offsets_examples_tfrecord"][38] - 6257
    expected = list(tf_record_iterator(os.path.join(golden_dir, "examples.tfrecord")))
    assert good + read_everything(reader) == expected[:37] + expected[38:]


def test_reader_after_unrecoverable_error_reads_as_ended(golden_dir):
    reader = RecordReader(os.path.join(golden_dir, "corrupt_length.tfrecord"))
    with pytest.raises(RecordError):
        read_everything(reader, 1000)
    with pytest.raises(StopIteration):
        reader.next_chunk(1)


def test_truncated(golden_dir, manifest):
    info = manifest["files"]["truncated.tfrecord"]
    reader = RecordReader(os.path.join(golden_dir, "truncated.tfrecord"))
    good = []
    with pytest.raises(RecordError) as raised:
        while True:
            good.extend(reader.next_chunk(10))
    assert len(good) == info["num_good_records"]
    assert (raised.value.kind, raised.value.record, raised.value.offset) == (
        TRUNCATED_RECORD,
        37,
        info["bad_record_offset"],
    )


def test_truncated_gzip_yields_what_is_there_then_raises(golden_dir):
    reader = RecordReader(os.path.join(golden_dir, "truncated_gzip.tfrecord"), "GZIP")
    good = []
    with pytest.raises(RecordError) as raised:
        while True:
            good.extend(reader.next_chunk(10))
    assert len(good) == 57  # the manifest's note: TensorFlow yields these 57 and reports nothing
    assert raised.value.kind == TRUNCATED_STREAM and raised.value.record == 57
    assert "decompressed stream" in str(raised.value)
    expected = list(tf_record_iterator(os.path.join(golden_dir, "examples.tfrecord")))
    assert good == expected[:57]


def test_wrong_compression_is_named(golden_dir):
    with pytest.raises(RecordError, match="pass compression_type='GZIP'"):
        list(tf_record_iterator(os.path.join(golden_dir, "examples_gzip.tfrecord")))
    with pytest.raises(RecordError, match="looks uncompressed"):
        list(tf_record_iterator(os.path.join(golden_dir, "examples.tfrecord"), "ZLIB"))


def hostile_frame(length: int) -> bytes:
    """A frame whose length field passes its CRC but claims ``length`` bytes."""
    header = struct.pack("<Q", length)
    return header + struct.pack("<I", masked_crc32c(header)) + b"tiny"


@pytest.mark.parametrize("length", [1 << 40, (1 << 64) - 1, 10_000])
def test_huge_length_is_never_allocated(tmp_path, length):
    path = tmp_path / "hostile.tfrecord"
    path.write_bytes(encode_record(b"ok") + hostile_frame(length))
    reader = RecordReader(path)
    assert reader.next_chunk(1) == [b"ok"]  # kernels loaded before memory is measured
    error, peak = peak_memory(lambda: read_everything(reader))
    assert isinstance(error, RecordError) and error.kind == TRUNCATED_RECORD and error.record == 1
    assert peak < 1 << 20


def test_huge_length_in_a_compressed_file(tmp_path):
    path = tmp_path / "hostile.tfrecord.gz"
    path.write_bytes(gzip.compress(encode_record(b"ok") + hostile_frame(1 << 60)))
    reader = RecordReader(path, "GZIP")
    assert reader.next_chunk(1) == [b"ok"]
    error, peak = peak_memory(lambda: read_everything(reader))
    assert isinstance(error, RecordError) and error.kind == RECORD_TOO_LARGE
    assert peak < 2 << 20


def test_length_a_bit_beyond_the_data_in_a_compressed_file(tmp_path):
    path = tmp_path / "short.tfrecord.gz"
    path.write_bytes(gzip.compress(encode_record(b"ok") + hostile_frame(5_000_000)))
    with pytest.raises(RecordError) as raised:
        read_everything(RecordReader(path, "GZIP"))
    assert raised.value.kind == TRUNCATED_RECORD


@pytest.mark.parametrize("compression", ["", "GZIP"])
def test_seek_and_skip(golden_dir, compression):
    name = "examples.tfrecord" if not compression else "examples_gzip.tfrecord"
    path = os.path.join(golden_dir, name)
    expected = list(tf_record_iterator(path, compression))
    reader = RecordReader(path, compression)
    assert reader.skip(10) == 10 and reader.record == 10
    assert next(reader) == expected[10]
    offset, record = reader.offset, reader.record
    read_everything(reader)
    reader.seek(offset, record)  # backwards: a compressed stream starts again
    assert next(reader) == expected[11] and reader.record == 12
    assert reader.skip(1000) == 120 - 12
    fresh = RecordReader(path, compression, offset=offset, record=record)
    assert read_everything(fresh) == expected[11:]


def test_memory_filesystem(golden_dir):
    fsspec = pytest.importorskip("fsspec")
    with open(os.path.join(golden_dir, "examples.tfrecord"), "rb") as f:
        data = f.read()
    with fsspec.open("memory://golden/examples.tfrecord", "wb") as f:
        f.write(data)
    expected = list(tf_record_iterator(os.path.join(golden_dir, "examples.tfrecord")))
    assert list(tf_record_iterator("memory://golden/examples.tfrecord")) == expected


def test_empty_records_and_tiny_files(tmp_path):
    path = tmp_path / "empties.tfrecord"
    path.write_bytes(encode_record(b"") * 3)
    assert list(tf_record_iterator(path)) == [b"", b"", b""]
    path.write_bytes(b"\x01\x02")
    with pytest.raises(RecordError) as raised:
        list(tf_record_iterator(path))
    assert raised.value.kind == TRUNCATED_RECORD and raised.value.offset == 0


def compressible_records(count: int) -> list[bytes]:
    import random

    words = [b"alpha ", b"beta ", b"gamma ", b"delta "]
    return [
        b"rec-%05d-" % i
        + b"".join(random.Random(i).choice(words) for _ in range(random.Random(i).randint(0, 40)))
        for i in range(count)
    ]


@pytest.mark.slow
def test_damaged_deflate_never_repeats_or_invents_records(tmp_path):
    # issue 11: after a flipped bit, a desynchronised deflate decoder copies earlier records verbatim
    # (back-references); reading on after the damage (skip_record) delivered them a second time.
    import random

    records = compressible_records(300)
    blob = gzip.compress(b"".join(encode_record(r) for r in records))
    path = tmp_path / "damaged.tfrecord.gz"
    known = set(records)
    for trial in range(120):
        rng = random.Random(trial)
        damaged = bytearray(blob)
        damaged[rng.randrange(20, len(damaged) - 8)] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(damaged))
        got = []
        with RecordReader(path, "GZIP") as reader:
            for _ in range(1000):
                try:
                    got.extend(reader.next_chunk(50))
                except StopIteration:
                    break
                except RecordError as error:
                    if error.kind == "length CRC mismatch":
                        assert reader.resync() is None  # never scanned in a compressed stream
        assert len(set(got)) == len(got) and set(got) <= known, trial
        assert got == records[: len(got)], trial  # a prefix: everything before the damage, in order


def test_damage_in_a_compressed_file_ends_it_with_every_record_before_it(tmp_path):
    records = compressible_records(50)
    plain = b"".join(encode_record(r) for r in records)
    # damage record 20's data inside the stream before compressing: a data CRC mismatch
    start = sum(16 + len(r) for r in records[:20]) + 12
    damaged = plain[:start] + bytes([plain[start] ^ 1]) + plain[start + 1 :]
    path = tmp_path / "bad.tfrecord.gz"
    path.write_bytes(gzip.compress(damaged))
    reader = RecordReader(path, "GZIP")
    got = reader.next_chunk(100)
    assert got == records[:20]
    with pytest.raises(RecordError) as raised:
        reader.next_chunk(100)
    assert raised.value.kind == "data CRC mismatch" and raised.value.record == 20
    assert not raised.value.recoverable and "cannot be trusted" in str(raised.value)
    with pytest.raises(StopIteration):
        reader.next_chunk(100)
