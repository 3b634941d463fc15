"""The one-record fast path (io/codec/example_single.py) gives exactly the batch parser's values, dtypes,
shapes and errors: generated specs and records, canonical and not, valid and damaged."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headrace.io import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    Ragged,
    RaggedFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
    serialize_example,
)
from headrace.io.codec.example import (
    encode_feature,
    example_plan,
    length_delimited,
    parse_records,
    unbatch_one,
)
from headrace.io.codec.sparse_feature import SparseFeature

SETTINGS = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
KEYS = ["a", "b", "long_key_\u00e9", ""]
DTYPES = ["float32", "int64", "string"]
SHAPES = [(), (1,), (2,), (2, 3), (0,)]


def batch_parser(records, spec):
    plan, sparse = example_plan(spec)
    return parse_records(records, spec, plan, sparse)


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as exc:  # noqa: BLE001 (the point is to compare any error)
        return "error", type(exc), str(exc)


def assert_same(ours, expected):
    assert type(ours) is type(expected), (ours, expected)
    if isinstance(expected, dict):
        assert list(ours) == list(expected)
        for key in expected:
            assert_same(ours[key], expected[key])
    elif isinstance(expected, Ragged):
        assert_same(ours.values, expected.values)
        assert_same(ours.row_splits, expected.row_splits)
    elif isinstance(expected, np.ndarray):
        assert ours.dtype == expected.dtype and ours.shape == expected.shape
        if expected.dtype == object:
            assert ours.tolist() == expected.tolist()
        else:  # bit for bit: NaN payloads and -0.0 included
            assert ours.tobytes() == expected.tobytes()
        assert ours.flags.writeable
    elif isinstance(expected, np.generic):
        assert ours.dtype == expected.dtype and ours.tobytes() == expected.tobytes()
    else:
        assert ours == expected


def compare(record, spec):
    """parse_single_example and parse_example([record]) against the batch parser."""
    single = outcome(lambda: parse_single_example(record, spec))
    expected = outcome(lambda: {k: unbatch_one(v) for k, v in batch_parser([record], spec).items()})
    assert single[0] == expected[0], (single, expected)
    if expected[0] == "ok":
        assert_same(single[1], expected[1])
    else:
        assert single[1:] == expected[1:]
    batch = outcome(lambda: parse_example([record], spec))
    expected = outcome(lambda: batch_parser([record], spec))
    assert batch[0] == expected[0], (batch, expected)
    if expected[0] == "ok":
        assert_same(batch[1], expected[1])
    else:
        assert batch[1:] == expected[1:]


@st.composite
def values_of(draw, dtype, count):
    if dtype == "float32":
        floats = st.floats(width=32, allow_nan=True, allow_infinity=True)
        return np.array(draw(st.lists(floats, min_size=count, max_size=count)), dtype=np.float32)
    if dtype == "int64":
        ints = st.integers(-(2**63), 2**63 - 1) | st.integers(-5, 300)
        return np.array(draw(st.lists(ints, min_size=count, max_size=count)), dtype=np.int64)
    return draw(st.lists(st.binary(max_size=200), min_size=count, max_size=count))


@st.composite
def spec_and_record(draw):
    keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=4, unique=True))
    spec, record = {}, {}
    for key in keys:
        dtype = draw(st.sampled_from(DTYPES))
        kind = draw(st.sampled_from(["fixed", "var", "ragged"]))
        if kind == "fixed":
            shape = draw(st.sampled_from(SHAPES))
            size = int(np.prod(shape))
            default = None
            if draw(st.booleans()):
                default = draw(values_of(dtype, size)) if size != 1 else draw(values_of(dtype, 1))[0]
                default = np.asarray(default, dtype=object if dtype == "string" else dtype).reshape(shape)
            spec[key] = FixedLenFeature(shape, dtype, default)
            count = size if draw(st.integers(0, 4)) else draw(st.integers(0, 4))
        else:
            spec[key] = VarLenFeature(dtype) if kind == "var" else RaggedFeature(dtype)
            count = draw(st.integers(0, 30))
        presence = draw(st.sampled_from(["present", "present", "present", "absent", "other kind"]))
        if presence == "present":
            record[key] = draw(values_of(dtype, count))
        elif presence == "other kind":
            record[key] = draw(values_of(draw(st.sampled_from(DTYPES)), count))
    for extra in draw(st.lists(st.sampled_from(["x", "y", "zz"]), unique=True)):
        record[extra] = draw(values_of(draw(st.sampled_from(DTYPES)), draw(st.integers(0, 3))))
    return spec, record


def encode(record: dict) -> bytes:
    """serialize_example, keeping typed empty lists typed (an empty string list is a bytes list)."""
    entries = []
    for key, value in record.items():
        if isinstance(value, list):
            feature = length_delimited(0x0A, b"".join(length_delimited(0x0A, v) for v in value))
        else:
            feature = encode_feature(key, value)
        entry = length_delimited(0x0A, key.encode()) + length_delimited(0x12, feature)
        entries.append(length_delimited(0x0A, entry))
    return length_delimited(0x0A, b"".join(entries))


@SETTINGS
@given(spec_and_record())
def test_canonical_records_give_the_batch_parsers_values_and_errors(case):
    spec, record = case
    compare(encode(record), spec)


@SETTINGS
@given(spec_and_record(), st.data())
def test_damaged_records_give_the_batch_parsers_values_and_errors(case, data):
    spec, record = case
    serialized = bytearray(encode(record))
    for _ in range(data.draw(st.integers(1, 3))):
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        position = data.draw(st.integers(0, max(len(serialized) - 1, 0)))
        if action == "flip" and serialized:
            serialized[position] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del serialized[position:]
        else:
            serialized[position:position] = data.draw(st.binary(min_size=1, max_size=3))
    compare(bytes(serialized), spec)


def test_non_canonical_encodings_fall_back_to_the_batch_parser():
    spec = {"f": VarLenFeature("float32"), "i": FixedLenFeature([2], "int64"), "s": VarLenFeature("string")}
    unpacked_floats = length_delimited(0x12, b"\x0d" + np.float32(1.5).tobytes() + b"\x0d" + b"\0\0\0\0")
    unpacked_ints = length_delimited(0x1A, b"\x08\x05\x08\x7f")
    two_runs = length_delimited(0x1A, length_delimited(0x0A, b"\x01") + length_delimited(0x0A, b"\x02"))
    cases = {
        "unpacked": [("f", unpacked_floats), ("i", unpacked_ints), ("s", b"")],
        "two packed runs": [("i", two_runs)],
        "duplicate key, last wins": [("i", encode_feature("i", [1, 2])), ("i", encode_feature("i", [3, 4]))],
        "a Feature with two lists": [("i", encode_feature("i", [1.0]) + encode_feature("i", [3, 4]))],
    }
    for entries in cases.values():
        body = b"".join(
            length_delimited(0x0A, length_delimited(0x0A, k.encode()) + length_delimited(0x12, v))
            for k, v in entries
        )
        for record in (length_delimited(0x0A, body), length_delimited(0x0A, body) + b"\x10\x01"):
            compare(record, spec)
            compare(record, {"i": FixedLenFeature([2], "int64", default_value=[0, 0])})


def test_the_fast_path_parses_canonical_records_itself():
    spec = {
        "image": FixedLenFeature([], "string"),
        "label": FixedLenFeature([], "int64"),
        "x": FixedLenFeature([16], "float32"),
        "v": VarLenFeature("int64"),
        "r": RaggedFeature("float32", value_key="x"),
        "opt": FixedLenFeature([2], "int64", default_value=[7, 8]),
    }
    record = serialize_example(
        {"image": b"\xff" * 5000, "label": -3, "x": np.arange(16, dtype=np.float32), "v": np.arange(-50, 500)}
    )
    plan, _ = example_plan(spec)
    assert plan.single.supported
    fast = plan.single.parse(record, batched=False)
    assert fast is not None  # not a fall back to the batch parser
    assert fast["label"] == -3 and fast["v"].tolist() == list(range(-50, 500))
    assert fast["opt"].tolist() == [7, 8] and fast["r"].tolist() == list(range(16))
    compare(record, spec)
    # a returned default is a fresh array: changing it leaves the next parse alone
    fast["opt"][0] = 99
    assert parse_single_example(record, spec)["opt"].tolist() == [7, 8]


def test_specs_the_fast_path_leaves_to_the_batch_parser():
    record = serialize_example({"v": [1, 2, 3, 4], "ix": [1, 0], "val": [0.5, 1.5]})
    for spec in (
        {"v": FixedLenSequenceFeature([2], "int64", allow_missing=True)},
        {"v": RaggedFeature("int64", partitions=[RaggedFeature.UniformRowLength(2)])},
    ):
        assert not example_plan(spec)[0].single.supported
        compare(record, spec)
    sparse = parse_single_example(record, {"s": SparseFeature("ix", "val", "float32", 3)})["s"]
    assert sparse.indices.tolist() == [[0], [1]] and sparse.values.tolist() == [1.5, 0.5]


def test_a_record_of_very_many_features_goes_to_the_batch_parser():
    record = serialize_example({f"k{i}": i for i in range(200)})
    spec = {"k150": FixedLenFeature([], "int64")}
    assert example_plan(spec)[0].single.parse(record, batched=False) is None
    assert parse_single_example(record, spec)["k150"] == 150


@pytest.mark.parametrize("bad", [b"\x0a", b"\x0a\x05\x0a\x03", b"\xff\xff", b"\x0a\x80"])
def test_malformed_records_raise_the_batch_parsers_error(bad):
    compare(bad, {"a": FixedLenFeature([], "int64", default_value=0)})
    with pytest.raises(Exception, match="record 0 is not a valid serialized tf.train.Example"):
        parse_single_example(bad, {"a": FixedLenFeature([], "int64", default_value=0)})


def test_the_shortcuts_for_fixed_features_read_every_length_form_themselves():
    # one-, two- and three-byte lengths (a 100-byte, a 1 KB and a 20 KB string), multi-byte and negative
    # ints, a float scalar, and shapes of one element other than ()
    spec = {
        "s": FixedLenFeature([], "string"),
        "m": FixedLenFeature([1], "string"),
        "big": FixedLenFeature([1, 1], "string"),
        "i": FixedLenFeature([], "int64"),
        "n": FixedLenFeature([1], "int64"),
        "f": FixedLenFeature([], "float32"),
        "x": FixedLenFeature([40, 2], "float32"),
    }
    for values in [(5, -1, b"a" * 100), (127, 128, b""), (2**63 - 1, -(2**63), b"\x00" * 20000)]:
        record = serialize_example(
            {
                "s": values[2],
                "m": b"m" * 1000,
                "big": b"b" * 20000,
                "i": values[0],
                "n": values[1],
                "f": np.float32(-0.0),
                "x": np.arange(80, dtype=np.float32),
            }
        )
        for batched in (False, True):
            assert example_plan(spec)[0].single.parse(record, batched=batched) is not None
        compare(record, spec)


def test_a_key_over_127_bytes_goes_to_the_batch_parser():
    key = "k" * 200
    record = serialize_example({key: 3})
    spec = {key: FixedLenFeature([], "int64")}
    assert example_plan(spec)[0].single.parse(record, batched=False) is None
    compare(record, spec)
