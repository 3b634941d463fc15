"""TFRecord files of tf.train.Example as a Ray Data dataset, and back, without TensorFlow.

Each file is one read task (files are read in parallel across the cluster); records are framed,
CRC-checked and parsed by headrace's compiled parser in batches, so a block holds numpy columns:
``FixedLenFeature`` as ``(rows, *shape)`` tensors, bytes as binary, variable-length features as a
list per row. The paths may be local or ``protocol://`` (fsspec, with ``storage_options``); every
worker must see them (a shared or remote file system).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError, add_note, check
from ..io.compression import normalize_compression
from ..io.example import parse_example, serialize_example
from ..io.fs import as_path, check_storage_options, exists, glob, is_url, make_parent_dirs
from ..io.publish import publish_file, temporary_path
from ..io.ragged import Ragged
from ..io.writer import TFRecordWriter
from .cluster import connect

RECORD_COLUMN = "record"  # the column of raw records when no features are given
_ON_CORRUPT = ("raise", "skip_record", "skip_file")


def expand_paths(paths: Any, storage_options: dict | None, where: str) -> list[str]:
    """``paths`` (a path, glob pattern or list of them) as a sorted list of existing files; a missing
    file or a pattern matching nothing raises FileNotFoundError naming it."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files: list[str] = []
    for i, item in enumerate(items):
        path = as_path(item, f"paths[{i}]")
        if any(c in path for c in "*?["):
            matched = glob(path, storage_options)
            if not matched:
                raise FileNotFoundError(f"{where}: no file matches {path!r}")
            files.extend(sorted(matched))
        elif not exists(path, storage_options):
            raise FileNotFoundError(f"{where}: file {path!r} does not exist")
        else:
            files.append(path)
    if not files:
        raise InvalidArgumentError(f"{where}: no paths given")
    return files


def _column(value: Any) -> np.ndarray:
    """A parsed column as something Arrow takes: arrays as they are, ragged rows as a list per row."""
    if isinstance(value, Ragged):
        rows = value.to_list()
        column = np.empty(len(rows), dtype=object)
        column[:] = [np.asarray(row) for row in rows]
        return column
    return value


def read_file_batches(
    path: str,
    features: Mapping[str, Any] | None,
    compression: str | None,
    on_corrupt: str,
    storage_options: dict | None,
    batch_size: int,
) -> Iterator[dict[str, np.ndarray]]:
    """The records of one file as parsed column batches (what one read task yields)."""
    from ..dataset import TFRecordDataset  # noqa: PLC0415 (the facade; imported where the task runs)

    records = TFRecordDataset(
        [path], compression_type=compression, on_corrupt=on_corrupt, storage_options=storage_options
    )
    for batch in records.batch(batch_size).as_numpy_iterator():
        if features is None:
            yield {RECORD_COLUMN: np.asarray(batch, dtype=object)}
            continue
        try:
            parsed = parse_example(list(batch), features)
        except Exception as exc:
            add_note(exc, f"headrace.ray.read_tfrecords: while parsing {path!r}")  # also on Python 3.10
            raise
        yield {key: _column(value) for key, value in parsed.items()}


class TFRecordDatasource:
    """Builds the Ray Data ``Datasource`` (a class made when Ray is imported; see :func:`read_tfrecords`)."""

    @staticmethod
    def create(files: list[str], features, compression, on_corrupt, storage_options, batch_size) -> Any:
        from ray.data import Datasource  # noqa: PLC0415
        from ray.data.block import BlockAccessor, BlockMetadata  # noqa: PLC0415
        from ray.data.datasource import ReadTask  # noqa: PLC0415

        class _Source(Datasource):
            def get_name(self) -> str:
                return "headrace.TFRecord"

            def estimate_inmemory_data_size(self) -> int | None:
                return None

            def get_read_tasks(self, parallelism: int, per_task_row_limit=None, data_context=None):
                def task(path: str):
                    def read() -> Iterator[Any]:
                        for batch in read_file_batches(
                            path, features, compression, on_corrupt, storage_options, batch_size
                        ):
                            yield BlockAccessor.batch_to_block(batch)

                    return read

                metadata = lambda path: BlockMetadata(  # noqa: E731
                    num_rows=None, size_bytes=None, exec_stats=None, input_files=(path,)
                )
                return [ReadTask(task(path), metadata(path)) for path in files]

        return _Source()


