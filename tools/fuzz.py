"""Fuzz headrace's compiled kernels (and the readers and parsers that feed them) for as long as asked.

    python tools/fuzz.py --seconds 3600                  # every target in turn, for an hour
    python tools/fuzz.py --inputs 200 --boundscheck      # what the test suite runs (tests/io)
    python tools/fuzz.py --replay parse_fill_fixed saved-input.bin

Each target feeds one compiled kernel through the code that calls it, with mutations of valid inputs
(records, files, index sidecars): flipped bits, cut data, long varints, huge lengths. A child process
runs the targets. Before each input it writes the input into a shared status file, so when the child
dies of a signal (a crash) or stops advancing (a hang), this process saves the input that did it and
starts a new child. An exception that is not one of headrace's own errors, or a broken post-condition,
is a failure, saved the same way. ``--boundscheck`` runs the kernels with numba's bounds checks on
(and the raw loads checked too), so an out-of-bounds access is an IndexError instead of silent
corruption. Prints inputs tried, crashes, hangs and failures per target; exits 1 if any.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import zlib
from typing import Any

import numpy as np

MAGIC = b"HRFUZZ01"
MAX_INPUT = 1 << 16
WARMUP_SECONDS = 900.0  # importing and compiling every kernel with bounds checks, on a busy machine
_U64 = struct.Struct("<Q")


# --- mutation ----------------------------------------------------------------------------------------
def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


INTERESTING = [
    b"\xff" * 10 + b"\x01",  # an over-long varint (11 bytes)
    b"\xff" * 12,  # a varint that never ends
    b"\x80" * 9 + b"\x7f",  # the longest valid varint
    _varint(1 << 31),
    _varint(1 << 62),
    _varint((1 << 64) - 1),
    _varint(0x7FFFFFFF),
    b"\x00",
    b"\x0a\xff\xff\xff\xff\x0f",  # a length-delimited field claiming 4 GiB
    struct.pack("<Q", 1 << 40),  # a frame length
    struct.pack("<q", -1),
]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """A few random edits of ``data`` (or, rarely, random bytes)."""
    if rng.random() < 0.03 or not data:
        return rng.randbytes(rng.randrange(0, 200))
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        if not out:
            break
        position = rng.randrange(len(out))
        kind = rng.randrange(8)
        if kind == 0:
            out[position] ^= 1 << rng.randrange(8)
        elif kind == 1:
            out[position] = rng.randrange(256)
        elif kind == 2:
            del out[position:]
        elif kind == 3:
            out[position:position] = rng.randbytes(rng.randint(1, 8))
        elif kind == 4:
            del out[position : position + rng.randint(1, 16)]
        elif kind == 5:
            out[position:position] = rng.choice(INTERESTING)
        elif kind == 6:
            piece = rng.choice(INTERESTING)
            out[position : position + len(piece)] = piece
        else:
            start = rng.randrange(len(out))
            out[position:position] = out[start : start + rng.randint(1, 64)]
    return bytes(out[:MAX_INPUT])


# --- targets -----------------------------------------------------------------------------------------
class Target:
    """One kernel under test: ``make(rng)`` builds an input, ``run(data)`` feeds it through."""

    kernel = ""

    def __init__(self, workdir: str):
        self.workdir = workdir
        self.seeds = self.seed_inputs()

    def seed_inputs(self) -> list[bytes]:
        return [b""]

    def make(self, rng: random.Random) -> bytes:
        return mutate(rng.choice(self.seeds), rng)

    def run(self, data: bytes) -> None:
        raise NotImplementedError


def _examples() -> list[bytes]:
    from headrace.io import serialize_example

    return [
        serialize_example(
            {
                "fixed": [1.0, 2.0],
                "label": 5,
                "name": b"n",
                "var": [1, -2, 300],
                "floats": [0.5, 1.5, 2.5],
                "tags": [b"a", b"bb"],
                "ids": [0, 0, 2],
                "lengths": [2, 1],
            }
        ),
        serialize_example({"label": 2**62, "var": [], "tags": ["x"], "fixed": [3.0, 4.0]}),
    ]


def _file_of(records: list[bytes]) -> bytes:
    from headrace.io import encode_record

    return b"".join(encode_record(r) for r in records)


def _field(tag: int, payload: bytes) -> bytes:
    return bytes((tag,)) + _varint(len(payload)) + payload


def _hostile_varint(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:  # over-long: 10 or more continuation bytes, then an end
        return b"\xff" * rng.randint(10, 14) + bytes((rng.randrange(128),))
    if kind == 1:
        return b"\x80" * rng.randint(1, 9) + bytes((rng.randrange(1, 128),))  # padded, still valid
    return _varint(rng.choice([0, 1, 127, 128, 300, 2**31, 2**62, 2**64 - 1, rng.getrandbits(64)]))


def random_feature(rng: random.Random) -> bytes:
    """A Feature message whose lengths all agree but whose values may be hostile (over-long
    varints, float lists of odd sizes, unpacked and packed runs mixed, several lists)."""
    parts = []
    for _ in range(rng.choice([0, 1, 1, 1, 2])):
        kind = rng.randrange(3)
        if kind == 0:
            items = [_field(0x0A, rng.randbytes(rng.randrange(5))) for _ in range(rng.randrange(4))]
            parts.append(_field(0x0A, b"".join(items)))
        elif kind == 1:
            size = rng.choice([0, 4, 8, 12, rng.randrange(16)])
            body = _field(0x0A, rng.randbytes(size)) if rng.random() < 0.7 else b"\x0d" + rng.randbytes(4)
            parts.append(_field(0x12, body))
        else:
            packed = b"".join(_hostile_varint(rng) for _ in range(rng.randrange(5)))
            body = _field(0x0A, packed) if rng.random() < 0.7 else b"\x08" + _hostile_varint(rng)
            parts.append(_field(0x1A, body))
    return b"".join(parts)


def random_example(rng: random.Random, keys: list[str]) -> bytes:
    """A serialized Example with well-formed framing and hostile contents, keyed by ``keys``."""
    entries = []
    for _ in range(rng.randrange(1, 6)):
        key = rng.choice(keys).encode()
        entries.append(_field(0x0A, _field(0x0A, key) + _field(0x12, random_feature(rng))))
    return _field(0x0A, b"".join(entries))


class ParseTarget(Target):
    """parse_example of a damaged record beside an intact one, with a spec that reaches ``kernel``."""

    def seed_inputs(self) -> list[bytes]:
        return _examples()

    def make(self, rng: random.Random) -> bytes:
        if rng.random() < 0.5:
            return mutate(rng.choice(self.seeds), rng)
        from headrace.io.codec.example import spec_keys

        keys = [k for key, spec in self.spec().items() for k in spec_keys(key, spec)]
        record = random_example(rng, keys)
        return mutate(record, rng) if rng.random() < 0.2 else record

    def spec(self) -> dict:
        raise NotImplementedError

    def run(self, data: bytes) -> None:
        from headrace.core.errors import HeadraceError
        from headrace.io import Ragged, parse_example

        records = [data, _examples()[0]]
        try:
            out = parse_example(records, self.spec())
        except HeadraceError:
            return
        total = sum(map(len, records))
        for key, value in out.items():
            if isinstance(value, Ragged):
                flat = value
                while isinstance(flat, Ragged):
                    flat = flat.values
                if len(value) != len(records) or len(flat) > total:
                    raise AssertionError(f"{key}: {len(value)} rows, {len(flat)} values from {total} bytes")
            elif len(value) != len(records):
                raise AssertionError(f"{key}: {len(value)} rows for {len(records)} records")


class LocateFeatures(ParseTarget):
    kernel = "locate_features"

    def spec(self) -> dict:
        from headrace.io import FixedLenFeature

        return {"label": FixedLenFeature([], "int64", default_value=0)}


class InspectFeatures(ParseTarget):
    kernel = "inspect_features"

    def spec(self) -> dict:
        from headrace.io import RaggedFeature, VarLenFeature

        return {
            "var": VarLenFeature("int64"),
            "ragged": RaggedFeature("int64", value_key="var", partitions=[RaggedFeature.ValueRowIds("ids")]),
            "nested": RaggedFeature(
                "float32", value_key="floats", partitions=[RaggedFeature.RowLengths("lengths")]
            ),
        }


class FillNumeric(ParseTarget):
    kernel = "fill_numeric"

    def spec(self) -> dict:
        from headrace.io import FixedLenSequenceFeature, VarLenFeature

        return {
            "var": VarLenFeature("int64"),
            "floats": VarLenFeature("float32"),
            "seq": FixedLenSequenceFeature([], "float32", allow_missing=True, default_value=0.0),
        }


class FillBytes(ParseTarget):
    kernel = "fill_bytes"

    def spec(self) -> dict:
        from headrace.io import FixedLenFeature, VarLenFeature

        return {"tags": VarLenFeature("string"), "name": FixedLenFeature([], "string", default_value=b"")}


class FillFixed(ParseTarget):
    kernel = "fill_fixed"

    def spec(self) -> dict:
        from headrace.io import FixedLenFeature

        return {
            "fixed": FixedLenFeature([2], "float32", default_value=[0.0, 0.0]),
            "label": FixedLenFeature([], "int64", default_value=0),
        }


class ExplodeFeatureLists(Target):
    kernel = "explode_feature_lists"

    def seed_inputs(self) -> list[bytes]:
        from headrace.io import serialize_sequence_example

        return [
            serialize_sequence_example({"c": 3}, {"s": [[1.0, 2.0], [3.0, 4.0]], "v": [[b"a"], []]}),
            serialize_sequence_example({}, {"v": [[b"x", b"y"]], "i": [[1], [2, 3], []]}),
        ]

    def make(self, rng: random.Random) -> bytes:
        if rng.random() < 0.5:
            return mutate(rng.choice(self.seeds), rng)
        steps = b"".join(_field(0x0A, random_feature(rng)) for _ in range(rng.randrange(4)))
        lists = b"".join(
            _field(0x0A, _field(0x0A, rng.choice([b"s", b"v", b"i"])) + _field(0x12, steps))
            for _ in range(rng.randrange(1, 4))
        )
        context = random_example(rng, ["c"])[2:]  # the Features message inside
        record = _field(0x0A, context) + _field(0x12, lists)
        return mutate(record, rng) if rng.random() < 0.2 else record

    def run(self, data: bytes) -> None:
        from headrace.core.errors import HeadraceError
        from headrace.io import (
            FixedLenFeature,
            FixedLenSequenceFeature,
            VarLenFeature,
            parse_sequence_example,
        )

        try:
            parse_sequence_example(
                [data, self.seeds[0]],
                {"c": FixedLenFeature([], "int64", default_value=0)},
                {
                    "s": FixedLenSequenceFeature([2], "float32", allow_missing=True),
                    "v": VarLenFeature("string"),
                    "i": VarLenFeature("int64"),
                },
            )
        except HeadraceError:
            return


class Crc32c(Target):
    kernel = "crc32c_span"

    def make(self, rng: random.Random) -> bytes:
        return rng.randbytes(rng.randrange(0, 4096))

    def run(self, data: bytes) -> None:
        import crc32c

        from headrace.io.records import crc_kernels

        view = np.frombuffer(data, dtype=np.uint8)
        start = data[0] % (len(data) + 1) if data else 0
        length = len(data) - start - (data[-1] % (len(data) - start + 1) if len(data) > start else 0)
        got = int(crc_kernels.crc32c_span(view, start, length))
        if got != crc32c.crc32c(data[start : start + length]):
            raise AssertionError(f"crc32c_span({start}, {length}) = {got:#x}, the crc32c package disagrees")


class FileTarget(Target):
    """A damaged TFRecord file (plain unless ``compression``) read to its end."""

    compression = ""

    def seed_inputs(self) -> list[bytes]:
        data = _file_of(_examples() * 3 + [b"", b"x" * 300])
        if self.compression == "GZIP":
            import gzip

            data = gzip.compress(data)
        elif self.compression == "ZLIB":
            data = zlib.compress(data)
        return [data]

    def path_of(self, data: bytes) -> str:
        path = os.path.join(self.workdir, "input.tfrecord")
        with open(path, "wb") as f:
            f.write(data)
        return path

    def run(self, data: bytes) -> None:
        from headrace.core.errors import HeadraceError
        from headrace.io import RecordError, RecordReader

        with RecordReader(self.path_of(data), self.compression, buffer_size=4096) as reader:
            for _ in range(100_000):  # far above what the input holds: running out is a hang
                try:
                    reader.next_chunk(64)
                except StopIteration:
                    return
                except RecordError as error:
                    if error.kind == "length CRC mismatch":
                        reader.resync()
                except HeadraceError:
                    return
        raise AssertionError("the reader did not reach the end of the file")


class FrameRecords(FileTarget):
    kernel = "frame_records"


class GzipStream(FileTarget):
    kernel = "inflate (GZIP)"
    compression = "GZIP"


class ZlibStream(FileTarget):
    kernel = "inflate (ZLIB)"
    compression = "ZLIB"


class FindFrame(FileTarget):
    kernel = "find_frame"

    def run(self, data: bytes) -> None:
        from headrace.io.records.tfrecord import _kernels

        view = np.frombuffer(data, dtype=np.uint8)
        position = 0
        for _ in range(len(data) + 1):
            found = _kernels().find_frame(view, position, len(data), len(data))
            if found < 0:
                return
            if not position <= found <= len(data) - 12:
                raise AssertionError(f"find_frame from {position} returned {found} for {len(data)} bytes")
            position = found + 1
        raise AssertionError("find_frame did not advance")


class FramesAt(FileTarget):
    kernel = "frames_at"

    def run(self, data: bytes) -> None:
        from headrace.io.records.tfrecord import _kernels

        # the last 8 * k bytes (k from the last byte) are offsets, damaged like the rest
        count = min(data[-1] % 8 if data else 0, len(data) // 8)
        body = data[: len(data) - 8 * count]
        offsets = np.frombuffer(data[len(body) :], dtype="<i8").astype(np.int64)
        offsets = np.concatenate([offsets, np.arange(0, len(body), 29, dtype=np.int64)[:8]])
        view = np.frombuffer(body, dtype=np.uint8)
        starts = np.empty(len(offsets), np.int64)
        ends = np.empty(len(offsets), np.int64)
        failed, _ = _kernels().frames_at(view, offsets, starts, ends)
        good = len(offsets) if failed < 0 else failed
        if (
            np.any(starts[:good] < 12)
            or np.any(ends[:good] > len(body) - 4)
            or np.any(starts[:good] > ends[:good])
        ):
            raise AssertionError("frames_at accepted a frame outside the buffer")


class IndexSidecar(Target):
    kernel = "index sidecar"

    def seed_inputs(self) -> list[bytes]:
        from headrace.io import build_index, index_path

        self.path = os.path.join(self.workdir, "indexed.tfrecord")
        with open(self.path, "wb") as f:
            f.write(_file_of([b"r%d" % i for i in range(20)]))
        build_index(self.path)
        with open(index_path(self.path), "rb") as f:
            return [f.read()]

    def make(self, rng: random.Random) -> bytes:
        """A mutation, or (half the time) a header replaced or edited and the checksum re-signed, so
        the header's JSON is parsed (issue 22: deep JSON gave a bare RecursionError)."""
        from headrace.io.records.crc import crc32c
        from headrace.io.records.index import MAGIC

        seed = self.seeds[0]
        if rng.random() < 0.5:
            return mutate(seed, rng)
        newline = seed.index(b"\n", len(MAGIC))
        if rng.random() < 0.3:
            header = _deep_json_text(rng)
        else:
            header = dumps(mutate_json_value(json.loads(seed[len(MAGIC) : newline]), rng), rng)
        body = MAGIC + header + seed[newline:-4]
        return body + crc32c(body).to_bytes(4, "little")

    def run(self, data: bytes) -> None:
        from headrace.io import IndexedRecords, check_index, index_path

        with open(index_path(self.path), "wb") as f:
            f.write(data)
        index, reason = check_index(self.path)
        if index is None:
            if not reason:
                raise AssertionError("check_index gave no reason")
            return
        with IndexedRecords([self.path], index="require") as records:
            got = records.read_many(np.arange(len(records)))
        if got != [b"r%d" % i for i in range(20)]:
            raise AssertionError("a damaged index was accepted and gave other records")


