import os

import pytest

from headrace.io import (
    FixedLenFeature,
    VarLenFeature,
    serialize_example,
    serialize_sequence_example,
    tf_record_iterator,
)
from headrace.io.codec.schema import (
    NotAMessage,
    decode_example,
    decode_sequence_example,
    infer_schema,
    record_kind,
)


def test_decode_matches_what_was_serialized():
    record = serialize_example({"f": [0.5, -2.0], "i": [-5, 2**40], "b": [b"x", b""], "e": []})
    assert decode_example(record) == {
        "f": ("float", [0.5, -2.0]),
        "i": ("int64", [-5, 2**40]),
        "b": ("bytes", [b"x", b""]),
        "e": ("none", []),
    }
    context, lists = decode_sequence_example(serialize_sequence_example({"c": 1}, {"s": [[1], [2, 3]]}))
    assert context == {"c": ("int64", [1])} and lists == {"s": [("int64", [1]), ("int64", [2, 3])]}
    with pytest.raises(NotAMessage):
        decode_example(b"\x0a\xff\x01")


def test_infer_schema_and_kind(golden_dir):
    records = [serialize_example({"a": 1, "v": [1.0] * n, "s": b"x"}) for n in (1, 2)] + [
        serialize_example({"a": 2})
    ]
    assert {k: repr(v) for k, v in infer_schema(records).items()} == {
        "a": repr(FixedLenFeature([], "int64")),
        "v": repr(VarLenFeature("float32")),
        "s": repr(VarLenFeature("string")),
    }
    assert record_kind(records) == "Example"
    assert record_kind(tf_record_iterator(os.path.join(golden_dir, "sequence.tfrecord"))) == "SequenceExample"
    assert record_kind(tf_record_iterator(os.path.join(golden_dir, "raw.tfrecord"))) == "raw"
    assert record_kind([]) == "raw"
