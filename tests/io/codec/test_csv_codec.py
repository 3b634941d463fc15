"""decode_csv's shortcuts (plain split, record_defaults built once) give what the csv module and a
fresh column_default give: the same fields, values, types and errors."""

import csv

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headrace.core.errors import InvalidArgumentError
from headrace.io import decode_csv
from headrace.io.codec.csv_codec import column_default, record_columns, split_record

SETTINGS = settings(
    max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


def csv_module_fields(text: bytes, field_delim: str, use_quote_delim: bool):
    """The fields as the csv module reads them (the reference the plain split must equal)."""
    quoting = csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE
    try:
        rows = list(csv.reader([text.decode("latin-1")], delimiter=field_delim, quoting=quoting, strict=True))
    except csv.Error as exc:
        return "error", str(exc)
    return "ok", [field.encode("latin-1") for field in rows[0]] if rows else [b""]


@SETTINGS
@given(
    st.lists(st.sampled_from(list(b'a1,;" \t\r\n\x00\xe9') + [b"x"[0]]), max_size=12).map(bytes),
    st.sampled_from([",", ";", "\t", " ", "\xe9"]),
    st.booleans(),
)
def test_split_record_equals_the_csv_module(text, field_delim, use_quote_delim):
    try:
        ours = "ok", split_record(text, field_delim, use_quote_delim, "here")
    except InvalidArgumentError as exc:
        ours = "error", str(exc).removeprefix("here: ")
    assert ours == csv_module_fields(text, field_delim, use_quote_delim)


def test_unusual_delimiters_still_go_to_the_csv_module():
    with pytest.raises(TypeError):  # the csv module's own refusal, as before
        split_record(b"a,b", "ab", True, "here")
    assert split_record(b'"a"b', '"', False, "here") == csv_module_fields(b'"a"b', '"', False)[1]


DEFAULTS = [
    [[0], [0.0], [""], [np.int64(0)]],
    [1, 1.0, 2, "x"],
    [np.int32, "float64", [np.float32(2.5)], (b"d",)],
    [[1], [1.0], [np.int64(1)], [np.float64(1.0)]],
]


@pytest.mark.parametrize("defaults", DEFAULTS)
def test_record_defaults_built_once_equal_fresh_ones(defaults):
    fresh = [column_default(value, i) for i, value in enumerate(defaults)]
    for _ in range(2):
        cached = record_columns(defaults)
        assert [d for d, _ in cached] == [d for d, _ in fresh]
        assert [(type(v), v) for _, v in cached] == [(type(v), v) for _, v in fresh]


def test_record_defaults_that_look_alike_stay_apart():
    # 1, 1.0, np.int64(1) and np.float32(1) are equal as dict keys; each still gets its own columns
    for value, name in [(1, "int32"), (1.0, "float32"), (np.int64(1), "int64"), (np.float32(1), "float32")]:
        (dtype, default), *_ = record_columns([value])
        assert dtype.name == name and type(default) is dtype.type
    with pytest.raises(InvalidArgumentError, match="record_defaults\\[0\\] is an empty list"):
        record_columns([[]])
    with pytest.raises(InvalidArgumentError, match="record_defaults\\[0\\]=\\{\\} is not allowed"):
        record_columns([{}])  # unhashable: built without the cache, same error


def test_one_record_gives_the_scalars_of_a_batch_row():
    defaults = [[0], [0.0], [""], [np.int64(-1)], [np.float64(0)]]
    one = decode_csv(b"17,2.5,hello,,1e300", defaults)
    batch = decode_csv(np.array(b"17,2.5,hello,,1e300", dtype=object), defaults)
    rows = decode_csv([b"17,2.5,hello,,1e300"], defaults)
    for value, scalar, row in zip(one, batch, rows):
        assert type(value) is type(scalar) is type(row[0]) and value == scalar == row[0]
    assert one[3] == -1 and isinstance(one[3], np.int64)
    assert decode_csv("a;b", [[""], [""]], field_delim=";") == [b"a", b"b"]
    with pytest.raises(
        InvalidArgumentError, match="decode_csv: record 0 column 0: field b'x' is not a valid int32"
    ):
        decode_csv(b"x,1", [[0], [0]])
    with pytest.raises(InvalidArgumentError, match="decode_csv: record 1: expected 2 fields"):
        decode_csv([b"1,2", b"1,2,3"], [[0], [0]])
    with pytest.raises(InvalidArgumentError, match="field b'3000000000' is not a valid int32"):
        decode_csv(b"3000000000", [[0]])


def outcome(fn):
    try:
        return "ok", [(type(v), v) for v in fn()]
    except InvalidArgumentError as exc:
        return "error", str(exc)


@SETTINGS
@given(
    st.lists(st.sampled_from([b"", b"1", b"-7", b"2.5", b"x", b"NA", b'"q"', b"1e400", b"\n"]), max_size=5),
    st.sampled_from(DEFAULTS[:2] + [[np.int32, [""], [0.0], [np.int64(5)]]]),
    st.sampled_from(["", "NA"]),
)
def test_one_record_shortcut_equals_a_batch_row(fields, defaults, na_value):
    # the shortcut (a plain split, every field present and valid) against the batch path's row 0
    text = b",".join(fields)
    one = outcome(lambda: decode_csv(text, defaults, na_value=na_value))
    row = outcome(lambda: [column[0] for column in decode_csv([text], defaults, na_value=na_value)])
    assert one == row
