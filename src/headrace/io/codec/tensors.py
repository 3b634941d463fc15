"""``tf.io.serialize_tensor`` / ``parse_tensor`` (TensorProto bytes, byte-compatible with TensorFlow)
and ``tf.io.decode_raw``.

>>> import numpy as np
>>> data = serialize_tensor(np.arange(3, dtype=np.int32))
>>> data.hex()
'0803120412020803220c000000000100000002000000'
>>> parse_tensor(data, "int32").tolist()
[0, 1, 2]
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ...core.errors import InvalidArgumentError
from ...core.spec import as_dtype, string, to_array
from ...core.trace_hook import traceable
from .example import _varint, length_delimited  # the one protobuf encoder of the package
from .schema import NotAMessage, fields
from .schema import _varint as _read_varint  # the package's one protobuf decoder

#: TensorFlow's DataType enum values for the dtypes numpy has.
DATA_TYPES: dict[np.dtype, int] = {
    np.dtype(np.float32): 1,
    np.dtype(np.float64): 2,
    np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4,
    np.dtype(np.int16): 5,
    np.dtype(np.int8): 6,
    string: 7,
    np.dtype(np.complex64): 8,
    np.dtype(np.int64): 9,
    np.dtype(np.bool_): 10,
    np.dtype(np.uint16): 17,
    np.dtype(np.complex128): 18,
    np.dtype(np.float16): 19,
    np.dtype(np.uint32): 22,
    np.dtype(np.uint64): 23,
}
DTYPES = {code: dtype for dtype, code in DATA_TYPES.items()}
#: TensorProto's repeated value fields (used by tensors TensorFlow did not write with tensor_content).
_VALUE_FIELDS = {
    5: "float32",
    6: "float64",
    7: "int32",
    10: "int64",
    11: "bool",
    13: "float16",
    16: "uint32",
    17: "uint64",
}


def serialize_tensor(tensor: Any) -> bytes:
    """``tensor`` as a serialized TensorProto, the bytes ``tf.io.serialize_tensor`` gives."""
    array = to_array(tensor)
    code = DATA_TYPES.get(array.dtype)
    if code is None:
        raise InvalidArgumentError(f"serialize_tensor: dtype {array.dtype} has no TensorFlow DataType")
    # A Dim's size 0 is proto3's default, so it is left out (an empty Dim), as TensorFlow writes it.
    shape = b"".join(length_delimited(0x12, b"\x08" + _varint(size) if size else b"") for size in array.shape)
    out = [b"\x08" + _varint(code), length_delimited(0x12, shape)]
    if array.dtype == string:
        for value in array.ravel():
            item = value.encode() if isinstance(value, str) else bytes(value)
            out.append(length_delimited(0x42, item))
    elif array.size:
        out.append(
            length_delimited(0x22, np.ascontiguousarray(array, array.dtype.newbyteorder("<")).tobytes())
        )
    return b"".join(out)


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> np.ndarray:
    """The array a serialized TensorProto holds; ``out_type`` must be its dtype (as TensorFlow)."""
    data = serialized.item() if isinstance(serialized, np.ndarray) and serialized.shape == () else serialized
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidArgumentError(f"parse_tensor needs bytes, got {type(serialized).__name__}")
    want = as_dtype(out_type)
    try:
        message = fields(bytes(data))
        code, shape, content, strings, values = 0, [], None, [], []
        for field, wire, value in message:
            if field == 1 and wire == 0:
                code = value
            elif field == 2 and wire == 2:
                shape = [
                    next((v for f, w, v in fields(dim) if f == 1 and w == 0), 0)
                    for f, w, dim in fields(value)
                    if f == 2 and w == 2
                ]
            elif field == 4 and wire == 2:
                content = value
            elif field == 8 and wire == 2:
                strings.append(value)
            elif field in _VALUE_FIELDS:
                values.append((field, wire, value))
    except NotAMessage as exc:
        raise InvalidArgumentError(f"parse_tensor: the bytes are not a TensorProto ({exc})") from None
    dtype = DTYPES.get(code)
    if dtype is None:
        raise InvalidArgumentError(f"parse_tensor: unsupported TensorFlow DataType {code}")
    if dtype != want:
        raise InvalidArgumentError(
            f"parse_tensor: the tensor has dtype {_name(dtype)}, but out_type is {_name(want)}"
        )
    count = int(np.prod(shape, dtype=np.int64))
    if dtype == string:
        flat = np.empty(len(strings), dtype=object)
        flat[:] = strings
    elif content is not None:
        if len(content) != count * dtype.itemsize:
            raise InvalidArgumentError(
                f"parse_tensor: {len(content)} content bytes do not fill shape {shape} of {_name(dtype)}"
            )
        flat = np.frombuffer(content, dtype.newbyteorder("<")).astype(dtype)
    else:
        flat = _repeated_values(values, dtype)
    if flat.size != count:
        if flat.size == 0 or flat.size > count:
            raise InvalidArgumentError(f"parse_tensor: {flat.size} values do not fill shape {shape}")
        flat = np.concatenate([flat, np.repeat(flat[-1:], count - flat.size)])  # TensorProto's fill rule
    return flat.reshape(shape)


def _repeated_values(values: list, dtype: np.dtype) -> np.ndarray:
    numbers: list = []
    for field, wire, value in values:
        kind = np.dtype(_VALUE_FIELDS[field])
        if wire == 2:  # packed
            if kind.kind == "f" and kind.itemsize in (4, 8):
                numbers.extend(np.frombuffer(value, kind.newbyteorder("<")).tolist())
            else:
                p = 0
                while p < len(value):
                    number, p = _read_varint(value, p)
                    numbers.append(number)
        elif wire == 0:
            numbers.append(value)
        else:
            numbers.extend(np.frombuffer(value, np.dtype("<f4" if wire == 5 else "<f8")).tolist())
    if dtype == np.float16 and numbers and isinstance(numbers[0], int):
        return np.array(numbers, np.uint16).view(np.float16)
    array = np.array(numbers, dtype=np.uint64 if dtype.kind in "iu" else None)
    return array.astype(np.int64).astype(dtype) if dtype.kind == "i" else array.astype(dtype)


@functools.lru_cache(maxsize=64)
def _raw_dtypes(out_type: Any, little_endian: bool) -> tuple[np.dtype, np.dtype]:
    """``decode_raw``'s dtype of the bytes and of the result, resolved once per ``out_type``."""
    dtype = as_dtype(out_type)
    if dtype == string or dtype.kind not in "iufcb":
        raise InvalidArgumentError(f"decode_raw: out_type={out_type!r} is not a numeric dtype")
    dtype = dtype.newbyteorder("<" if little_endian else ">")
    return dtype, dtype.newbyteorder("=")