# --- metadata readers: cache files, shard-set manifests, cache locks ---------------------------------
JSON_INTERESTING: list = [
    2**31,
    2**32 - 1,
    2**63,
    2**64,
    -1,
    0,
    1e308,
    None,
    "x" * 40,
    [],
    {},
    [[[[[[[[[[[[]]]]]]]]]]]],
]


DEEP = "__deep json__"  # stands for a value nested far deeper than any headrace file (see dumps)


def dumps(value: Any, rng: random.Random) -> bytes:
    """``json.dumps(value)`` with each :data:`DEEP` replaced by a few thousand nested levels (built as
    text: json.dumps itself would recurse)."""
    return json.dumps(value).encode().replace(json.dumps(DEEP).encode(), _deep_json_text(rng))


def mutate_json_value(value: Any, rng: random.Random) -> Any:
    """``value`` (parsed JSON) with one node replaced by a hostile value: a huge count, a wrong type, a
    deeply nested value."""
    nodes: list = []

    def walk(node: Any, depth: int) -> None:
        if depth > 200:
            return
        if isinstance(node, dict):
            for key, child in node.items():
                nodes.append((node, key))
                walk(child, depth + 1)
        elif isinstance(node, list):
            for key, child in enumerate(node):
                nodes.append((node, key))
                walk(child, depth + 1)

    walk(value, 0)
    if not nodes:
        return value
    parent, key = rng.choice(nodes)
    parent[key] = DEEP if rng.random() < 0.15 else rng.choice(JSON_INTERESTING)
    return value


