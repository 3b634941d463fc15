import os
import pathlib

import numpy as np
import pytest

from headrace.core.errors import InvalidArgumentError
from headrace.io.storage import fs


def test_as_path_accepts_the_usual_spellings(tmp_path):
    assert fs.as_path(pathlib.Path("/a/b")) == "/a/b"
    assert (
        fs.as_path(b"/a/b") == "/a/b"
        and fs.as_path(np.array(b"/a")) == "/a"
        and fs.as_path(np.str_("x")) == "x"
    )
    assert fs.as_path("file:///tmp/x") == "/tmp/x"
    for bad in ("", b"", 3, None):
        with pytest.raises(InvalidArgumentError):
            fs.as_path(bad)
    # bytes that are not UTF-8 name the file the OS would open (os.fsdecode), as list_files gives them
    assert fs.as_path(b"/d/\xff.tfrecord") == os.fsdecode(b"/d/\xff.tfrecord")


def test_a_file_name_that_is_not_utf8_is_read(tmp_path):
    import headrace as hr
    from headrace.io import TFRecordWriter

    name = os.path.join(os.fsencode(tmp_path), b"caf\xe9.tfrecord")  # Latin-1, not UTF-8
    try:
        with TFRecordWriter(os.fsdecode(name)) as writer:
            writer.write(b"record")
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    files = hr.Dataset.list_files(os.path.join(os.fsencode(tmp_path), b"*.tfrecord"), shuffle=False)
    assert [bytes(f) for f in files] == [name]
    assert [bytes(r) for r in hr.data.TFRecordDataset(files)] == [b"record"]
    assert [bytes(r) for r in hr.data.TFRecordDataset([name])] == [b"record"]


def test_is_url():
    assert fs.is_url("s3://bucket/key") and fs.is_url("memory://x") and fs.is_url("gcs+x://y")
    assert not fs.is_url("/local/path") and not fs.is_url("relative/a://b") and not fs.is_url("C:\\data")


def test_local_and_memory_operations(tmp_path):
    pytest.importorskip("fsspec")
    for root in (str(tmp_path), "memory://fs-test"):
        path = root + "/dir/a.bin"
        fs.make_parent_dirs(path)
        with fs.open_file(path, "wb") as f:
            f.write(b"12345")
        assert fs.exists(path) and fs.file_size(path) == 5 and fs.is_dir(root + "/dir")
        fs.replace(path, root + "/dir/b.bin")
        assert not fs.exists(path) and [os.path.basename(p) for p in fs.list_dir(root + "/dir")] == ["b.bin"]
        assert fs.modified_ns(root + "/dir/b.bin") is None or fs.modified_ns(root + "/dir/b.bin") > 0
        fs.remove(root + "/dir/b.bin")
        assert not fs.exists(root + "/dir/b.bin")