def _name(dtype: np.dtype) -> str:
    return "string" if dtype == string else dtype.name


@traceable("io.decode_raw")
def decode_raw(
    input_bytes: Any,
    out_type: Any,
    little_endian: bool = True,
    fixed_length: int | None = None,
    name: str | None = None,
) -> np.ndarray:
    """Reinterpret bytes as numbers, as ``tf.io.decode_raw``: one record gives a 1-d array, an array of
    records a stacked one (all records the same length, or padded/cut to ``fixed_length`` bytes).

    >>> decode_raw(b"\\x01\\x00\\x02\\x00", "uint16").tolist()
    [1, 2]
    >>> decode_raw(np.array([b"ab", b"cd"], dtype=object), "uint8").tolist()
    [[97, 98], [99, 100]]
    """
    try:
        dtype, native = _raw_dtypes(out_type, bool(little_endian))
    except TypeError:  # unhashable out_type: resolve (and refuse) it without the cache
        dtype, native = _raw_dtypes.__wrapped__(out_type, bool(little_endian))
    if fixed_length is not None and (not isinstance(fixed_length, int) or fixed_length < 0):
        raise InvalidArgumentError(f"decode_raw: fixed_length={fixed_length!r} is not an int >= 0")
    if type(input_bytes) is bytes and fixed_length is None and not len(input_bytes) % dtype.itemsize:
        return np.frombuffer(input_bytes, dtype).astype(native)  # one record, the common case

    def one(record: Any) -> np.ndarray:
        data = record.encode() if isinstance(record, str) else bytes(record)
        if fixed_length is not None:
            data = data[:fixed_length].ljust(fixed_length, b"\0")
        if len(data) % dtype.itemsize:
            raise InvalidArgumentError(
                f"decode_raw: a record of {len(data)} bytes is not a whole number of {dtype.itemsize}-byte "
                f"{dtype.name} values"
            )
        return np.frombuffer(data, dtype).astype(native)

    if isinstance(input_bytes, (bytes, bytearray, memoryview, str)):
        return one(input_bytes)
    records = np.asarray(input_bytes, dtype=object)
    if records.shape == ():
        return one(records.item())
    rows = [one(r) for r in records.ravel()]
    if len({row.size for row in rows}) > 1:
        raise InvalidArgumentError(
            "decode_raw: records have different lengths; give fixed_length to pad or cut them to one length"
        )
    size = rows[0].size if rows else 0
    return np.stack(rows).reshape(*records.shape, size) if rows else np.empty((*records.shape, 0), dtype)
