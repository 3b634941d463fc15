"""Memory budgets: every size read from data is checked before memory is allocated for it, and an
exceeded budget names itself and how to raise it (issue 11, "Memory bombs")."""

import gzip
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from headrace.core.errors import InvalidArgumentError
from headrace.io import (
    LimitExceededError,
    RaggedFeature,
    RecordError,
    RecordReader,
    encode_record,
    limit,
    parse_example,
    serialize_example,
    set_limit,
)
from headrace.io.limits import LIMITS, check_size
from headrace.io.records.crc import masked_crc32c
from headrace.io.records.tfrecord import RECORD_TOO_LARGE

from .conftest import peak_memory


@pytest.fixture
def restore_limits():
    saved = {name: os.environ.get(spec.env) for name, spec in LIMITS.items()}
    yield
    for name, spec in LIMITS.items():
        if saved[name] is None:
            os.environ.pop(spec.env, None)
        else:
            os.environ[spec.env] = saved[name]


def test_defaults_setting_and_the_environment(restore_limits):
    for name, spec in LIMITS.items():
        set_limit(name, None)
        assert limit(name) == spec.default
    previous = set_limit("max_record_bytes", 1000)
    assert previous == LIMITS["max_record_bytes"].default
    assert limit("max_record_bytes") == 1000 and os.environ["HEADRACE_MAX_RECORD_BYTES"] == "1000"
    os.environ["HEADRACE_MAX_RAGGED_ROWS"] = "1_000"
    assert limit("max_ragged_rows") == 1000


def test_worker_processes_inherit_a_budget(restore_limits):
    set_limit("max_image_pixels", 1234)
    code = "from headrace.io import limit; print(limit('max_image_pixels'))"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "1234"
    )


def test_bad_names_and_values_are_refused(restore_limits):
    with pytest.raises(InvalidArgumentError, match="unknown memory budget 'max_things'.*max_image_pixels"):
        limit("max_things")
    with pytest.raises(InvalidArgumentError, match="an int >= 0"):
        set_limit("max_record_bytes", -1)
    os.environ["HEADRACE_MAX_RECORD_BYTES"] = "lots"
    with pytest.raises(InvalidArgumentError, match="HEADRACE_MAX_RECORD_BYTES='lots'.*unset it"):
        limit("max_record_bytes")


def test_the_error_names_the_budget_the_value_and_how_to_raise_it(restore_limits):
    set_limit("max_ragged_rows", 10)
    check_size("max_ragged_rows", 10, "here")  # at the budget is allowed
    with pytest.raises(LimitExceededError) as raised:
        check_size("max_ragged_rows", 11, "here")
    message = str(raised.value)
    assert raised.value.limit == "max_ragged_rows" and raised.value.value == 11
    assert "here describes 11 ragged rows, above the budget max_ragged_rows=10" in message
    assert "set_limit('max_ragged_rows', 11)" in message and "HEADRACE_MAX_RAGGED_ROWS=11" in message


# --- ragged ids ------------------------------------------------------------------------------------
@pytest.mark.parametrize("row_id", [1 << 27, 1 << 29])
def test_a_33_byte_record_with_a_huge_value_rowid_is_refused_small(row_id):
    spec = {"r": RaggedFeature("int64", value_key="v", partitions=[RaggedFeature.ValueRowIds("ids")])}
    record = serialize_example({"v": [1], "ids": [row_id]})
    assert len(record) <= 40
    parse_example([serialize_example({"v": [1], "ids": [0]})], spec)  # kernels compiled first
    error, peak = peak_memory(lambda: parse_example([record], spec))
    assert isinstance(error, LimitExceededError) and error.limit == "max_ragged_rows"
    assert "feature 'ids' of record 0" in str(error)
    assert peak < 1 << 20


def test_a_ragged_rowid_within_a_raised_budget_parses(restore_limits):
    spec = {"r": RaggedFeature("int64", value_key="v", partitions=[RaggedFeature.ValueRowIds("ids")])}
    record = serialize_example({"v": [1, 2], "ids": [0, 3]})
    set_limit("max_ragged_rows", 3)
    with pytest.raises(LimitExceededError):
        parse_example([record], spec)
    set_limit("max_ragged_rows", 4)
    assert parse_example([record], spec)["r"].to_list() == [[[1], [], [], [2]]]


# --- record length -------------------------------------------------------------------------------
def hostile_frame(length: int) -> bytes:
    header = struct.pack("<Q", length)
    return header + struct.pack("<I", masked_crc32c(header)) + b"tiny"


