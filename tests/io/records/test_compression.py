import io
import tracemalloc
import zlib

import numpy as np
import pytest

from headrace.core.errors import DataLossError, InvalidArgumentError
from headrace.io.records.compression import (
    BAD_STREAM,
    TRUNCATED_STREAM,
    CompressedStreamError,
    CompressingWriter,
    DecompressingReader,
    detect_compression,
    normalize_compression,
)
from headrace.io.records.tfrecord import encode_record


def compressed(data: bytes, kind: str) -> bytes:
    raw = io.BytesIO()
    writer = CompressingWriter(raw, kind)
    writer.write(data)
    writer.finish()
    return raw.getvalue()


def read_all(blob: bytes, kind: str, step: int = 1000) -> bytes:
    reader = DecompressingReader(io.BytesIO(blob), kind, input_chunk=97)
    out = []
    while True:
        piece = reader.read(step)
        assert len(piece) <= step
        if not piece:
            return b"".join(out)
        out.append(piece)


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
def test_round_trip_in_small_steps(kind):
    data = bytes(range(256)) * 300
    assert read_all(compressed(data, kind), kind, step=777) == data
    assert read_all(compressed(b"", kind), kind) == b""


def test_formats_are_the_standard_ones():
    data = b"hello world" * 10
    assert zlib.decompress(compressed(data, "ZLIB")) == data
    assert zlib.decompress(compressed(data, "GZIP"), 16 + zlib.MAX_WBITS) == data


def test_concatenated_gzip_members_read_as_one_stream():
    blob = compressed(b"first ", "GZIP") + compressed(b"second", "GZIP")
    assert read_all(blob, "GZIP") == b"first second"


