"""Remote paths through fsspec, on ``memory://`` and on a filesystem that fails on purpose: globbing,
reading, indexes, writing, convert, the CLI, retries. (The same against a real S3 server: test_s3.py.)"""

import os
import uuid

import numpy as np
import pytest

import headrace as hr
from headrace import cli
from headrace.io import build_index, write_shards
from headrace.io.records.index import index_path
from headrace.io.storage import fs
from headrace.io.storage.publish import manifest_path, read_manifest, temporary_path
from headrace.tools.convert import convert, settings_path
from headrace.tools.io_cli import inspect_file, storage_options_of
from tests.helpers.checkpoint import check_checkpoints

fsspec = pytest.importorskip("fsspec")
from fsspec.implementations.memory import MemoryFile, MemoryFileSystem  # noqa: E402


@pytest.fixture
def bucket():
    """A fresh memory:// folder, removed afterwards."""
    root = f"memory://test-remote-{uuid.uuid4().hex[:8]}"
    yield root
    memory = fsspec.filesystem("memory")
    if memory.exists(root):
        memory.rm(root, recursive=True)


def _write(path: str, records: list[bytes]) -> None:
    with hr.io.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)


# --- globbing -----------------------------------------------------------------------------------------
def test_sidecar_names_of_every_writer_are_recognised():
    for sidecar in (
        index_path("d/train-00000-of-00002.tfrecord"),
        manifest_path("d/train"),
        settings_path("d/train"),
        temporary_path(index_path("d/a.tfrecord")),
        temporary_path(manifest_path("d/train")),
    ):
        assert fs.is_sidecar(sidecar), sidecar
    for data in ("d/train-00000-of-00002.tfrecord", "d/.hidden", "d/a.hridx.txt", "d/manifest.json"):
        assert not fs.is_sidecar(data), data


def test_list_files_matches_hidden_files_but_never_sidecars(tmp_path, bucket):
    for root in (str(tmp_path), bucket):
        shards = write_shards([b"%d" % i for i in range(10)], root + "/train", num_shards=2, index=True)
        _write(root + "/.hidden.tfrecord", [b"h"])
        found = [os.fsdecode(p) for p in hr.Dataset.list_files(root + "/*", shuffle=False)]
        assert found == sorted([root + "/.hidden.tfrecord", *shards])
        # every match is data: reading them all works
        records = hr.TFRecordDataset(hr.Dataset.list_files(root + "/*", shuffle=False))
        assert sorted(bytes(r) for r in records) == sorted([b"h"] + [b"%d" % i for i in range(10)])


def test_memory_glob_spelling_and_no_recursion(bucket):
    _write(bucket + "/a/x.tfrecord", [b"1"])
    _write(bucket + "/a/b/y.tfrecord", [b"2"])
    assert fs.glob(bucket + "/a/*.tfrecord") == [bucket + "/a/x.tfrecord"]  # memory://b/x, not memory:///b/x
    assert fs.glob(bucket + "/**.tfrecord") == []  # ** is *: no recursion, as tf.io.gfile.glob
    assert fs.glob(bucket + "/*/*/*.tfrecord") == [bucket + "/a/b/y.tfrecord"]
    # directories match too, as with local globs and tf.io.gfile.glob
    assert [os.fsdecode(p) for p in hr.io.matching_files(bucket + "/a/*")] == [
        bucket + "/a/b",
        bucket + "/a/x.tfrecord",
    ]


def test_no_match_names_the_pattern(bucket):
    with pytest.raises(hr.InvalidArgumentError, match=f"No files matched pattern: {bucket}/nothing-\\*"):
        hr.Dataset.list_files(bucket + "/nothing-*")
    with pytest.raises(hr.InvalidArgumentError, match="matches no file"):
        hr.shuffled_records(bucket + "/nothing-*")


