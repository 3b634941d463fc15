import numpy as np
import pytest

import headrace as hr
from headrace.io import decode_raw, parse_tensor, serialize_tensor


@pytest.mark.parametrize(
    "value",
    [
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array(7, dtype=np.int64),
        np.array([True, False]),
        np.zeros((0, 4), np.uint8),
        np.array([b"a", b"", b"\xff"], dtype=object),
        np.array([1 + 2j], np.complex64),
    ],
)
def test_serialize_parse_round_trip(value):
    back = parse_tensor(serialize_tensor(value), value.dtype if value.dtype != object else "string")
    assert back.dtype == value.dtype and back.shape == value.shape and back.tolist() == value.tolist()


def test_serialized_bytes_match_tensorflow():
    # Bytes as tf.io.serialize_tensor writes them (TensorProto: dtype, shape, tensor_content / string_val).
    assert serialize_tensor(np.array(5, np.int32)).hex() == "080312002204" + "05000000"
    assert serialize_tensor(np.array([b"ab"], dtype=object)).hex() == "08071204120208014202" + "6162"
    assert serialize_tensor(np.zeros((0,), np.float32)).hex() == "0801" + "12021200"  # size-0 dim: empty Dim


def test_parse_tensor_reads_repeated_value_fields_and_refuses_mismatches():
    # dtype int64, shape [3], int64_val packed [1, 2] -> the last value fills the rest (TensorProto's rule)
    data = (
        bytes.fromhex("0809") + bytes.fromhex("12041202") + bytes.fromhex("0803") + bytes.fromhex("52020102")
    )
    assert parse_tensor(data, "int64").tolist() == [1, 2, 2]
    with pytest.raises(hr.InvalidArgumentError, match="out_type"):
        parse_tensor(serialize_tensor(np.arange(2)), "int32")
    with pytest.raises(hr.InvalidArgumentError, match="not a TensorProto"):
        parse_tensor(b"\x0a\xff", "int32")


def test_decode_raw():
    assert decode_raw(b"\x01\x00\x00\x01", "uint16").tolist() == [1, 256]
    assert decode_raw(b"\x01\x00\x00\x01", hr.uint16, little_endian=False).tolist() == [256, 1]
    records = np.array([b"abc", b"d"], dtype=object)
    assert decode_raw(records, "uint8", fixed_length=2).tolist() == [[97, 98], [100, 0]]
    with pytest.raises(hr.InvalidArgumentError, match="different lengths"):
        decode_raw(records, "uint8")
    with pytest.raises(hr.InvalidArgumentError, match="whole number"):
        decode_raw(b"abc", "int16")
    assert decode_raw(b"", "float32").shape == (0,)
