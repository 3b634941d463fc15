"""Remote storage against a real S3-compatible server: moto in server mode on 127.0.0.1, started and
stopped by these tests, reached over HTTP through s3fs with ``storage_options``."""

import json
import logging
import os
import signal
import subprocess
import sys
import uuid
import warnings

import numpy as np
import pytest

import headrace as hr
from headrace import cli
from headrace.io import write_shards
from headrace.io.records.index import index_path
from headrace.io.storage import fs
from headrace.tools.convert import convert
from tests.helpers.checkpoint import check_checkpoints

pytest.importorskip("s3fs")
boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

KEY, SECRET = "testing-key", "testing-secret"


def _server_options(endpoint: str, **extra) -> dict:
    return {
        "key": KEY,
        "secret": SECRET,
        "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"},
        **extra,
    }


def _start_server():
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


def _make_bucket(endpoint: str) -> str:
    name = f"headrace-{uuid.uuid4().hex[:10]}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=KEY,
        aws_secret_access_key=SECRET,
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=name)
    return name


@pytest.fixture(scope="module")
def server():
    server, endpoint = _start_server()
    yield endpoint
    server.stop()


@pytest.fixture
def s3(server):
    """(s3://bucket, storage_options) of a fresh bucket on the module's server."""
    return f"s3://{_make_bucket(server)}", _server_options(server)


def test_shards_indexes_globbing_and_shuffles_on_s3(s3):
    root, options = s3
    records = [b"record %03d" % i for i in range(60)]
    paths = write_shards(records, root + "/train/part", num_shards=3, index=True, storage_options=options)
    assert all(fs.exists(index_path(p), options) for p in paths)
    listed = [
        os.fsdecode(p)
        for p in hr.Dataset.list_files(root + "/train/*", shuffle=False, storage_options=options)
    ]
    assert listed == paths  # the .hridx sidecars beside them never match
    ds = hr.TFRecordDataset(paths, index="require", storage_options=options)
    assert ds.cardinality() == 60
    assert [
        bytes(r) for r in hr.TFRecordDataset(paths, num_parallel_reads=3, storage_options=options)
    ] == records
    shuffled = [bytes(r) for r in ds.global_shuffle(seed=7)]
    assert sorted(shuffled) == records and shuffled != records
    mixed = [
        bytes(r)
        for r in hr.shuffled_records(root + "/train/part-*", buffer_size=16, seed=2, storage_options=options)
    ]
    assert sorted(mixed) == records
    assert [bytes(r) for r in hr.TFRecordDataset(paths[1], storage_options=options).skip(3).take(1)] == [
        records[10]
    ]


def test_gzip_checkpoints_on_s3(s3):
    root, options = s3
    paths = write_shards(
        [b"%d" % i for i in range(24)],
        root + "/gz/part",
        num_shards=2,
        compression_type="GZIP",
        storage_options=options,
    )
    check_checkpoints(
        lambda: hr.TFRecordDataset(paths, "GZIP", num_parallel_reads=2, storage_options=options),
        max_elements=30,
        stride=6,
    )


def test_disk_cache_on_s3(s3, tmp_path, monkeypatch):
    root, options = s3
    monkeypatch.setenv("HEADRACE_MIRROR_DIR", str(tmp_path / "host-a"))
    offset = tmp_path / "offset"  # read at run time: the cache key cannot see it, so it shows reads
    offset.write_text("0")
    name = str(offset)

    def pipeline():
        numbers = hr.Dataset.range(5).map(lambda x: np.full(3, x + int(open(name).read())))
        return numbers.cache(root + "/cache/train.hrcache", storage_options=options)

    assert [int(x[0]) for x in pipeline()] == [0, 1, 2, 3, 4]
    assert fs.exists(root + "/cache/train.hrcache", options)
    offset.write_text("100")
    monkeypatch.setenv("HEADRACE_MIRROR_DIR", str(tmp_path / "host-b"))  # another host downloads it
    assert [int(x[0]) for x in pipeline()] == [0, 1, 2, 3, 4]
    fs.remove(root + "/cache/train.hrcache", options)
    assert [int(x[0]) for x in pipeline()] == [100, 101, 102, 103, 104]


def test_convert_and_cli_on_s3(s3, tmp_path, capsys):
    root, options = s3
    np.save(tmp_path / "x.npy", np.arange(12, dtype=np.int64).reshape(6, 2))
    paths = convert(
        str(tmp_path / "x.npy"),
        root + "/conv/x",
        num_shards=2,
        workers=1,
        index=True,
        storage_options=options,
    )
    assert hr.TFRecordDataset(paths, index="require", storage_options=options).cardinality() == 6
    flags = [
        "--storage-option",
        f"key={KEY}",
        "--storage-option",
        f"secret={SECRET}",
        "--storage-option",
        f"client_kwargs.endpoint_url={options['client_kwargs']['endpoint_url']}",
        "--storage-option",
        "client_kwargs.region_name=us-east-1",
    ]
    assert cli.main(["inspect", paths[0], *flags]) == 0
    out = capsys.readouterr().out
    assert "records: 3" in out and "kind: Example" in out
    assert cli.main(["index", paths[1], "--force", *flags]) == 0
    assert "indexed 3 records" in capsys.readouterr().out
    assert (
        cli.main(
            [
                "convert",
                str(tmp_path / "x.npy"),
                root + "/cli/x",
                "--num-shards",
                "1",
                "--workers",
                "1",
                *flags,
            ]
        )
        == 0
    )
    assert fs.exists(root + "/cli/x-00000-of-00001.tfrecord", options)


