import gzip

import pytest

import headrace as hr
from headrace.readers import FixedLengthRecordDataset
from tests.helpers.checkpoint import check_checkpoints


def write(path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_records_between_header_and_footer(tmp_path):
    path = write(tmp_path / "r", b"HH" + b"".join(b"%03d" % i for i in range(50)) + b"FFF")
    ds = FixedLengthRecordDataset(path, 3, header_bytes=2, footer_bytes=3, buffer_size=5)
    assert list(ds) == [b"%03d" % i for i in range(50)]
    assert list(FixedLengthRecordDataset(write(tmp_path / "e", b"HF"), 4, 1, 1)) == []


def test_compressed_and_several_files(tmp_path):
    a = write(tmp_path / "a.gz", gzip.compress(b"aabbcc"))
    b = write(tmp_path / "b.gz", gzip.compress(b"ddee"))
    assert list(FixedLengthRecordDataset([a, b], 2, compression_type="GZIP")) == [
        b"aa",
        b"bb",
        b"cc",
        b"dd",
        b"ee",
    ]


def test_a_partial_record_is_data_loss(tmp_path):
    path = write(tmp_path / "r", b"aabbc")
    ds = FixedLengthRecordDataset(path, 2)
    it = iter(ds)
    assert [next(it), next(it)] == [b"aa", b"bb"]
    with pytest.raises(hr.DataLossError, match="1 bytes are left over"):
        next(it)
    with pytest.raises(hr.DataLossError, match="header"):
        list(FixedLengthRecordDataset(write(tmp_path / "s", b"ab"), 1, header_bytes=5))


def test_bad_arguments():
    for kwargs in ({"record_bytes": 0}, {"record_bytes": 2, "header_bytes": -1}, {"record_bytes": "2"}):
        with pytest.raises(hr.InvalidArgumentError):
            FixedLengthRecordDataset("x", **kwargs)


def test_checkpoints(tmp_path):
    path = write(tmp_path / "r", b"H" + bytes(range(40)))
    check_checkpoints(lambda: FixedLengthRecordDataset(path, 4, header_bytes=1))