def read_tfrecords(
    paths: Any,
    features: Mapping[str, Any] | None = None,
    *,
    compression_type: str | None = None,
    on_corrupt: str = "raise",
    storage_options: dict | None = None,
    batch_size: int = 1024,
    address: str | None = None,
    override_num_blocks: int | None = None,
) -> Any:
    """A ``ray.data.Dataset`` of the tf.train.Example records in ``paths`` parsed with ``features``
    (``headrace.io.FixedLenFeature`` ...), one column per feature; with ``features=None``, one
    ``"record"`` column of serialized records. One read task per file. ``on_corrupt`` is
    ``TFRecordDataset``'s (``"raise"``, ``"skip_record"``, ``"skip_file"``). Missing files raise
    FileNotFoundError here, on the caller. Ray is initialised with :func:`connect` (``address``).

    >>> spec = {"label": hr.io.FixedLenFeature([], "int64")}  # doctest: +SKIP
    >>> read_tfrecords("data/train-*.tfrecord", spec).take(2)  # doctest: +SKIP
    [{'label': 3}, {'label': 1}]
    """
    storage_options = check_storage_options(storage_options, "read_tfrecords")
    compression = normalize_compression(compression_type)
    check(on_corrupt in _ON_CORRUPT, "on_corrupt", on_corrupt, "'raise', 'skip_record' or 'skip_file'")
    check(isinstance(batch_size, int) and batch_size > 0, "batch_size", batch_size, "a positive int")
    files = expand_paths(paths, storage_options, "read_tfrecords")
    ray = connect(address)
    source = TFRecordDatasource.create(files, features, compression, on_corrupt, storage_options, batch_size)
    return ray.data.read_datasource(source, override_num_blocks=override_num_blocks)


def _rows(block: Any) -> Iterator[dict[str, Any]]:
    from ray.data.block import BlockAccessor  # noqa: PLC0415

    columns = BlockAccessor.for_block(block).to_numpy()
    if not isinstance(columns, dict):
        columns = {"data": columns}
    names = list(columns)
    for i in range(len(columns[names[0]]) if names else 0):
        yield {name: columns[name][i] for name in names}


def _example_value(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [v if isinstance(v, bytes) else str(v).encode() for v in value.tolist()]
    if isinstance(value, str):
        return value.encode("utf-8")
    return value


class TFRecordDatasink:
    """Builds the Ray Data ``Datasink``: each write task writes ``{prefix}-{task:05d}.tfrecord``,
    published atomically (a temporary file renamed when complete)."""

    @staticmethod
    def create(prefix: str, compression: str | None, storage_options: dict | None) -> Any:
        from ray.data import Datasink  # noqa: PLC0415

        class _Sink(Datasink):
            def get_name(self) -> str:
                return "headrace.TFRecord"

            def write(self, blocks, ctx) -> list[str]:
                final = f"{prefix}-{ctx.task_idx:05d}.tfrecord"
                local = not is_url(final)
                if local:
                    make_parent_dirs(final)
                target = temporary_path(final) if local else final
                writer = TFRecordWriter(target, compression, storage_options=storage_options)
                try:
                    for block in blocks:
                        for row in _rows(block):
                            if set(row) == {RECORD_COLUMN}:
                                writer.write(bytes(row[RECORD_COLUMN]))
                            else:
                                writer.write(
                                    serialize_example({k: _example_value(v) for k, v in row.items()})
                                )
                    writer.close(sync=local)
                    if local:
                        publish_file(target, final)
                except BaseException:
                    writer.closed = True
                    if local and os.path.exists(target):
                        os.unlink(target)
                    raise
                return [final]

        return _Sink()


def write_tfrecords(
    dataset: Any,
    prefix: Any,
    *,
    compression_type: str | None = None,
    storage_options: dict | None = None,
) -> None:
    """Write a ``ray.data.Dataset`` as TFRecord files of tf.train.Example (one feature per column; a
    single ``"record"`` column is written as raw records), one file per write task:
    ``{prefix}-00000.tfrecord``, ... Numbers become int64/float lists, strings and bytes bytes lists.

    >>> write_tfrecords(ray.data.range(10), "/tmp/out/part")  # doctest: +SKIP
    """
    prefix = as_path(prefix, "prefix")
    storage_options = check_storage_options(storage_options, "write_tfrecords")
    compression = normalize_compression(compression_type)
    dataset.write_datasink(TFRecordDatasink.create(prefix, compression, storage_options))


__all__: Sequence[str] = ["read_tfrecords", "write_tfrecords"]