def test_a_1mb_gzip_file_claiming_a_1gib_record_is_refused_before_allocating(tmp_path):
    path = tmp_path / "bomb.tfrecord.gz"
    path.write_bytes(gzip.compress(encode_record(b"ok") + hostile_frame(1 << 30) + bytes(1 << 20)))
    reader = RecordReader(path, "GZIP")
    assert reader.next_chunk(1) == [b"ok"]
    error, peak = peak_memory(lambda: reader.next_chunk(1))
    assert isinstance(error, RecordError) and error.kind == RECORD_TOO_LARGE
    assert "max_record_bytes" in str(error) and "HEADRACE_MAX_RECORD_BYTES" in str(error)
    assert peak < 4 << 20


def test_a_record_above_the_budget_in_a_plain_file_names_the_budget(tmp_path, restore_limits):
    path = tmp_path / "big.tfrecord"
    path.write_bytes(encode_record(b"x" * 5000) + encode_record(b"y"))
    set_limit("max_record_bytes", 4096)
    with pytest.raises(RecordError) as raised:
        list(RecordReader(path))
    assert raised.value.kind == RECORD_TOO_LARGE and "set_limit('max_record_bytes', 5000)" in str(
        raised.value
    )
    set_limit("max_record_bytes", None)
    assert list(RecordReader(path)) == [b"x" * 5000, b"y"]


# --- image dimensions ------------------------------------------------------------------------------
def jpeg_claiming(height: int, width: int) -> bytes:
    from headrace.image.encode import encode_jpeg

    data = bytearray(encode_jpeg(np.zeros((16, 16, 3), np.uint8)))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


@pytest.mark.parametrize("function", ["decode_jpeg", "decode_image"])
def test_a_631_byte_jpeg_claiming_30000x30000_fails_fast_and_small(function):
    from headrace.image import decode

    data = jpeg_claiming(30000, 30000)
    assert len(data) == 631
    decode.decode_jpeg(jpeg_claiming(16, 16))  # the decoder loaded before memory is measured
    error, peak = peak_memory(lambda: getattr(decode, function)(data))
    assert isinstance(error, LimitExceededError) and error.limit == "max_image_pixels"
    assert "(30000x30000) describes 900,000,000 pixels" in str(error)
    assert peak < 1 << 20


def test_png_dimensions_are_checked_before_decoding(restore_limits):
    from headrace.image.decode import decode_png
    from headrace.image.encode import encode_png

    data = encode_png(np.zeros((64, 64, 3), np.uint8))
    set_limit("max_image_pixels", 64 * 64 - 1)
    with pytest.raises(LimitExceededError, match="max_image_pixels"):
        decode_png(data)
    set_limit("max_image_pixels", 64 * 64)
    assert decode_png(data).shape == (64, 64, 3)


# --- padding to the longest record -----------------------------------------------------------------
def test_one_long_record_cannot_multiply_into_a_huge_padded_batch(restore_limits):
    from headrace.io import FixedLenSequenceFeature, parse_sequence_example, serialize_sequence_example

    spec = {"s": FixedLenSequenceFeature([], "int64", allow_missing=True)}
    records = [serialize_example({"s": list(range(1000))})] + [serialize_example({"s": [1]})] * 99
    set_limit("max_padded_elements", 100 * 1000 - 1)
    with pytest.raises(LimitExceededError) as raised:
        parse_example(records, spec)
    assert "feature 's', padded over 100 records to its longest (1000 items, record 0)" in str(raised.value)
    assert "describes 100,000 elements" in str(raised.value)
    set_limit("max_padded_elements", 100 * 1000)
    assert parse_example(records, spec)["s"].shape == (100, 1000)
    sequences = [serialize_sequence_example({}, {"s": [[1.0, 2.0]] * 50})] + [
        serialize_sequence_example({}, {"s": [[1.0, 2.0]]})
    ] * 9
    sequence_spec = {"s": FixedLenSequenceFeature([2], "float32")}
    set_limit("max_padded_elements", 10 * 50 * 2 - 1)
    with pytest.raises(
        LimitExceededError, match="parse_sequence_example: feature 's', padded over 10 records"
    ):
        parse_sequence_example(sequences, {}, sequence_spec)
    set_limit("max_padded_elements", None)
    assert parse_sequence_example(sequences, {}, sequence_spec)[1]["s"].shape == (10, 50, 2)
