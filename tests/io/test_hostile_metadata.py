"""Issue 22, item 5: metadata parsers are bounded. Each case runs in a child process with a memory cap,
so a regression (a MemoryError, an OOM kill, a bare RecursionError) fails its test, not the suite."""

import os
import subprocess
import sys
import textwrap

import pytest

from headrace.io.limits import DamagedJSONError, json_depth, load_json

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PRELUDE = """
import json, os, resource, sys, time, warnings
limit = 6 << 30  # a 2^31-record list (16 GiB) cannot fit: a regression is a MemoryError, not an OOM kill
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import numpy as np
import headrace as hr
from headrace.io.records.crc import crc32c
from headrace.ops.support import cache_file as cf
folder = sys.argv[1]
DEEP = b"[" * 50_000 + b"]" * 50_000  # about 100 KB of nested JSON
"""


def run_child(tmp_path, body: str, helpers: str = "") -> str:
    script = tmp_path / "child.py"
    script.write_text(PRELUDE + helpers + textwrap.dedent(body))
    env = {
        **os.environ,
        "PYTHONPATH": os.path.join(ROOT, "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    completed = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=300, env=env
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-4000:]
    return completed.stdout


FORGE = """
def forge(path, header, blocks, footer_records=None):
    # A cache file with every length and checksum right: blocks are (spec JSON, data, records).
    out = bytearray(cf._HEAD.pack(cf.MAGIC, cf.VERSION, len(header)) + header)
    out += b"\\0" * cf._pad(len(out))
    entries = []
    for spec, data, records in blocks:
        spec += b" " * cf._pad(cf._BLOCK.size + len(spec))
        head = cf._BLOCK.pack(cf.BLOCK_MAGIC, len(spec), len(data), records, crc32c(spec + data))
        entries.append([len(out), len(head) + len(spec) + len(data), records])
        out += head + spec + data
    footer = json.dumps({"blocks": entries, "records": sum(e[2] for e in entries),
                         "element_spec": {"tree": {"t": []}, "leaves": []}}).encode()
    out += footer + cf._TRAILER.pack(len(out), len(footer), crc32c(footer), crc32c(header), b"\\0" * 4,
                                     cf.END_MAGIC)
    with open(path, "wb") as f:
        f.write(out)
    return len(out)

def header_of(path):
    with cf.CacheFileReader(path) as reader:
        pass
    with open(path, "rb") as f:
        data = f.read()
    length = cf._HEAD.unpack_from(data)[2]
    return data[cf._HEAD.size : cf._HEAD.size + length]
"""


def test_a_small_cache_file_claiming_2_31_empty_records_is_a_named_error_and_rebuilt(tmp_path):
    out = run_child(
        tmp_path,
        """
        path = os.path.join(folder, "c.hrcache")
        ds = hr.Dataset.range(3).map(lambda x: ()).cache(path)
        assert len(list(ds)) == 3
        n = 2**31
        size = forge(path, header_of(path), [(b'{"n":%d,"tree":{"t":[]},"leaves":[],"sizes":[]}' % n, b"", n)])
        try:
            cf.CacheFileReader(path)
        except cf.CacheFileError as exc:
            print("ERROR", size, exc)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert list(ds) == [(), (), ()]  # read from the input, and the file is rebuilt
        print("WARNED", [str(w.message) for w in caught])
        with cf.CacheFileReader(path) as reader:
            print("REBUILT", reader.records)
        """,
        FORGE,
    )
    assert "ERROR" in out and "claims 2,147,483,648 records" in out and "c.hrcache" in out, out
    assert int(out.split("ERROR ")[1].split()[0]) < 1024  # a file under 1 KiB
    assert "WARNED" in out and "claims 2,147,483,648 records" in out.split("WARNED")[1], out
    assert "REBUILT 3" in out


def test_a_block_header_claiming_more_records_than_its_footer_is_refused(tmp_path):
    out = run_child(
        tmp_path,
        """
        path = os.path.join(folder, "c.hrcache")
        spec = b'{"n":2,"tree":{"t":[]},"leaves":[],"sizes":[]}'
        forge(path, b'{"format": "headrace cache", "version": 1}', [(spec, b"", 2)])
        with cf.CacheFileReader(path) as reader:
            assert list(reader) == [(), ()]
        with open(path, "r+b") as f:  # the block header now claims 2^31 (its CRC covers only spec+data)
            f.seek(reader.blocks[0][0] + 16)
            f.write((2**31).to_bytes(4, "little"))
        try:
            with cf.CacheFileReader(path) as reader:
                reader.read_block(0)
        except cf.CacheFileError as exc:
            print("ERROR", exc)
        """,
        FORGE,
    )
    assert "ERROR" in out and "bad block header" in out, out


def test_deep_json_in_a_cache_header_is_a_named_error(tmp_path):
    out = run_child(
        tmp_path,
        """
        path = os.path.join(folder, "c.hrcache")
        forge(path, DEEP, [])
        try:
            cf.CacheFileReader(path)
        except cf.CacheFileError as exc:
            print("ERROR", exc)
        """,
        FORGE,
    )
    assert "ERROR" in out and "the header is nested 50000 levels deep" in out, out


def test_deep_json_in_a_manifest_is_damaged_and_the_rerun_repairs_it(tmp_path):
    out = run_child(
        tmp_path,
        """
        from headrace.io import write_shards
        from headrace.io.storage.publish import ShardSetError, manifest_path
        prefix = os.path.join(folder, "set", "train")
        records = [b"r%d" % i for i in range(10)]
        shards = write_shards(records, prefix, num_shards=2)
        with open(manifest_path(prefix), "wb") as f:
            f.write(DEEP)
        for read in (lambda: list(hr.TFRecordDataset(shards)),
                     lambda: list(hr.Dataset.list_files(prefix + "-*", shuffle=False))):
            try:
                read()
            except ShardSetError as exc:
                print("ERROR", exc)
        shards = write_shards(records, prefix, num_shards=2)  # the repairing rerun
        print("REREAD", sorted(bytes(r) for r in hr.TFRecordDataset(shards).as_numpy_iterator()) == records)
        """,
    )
    errors = [line for line in out.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 2, out
    assert all(
        "is damaged (its JSON is nested 50000 levels deep" in e and "rerun the writer" in e for e in errors
    )
    assert "REREAD True" in out


def test_deep_json_in_an_index_sidecar_is_damaged_and_index_build_rebuilds(tmp_path):
    out = run_child(
        tmp_path,
        """
        from headrace.io import TFRecordWriter, build_index, check_index, index_path
        from headrace.io.records.index import MAGIC
        path = os.path.join(folder, "data.tfrecord")
        with TFRecordWriter(path) as writer:
            for i in range(20):
                writer.write(b"r%d" % i)
        build_index(path)
        with open(index_path(path), "rb") as f:
            blob = f.read()
        newline = blob.index(b"\\n", len(MAGIC))
        body = MAGIC + DEEP + blob[newline:-4]
        with open(index_path(path), "wb") as f:
            f.write(body + crc32c(body).to_bytes(4, "little"))  # a valid checksum: the header is parsed
        print("REASON", check_index(path)[1])
        try:
            hr.TFRecordDataset(path, index="require")
        except hr.io.StaleIndexError as exc:
            print("ERROR", type(exc).__name__, exc)
        ds = hr.TFRecordDataset(path, index="build")
        print("BUILT", ds.cardinality(), check_index(path)[1])
        """,
    )
    assert "REASON damaged: its header is nested 50000 levels deep" in out, out
    assert "ERROR StaleIndexError" in out and "nested 50000 levels deep" in out
    assert "BUILT 20 fresh" in out


def test_deep_json_in_a_cache_lock_is_taken_over_and_the_cache_rebuilt(tmp_path):
    out = run_child(
        tmp_path,
        """
        path = os.path.join(folder, "c.hrcache")
        ds = hr.Dataset.range(5).cache(path)
        with open(path + ".lock", "wb") as f:
            f.write(DEEP)
        print("FRESH", [int(x) for x in ds], os.path.exists(path))  # a writer may be filling it: no cache
        old = time.time() - 600
        os.utime(path + ".lock", (old, old))
        print("OLD", [int(x) for x in ds], os.path.exists(path), os.path.exists(path + ".lock"))
        """,
    )
    assert "FRESH [0, 1, 2, 3, 4] False" in out, out
    assert "OLD [0, 1, 2, 3, 4] True False" in out


# --- the one bounded JSON reader ----------------------------------------------------------------------
def test_load_json_bounds_size_and_depth_before_parsing():
    assert load_json(b'{"a": [1, {"b": "[[[["}]}', "x", 100) == {"a": [1, {"b": "[[[["}]}
    with pytest.raises(DamagedJSONError, match="x holds 101 bytes of JSON, more than the 100"):
        load_json(b" " * 101, "x", 100)
    with pytest.raises(DamagedJSONError, match="x is nested 300 levels deep"):
        load_json(b"[" * 300 + b"]" * 300, "x", 10_000)
    with pytest.raises(DamagedJSONError, match="x is not valid JSON"):
        load_json(b'{"a": ', "x", 100)
    assert load_json(b"[" * 256 + b"]" * 256, "x", 10_000) is not None  # the limit itself parses


@pytest.mark.parametrize(
    "text, depth",
    [
        (b"1", 0),
        (b"[]", 1),
        (b'["]]]]", "\\\\", [{}]]', 3),
        (b'["\\"[[[", [1]]', 2),
        (b'{"a\\\\": [[["x\\\\\\"]"]]]}', 4),
    ],
)
def test_json_depth_skips_strings_and_escaped_quotes(text, depth):
    assert json_depth(text) == depth