def _deep_json_text(rng: random.Random) -> bytes:
    depth = rng.choice([300, 3000, 30000])  # 60 KB at most: a saved input is whole (MAX_INPUT)
    return b"[" * depth + b"]" * depth if rng.random() < 0.5 else b'{"a":' * depth + b"1" + b"}" * depth


def _padded(data: bytes, pad: bytes = b"\0") -> bytes:
    return data + pad * (-len(data) % 16)


class CacheFile(Target):
    """A damaged or forged disk-cache file (checksums re-signed, so the JSON and the counts are
    parsed, as in issue 22's 751-byte file claiming 2^31 records) read to its end."""

    kernel = "cache file"

    def seed_inputs(self) -> list[bytes]:
        from headrace.ops.support.cache_file import CacheFileWriter

        path = os.path.join(self.workdir, "seed.hrcache")
        writer = CacheFileWriter(path, {"fingerprint": "f"}, block_records=3)
        for i in range(7):
            writer.append(({"a": np.arange(i, dtype=np.int32), "b": b"x" * i}, float(i), ()))
        writer.commit()
        with open(path, "rb") as f:
            data = f.read()
        self.expected = self.read(path)
        return [data]

    @staticmethod
    def parts(data: bytes) -> tuple[bytes, list, dict]:
        """(header JSON, [(block spec, block data, records)], footer) of a well-formed file."""
        from headrace.ops.support import cache_file as cf

        _, _, header_length = cf._HEAD.unpack_from(data, 0)
        header = data[cf._HEAD.size : cf._HEAD.size + header_length]
        footer_offset, footer_length = cf._TRAILER.unpack_from(data, len(data) - cf._TRAILER.size)[:2]
        footer = json.loads(data[footer_offset : footer_offset + footer_length])
        blocks = []
        for offset, length, _ in footer["blocks"]:
            _, spec_length, _, records, _ = cf._BLOCK.unpack_from(data, offset)
            start = offset + cf._BLOCK.size
            blocks.append(
                (data[start : start + spec_length], data[start + spec_length : offset + length], records)
            )
        return header, blocks, footer

    @staticmethod
    def assemble(header: bytes, blocks: list, footer: Any, counts: list | None = None) -> bytes:
        """A file with these parts and every length and checksum right (``footer`` None: the block
        list the blocks imply; ``counts`` overrides the records each block header claims)."""
        from headrace.io.records.crc import crc32c
        from headrace.ops.support import cache_file as cf

        out = bytearray(_padded(cf._HEAD.pack(cf.MAGIC, cf.VERSION, len(header)) + header))
        entries = []
        for k, (spec, body, records) in enumerate(blocks):
            spec = spec + b" " * (-(cf._BLOCK.size + len(spec)) % 16)
            claimed = records if counts is None else counts[k]
            head = cf._BLOCK.pack(cf.BLOCK_MAGIC, len(spec), len(body), claimed, crc32c(spec + body))
            entries.append([len(out), len(head) + len(spec) + len(body), claimed])
            out += head + spec + body
        if footer is None:
            footer = {"blocks": entries, "records": sum(e[2] for e in entries), "element_spec": None}
        footer_bytes = footer if isinstance(footer, bytes) else json.dumps(footer).encode()
        trailer = cf._TRAILER.pack(
            len(out), len(footer_bytes), crc32c(footer_bytes), crc32c(header), b"\0" * 4, cf.END_MAGIC
        )
        return bytes(out + footer_bytes + trailer)

    def make(self, rng: random.Random) -> bytes:
        seed = self.seeds[0]
        choice = rng.random()
        if choice < 0.25:
            return mutate(seed, rng)
        header, blocks, footer = self.parts(seed)
        if choice < 0.45:  # the block headers claim other counts (2^31 empty records ...)
            count = rng.choice([0, 1, 2**16, 2**16 + 1, 2**31, 2**32 - 1])
            if rng.random() < 0.5:
                blocks = [(b'{"n":%d,"tree":{"t":[]},"leaves":[],"sizes":[]}' % count, b"", count)]
                return self.assemble(header, blocks, None)
            counts = [count if rng.random() < 0.5 else b[2] for b in blocks]
            return self.assemble(header, blocks, None, counts)
        if choice < 0.55:
            return self.assemble(_deep_json_text(rng), blocks, None)
        if choice < 0.85:  # one value of a block spec or of the footer replaced
            if rng.random() < 0.5:
                k = rng.randrange(len(blocks))
                spec, body, records = blocks[k]
                spec = dumps(mutate_json_value(json.loads(spec), rng), rng)
                blocks = [*blocks[:k], (spec, body, records), *blocks[k + 1 :]]
                return self.assemble(header, blocks, None)
            data = self.assemble(header, blocks, None)
            footer = self.parts(data)[2]
            return self.assemble(header, blocks, dumps(mutate_json_value(footer, rng), rng))
        k = rng.randrange(len(blocks))  # a block's bytes damaged, and re-signed
        spec, body, records = blocks[k]
        blocks = [*blocks[:k], (spec, mutate(body, rng), records), *blocks[k + 1 :]]
        return self.assemble(header, blocks, None)

    def read(self, path: str) -> list:
        from headrace.ops.support.cache_file import CacheFileReader

        with CacheFileReader(path) as reader:
            return list(reader)

    def run(self, data: bytes) -> None:
        from headrace.core.errors import HeadraceError

        path = os.path.join(self.workdir, "input.hrcache")
        with open(path, "wb") as f:
            f.write(data)
        try:
            got = self.read(path)
        except HeadraceError:
            return
        if data == self.seeds[0] and repr(got) != repr(self.expected):
            raise AssertionError("the intact seed file read back other records")
        from headrace.ops.support import cache_file as cf

        most = (len(data) // cf._BLOCK.size + 1) * cf.MAX_BLOCK_RECORDS  # records that take no bytes
        if len(got) > most:
            raise AssertionError(f"a {len(data)}-byte file gave {len(got)} records")


class ShardManifest(Target):
    """A damaged or forged shard-set manifest (checksum re-signed), read by ``read_manifest`` and by a
    reader of the set; a repairing rerun of the writer must then succeed."""

    kernel = "shard-set manifest"

    def seed_inputs(self) -> list[bytes]:
        from headrace.io import write_shards
        from headrace.io.storage.publish import manifest_path

        self.prefix = os.path.join(self.workdir, "set", "train")
        self.shards = write_shards([b"r%d" % i for i in range(6)], self.prefix, num_shards=2)
        self.manifest = manifest_path(self.prefix)
        with open(self.manifest, "rb") as f:
            return [f.read()]

    @staticmethod
    def sign(body: Any, rng: random.Random) -> bytes:
        from headrace.io.storage.publish import _checksum

        if isinstance(body, dict):
            body = dict(body)
            body.pop("checksum", None)
            try:
                body["checksum"] = _checksum(body)
            except (TypeError, ValueError, RecursionError):
                pass
        return dumps(body, rng)

    def make(self, rng: random.Random) -> bytes:
        seed = self.seeds[0]
        choice = rng.random()
        if choice < 0.3:
            return mutate(seed, rng)
        if choice < 0.45:
            return _deep_json_text(rng)
        body = mutate_json_value(json.loads(seed), rng)
        return self.sign(body, rng)

    def run(self, data: bytes) -> None:
        from headrace import TFRecordDataset
        from headrace.io.storage.publish import ShardSetError, _manifests, read_manifest

        with open(self.manifest, "wb") as f:
            f.write(data)
        _manifests.clear()
        try:
            read_manifest(self.manifest)
        except ShardSetError:
            pass
        try:
            got = sorted(bytes(r) for r in TFRecordDataset(self.shards).as_numpy_iterator())
        except ShardSetError:
            pass
        else:
            if got != sorted(b"r%d" % i for i in range(6)):
                raise AssertionError("a manifest let a reader read another set")


class CacheLock(Target):
    """A damaged disk-cache lock file: acquiring must decide (held, or taken over), never raise, and
    never delete a file the lock names outside the cache's temporaries."""

    kernel = "cache lock"

    def seed_inputs(self) -> list[bytes]:
        from headrace.io.storage.publish import process_identity

        self.cache = os.path.join(self.workdir, "lock", "c")
        os.makedirs(os.path.dirname(self.cache), exist_ok=True)
        self.victim = os.path.join(self.workdir, "lock", "victim")
        identity = {**process_identity(), "pid": 2**22 + 7, "temp": self.victim, "since": 0}
        return [json.dumps(identity).encode()]

    def make(self, rng: random.Random) -> bytes:
        if rng.random() < 0.2:
            return _deep_json_text(rng)
        if rng.random() < 0.5:
            return mutate(self.seeds[0], rng)
        return dumps(mutate_json_value(json.loads(self.seeds[0]), rng), rng)

    def run(self, data: bytes) -> None:
        from headrace.ops.support.cache_lock import WriterLock

        with open(self.victim, "wb") as f:
            f.write(b"keep")
        with open(self.cache + ".lock", "wb") as f:
            f.write(data)
        if data[-1:] in (b"]", b"}") and len(data) % 2:  # now and then: an old lock, to be taken over
            os.utime(self.cache + ".lock", (1, 1))
        lock = WriterLock(self.cache)
        if lock.acquire(self.cache + ".incomplete-fuzz"):
            lock.release()
        with open(self.victim, "rb") as f:
            if f.read() != b"keep":
                raise AssertionError("a lock's contents made the taker delete a file outside the cache")
        if os.path.exists(self.cache + ".lock"):
            os.unlink(self.cache + ".lock")


class SelfTest(Target):
    """Proves the runner itself: input 1 crashes the child (SIGSEGV), input 2 hangs it."""

    kernel = "self-test"

    def make(self, rng: random.Random) -> bytes:
        return bytes((rng.randrange(3),))

    def run(self, data: bytes) -> None:
        if data[:1] == b"\x01":
            os.kill(os.getpid(), signal.SIGSEGV)
        if data[:1] == b"\x02":
            time.sleep(3600)


TARGETS = {
    "crc32c_span": Crc32c,
    "frame_records": FrameRecords,
    "find_frame": FindFrame,
    "frames_at": FramesAt,
    "locate_features": LocateFeatures,
    "inspect_features": InspectFeatures,
    "fill_numeric": FillNumeric,
    "fill_bytes": FillBytes,
    "fill_fixed": FillFixed,
    "explode_feature_lists": ExplodeFeatureLists,
    "gzip_stream": GzipStream,
    "zlib_stream": ZlibStream,
    "index_sidecar": IndexSidecar,
    "cache_file": CacheFile,
    "shard_manifest": ShardManifest,
    "cache_lock": CacheLock,
}
if os.environ.get("HEADRACE_FUZZ_SELFTEST"):
    TARGETS["_selftest"] = SelfTest


# --- the shared status file --------------------------------------------------------------------------
class Status:
    """``MAGIC | warming | counts[T] | current target | input length | input``, in a mapped file."""

    def __init__(self, path: str, targets: int, create: bool):
        self.targets = targets
        self.size = 8 + 8 + 8 * targets + 16 + MAX_INPUT
        if create:
            with open(path, "wb") as f:
                f.write(MAGIC + bytes(self.size - 8))
        self._file = open(path, "r+b")  # noqa: SIM115 (lives as long as the mapping)
        self.map = mmap.mmap(self._file.fileno(), self.size)

    def _offset(self, slot: int) -> int:
        return 8 + 8 * slot

    def get(self, slot: int) -> int:
        return _U64.unpack_from(self.map, self._offset(slot))[0]

    def put(self, slot: int, value: int) -> None:
        _U64.pack_into(self.map, self._offset(slot), value)

    @property
    def warming(self) -> int:
        return self.get(0)

    def count(self, target: int) -> int:
        return self.get(1 + target)

    def current(self) -> tuple[int, bytes]:
        target = self.get(1 + self.targets)
        length = min(self.get(2 + self.targets), MAX_INPUT)
        start = self._offset(3 + self.targets)
        return target, bytes(self.map[start : start + length])

    def begin(self, target: int, data: bytes) -> None:
        start = self._offset(3 + self.targets)
        data = data[:MAX_INPUT]
        self.map[start : start + len(data)] = data
        self.put(1 + self.targets, target)
        self.put(2 + self.targets, len(data))

    def close(self) -> None:
        self.map.close()
        self._file.close()


# --- the child: runs inputs ------------------------------------------------------------------------
def child(args: argparse.Namespace) -> int:
    import resource

    if args.memory_mb:  # a memory bomb shows as MemoryError (a failure) instead of a dead machine
        limit = args.memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    names = args.target
    status = Status(args.status, len(names), create=False)
    targets = [TARGETS[name](args.workdir) for name in names]
    rng = random.Random(args.seed)
    failures = open(os.path.join(args.out, "failures.jsonl"), "a")  # noqa: SIM115
    deadline = time.monotonic() + args.seconds if args.seconds else None

    def attempt(number: int, data: bytes) -> None:
        status.begin(number, data)
        try:
            targets[number].run(data)
        except Exception as exc:  # noqa: BLE001 (every unexpected exception is a finding)
            if isinstance(exc, MemoryError):
                exc = MemoryError("out of memory (a size read from data was not bounded?)")
            name = save(args.out, "failure", names[number], data)
            failures.write(
                json.dumps(
                    {
                        "target": names[number],
                        "input": name,
                        "error": traceback.format_exception_only(exc)[-1].strip(),
                    }
                )
                + "\n"
            )
            failures.flush()

    status.put(0, 1)  # warming: compiling the kernels does not count as a hang
    for number, target in enumerate(targets):
        for seed in target.seeds:
            attempt(number, seed)
    status.put(0, 0)
    while True:
        pending = [i for i in range(len(names)) if not args.inputs or status.count(i) < args.inputs]
        if not pending or (deadline is not None and time.monotonic() > deadline):
            return 0
        for number in pending:
            attempt(number, targets[number].make(rng))
            status.put(1 + number, status.count(number) + 1)


def save(out: str, kind: str, target: str, data: bytes) -> str:
    name = f"{kind}-{target}-{zlib.crc32(data):08x}.bin"
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    return name


# --- the parent: watches children ------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict:
    names = args.target or list(TARGETS)
    scratch = tempfile.mkdtemp(prefix="headrace-fuzz-")
    out = args.out or os.path.join(scratch, "findings")
    os.makedirs(out, exist_ok=True)
    status_path = os.path.join(scratch, "status")
    status = Status(status_path, len(names), create=True)
    env = dict(os.environ)
    if args.boundscheck:
        env["NUMBA_BOUNDSCHECK"] = "1"
        env["NUMBA_CACHE_DIR"] = os.path.join(scratch, "numba-cache")  # never mix with unchecked builds
    crashes = {name: 0 for name in names}
    hangs = {name: 0 for name in names}
    start = time.monotonic()
    restarts = 0
    try:
        while True:
            remaining = args.seconds - (time.monotonic() - start) if args.seconds else 0
            if args.seconds and remaining <= 0:
                break
            workdir = tempfile.mkdtemp(dir=scratch)
            command = [sys.executable, os.path.abspath(__file__), "--child", "--status", status_path]
            command += ["--workdir", workdir, "--out", out, "--seed", str(args.seed + restarts)]
            command += ["--inputs", str(args.inputs), "--seconds", str(max(remaining, 0))]
            command += ["--memory-mb", str(args.memory_mb), "--target", *names]
            status.put(0, 1)  # starting and compiling is not a hang (the child clears it when warm)
            process = subprocess.Popen(command, env=env)
            last_total, last_change = -1, time.monotonic()
            while process.poll() is None:
                time.sleep(0.05)
                total = sum(status.count(i) for i in range(len(names)))
                allowed = WARMUP_SECONDS if status.warming else args.hang_seconds
                if total != last_total:
                    last_total, last_change = total, time.monotonic()
                elif time.monotonic() - last_change > allowed:
                    process.send_signal(signal.SIGKILL)
                    process.wait()
                    number, data = status.current()
                    hangs[names[number]] += 1
                    save(out, "hang", names[number], data)
                    status.put(1 + number, status.count(number) + 1)  # count it, and move on
                    break
            else:
                if process.returncode == 0:
                    break
                if process.returncode > 0:  # the child itself failed (not a signal): nothing to retry
                    raise RuntimeError(f"the fuzzing child exited with status {process.returncode}")
                number, data = status.current()
                crashes[names[number]] += 1
                save(out, "crash", names[number], data)
                status.put(1 + number, status.count(number) + 1)
            shutil.rmtree(workdir, ignore_errors=True)
            restarts += 1
            if restarts > args.max_restarts:
                break
        counts = {name: status.count(i) for i, name in enumerate(names)}
        failures: dict = {name: 0 for name in names}
        examples = []
        failures_path = os.path.join(out, "failures.jsonl")
        if os.path.exists(failures_path):
            with open(failures_path) as f:
                for line in f:
                    entry = json.loads(line)
                    failures[entry["target"]] += 1
                    examples.append(entry)
        found = sum(crashes.values()) + sum(hangs.values()) + sum(failures.values())
        if found and not args.out:  # the scratch folder goes: keep what was found
            out = shutil.copytree(out, tempfile.mkdtemp(prefix="headrace-fuzz-findings-"), dirs_exist_ok=True)
        report = {
            "seconds": round(time.monotonic() - start, 1),
            "boundscheck": bool(args.boundscheck),
            "targets": {
                name: {
                    "inputs": counts[name],
                    "crashes": crashes[name],
                    "hangs": hangs[name],
                    "failures": failures[name],
                }
                for name in names
            },
            "inputs": sum(counts.values()),
            "crashes": sum(crashes.values()),
            "hangs": sum(hangs.values()),
            "failures": sum(failures.values()),
            "examples": examples[:20],
            "findings": out if found else None,
        }
        return report
    finally:
        status.close()
        shutil.rmtree(scratch, ignore_errors=True)


def replay(target: str, path: str) -> int:
    with open(path, "rb") as f:
        data = f.read()
    workdir = tempfile.mkdtemp(prefix="headrace-fuzz-replay-")
    try:
        TARGETS[target](workdir).run(data)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("no failure")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=0, help="stop after this long (0: no time limit)")
    parser.add_argument("--inputs", type=int, default=0, help="stop after this many inputs per target")
    parser.add_argument("--target", nargs="*", choices=sorted(TARGETS), help="targets (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--boundscheck", action="store_true", help="numba bounds checks on (slower)")
    parser.add_argument("--hang-seconds", type=float, default=20.0, help="no progress for this long: a hang")
    parser.add_argument("--memory-mb", type=int, default=4096, help="address-space limit of the child")
    parser.add_argument("--max-restarts", type=int, default=1000)
    parser.add_argument("--out", help="where to save findings (default: a temporary folder, kept if any)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--replay", nargs=2, metavar=("TARGET", "FILE"), help="run one saved input")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--status", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    if args.replay:
        return replay(*args.replay)
    if not args.seconds and not args.inputs:
        parser.error("give --seconds or --inputs")
    report = run(args)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(f"{'target':24} {'inputs':>10} {'crashes':>8} {'hangs':>6} {'failures':>9}")
        for name, row in report["targets"].items():
            print(
                f"{name:24} {row['inputs']:>10,} {row['crashes']:>8} {row['hangs']:>6} {row['failures']:>9}"
            )
        print(
            f"{'total':24} {report['inputs']:>10,} {report['crashes']:>8} {report['hangs']:>6} "
            f"{report['failures']:>9}   ({report['seconds']} s, boundscheck {'on' if args.boundscheck else 'off'})"
        )
        for entry in report["examples"]:
            print(f"  {entry['target']}: {entry['error']} ({entry['input']})")
        if report["findings"]:
            print(
                f"inputs that failed are saved in {report['findings']} (replay one with --replay TARGET FILE)"
            )
    return 1 if report["crashes"] or report["hangs"] or report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
