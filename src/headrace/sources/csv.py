"""``CsvDataset``: the rows of a CSV file as tuples of scalars, typed by ``record_defaults``."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any, Literal

from ..core.args import integers, is_int
from ..core.errors import DataLossError, InvalidArgumentError, check
from ..core.node import Fields
from ..core.spec import TensorSpec, string
from ..io.codec.csv_codec import column_default, typed_fields
from .file_records import ByteStream, FileRecordsNode, split_lines


class CsvNode(FileRecordsNode):
    """One CSV file's records, as tf.data's ``CsvDataset``: a tuple with one scalar per selected
    column, typed and defaulted by ``record_defaults``. Quoted fields may hold the delimiter, doubled
    quotes and newlines (with ``use_quote_delim``). Rows with the wrong number of fields, and missing
    required fields, raise ``InvalidArgumentError`` naming the file, the record and the column."""

    op = "csv"
    fields = Fields(
        "columns", "header", "field_delim", "use_quote_delim", "na_value", "select_cols", "exclude_cols"
    )

    def __init__(
        self,
        filename: Any,
        record_defaults: Any,
        compression_type: str | None = None,
        buffer_size: int | None = None,
        header: bool = False,
        field_delim: str = ",",
        use_quote_delim: bool = True,
        na_value: str = "",
        select_cols: Any = None,
        exclude_cols: Any = None,
        storage_options: dict | None = None,
    ):
        if not isinstance(record_defaults, (list, tuple)) or not record_defaults:
            raise InvalidArgumentError(
                f"record_defaults={record_defaults!r} is not allowed: a non-empty list with one dtype or default "
                "value per column"
            )
        columns = [column_default(value, i) for i, value in enumerate(record_defaults)]
        check(isinstance(header, bool), "header", header, "True or False")
        check(isinstance(use_quote_delim, bool), "use_quote_delim", use_quote_delim, "True or False")
        check(
            isinstance(field_delim, str) and len(field_delim) == 1,
            "field_delim",
            field_delim,
            "one character",
        )
        check(isinstance(na_value, (str, bytes)), "na_value", na_value, "a str")
        if select_cols is not None and exclude_cols is not None:
            raise InvalidArgumentError("give CsvDataset select_cols or exclude_cols, not both")
        for argument, cols in (("select_cols", select_cols), ("exclude_cols", exclude_cols)):
            cols = integers(cols)
            if cols is None:
                continue
            ok = isinstance(cols, (list, tuple)) and all(is_int(c, low=0) for c in cols)
            check(
                ok and list(cols) == sorted(set(cols)), argument, cols, "a list of column indices, increasing"
            )
        if select_cols is not None and len(select_cols) != len(columns):
            raise InvalidArgumentError(
                f"select_cols has {len(select_cols)} columns but record_defaults has {len(columns)}; give one "
                "default per selected column"
            )
        super().__init__(filename, compression_type, buffer_size, storage_options)
        self.columns = columns
        self.header = header
        self.field_delim = field_delim
        self.use_quote_delim = use_quote_delim
        self.na_value = na_value.encode() if isinstance(na_value, str) else na_value
        self.select_cols = None if select_cols is None else list(integers(select_cols))
        self.exclude_cols = None if exclude_cols is None else list(integers(exclude_cols))

    def describe_args(self) -> str:
        dtypes = ", ".join("string" if d == string else d.name for d, _ in self.columns)
        return f"{super().describe_args()}, [{dtypes}]"

    def compute_element_spec(self) -> tuple:
        return tuple(TensorSpec((), dtype) for dtype, _ in self.columns)

    def records(self, stream: ByteStream) -> Iterator[tuple]:
        # csv works on str: latin-1 maps every byte to one character and back, so any bytes survive.
        lines = (
            line.decode("latin-1") for line in split_lines(stream, keep_ends=True, size=self.buffer_size)
        )
        quoting: Literal[0, 3] = csv.QUOTE_MINIMAL if self.use_quote_delim else csv.QUOTE_NONE
        reader = csv.reader(lines, delimiter=self.field_delim, quoting=quoting, strict=True)
        wanted = self.select_cols
        row_number = 0
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise DataLossError(f"{self.op}: {self.path!r} line {reader.line_num}: {exc}") from None
            row_number += 1
            if self.header and row_number == 1:
                continue
            if not row:
                row = [""]  # a blank line is one empty field, as in tf.data
            fields = [field.encode("latin-1") for field in row]
            where = f"{self.op}: {self.path!r} record {row_number - int(self.header) - 1}"
            if wanted is not None:
                if wanted and wanted[-1] >= len(fields):
                    raise InvalidArgumentError(
                        f"{where} has {len(fields)} fields; select_cols wants column {wanted[-1]}"
                    )
                fields = [fields[c] for c in wanted]
            elif self.exclude_cols is not None:
                excluded = set(self.exclude_cols)
                fields = [f for c, f in enumerate(fields) if c not in excluded]
            values = typed_fields(fields, self.columns, self.na_value, where)
            yield tuple(values)
