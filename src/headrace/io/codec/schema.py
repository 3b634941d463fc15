"""Looking inside records without a spec: decode an Example into plain values and infer a feature
spec from a sample, for ``headrace inspect``. Plain Python: meant for a few hundred records.

>>> from headrace.io.codec.example import serialize_example
>>> records = [serialize_example({"x": [1.0, 2.0], "tags": [b"a"] * n}) for n in (1, 2)]
>>> decode_example(records[0])
{'x': ('float', [1.0, 2.0]), 'tags': ('bytes', [b'a'])}
>>> infer_schema(records)
{'x': FixedLenFeature(shape=(2,), dtype=float32, default_value=None), 'tags': VarLenFeature(dtype=string)}
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

from .features import FixedLenFeature, VarLenFeature

_KINDS = {1: "bytes", 2: "float", 3: "int64"}
_DTYPES = {"bytes": "string", "float": "float32", "int64": "int64"}


class NotAMessage(ValueError):
    """The bytes are not the protobuf message they were read as."""


def _varint(data: bytes, p: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if p >= len(data) or shift > 63:
            raise NotAMessage("cut-off varint")
        byte = data[p]
        p += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, p
        shift += 7


def fields(data: bytes) -> list[tuple[int, int, Any]]:
    """Top-level ``(field number, wire type, value)`` of a protobuf message; LEN values as bytes."""
    out = []
    p = 0
    value: int | bytes
    while p < len(data):
        tag, p = _varint(data, p)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            value, p = _varint(data, p)
        elif wire == 1:
            value, p = data[p : p + 8], p + 8
        elif wire == 2:
            size, p = _varint(data, p)
            if size > len(data) - p:
                raise NotAMessage("length past the end")
            value, p = data[p : p + size], p + size
        elif wire == 5:
            value, p = data[p : p + 4], p + 4
        else:
            raise NotAMessage(f"wire type {wire}")
        if p > len(data):
            raise NotAMessage("field past the end")
        out.append((field, wire, value))
    return out


def decode_feature(data: bytes) -> tuple[str, list]:
    """``(kind, values)`` of a serialized Feature; kind is "bytes", "float", "int64" or "none"."""
    kind, payload = "none", b""
    for field, wire, value in fields(data):
        if field in _KINDS and wire == 2:
            kind, payload = _KINDS[field], value
    values: list = []
    if kind == "none":
        return kind, values
    for field, wire, value in fields(payload):
        if field != 1:
            continue
        if kind == "bytes" and wire == 2:
            values.append(value)
        elif kind == "float" and wire == 2:
            if len(value) % 4:
                raise NotAMessage("packed floats of odd size")
            values.extend(struct.unpack(f"<{len(value) // 4}f", value))
        elif kind == "float" and wire == 5:
            values.append(struct.unpack("<f", value)[0])
        elif kind == "int64" and wire == 2:
            p = 0
            while p < len(value):
                number, p = _varint(value, p)
                values.append(number - (1 << 64) if number >= 1 << 63 else number)
        elif kind == "int64" and wire == 0:
            values.append(value - (1 << 64) if value >= 1 << 63 else value)
    return kind, values


def _decode_map(data: bytes) -> dict[str, bytes]:
    out = {}
    for field, wire, entry in fields(data):
        if field != 1 or wire != 2:
            continue
        key, value = b"", b""
        for f, w, v in fields(entry):
            if f == 1 and w == 2:
                key = v
            elif f == 2 and w == 2:
                value = v
        out[key.decode("utf-8", "replace")] = value
    return out


def decode_example(record: bytes) -> dict[str, tuple[str, list]]:
    """A serialized Example as ``{key: (kind, values)}`` (raises :class:`NotAMessage` if it is not one)."""
    features: dict[str, bytes] = {}
    for field, wire, value in fields(record):
        if field == 1 and wire == 2:
            features.update(_decode_map(value))
        elif field != 1:
            raise NotAMessage(f"field {field} is not part of an Example")
    return {key: decode_feature(value) for key, value in features.items()}


def decode_sequence_example(record: bytes) -> tuple[dict, dict[str, list[tuple[str, list]]]]:
    """``(context, feature_lists)`` of a serialized SequenceExample."""
    context: dict = {}
    lists: dict = {}
    for field, wire, value in fields(record):
        if field == 1 and wire == 2:
            context.update({k: decode_feature(v) for k, v in _decode_map(value).items()})
        elif field == 2 and wire == 2:
            for key, body in _decode_map(value).items():
                lists[key] = [decode_feature(v) for f, w, v in fields(body) if f == 1 and w == 2]
        else:
            raise NotAMessage(f"field {field} is not part of a SequenceExample")
    return context, lists


def record_kind(records: Iterable[bytes]) -> str:
    """ "Example", "SequenceExample" or "raw" for a sample of records."""
    kind = "Example"
    count = 0
    for record in records:
        count += 1
        try:
            top = fields(record)
        except NotAMessage:
            return "raw"
        if any(f == 2 and w == 2 for f, w, _ in top):
            kind = "SequenceExample"
        if any(f not in (1, 2) or w != 2 for f, w, _ in top):
            return "raw"
        try:
            decode_sequence_example(record) if kind == "SequenceExample" else decode_example(record)
        except (NotAMessage, UnicodeDecodeError):
            return "raw"
    return kind if count else "raw"


def infer_schema(records: Iterable[bytes]) -> dict[str, Any]:
    """A feature spec that parses every record of the sample: FixedLenFeature where a key is in every
    record with the same number of values, VarLenFeature otherwise (keys holding several kinds of
    values are left out)."""
    kinds: dict[str, str] = {}
    counts: dict[str, set] = {}
    present: dict[str, int] = {}
    total = 0
    for record in records:
        total += 1
        for key, (kind, values) in decode_example(record).items():
            known = kinds.get(key, "none")
            kinds[key] = kind if known == "none" else known if kind in ("none", known) else "mixed"
            counts.setdefault(key, set()).add(len(values))
            present[key] = present.get(key, 0) + 1
    out: dict[str, Any] = {}
    for key, kind in kinds.items():
        if kind in ("mixed", "none"):
            continue
        if len(counts[key]) == 1 and present[key] == total:
            count = next(iter(counts[key]))
            out[key] = FixedLenFeature([] if count == 1 else [count], _DTYPES[kind])
        else:
            out[key] = VarLenFeature(_DTYPES[kind])
    return out
