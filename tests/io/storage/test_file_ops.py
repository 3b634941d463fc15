import os

import numpy as np
import pytest

import headrace as hr
from headrace.io import TFRecordOptions, decode_csv, matching_files, read_file, write_file


def test_read_write_and_match(tmp_path):
    write_file(str(tmp_path / "sub" / "b.txt"), "héllo")
    write_file(str(tmp_path / "sub" / "a.txt"), np.array(b"x", dtype=object))
    assert read_file(str(tmp_path / "sub" / "b.txt")) == "héllo".encode()
    found = matching_files(str(tmp_path / "sub" / "*.txt"))
    assert [os.path.basename(p) for p in found] == [b"a.txt", b"b.txt"] and found.dtype == object
    assert len(matching_files([str(tmp_path / "sub" / "a*"), str(tmp_path / "sub" / "*.txt")])) == 2
    assert len(matching_files(str(tmp_path / "none*"))) == 0
    with pytest.raises(FileNotFoundError, match="nope"):
        read_file(str(tmp_path / "nope"))
    with pytest.raises(hr.InvalidArgumentError):
        write_file(str(tmp_path / "c"), 3)


def test_tfrecord_options_work_as_compression_type(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with hr.io.TFRecordWriter(path, TFRecordOptions("GZIP")) as writer:
        writer.write(b"x")
    assert list(hr.TFRecordDataset(path, compression_type=TFRecordOptions(compression_type="GZIP"))) == [b"x"]
    assert TFRecordOptions.get_compression_type_string(TFRecordOptions("ZLIB")) == "ZLIB"
    with pytest.raises(hr.InvalidArgumentError):
        TFRecordOptions("LZ4")


def test_decode_csv():
    records = np.array([[b'1,"a,b",2.5'], [b",c,"]], dtype=object)
    a, b, c = decode_csv(records, [[0], [""], [-1.0]])
    assert a.shape == (2, 1) and a.ravel().tolist() == [1, 0] and a.dtype == np.int32
    assert b.ravel().tolist() == [b"a,b", b"c"] and c.ravel().tolist() == [2.5, -1.0]
    (only,) = decode_csv("x;7", [hr.int64], field_delim=";", select_cols=[1])
    assert only.tolist() == 7
    # One record gives scalars, as parse_single_example: what a map over TextLineDataset lines returns.
    number, text = decode_csv(b"5,x", [0, ""])
    assert type(number) is np.int32 and number == 5 and text == b"x"
    with pytest.raises(hr.InvalidArgumentError, match="no default"):
        decode_csv([b","], [hr.int64, ""])
    with pytest.raises(hr.InvalidArgumentError, match="expected 2 fields"):
        decode_csv([b"1"], [0, 0])
