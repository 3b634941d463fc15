"""File readers with tf.data's names: ``TextLineDataset``, ``FixedLengthRecordDataset``,
``CsvDataset``, and the ``make_csv_dataset`` / ``make_batched_features_dataset`` recipes.

Each file is one source node; several files are read one after another (``flat_map``), or
``num_parallel_reads`` at a time in tf.data's interleave order (``cycle_length=num_parallel_reads``,
``block_length=1``).
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .core.errors import InvalidArgumentError
from .core.node import AUTOTUNE
from .dataset import Dataset, TFRecordDataset
from .io.storage.fs import as_path, glob
from .sources.csv import CsvNode
from .sources.file_records import split_lines
from .sources.fixed_length_record import FixedLengthRecordNode
from .sources.text_line import TextLineNode


def _file_list(filenames: Any, argument: str = "filenames") -> list[str] | Dataset:
    if isinstance(filenames, Dataset):
        return filenames
    if isinstance(filenames, np.ndarray):
        filenames = filenames.ravel().tolist()
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    if not isinstance(filenames, (list, tuple)):
        raise InvalidArgumentError(
            f"{argument}={filenames!r} is not allowed: a path, a list of paths or a Dataset of paths"
        )
    return [as_path(name, argument) for name in filenames]


def _read_files(filenames: Any, open_one: Callable[[Any], Dataset], num_parallel_reads: Any) -> Dataset:
    files = _file_list(filenames)
    if isinstance(files, list) and len(files) == 1:
        return open_one(files[0])
    names = files if isinstance(files, Dataset) else Dataset.from_tensor_slices(files)
    if num_parallel_reads is None or num_parallel_reads == 1:
        return names.flat_map(open_one)
    cycle = None if num_parallel_reads == AUTOTUNE else num_parallel_reads
    return names.interleave(
        open_one, cycle_length=cycle, block_length=1, num_parallel_calls=num_parallel_reads
    )


def TextLineDataset(  # noqa: N802 (tf.data's name)
    filenames: Any,
    compression_type: str | None = None,
    buffer_size: int | None = None,
    num_parallel_reads: int | None = None,
    name: str | None = None,
    *,
    storage_options: dict | None = None,
) -> Dataset:
    """The lines of text files (bytes, ``\\n`` / ``\\r\\n`` removed), file after file.
    ``protocol://`` paths go through fsspec, with ``storage_options``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> _ = open(path, "wb").write(b"first\\r\\nsecond\\n")
    >>> list(TextLineDataset(path))
    [b'first', b'second']
    """
    TextLineNode("-", compression_type, buffer_size, storage_options)  # check the arguments now
    return _read_files(
        filenames,
        lambda f: Dataset(TextLineNode(f, compression_type, buffer_size, storage_options)),
        num_parallel_reads,
    )


def FixedLengthRecordDataset(  # noqa: N802 (tf.data's name)
    filenames: Any,
    record_bytes: int,
    header_bytes: int | None = None,
    footer_bytes: int | None = None,
    buffer_size: int | None = None,
    compression_type: str | None = None,
    num_parallel_reads: int | None = None,
    name: str | None = None,
    *,
    storage_options: dict | None = None,
) -> Dataset:
    """Records of ``record_bytes`` bytes from files with an optional header and footer
    (``protocol://`` paths through fsspec, with ``storage_options``).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "r.bin")
    >>> _ = open(path, "wb").write(b"HDaabbccF")
    >>> list(FixedLengthRecordDataset(path, 2, header_bytes=2, footer_bytes=1))
    [b'aa', b'bb', b'cc']
    """
    args = (record_bytes, header_bytes, footer_bytes, buffer_size, compression_type, storage_options)
    FixedLengthRecordNode("-", *args)
    return _read_files(filenames, lambda f: Dataset(FixedLengthRecordNode(f, *args)), num_parallel_reads)


def CsvDataset(  # noqa: N802 (tf.data's name)
    filenames: Any,
    record_defaults: Any,
    compression_type: str | None = None,
    buffer_size: int | None = None,
    header: bool = False,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    na_value: str = "",
    select_cols: Any = None,
    exclude_cols: Any = None,
    name: str | None = None,
    *,
    storage_options: dict | None = None,
) -> Dataset:
    """Rows of CSV files as tuples of scalars; ``record_defaults`` gives each column's dtype (required)
    or default value (used for empty or ``na_value`` fields). ``protocol://`` paths go through
    fsspec, with ``storage_options``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write('id,score,name\\n1,0.5,"a, b"\\n2,,c\\n')
    >>> [(int(i), float(s), n) for i, s, n in CsvDataset(path, ["int64", -1.0, ""], header=True)]
    [(1, 0.5, b'a, b'), (2, -1.0, b'c')]
    """
    args = (
        record_defaults,
        compression_type,
        buffer_size,
        header,
        field_delim,
        use_quote_delim,
        na_value,
        select_cols,
        exclude_cols,
        storage_options,
    )
    CsvNode("-", *args)
    return _read_files(filenames, lambda f: Dataset(CsvNode(f, *args)), num_parallel_reads=None)


def _matching(file_pattern: Any) -> list[str]:
    patterns = file_pattern if isinstance(file_pattern, (list, tuple)) else [file_pattern]
    files: list[str] = []
    for pattern in patterns:
        files.extend(glob(as_path(pattern, "file_pattern")))
    if not files:
        raise InvalidArgumentError(f"file_pattern={file_pattern!r} matches no files")
    return files


def _infer_dtype(texts: list[bytes], na_value: bytes) -> Any:
    """tf.data's inference: the narrowest of int32, int64, float32, string that parses every value."""
    values = [t for t in texts if t not in (b"", na_value)]
    for dtype in (np.int32, np.int64):
        try:
            if all(np.iinfo(dtype).min <= int(v) <= np.iinfo(dtype).max for v in values):
                return np.dtype(dtype)
        except ValueError:
            break
    try:
        for v in values:
            float(v)
        return np.dtype(np.float32)
    except ValueError:
        return "string"


def _csv_header_and_rows(
    path: str, field_delim: str, use_quote_delim: bool, rows: int, compression_type: str | None = None
) -> list[list[bytes]]:
    import csv  # noqa: PLC0415

    # Read through the same opener as CsvDataset, so GZIP / ZLIB files and remote paths sample alike.
    stream = TextLineNode(path, compression_type).open()
    try:
        lines = (line.decode("latin-1") for line in split_lines(stream))
        reader = csv.reader(
            lines, delimiter=field_delim, quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE
        )
        out = []
        for row in reader:
            if row:
                out.append([field.encode("latin-1") for field in row])
            if len(out) > rows:
                break
    finally:
        stream.close()  # type: ignore[attr-defined]  # (files and DecompressingReader close; the Protocol has only read)
    return out


def make_csv_dataset(
    file_pattern: Any,
    batch_size: int,
    column_names: list[str] | None = None,
    column_defaults: list | None = None,
    label_name: str | None = None,
    select_columns: list | None = None,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    na_value: str = "",
    header: bool = True,
    num_epochs: int | None = None,
    shuffle: bool = True,
    shuffle_buffer_size: int = 10000,
    shuffle_seed: int | None = None,
    prefetch_buffer_size: int | None = None,
    num_parallel_reads: int | None = None,
    sloppy: bool = False,
    num_rows_for_inference: int = 100,
    compression_type: str | None = None,
    ignore_errors: bool = False,
    encoding: str = "utf-8",
) -> Dataset:
    """Batches of CSV rows as ``{column: array}`` dicts (``(features, label)`` with ``label_name``),
    as ``tf.data.experimental.make_csv_dataset``: column names from the header, dtypes inferred from
    the first ``num_rows_for_inference`` rows unless ``column_defaults`` gives them, files and rows
    shuffled, repeated ``num_epochs`` times (None: forever, and the last partial batch dropped).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write("a,b,label\\n1,x,0\\n2,y,1\\n3,z,0\\n")
    >>> ds = make_csv_dataset(path, batch_size=3, label_name="label", num_epochs=1, shuffle=False)
    >>> features, label = next(iter(ds))
    >>> features["a"].tolist(), features["b"].tolist(), label.tolist()
    ([1, 2, 3], [b'x', b'y', b'z'], [0, 1, 0])
    """
    files = _matching(file_pattern)
    na_bytes = na_value.encode() if isinstance(na_value, str) else na_value
    sample = _csv_header_and_rows(
        files[0], field_delim, use_quote_delim, num_rows_for_inference, compression_type
    )
    if column_names is None:
        if not header:
            raise InvalidArgumentError("make_csv_dataset: column_names is needed when header=False")
        if not sample:
            raise InvalidArgumentError(f"make_csv_dataset: {files[0]!r} is empty; give column_names")
        column_names = [name.decode("utf-8") for name in sample[0]]
    if len(set(column_names)) != len(column_names):
        raise InvalidArgumentError(f"make_csv_dataset: column_names has duplicates: {column_names}")
    selected = list(range(len(column_names)))
    if select_columns is not None:
        selected = sorted(
            column_names.index(c) if isinstance(c, str) and c in column_names else c for c in select_columns
        )
        for c in selected:
            if not isinstance(c, int) or not 0 <= c < len(column_names):
                raise InvalidArgumentError(f"make_csv_dataset: select_columns entry {c!r} is not a column")
    names = [column_names[c] for c in selected]
    if label_name is not None and label_name not in names:
        raise InvalidArgumentError(
            f"make_csv_dataset: label_name={label_name!r} is not one of the columns {names}"
        )
    if column_defaults is None:
        rows = sample[1:] if header else sample
        column_defaults = [_infer_dtype([row[c] for row in rows if c < len(row)], na_bytes) for c in selected]
    if len(column_defaults) != len(names):
        raise InvalidArgumentError(
            f"make_csv_dataset: {len(column_defaults)} column_defaults for {len(names)} columns"
        )
    file_names = Dataset.from_tensor_slices(files)
    if shuffle:
        file_names = file_names.shuffle(len(files), seed=shuffle_seed)

    def read(path: Any) -> Dataset:
        return CsvDataset(
            path,
            column_defaults,
            compression_type=compression_type,
            header=header,
            field_delim=field_delim,
            use_quote_delim=use_quote_delim,
            na_value=na_value,
            select_cols=selected if select_columns is not None else None,
        )

    if num_parallel_reads in (None, 1):
        ds = file_names.flat_map(read)
    else:
        cycle = None if num_parallel_reads == AUTOTUNE else num_parallel_reads
        ds = file_names.interleave(
            read, cycle_length=cycle, block_length=1, num_parallel_calls=num_parallel_reads
        )
    if ignore_errors:
        ds = ds.ignore_errors()
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=num_epochs is None)

    def to_dict(*columns: Any) -> Any:
        features = collections.OrderedDict(zip(names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    ds = ds.map(to_dict)
    return ds.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)


def make_batched_features_dataset(
    file_pattern: Any,
    batch_size: int,
    features: dict,
    reader: Callable = TFRecordDataset,
    label_key: str | None = None,
    reader_args: list | None = None,
    num_epochs: int | None = None,
    shuffle: bool = True,
    shuffle_buffer_size: int = 10000,
    shuffle_seed: int | None = None,
    prefetch_buffer_size: int | None = None,
    reader_num_threads: int | None = None,
    parser_num_threads: int | None = None,
    sloppy_ordering: bool = False,
    drop_final_batch: bool = False,
) -> Dataset:
    """Batches of parsed ``tf.train.Example`` records as feature dicts (``(features, label)`` with
    ``label_key``), as ``tf.data.experimental.make_batched_features_dataset``.

    >>> import os, tempfile, headrace as hr
    >>> path = os.path.join(tempfile.mkdtemp(), "e.tfrecord")
    >>> with hr.io.TFRecordWriter(path) as writer:
    ...     for i in range(4):
    ...         writer.write(hr.io.serialize_example({"x": [float(i)], "y": i % 2}))
    >>> spec = {"x": hr.io.FixedLenFeature([1], "float32"), "y": hr.io.FixedLenFeature([], "int64")}
    >>> ds = make_batched_features_dataset(path, 2, spec, label_key="y", num_epochs=1, shuffle=False)
    >>> [(f["x"].ravel().tolist(), y.tolist()) for f, y in ds]
    [([0.0, 1.0], [0, 1]), ([2.0, 3.0], [0, 1])]
    """
    from .io.codec.example import parse_example  # noqa: PLC0415 (the Example codec only when used)

    if label_key is not None and label_key not in features:
        raise InvalidArgumentError(f"label_key={label_key!r} is not one of the features {sorted(features)}")
    files = _matching(file_pattern)
    file_names = Dataset.from_tensor_slices(files)
    if shuffle:
        file_names = file_names.shuffle(len(files), seed=shuffle_seed)
    extra = list(reader_args or [])
    threads = reader_num_threads or 1
    if threads == 1:
        ds = file_names.flat_map(lambda path: reader(path, *extra))
    else:
        ds = file_names.interleave(
            lambda path: reader(path, *extra),
            cycle_length=None if threads == AUTOTUNE else threads,
            block_length=1,
            num_parallel_calls=threads,
            deterministic=not sloppy_ordering,
        )
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=drop_final_batch)

    def parse(records: Any) -> Any:
        parsed = parse_example(records, features)
        if label_key is None:
            return parsed
        label = parsed.pop(label_key)
        return parsed, label

    ds = ds.map(parse, num_parallel_calls=parser_num_threads)
    return ds.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)
