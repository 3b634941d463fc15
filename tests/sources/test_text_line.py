import gzip
import zlib

import pytest

import headrace as hr
from headrace.readers import TextLineDataset
from tests.helpers.checkpoint import check_checkpoints


def write(path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_lines_as_tf_gives_them(tmp_path):
    # tf.data strips "\n" and every "\r", keeps empty lines, yields a last line without "\n".
    path = write(tmp_path / "a.txt", b"a\r\nb\n\nc\rd")
    assert list(TextLineDataset(path)) == [b"a", b"b", b"", b"cd"]
    assert list(TextLineDataset(write(tmp_path / "e.txt", b""))) == []
    assert list(TextLineDataset(write(tmp_path / "n.txt", b"x\n"))) == [b"x"]
    assert TextLineDataset(path).element_spec == hr.TensorSpec((), "string")


def test_several_files_in_order_and_interleaved(tmp_path):
    a = write(tmp_path / "a.txt", b"a1\na2\na3\n")
    b = write(tmp_path / "b.txt", b"b1\nb2\n")
    assert list(TextLineDataset([a, b])) == [b"a1", b"a2", b"a3", b"b1", b"b2"]
    assert list(TextLineDataset([a, b], num_parallel_reads=2)) == [b"a1", b"b1", b"a2", b"b2", b"a3"]
    assert list(TextLineDataset(hr.Dataset.from_tensor_slices([b, a]))) == [b"b1", b"b2", b"a1", b"a2", b"a3"]


@pytest.mark.parametrize(("kind", "compress"), [("GZIP", gzip.compress), ("ZLIB", zlib.compress)])
def test_compressed_files(tmp_path, kind, compress):
    lines = [b"line %d" % i for i in range(1000)]
    path = write(tmp_path / "c", compress(b"\n".join(lines)))
    assert list(TextLineDataset(path, compression_type=kind, buffer_size=7)) == lines


def test_missing_file_and_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        list(TextLineDataset(str(tmp_path / "nope.txt")))
    with pytest.raises(hr.InvalidArgumentError, match="compression_type"):
        TextLineDataset("x", compression_type="LZ4")
    with pytest.raises(hr.InvalidArgumentError, match="filenames"):
        TextLineDataset(3)


def test_checkpoints(tmp_path):
    a = write(tmp_path / "a.txt", b"".join(b"a%d\n" % i for i in range(13)))
    b = write(tmp_path / "b.txt", gzip.compress(b"".join(b"b%d\n" % i for i in range(7))))
    check_checkpoints(lambda: TextLineDataset(a))
    check_checkpoints(lambda: TextLineDataset(a).concatenate(TextLineDataset(b, "GZIP")))
    check_checkpoints(lambda: TextLineDataset([a, a], num_parallel_reads=2))
