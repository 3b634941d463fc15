import numpy as np
import pytest

import headrace as hr
from headrace.readers import CsvDataset
from tests.helpers.checkpoint import check_checkpoints


def write(path, text: str) -> str:
    path.write_text(text)
    return str(path)


def rows(ds) -> list:
    return [tuple(v.item() if hasattr(v, "item") else v for v in row) for row in ds]


def test_types_defaults_and_quotes(tmp_path):
    path = write(tmp_path / "t.csv", 'a,b,c,d\n1,2.5,"x, ""y""",7\n,,,8\n')
    ds = CsvDataset(path, [0, 0.0, "", hr.int64], header=True)
    assert rows(ds) == [(1, 2.5, b'x, "y"', 7), (0, 0.0, b"", 8)]
    first = next(iter(ds))
    assert [v.dtype for v in first[:2]] == [np.int32, np.float32] and first[3].dtype == np.int64
    assert ds.element_spec == (
        hr.TensorSpec((), "int32"),
        hr.TensorSpec((), "float32"),
        hr.TensorSpec((), "string"),
        hr.TensorSpec((), "int64"),
    )


def test_quoted_newlines_na_value_delimiter_and_columns(tmp_path):
    path = write(tmp_path / "t.csv", '1;"two\nlines";NA;9\n2;b;3;9\n')
    ds = CsvDataset(path, [hr.int64, b"", -1], field_delim=";", na_value="NA", exclude_cols=[3])
    assert rows(ds) == [(1, b"two\nlines", -1), (2, b"b", 3)]
    picked = CsvDataset(path, [hr.int64, 0], field_delim=";", na_value="NA", select_cols=[0, 3])
    assert rows(picked) == [(1, 9), (2, 9)]
    literal = CsvDataset(write(tmp_path / "q.csv", '"a",b\n'), ["", ""], use_quote_delim=False)
    assert rows(literal) == [(b'"a"', b"b")]


def test_errors_name_file_record_and_column(tmp_path):
    path = write(tmp_path / "t.csv", "1,2\n3\n")
    with pytest.raises(hr.InvalidArgumentError, match=r"record 1: expected 2 fields .* has 1"):
        list(CsvDataset(path, [0, 0]))
    with pytest.raises(hr.InvalidArgumentError, match="column 1 is empty and has no default"):
        list(CsvDataset(write(tmp_path / "m.csv", "1,\n"), [0, hr.int32]))
    with pytest.raises(hr.InvalidArgumentError, match="not a valid int32"):
        list(CsvDataset(write(tmp_path / "f.csv", "1.5\n"), [0]))
    with pytest.raises(hr.InvalidArgumentError, match="record_defaults"):
        CsvDataset(path, [])
    with pytest.raises(hr.InvalidArgumentError, match="record_defaults"):
        CsvDataset(path, [[1, 2]])
    with pytest.raises(hr.InvalidArgumentError, match="select_cols"):
        CsvDataset(path, [0], select_cols=[1, 0])


def test_checkpoints(tmp_path):
    path = write(tmp_path / "t.csv", "".join(f"{i},{i * 0.5},s{i}\n" for i in range(25)))
    check_checkpoints(lambda: CsvDataset(path, [0, 0.0, ""]))