# --- reading and writing -----------------------------------------------------------------------------
def test_write_read_index_and_shuffled_records_on_memory(bucket):
    records = [b"record %d" % i for i in range(50)]
    paths = write_shards(records, bucket + "/d/train", num_shards=3, index=True)
    assert all(fs.exists(index_path(p)) for p in paths)
    ds = hr.TFRecordDataset(paths, index="require")
    assert ds.cardinality() == 50
    assert sorted(bytes(r) for r in ds) == sorted(records)
    assert [bytes(r) for r in hr.TFRecordDataset(paths[0]).skip(5).take(2)] == [records[15], records[18]]
    shuffled = [bytes(r) for r in ds.global_shuffle(seed=3)]
    assert sorted(shuffled) == sorted(records) and shuffled != sorted(records)
    mixed = [bytes(r) for r in hr.shuffled_records(bucket + "/d/train-*", buffer_size=10, seed=1)]
    assert sorted(mixed) == sorted(records)


def test_remote_index_built_on_demand_and_stale_after_rewrite(bucket):
    path = bucket + "/one.tfrecord"
    _write(path, [b"a", b"b"])
    assert hr.TFRecordDataset(path, index="build").cardinality() == 2
    _write(path, [b"a", b"b", b"c"])
    with pytest.raises(hr.io.StaleIndexError, match="size changed"):
        hr.TFRecordDataset(path, index="require")
    assert len(build_index(path)) == 3


def test_remote_checkpoints(bucket):
    paths = write_shards([b"%d" % i for i in range(30)], bucket + "/c/part", num_shards=3)
    check_checkpoints(lambda: hr.TFRecordDataset(paths, num_parallel_reads=2), max_elements=40, stride=4)


def test_storage_options_are_validated_and_reach_the_filesystem(bucket, monkeypatch):
    with pytest.raises(hr.InvalidArgumentError, match="list_files: storage_options=3"):
        hr.Dataset.list_files(bucket + "/*", storage_options=3)
    with pytest.raises(hr.InvalidArgumentError, match="TFRecordDataset: storage_options"):
        hr.TFRecordDataset(bucket + "/a", storage_options=["x"])
    _write(bucket + "/s.tfrecord", [b"x"])
    seen = []
    real = fs.filesystem

    def spy(path, storage_options=None):
        seen.append(storage_options)
        return real(path, storage_options)

    monkeypatch.setattr(fs, "filesystem", spy)
    options = {"skip_instance_cache": True}
    names = [
        os.fsdecode(n) for n in hr.Dataset.list_files(bucket + "/s*", shuffle=False, storage_options=options)
    ]
    assert [bytes(r) for r in hr.TFRecordDataset(names, storage_options=options, index="build")] == [b"x"]
    assert len(seen) >= 3 and all(s == options for s in seen)  # the glob, the reads and the index
    assert fs.exists(index_path(bucket + "/s.tfrecord"))


def test_convert_to_and_from_memory(bucket, tmp_path):
    features = np.arange(20, dtype=np.float32).reshape(10, 2)
    np.save(tmp_path / "x.npy", features)
    paths = convert(str(tmp_path / "x.npy"), bucket + "/conv/x", num_shards=2, workers=1, index=True)
    # Published as a local set is: a manifest that says complete, with each shard's size.
    manifest = read_manifest(manifest_path(bucket + "/conv/x"))
    assert manifest["state"] == "complete" and manifest["tool"] == "convert"
    assert [s["file"] for s in manifest["shards"]] == [p.rsplit("/", 1)[1] for p in paths]
    assert paths == [bucket + "/conv/x-00000-of-00002.tfrecord", bucket + "/conv/x-00001-of-00002.tfrecord"]
    assert all(fs.exists(index_path(p)) for p in paths)
    assert hr.TFRecordDataset(paths, index="require").cardinality() == 10
    fs.upload(str(tmp_path / "x.npy"), bucket + "/src/x.npy")  # a remote source is downloaded first
    again = convert(bucket + "/src/x.npy", str(tmp_path / "out"), num_shards=1, workers=1)
    assert [bytes(r) for r in hr.TFRecordDataset(again)] == [bytes(r) for r in hr.TFRecordDataset(paths)]
    with pytest.raises(hr.InvalidArgumentError, match="does not exist"):
        convert(bucket + "/src/missing.npy", str(tmp_path / "none"))