def test_empty_file_is_an_empty_stream():
    assert read_all(b"", "GZIP") == b""


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
def test_truncated_stream_raises(kind):
    blob = compressed(bytes(range(256)) * 100, kind)
    with pytest.raises(CompressedStreamError) as info:
        read_all(blob[: len(blob) // 2], kind)
    assert info.value.kind == TRUNCATED_STREAM and isinstance(info.value, DataLossError)


def test_damaged_stream_raises():
    blob = bytearray(compressed(bytes(range(256)) * 100, "ZLIB"))
    blob[0] ^= 0xFF  # the header no longer checks out
    with pytest.raises(CompressedStreamError) as info:
        read_all(bytes(blob), "ZLIB")
    assert info.value.kind == BAD_STREAM


def test_decompression_bomb_is_read_in_bounded_steps():
    blob = zlib.compress(bytes(50_000_000), 9)  # 50 MB of zeros in ~50 KB
    reader = DecompressingReader(io.BytesIO(blob), "ZLIB")
    tracemalloc.start()
    try:
        total = 0
        for _ in range(10):
            total += len(reader.read(1 << 20))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == 10 << 20
    assert peak < 8 << 20, f"reading 1 MB at a time peaked at {peak} bytes"


def test_detect_compression():
    plain = encode_record(b"abc")
    assert detect_compression(plain) == ""
    assert detect_compression(b"") == ""
    assert detect_compression(compressed(plain, "GZIP")) == "GZIP"
    assert detect_compression(compressed(plain, "ZLIB")) == "ZLIB"
    assert detect_compression(b"hello, world, not a record") is None


def test_normalize_compression():
    assert [normalize_compression(x) for x in (None, "", "none", "gzip", "ZLIB", b"GZIP")] == [
        "",
        "",
        "",
        "GZIP",
        "ZLIB",
        "GZIP",
    ]
    with pytest.raises(InvalidArgumentError, match="'GZIP' or 'ZLIB'"):
        normalize_compression("bz2")


# --- recovery (issue 11): what precedes damaged deflate data is delivered ------------------------------
def records_blob(count: int = 400) -> tuple[list[bytes], bytes]:
    import random

    rng = random.Random(5)
    records = [b"record %04d " % i + rng.randbytes(rng.randrange(40, 200)) for i in range(count)]
    return records, b"".join(encode_record(r) for r in records)


def damaged_at_a_decode_error(blob: bytes, kind: str, start: int) -> tuple[bytes, bytes]:
    """``blob`` with one flipped bit at or after ``start`` that makes zlib fail, and what a
    byte-at-a-time decoder produces before the failure (the most any reader can deliver; its end may
    already be wrong, which the TFRecord CRCs catch)."""
    wbits = {"GZIP": 16 + zlib.MAX_WBITS, "ZLIB": zlib.MAX_WBITS}[kind]
    for position in range(start, len(blob)):
        damaged = bytearray(blob)
        damaged[position] ^= 0x10
        decoder = zlib.decompressobj(wbits)
        produced = []
        try:
            for i in range(len(damaged)):
                produced.append(decoder.decompress(bytes(damaged[i : i + 1])))
        except zlib.error:
            return bytes(damaged), b"".join(produced)
    raise AssertionError("no single flipped bit broke the stream")


def read_until_damage(reader: DecompressingReader, step: int) -> bytes:
    out = []
    with pytest.raises(CompressedStreamError) as info:
        while piece := reader.read(step):
            out.append(piece)
    assert info.value.kind == BAD_STREAM
    with pytest.raises(CompressedStreamError):
        reader.read(100)  # the error stays
    return b"".join(out)


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
def test_output_before_damage_is_delivered_then_the_damage_is_raised(kind):
    _, data = records_blob()
    blob = compressed(data, kind)
    assert len(blob) < 1 << 18  # smaller than one input chunk: the case that lost everything
    damaged, reachable = damaged_at_a_decode_error(blob, kind, len(blob) // 2)
    assert len(reachable) > len(data) // 3
    got = read_until_damage(DecompressingReader(io.BytesIO(damaged), kind), 1 << 16)
    assert got == reachable[: len(got)]
    assert len(got) >= len(reachable) - 8 * 258  # at most one input byte's output is lost with the damage


def test_salvage_keeps_the_stream_consistent_when_the_output_limit_comes_first():
    _, data = records_blob()
    blob = compressed(data, "GZIP")
    damaged, reachable = damaged_at_a_decode_error(blob, "GZIP", 3 * len(blob) // 4)
    reader = DecompressingReader(io.BytesIO(damaged), "GZIP", input_chunk=len(damaged))
    got = read_until_damage(reader, 997)  # many small reads within one failing input chunk
    assert got == reachable[: len(got)] and len(got) >= len(reachable) - 8 * 258


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
def test_every_intact_record_before_the_damage_is_read(tmp_path, kind):
    from headrace.io.records.tfrecord import RecordError, RecordReader

    records, data = records_blob()
    damaged, reachable = damaged_at_a_decode_error(compressed(data, kind), kind, len(data) // 10)
    intact = next((i for i, (a, b) in enumerate(zip(reachable, data)) if a != b), len(reachable))
    ends = np.cumsum([16 + len(r) for r in records])
    expected = records[: int(np.searchsorted(ends, intact, side="right"))]
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(damaged)
    got = []
    with RecordReader(path, kind) as reader:
        with pytest.raises(RecordError):
            while True:
                got.extend(reader.next_chunk(100))
    assert got[: len(expected)] == expected and len(got) >= len(expected)
    assert set(got) <= set(records)  # nothing wrong, nothing twice
    assert len(set(got)) == len(got)


class _Unseekable(io.RawIOBase):
    """A pipe-like stream: read only."""

    def __init__(self, blob: bytes):
        self.inner = io.BytesIO(blob)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # noqa: ANN001
        data = self.inner.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def read_outcome(reader: DecompressingReader, step: int) -> tuple[bytes, str | None]:
    out, kind = [], None
    try:
        while piece := reader.read(step):
            out.append(piece)
    except CompressedStreamError as exc:
        kind = exc.kind
    return b"".join(out), kind


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_isal_and_zlib_deliver_the_same_bytes_and_errors(monkeypatch, kind, fraction):
    # ISA-L inflates while nothing fails; at damage the reader decodes again from the start with zlib
    # (which can salvage the output before the damaged point): the outcome is zlib's, byte for byte.
    from headrace.io.records import compression

    _, data = records_blob()
    blob = compressed(data, kind)
    damaged, _ = damaged_at_a_decode_error(blob, kind, int(len(blob) * fraction))
    truncated = blob[: int(len(blob) * fraction)]
    outcomes = {}
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(compression, "_fast_inflate", None)
        readers = [
            DecompressingReader(io.BytesIO(b), kind, input_chunk=4099) for b in (blob, damaged, truncated)
        ]
        assert all(reader.fast is fast for reader in readers)
        outcomes[fast] = [read_outcome(reader, 3001) for reader in readers]
        assert not readers[1].fast  # damage met: zlib from then on
    assert outcomes[True] == outcomes[False]
    assert outcomes[True][0] == (data, None)
    assert outcomes[True][1][1] == BAD_STREAM and outcomes[True][2][1] == TRUNCATED_STREAM


def test_a_stream_that_cannot_seek_is_read_with_zlib():
    blob = compressed(b"abc" * 1000, "GZIP")
    reader = DecompressingReader(io.BufferedReader(_Unseekable(blob)), "GZIP")
    assert not reader.fast
    assert read_outcome(reader, 100) == (b"abc" * 1000, None)
