"""CSV fields as typed values (tf.data's rules), shared by ``CsvDataset`` and ``tf.io.decode_csv``.

>>> import numpy as np
>>> a, b = decode_csv(np.array([b"1,x", b",y"], dtype=object), [[-1], [""]])
>>> a.tolist(), b.tolist()
([1, -1], [b'x', b'y'])
"""

from __future__ import annotations

import csv
import functools
from typing import Any, Literal

import numpy as np

from ...core.errors import InvalidArgumentError
from ...core.spec import as_dtype, string

#: the column types tf.data's CsvDataset allows.
CSV_DTYPES = tuple(np.dtype(t) for t in ("int32", "int64", "float32", "float64")) + (string,)


def column_default(value: Any, index: int) -> tuple[np.dtype, Any]:
    """``(dtype, default)`` of one entry of ``record_defaults``: a dtype (the field is required, default
    None) or a value (used when the field is empty or ``na_value``); a one-element list counts as its
    value and an empty list as "required", as tf.data's tensors do."""
    if isinstance(value, (list, tuple, np.ndarray)) and np.ndim(value) == 1 and len(value) <= 1:
        value = value[0] if len(value) else None
        if value is None:
            raise InvalidArgumentError(
                f"record_defaults[{index}] is an empty list: give a dtype (required) or a default value"
            )
    default: Any  # None (a required field), bytes or a numpy scalar
    if isinstance(value, (np.dtype, type)) or (isinstance(value, str) and value in _DTYPE_NAMES):
        dtype = as_dtype(value)
        default = None
    else:
        if isinstance(value, bool):
            value = None
        if isinstance(value, str):
            value = value.encode()
        if isinstance(value, bytes):
            dtype, default = string, value
        elif isinstance(value, (int, float, np.integer, np.floating)):
            array = np.asarray(value)
            dtype = np.dtype(np.int32) if isinstance(value, int) else array.dtype
            if isinstance(value, float):
                dtype = np.dtype(np.float32)
            default = array.astype(dtype)[()]
        else:
            raise InvalidArgumentError(
                f"record_defaults[{index}]={value!r} is not allowed: a dtype (int32, int64, float32, float64, "
                "string) for a required column, or a default value of one of those types"
            )
    if dtype not in CSV_DTYPES:
        raise InvalidArgumentError(
            f"record_defaults[{index}] has dtype {dtype}: CsvDataset columns are int32, int64, float32, "
            "float64 or string"
        )
    return dtype, default


_DTYPE_NAMES = ("int32", "int64", "float32", "float64", "string")


def _converter(dtype: np.dtype) -> Any:
    """``text -> dtype number`` raising ValueError when the text is not one (or out of an int's range)."""
    converter = _CONVERTERS.get(dtype)
    if converter is None:
        cast = dtype.type
        if dtype.kind == "i":
            info = np.iinfo(dtype)
            low, high = int(info.min), int(info.max)

            def converter(text: bytes) -> Any:
                value = int(text)
                if not low <= value <= high:
                    raise ValueError("out of range")
                return cast(value)

        else:

            def converter(text: bytes) -> Any:
                return cast(float(text))

        _CONVERTERS[dtype] = converter
    return converter


_CONVERTERS: dict[np.dtype, Any] = {}


def _number(text: bytes, dtype: np.dtype) -> Any:
    return _converter(dtype)(text)


def convert_field(text: bytes, dtype: np.dtype, where: str) -> Any:
    if dtype == string:
        return text
    try:
        return _number(text, dtype)
    except ValueError:
        raise InvalidArgumentError(f"{where}: field {text!r} is not a valid {dtype.name}") from None


def split_record(text: bytes, field_delim: str, use_quote_delim: bool, where: str) -> list[bytes]:
    """One CSV record's fields (quotes removed, doubled quotes undone when ``use_quote_delim``)."""
    delimiter = _plain_delimiter(field_delim)
    # A record without quotes (or with quoting off), line breaks or NULs splits at the delimiter alone:
    # the csv module would give the same fields, at ~10x the cost of building its reader per record.
    if (
        delimiter is not None
        and text
        and (not use_quote_delim or b'"' not in text)
        and b"\r" not in text
        and b"\n" not in text
        and b"\0" not in text
    ):
        return text.split(delimiter)
    quoting: Literal[0, 3] = csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE
    try:
        rows = list(csv.reader([text.decode("latin-1")], delimiter=field_delim, quoting=quoting, strict=True))
    except csv.Error as exc:
        raise InvalidArgumentError(f"{where}: {exc}") from None
    if not rows:
        return [b""]
    return [field.encode("latin-1") for field in rows[0]]


@functools.lru_cache(maxsize=64)
def _plain_delimiter(field_delim: Any) -> bytes | None:
    """The delimiter as one byte, or None when only the csv module may interpret it."""
    if not isinstance(field_delim, str) or len(field_delim) != 1 or field_delim in '"\r\n\0':
        return None
    try:
        return field_delim.encode("latin-1")
    except UnicodeEncodeError:
        return None