def test_cli_reads_remote_files_with_storage_options(bucket, capsys):
    path = bucket + "/cli.tfrecord"
    _write(path, [b"a", b"bb"])
    report = inspect_file(path, storage_options={"skip_instance_cache": True})
    assert report["records"] == 2 and report["size_bytes"] == fs.file_size(path)
    assert cli.main(["index", path, "--storage-option", "skip_instance_cache=true"]) == 0
    assert "indexed 2 records" in capsys.readouterr().out and fs.exists(index_path(path))


def test_storage_option_flags_nest_and_parse_json():
    from headrace.tools.io_cli import _storage_option

    items = [_storage_option(t) for t in ("anon=true", "client_kwargs.endpoint_url=http://h:1", "retries=3")]
    assert storage_options_of(items) == {
        "anon": True,
        "client_kwargs": {"endpoint_url": "http://h:1"},
        "retries": 3,
    }
    assert storage_options_of(None) is None
    import argparse

    for bad in ("noequals", "=x", "a..b=1"):
        with pytest.raises(argparse.ArgumentTypeError, match="KEY=VALUE"):
            _storage_option(bad)


# --- transient errors ----------------------------------------------------------------------------------
class _Flaky:
    """A file whose reads fail as ``FlakyFS.plan`` says (pops one entry per read: True = fail)."""

    def __init__(self, inner: MemoryFile):
        self.inner = inner

    def read(self, size=-1):
        if FlakyFS.plan and FlakyFS.plan.pop(0):
            raise ConnectionResetError("connection reset by peer")
        return self.inner.read(size)

    def seek(self, offset, whence=0):
        return self.inner.seek(offset, whence)

    def close(self):
        FlakyFS.closed += 1
        self.inner.close()


class FlakyFS(MemoryFileSystem):
    """memory:// under another name, whose files fail reads on purpose."""

    protocol = "flaky"
    plan: list = []
    opened = 0
    closed = 0

    @classmethod
    def _strip_protocol(cls, path):
        return super()._strip_protocol(
            "memory://" + path[len("flaky://") :] if path.startswith("flaky://") else path
        )

    def _open(self, path, mode="rb", **kwargs):
        FlakyFS.opened += 1
        return _Flaky(super()._open(path, mode, **kwargs))


@pytest.fixture
def flaky(bucket, monkeypatch):
    fsspec.register_implementation("flaky", FlakyFS, clobber=True)
    monkeypatch.setattr(fs, "RETRY_BACKOFF_S", 0.0)
    FlakyFS.plan, FlakyFS.opened, FlakyFS.closed = [], 0, 0
    yield "flaky://" + bucket[len("memory://") :]
    FlakyFS.plan = []


def test_transient_read_errors_are_retried_on_a_fresh_connection(bucket, flaky):
    records = [os.urandom(3000) for _ in range(40)]
    _write(bucket + "/r.tfrecord", records)
    FlakyFS.plan = [False, True, True, False, True] * 20  # fails 3 reads in 5
    got = [bytes(r) for r in hr.TFRecordDataset(flaky + "/r.tfrecord", buffer_size=4096)]
    assert got == records
    assert FlakyFS.opened > 1 and FlakyFS.opened == FlakyFS.closed  # reopened, and nothing left open


def test_persistent_errors_name_the_file_and_offset(bucket, flaky):
    _write(bucket + "/p.tfrecord", [os.urandom(5000) for _ in range(4)])
    FlakyFS.plan = [False] + [True] * fs.READ_ATTEMPTS
    reader = hr.TFRecordDataset(flaky + "/p.tfrecord", buffer_size=4096)
    with pytest.raises(
        fs.RemoteReadError,
        match=r"p\.tfrecord: reading at byte offset 4096 failed after 5 attempts over [0-9.]+ s \(the budget of 5 attempts\); last cause",
    ) as info:
        list(reader)
    assert info.value.offset == 4096 and info.value.path.endswith("p.tfrecord")
    assert FlakyFS.opened == FlakyFS.closed


def test_missing_files_fail_at_once_without_retries(flaky):
    with pytest.raises(FileNotFoundError):
        list(hr.TFRecordDataset(flaky + "/missing.tfrecord"))
    assert FlakyFS.opened <= 1


