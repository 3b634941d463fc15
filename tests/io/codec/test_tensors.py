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


@pytest.mark.parametrize("out_type", ["uint16", np.float32, hr.int64, "complex64", np.dtype("float64")])
@pytest.mark.parametrize("little_endian", [True, False])
def test_decode_raw_of_one_record_equals_a_row_of_a_batch(out_type, little_endian):
    data = np.random.default_rng(3).integers(0, 256, 64, dtype=np.uint8).tobytes()
    for _ in range(2):  # the second call takes the dtypes resolved by the first
        one = decode_raw(data, out_type, little_endian=little_endian)
        row = decode_raw(np.array([data], dtype=object), out_type, little_endian=little_endian)[0]
        assert one.dtype == row.dtype and one.dtype.isnative and one.flags.writeable and one.flags.owndata
        assert one.tobytes() == row.tobytes()
    with pytest.raises(hr.InvalidArgumentError, match="out_type='string' is not a numeric dtype"):
        decode_raw(data, "string")
    with pytest.raises(hr.InvalidArgumentError, match=r"dtype=\['int8'\] is not a dtype"):  # unhashable
        decode_raw(data, ["int8"])