def test_missing_objects_and_buckets_name_the_path(s3):
    root, options = s3
    with pytest.raises(FileNotFoundError, match="missing.tfrecord"):
        list(hr.TFRecordDataset(root + "/missing.tfrecord", storage_options=options))
    with pytest.raises(hr.InvalidArgumentError, match="No files matched pattern: s3://"):
        hr.Dataset.list_files(root + "/nothing-*", storage_options=options)


@pytest.mark.slow
def test_a_server_that_goes_away_is_retried_then_named(tmp_path, monkeypatch):
    server, endpoint = _start_server()
    try:
        monkeypatch.setattr(fs, "RETRY_BACKOFF_S", 0.01)
        config = {"connect_timeout": 1, "read_timeout": 1, "retries": {"max_attempts": 1}}
        # No read-ahead: every read is a request, so the reads after the server stops fail.
        options = _server_options(endpoint, config_kwargs=config, default_cache_type="none")
        root = f"s3://{_make_bucket(endpoint)}"
        records = [os.urandom(100_000) for _ in range(8)]
        (path,) = write_shards(records, root + "/big", storage_options=options)
        iterator = iter(hr.TFRecordDataset(path, buffer_size=4096, storage_options=options))
        assert bytes(next(iterator)) == records[0]
    finally:
        server.stop()
    with pytest.raises(
        fs.RemoteReadError,
        match=r"big-00000-of-00001.tfrecord: reading at byte offset \d+ failed after \d+ attempts? over",
    ):
        list(iterator)


_KILLED_WRITER = """
import json, os, signal, socket, sys
from headrace.io.records import writer
prefix, options, host = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
if host:
    socket.gethostname = lambda: host  # as a writer on another machine
publish_file, calls = writer.publish_file, []
def killed_at_the_second_rename(*args, **kwargs):
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return publish_file(*args, **kwargs)
writer.publish_file = killed_at_the_second_rename
writer.write_shards([b"r%d" % i for i in range(30)], prefix, num_shards=3, index=True, storage_options=options)
"""


def _kill_a_writer(prefix: str, options: dict, host: str = "") -> list[str]:
    """Run write_shards in a fresh process on ``host`` (default: this one), SIGKILLed after moving
    the first shard's index, before the shard; return the temporaries it left."""
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, prefix, json.dumps(options), host],
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    return [p for p in fs.list_dir(prefix.rsplit("/", 1)[0], options, fresh=True) if ".incomplete-" in p]


def test_killed_s3_writers_are_reclaimed_here_and_named_when_on_another_host(s3):
    root, options = s3
    prefix, data = root + "/killed/part", [b"r%d" % i for i in range(30)]
    assert len(_kill_a_writer(prefix, options)) == 5  # three shards, two of them with their index
    with pytest.raises(hr.io.ShardSetError, match=r"unfinished temporary .* pid \d+ on this host, has ended"):
        hr.Dataset.list_files(prefix + "-*", storage_options=options)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a dead writer of this host: reclaimed without a word
        paths = write_shards(data, prefix, num_shards=3, index=True, storage_options=options)
    assert not [p for p in fs.list_dir(root + "/killed", options, fresh=True) if ".incomplete-" in p]
    assert sorted(bytes(r) for r in hr.TFRecordDataset(paths, storage_options=options)) == sorted(data)

    left = _kill_a_writer(prefix, options, host="worker-b")
    with pytest.warns(hr.io.ShardSetWarning, match="by host worker-b") as caught:
        with pytest.raises(hr.io.ShardSetError, match=r"pid \d+ on worker-b\) is writing"):
            write_shards(data, prefix, num_shards=3, index=True, storage_options=options)
    assert all(path in str(caught[0].message) for path in left)
    assert sorted(hr.io.reclaim_shards(prefix, storage_options=options, force=True)) == sorted(left)
    paths = write_shards(data, prefix, num_shards=3, index=True, storage_options=options)
    listed = hr.Dataset.list_files(prefix + "-*", shuffle=False, storage_options=options)
    assert sorted(bytes(r) for r in hr.TFRecordDataset(listed, storage_options=options)) == sorted(data)
    assert not [p for p in fs.list_dir(root + "/killed", options, fresh=True) if ".incomplete-" in p]