def test_which_errors_are_transient():
    assert fs.is_transient(ConnectionResetError()) and fs.is_transient(TimeoutError())
    assert fs.is_transient(OSError(5, "I/O error"))
    for permanent in (FileNotFoundError(), PermissionError(), IsADirectoryError(), ValueError("bad")):
        assert not fs.is_transient(permanent)


# --- the disk cache on a remote path ---------------------------------------------------------------
def test_cache_to_a_remote_path(bucket, tmp_path, monkeypatch):
    monkeypatch.setenv("HEADRACE_MIRROR_DIR", str(tmp_path / "mirrors"))
    # The offset is read from a file at run time, where the cache key cannot see it: a cache that is
    # read gives the old values, one that is recomputed the new ones.
    offset = tmp_path / "offset"
    offset.write_text("0")
    name = str(offset)

    def pipeline():
        return hr.Dataset.range(4).map(lambda x: x + int(open(name).read())).cache(bucket + "/c/sq.hrcache")

    assert [int(x) for x in pipeline()] == [0, 1, 2, 3]
    assert fs.exists(bucket + "/c/sq.hrcache")  # uploaded when the pass completed
    offset.write_text("10")
    assert [int(x) for x in pipeline()] == [0, 1, 2, 3]  # read, not recomputed
    monkeypatch.setenv("HEADRACE_MIRROR_DIR", str(tmp_path / "elsewhere"))  # another machine: downloads
    assert [int(x) for x in pipeline()] == [0, 1, 2, 3]
    fs.remove(bucket + "/c/sq.hrcache")  # deleting the remote file rebuilds the cache
    assert [int(x) for x in pipeline()] == [10, 11, 12, 13]
    assert sorted(os.listdir(tmp_path / "elsewhere"))[0].endswith("sq.hrcache")
    assert not [n for n in os.listdir(tmp_path / "elsewhere") if ".incomplete-" in n]


def test_cache_remote_path_checkpoints(bucket, tmp_path, monkeypatch):
    monkeypatch.setenv("HEADRACE_MIRROR_DIR", str(tmp_path))
    check_checkpoints(lambda: hr.Dataset.range(8).cache(bucket + "/ck.hrcache").repeat(2), max_elements=20)


def test_cache_remote_errors(bucket):
    with pytest.raises(hr.InvalidArgumentError, match="names a directory"):
        hr.Dataset.range(3).cache(bucket + "/dir/")
    with pytest.raises(hr.InvalidArgumentError, match="cache: storage_options"):
        hr.Dataset.range(3).cache(bucket + "/x", storage_options="key=1")


def test_the_remote_storage_page_example_runs(capsys):
    page = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "remote_storage.md")
    with open(page, encoding="utf-8") as f:
        blocks = f.read().split("```python\n")[1:]
    example = next(code for code in (b.split("```")[0] for b in blocks) if "memory://demo" in code)
    memory = fsspec.filesystem("memory")
    try:
        exec(compile(example, "docs/remote_storage.md", "exec"), {})
    finally:
        if memory.exists("memory://demo"):
            memory.rm("memory://demo", recursive=True)
    assert "read 100 records from 4 remote shards" in capsys.readouterr().out


def test_text_csv_and_fixed_length_readers_on_memory(bucket):
    fs.make_parent_dirs(bucket + "/t.txt")
    with fs.open_file(bucket + "/t.txt", "wb") as f:
        f.write(b"a,1\nb,2\n")
    options = {"skip_instance_cache": True}
    assert [bytes(x) for x in hr.TextLineDataset(bucket + "/t.txt", storage_options=options)] == [
        b"a,1",
        b"b,2",
    ]
    rows = hr.CsvDataset(bucket + "/t.txt", ["", "int64"], storage_options=options)
    assert [(bytes(a), int(b)) for a, b in rows] == [(b"a", 1), (b"b", 2)]
    fixed = hr.FixedLengthRecordDataset([bucket + "/t.txt"] * 2, 4, storage_options=options)
    assert [bytes(x) for x in fixed] == [b"a,1\n", b"b,2\n"] * 2
    with pytest.raises(hr.InvalidArgumentError, match="text_line: storage_options"):
        hr.TextLineDataset(bucket + "/t.txt", storage_options=1)