def typed_fields(fields: list[bytes], columns: list, na_value: bytes, where: str) -> list:
    """The fields converted by ``columns`` (``column_default`` pairs); empty or ``na_value`` fields
    take the default, or raise when the column has none."""
    if len(fields) != len(columns):
        raise InvalidArgumentError(
            f"{where}: expected {len(columns)} fields (one per record_defaults entry) but the record has "
            f"{len(fields)}; check field_delim and quoting"
        )
    values = []
    for column, (text, (dtype, default)) in enumerate(zip(fields, columns)):
        if not text or text == na_value:
            if default is None:
                raise InvalidArgumentError(
                    f"{where}: column {column} is empty and has no default; give record_defaults[{column}] "
                    "a value instead of a dtype"
                )
            values.append(default)
        elif dtype.kind == "O":  # string
            values.append(text)
        else:
            try:
                values.append((_CONVERTERS.get(dtype) or _converter(dtype))(text))
            except ValueError:  # the message is built only here: per field it would cost more than the field
                raise InvalidArgumentError(
                    f"{where} column {column}: field {text!r} is not a valid {dtype.name}"
                ) from None
    return values


def decode_csv(
    records: Any,
    record_defaults: Any,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    name: str | None = None,
    na_value: str = "",
    select_cols: Any = None,
) -> list:
    """``tf.io.decode_csv``: one array per column, each shaped like ``records`` (an array of str/bytes);
    one record (a str/bytes) gives one scalar per column.

    >>> decode_csv([b"1,a", b"2,b"], [0, ""])
    [array([1, 2], dtype=int32), array([b'a', b'b'], dtype=object)]
    >>> decode_csv("3,c", [0, ""])
    [np.int32(3), b'c']
    """
    if not isinstance(record_defaults, (list, tuple)) or not record_defaults:
        raise InvalidArgumentError(
            "decode_csv: record_defaults must be a non-empty list, one entry per column"
        )
    columns = record_columns(record_defaults)
    na = na_value.encode() if isinstance(na_value, str) else na_value
    if isinstance(records, (bytes, str)):  # one record: one scalar per column (bytes, numpy numbers)
        text = records.encode() if isinstance(records, str) else bytes(records)
        if select_cols is None:
            values = _plain_record(text, columns, field_delim, use_quote_delim, na)
            if values is not None:
                return values
        return _decode_record(text, columns, field_delim, use_quote_delim, na, select_cols, 0)
    array = np.asarray(records, dtype=object)
    flat = array.ravel()
    out: list[list[Any]] = [[] for _ in columns]
    for index, record in enumerate(flat):
        text = record.encode() if isinstance(record, str) else bytes(record)
        values = _decode_record(text, columns, field_delim, use_quote_delim, na, select_cols, index)
        for column, value in enumerate(values):
            out[column].append(value)
    result = []
    for (dtype, _), values in zip(columns, out):
        decoded = np.empty(len(values), dtype=object) if dtype == string else np.array(values, dtype=dtype)
        if dtype == string:
            decoded[:] = values
        # One record gives scalars (bytes, numpy numbers), as parse_single_example and CsvDataset do.
        result.append(decoded[0] if array.ndim == 0 else decoded.reshape(array.shape))
    return result


def _plain_record(
    text: bytes, columns: list, field_delim: str, use_quote_delim: bool, na: bytes
) -> list | None:
    """``_decode_record`` of a record that splits at the delimiter alone, with every field present
    and valid; None otherwise (the general path then gives the values or the error)."""
    delimiter = _plain_delimiter(field_delim)
    if (
        delimiter is None
        or not text
        or (use_quote_delim and b'"' in text)
        or b"\r" in text
        or b"\n" in text
        or b"\0" in text
    ):
        return None
    fields = text.split(delimiter)
    if len(fields) != len(columns):
        return None
    values = []
    try:
        for text, (dtype, default) in zip(fields, columns):
            if not text or text == na:
                if default is None:
                    return None
                values.append(default)
            elif dtype.kind == "O":
                values.append(text)
            else:
                values.append((_CONVERTERS.get(dtype) or _converter(dtype))(text))
    except ValueError:
        return None
    return values


def _decode_record(
    text: bytes,
    columns: list,
    field_delim: str,
    use_quote_delim: bool,
    na: bytes,
    select_cols: Any,
    index: int,
) -> list:
    where = f"decode_csv: record {index}"
    fields = split_record(text, field_delim, use_quote_delim, where)
    if select_cols is not None:
        if max(select_cols) >= len(fields):
            raise InvalidArgumentError(
                f"{where} has {len(fields)} fields; select_cols wants column {max(select_cols)}"
            )
        fields = [fields[c] for c in select_cols]
    return typed_fields(fields, columns, na, where)


def record_columns(record_defaults: Any) -> list:
    """``column_default`` of every entry, built once per distinct ``record_defaults`` (a list the
    caller must not change)."""
    try:
        # Each value with its type: 1, 1.0, True and np.int64(1) are equal dict keys but not columns.
        # A list or tuple's elements are its values (types, then values); anything else is the value.
        # A plain loop: comprehensions are calls, and this runs per record of decode_csv.
        parts = []
        for value in record_defaults:
            kind = type(value)
            parts.append(
                (kind, *map(type, value), *value) if kind is list or kind is tuple else (kind, value)
            )
        key = tuple(parts)
        columns = _COLUMNS.get(key)
    except TypeError:  # an unhashable entry: build (and check) it every time
        return [column_default(value, i) for i, value in enumerate(record_defaults)]
    if columns is None:
        columns = [column_default(value, i) for i, value in enumerate(record_defaults)]
        if len(_COLUMNS) >= 64:
            _COLUMNS.clear()
        _COLUMNS[key] = columns
    return columns


_COLUMNS: dict[tuple, list] = {}
