"""TFRecord files of tf.train.Example as a Ray Data dataset, and back, without TensorFlow.

Each file is one read task (files are read in parallel across the cluster); records are framed,
CRC-checked and parsed by headrace's compiled parser in batches, so a block holds numpy columns:
``FixedLenFeature`` as ``(rows, *shape)`` tensors, bytes as binary, variable-length features as a
list per row. The paths may be local or ``protocol://`` (fsspec, with ``storage_options``); every
worker must see them (a shared or remote file system).

Writing publishes a shard set as ``headrace.io.write_shards`` does (:mod:`headrace.io.storage.publish`): the
write tasks write temporaries, and the driver names them ``PREFIX-NNNNN-of-MMMMM.tfrecord`` under a
manifest only once every task succeeded, so readers never take a failed run's files for a set.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..core.args import is_int
from ..core.errors import InvalidArgumentError, add_note, attempt, check, on_failure, user_stacklevel
from ..io.codec.example import parse_example, serialize_example
from ..io.codec.ragged import Ragged
from ..io.records.compression import normalize_compression
from ..io.records.writer import TFRecordWriter, shard_name
from ..io.storage.fs import as_path, check_storage_options, exists, glob, is_url, list_dir, remove
from ..io.storage.publish import (
    abandon_set,
    begin_set,
    check_shard_files,
    finish_set,
    publish_file,
    refuse_a_live_writer,
    temporary_path,
)
from ..io.storage.reclaim import ShardSetWarning, reclaim_set_temporaries, set_temporaries
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
    FileNotFoundError here, on the caller, and so do files of a shard set that is incomplete or
    mixed with another set's (``ShardSetError``, see docs/reliability.md). Ray is initialised with
    :func:`connect` (``address``).

    >>> spec = {"label": hr.io.FixedLenFeature([], "int64")}  # doctest: +SKIP
    >>> read_tfrecords("data/train-*.tfrecord", spec).take(2)  # doctest: +SKIP
    [{'label': 3}, {'label': 1}]
    """
    storage_options = check_storage_options(storage_options, "read_tfrecords")
    compression = normalize_compression(compression_type)
    check(on_corrupt in _ON_CORRUPT, "on_corrupt", on_corrupt, "'raise', 'skip_record' or 'skip_file'")
    check(isinstance(batch_size, int) and batch_size > 0, "batch_size", batch_size, "a positive int")
    files = expand_paths(paths, storage_options, "read_tfrecords")
    check_shard_files(files, "read_tfrecords", storage_options=storage_options)  # here, not in a task
    ray = connect(address)
    source = TFRecordDatasource.create(files, features, compression, on_corrupt, storage_options, batch_size)
    return ray.data.read_datasource(source, override_num_blocks=override_num_blocks)


def _rows(block: Any) -> Iterator[dict[str, Any]]:
    from ray.data.block import BlockAccessor  # noqa: PLC0415

    accessor = BlockAccessor.for_block(block)
    _refuse_nulls(accessor.to_arrow())
    columns = accessor.to_numpy()
    if not isinstance(columns, dict):
        columns = {"data": columns}
    names = list(columns)
    for i in range(len(columns[names[0]]) if names else 0):
        yield {name: columns[name][i] for name in names}


def _refuse_nulls(table: Any) -> None:
    """tf.train.Example has no null. Arrow's numpy view turns a null into NaN (an int column becomes
    float, a column of nulls a float feature), which would be written without a word: refuse it."""
    import pyarrow.compute as pc  # noqa: PLC0415 (Ray Data's own dependency)

    for name, column in zip(table.column_names, table.columns):
        if column.null_count:
            first = pc.index(pc.is_null(column), True).as_py()
            raise ValueError(
                f"write_tfrecords: column {name!r} holds {column.null_count} null(s) (the first at row "
                f"{first} of this block), and a tf.train.Example feature cannot be null: fill them "
                "(ds.map_batches(lambda b: b.fillna(...), batch_format='pandas')) or drop those rows first"
            )


def _example_value(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [v if isinstance(v, bytes) else str(v).encode() for v in value.tolist()]
    if isinstance(value, str):
        return value.encode("utf-8")
    return value


TOOL = "write_tfrecords"  # the writer named in the manifest and in errors


def staging_name(prefix: str, task: int, run: str, suffix: str) -> str:
    """The name write task ``task`` of run ``run`` writes under (as a temporary of it): the shard's
    final name needs the number of tasks, known only when all are done. ``run`` marks the run's
    temporaries, so the driver can remove them however the job ends.

    >>> staging_name("out/part", 3, "0a1b2c3d", ".tfrecord")
    'out/part-00003.0a1b2c3d.tfrecord'
    """
    return f"{prefix}-{task:05d}.{run}{suffix}"


def write_task_shard(
    blocks: Iterable[Any],
    task: int,
    prefix: str,
    run: str,
    compression: str | None,
    storage_options: dict | None,
    suffix: str = ".tfrecord",
) -> dict:
    """What one write task does: write ``blocks`` to a temporary file (synced when local) and return
    what the driver publishes: ``task``, ``temporary``, and the manifest entry's ``bytes``,
    ``crc32c``, ``records``. On an error the temporary is removed and the error gets a note naming
    the task and row."""
    temporary = temporary_path(staging_name(prefix, task, run, suffix))
    writer = TFRecordWriter(temporary, compression, storage_options=storage_options)
    row_number = 0
    try:
        for block in blocks:
            for row in _rows(block):
                if set(row) == {RECORD_COLUMN}:
                    writer.write(bytes(row[RECORD_COLUMN]))
                else:
                    writer.write(serialize_example({k: _example_value(v) for k, v in row.items()}))
                row_number += 1
        writer.close(sync=not is_url(temporary))
    except BaseException as exc:
        _discard(writer)
        add_note(
            exc,
            f"headrace.ray.{TOOL}: write task {task}, at its row {row_number}, for the shard set "
            f"{prefix}-*; nothing of this run was published",
        )
        raise
    return {
        "task": task,
        "temporary": temporary,
        "bytes": writer.file_bytes,
        "crc32c": writer.file_crc32c,
        "records": writer.records,
    }


def _discard(writer: TFRecordWriter) -> None:
    """Close and remove a temporary that will not be published (best effort: what is left is a
    temporary readers refuse and the next run reclaims)."""
    with contextlib.suppress(Exception):
        writer.close()
    with contextlib.suppress(Exception):
        if exists(writer.path, writer.storage_options):
            remove(writer.path, writer.storage_options)


def remove_run_temporaries(prefix: str, run: str, suffix: str, storage_options: dict | None) -> list[str]:
    """Remove the temporaries run ``run`` left under ``prefix`` (a task that failed part-way, an
    attempt Ray retried, a set that was not published): the run is over, so none of them is
    in use, whichever process wrote it. Best effort; returns the paths removed."""
    removed = []
    with contextlib.suppress(Exception):  # a store may raise anything; readers refuse what is left
        for path in set_temporaries(prefix, storage_options):
            if os.path.basename(path).split(".incomplete-", 1)[0].endswith(f".{run}{suffix}"):
                with contextlib.suppress(Exception):
                    remove(path, storage_options)
                    removed.append(path)
    return removed


def publish_task_shards(
    prefix: str,
    run: str,
    results: Sequence[Any],
    compression: str | None,
    storage_options: dict | None,
    suffix: str = ".tfrecord",
) -> list[str]:
    """What the driver does once every write task succeeded: give the tasks' temporaries (in task
    order) their names ``prefix-NNNNN-of-MMMMM{suffix}`` under a shard-set manifest
    (:mod:`headrace.io.storage.publish`, as ``write_shards`` does), which also removes the shards of an
    earlier set of ``prefix`` this one does not overwrite. On an error the set is left abandoned
    (readers refuse it) and the temporaries are removed. Returns the shard paths."""
    done = sorted((r for r in results if r is not None), key=lambda r: r["task"])
    if not done:  # no write task ran (an empty dataset): one empty shard, as write_shards writes
        done = [write_task_shard([], 0, prefix, run, compression, storage_options, suffix)]
    total = len(done)
    finals = [shard_name(prefix, number, total, suffix) for number in range(total)]
    entries: list[dict | None] = [
        {"file": os.path.basename(final), "bytes": r["bytes"], "crc32c": r["crc32c"], "records": r["records"]}
        for r, final in zip(done, finals)
    ]
    with on_failure(remove_run_temporaries, prefix, run, suffix, storage_options):
        body = begin_set(prefix, TOOL, entries, {"compression": compression}, storage_options)
    with on_failure(_abandon_run, prefix, run, suffix, storage_options, body):  # renamed shards stay, refused
        for r, final in zip(done, finals):
            publish_file(r["temporary"], final, storage_options)
        finish_set(prefix, body, storage_options=storage_options)
    remove_run_temporaries(prefix, run, suffix, storage_options)  # attempts Ray retried
    return finals


def _abandon_run(prefix: str, run: str, suffix: str, storage_options: dict | None, body: dict) -> None:
    remove_run_temporaries(prefix, run, suffix, storage_options)
    abandon_set(prefix, body, storage_options)


class TFRecordDatasink:
    """Builds the Ray Data ``Datasink`` of :func:`write_tfrecords`: write tasks write temporaries
    (:func:`write_task_shard`); on the driver, ``on_write_complete`` publishes them as one shard
    set (:func:`publish_task_shards`) and ``on_write_failed`` removes them."""

    @staticmethod
    def create(
        prefix: str,
        compression: str | None,
        storage_options: dict | None,
        suffix: str,
        min_bytes: int | None = None,
    ) -> Any:
        """``min_bytes``: Ray gathers blocks until a write task holds at least this many bytes (in
        memory), so each shard holds that much or all that is left; None: one task per block."""
        from ray.data import Datasink  # noqa: PLC0415

        run = secrets.token_hex(4)

        class _Sink(Datasink):
            paths: list[str] | None = None  # the published shards, set on the driver

            def get_name(self) -> str:
                return "headrace.TFRecord"

            @property
            def min_bytes_per_write(self) -> int | None:
                return min_bytes

            def write(self, blocks, ctx) -> dict:
                return write_task_shard(
                    blocks, ctx.task_idx, prefix, run, compression, storage_options, suffix
                )

            def on_write_complete(self, write_result) -> None:
                self.paths = publish_task_shards(
                    prefix, run, write_result.write_returns, compression, storage_options, suffix
                )

            def on_write_failed(self, error: Exception) -> None:
                remove_run_temporaries(prefix, run, suffix, storage_options)

        return _Sink()


#: the default target size of a shard written by :func:`write_tfrecords` (bytes of rows in memory):
#: shards of about 100-200 MB, as TFRecord guides advise, or one shard for less
SHARD_BYTES = 100 * 10**6


def _min_bytes_per_write_supported() -> bool:
    from ray.data import Datasink  # noqa: PLC0415

    return hasattr(Datasink, "min_bytes_per_write")


def _shards_for(dataset: Any, shard_bytes: int) -> Any:
    """``dataset`` repartitioned into shards of about ``shard_bytes`` (a Ray without write bundling
    by size: the dataset's size is computed first)."""
    size = int(dataset.size_bytes() or 0)
    return dataset.repartition(max(1, -(-size // shard_bytes)))


def write_tfrecords(
    dataset: Any,
    prefix: Any,
    *,
    num_shards: int | None = None,
    shard_bytes: int | None = None,
    compression_type: str | None = None,
    storage_options: dict | None = None,
) -> list[str]:
    """Write a ``ray.data.Dataset`` as a shard set of TFRecord files of tf.train.Example (one feature
    per column; a single ``"record"`` column is written as raw records): ``{prefix}-00000-of-00004.tfrecord``,
    ... Numbers become int64/float lists, strings and bytes bytes lists. Returns the shard paths.

    Shards: ``num_shards`` exactly (the dataset is repartitioned), else shards of at least
    ``shard_bytes`` of rows each (default :data:`SHARD_BYTES`, 100 MB: shards of about 100-200 MB,
    the last one smaller), so a dataset smaller than that is one shard, however many blocks Ray
    made of it. Give one of the two.

    Published as ``write_shards`` publishes (see docs/reliability.md): tasks write temporaries, and
    only when all of them succeeded does the driver rename them under ``.prefix.manifest.json``,
    removing the shards of an earlier set of ``prefix`` that this one does not overwrite. A run that
    fails publishes nothing and removes its temporaries; readers refuse the files of a run killed
    while publishing.

    Files named as earlier versions named these shards (``{prefix}-00000.tfrecord``) belong to no
    set: a glob over the prefix would read them too, so a ``ShardSetWarning`` names them.

    >>> write_tfrecords(ray.data.range(10), "/tmp/out/part", num_shards=2)  # doctest: +SKIP
    ['/tmp/out/part-00000-of-00002.tfrecord', '/tmp/out/part-00001-of-00002.tfrecord']
    >>> write_tfrecords(ray.data.range(400).repartition(200), "/tmp/out/all")  # doctest: +SKIP
    ['/tmp/out/all-00000-of-00001.tfrecord']
    """
    prefix = as_path(prefix, "prefix")
    for name, value in (("num_shards", num_shards), ("shard_bytes", shard_bytes)):
        check(
            value is None or is_int(value, low=1),
            f"{TOOL}: {name}",
            value,
            "a positive int, or None",
        )
    check(
        num_shards is None or shard_bytes is None,
        f"{TOOL}: num_shards",
        num_shards,
        f"one of num_shards and shard_bytes (got both: shard_bytes={shard_bytes})",
    )
    storage_options = check_storage_options(storage_options, TOOL)
    compression = normalize_compression(compression_type)
    # Before Ray runs, on the caller (as write_shards): reclaim dead writers' temporaries and refuse a
    # live writer of the prefix, rather than have every task write for the publication to refuse.
    reclaim_set_temporaries(prefix, storage_options, tool=TOOL)
    refuse_a_live_writer(prefix, TOOL, storage_options)
    min_bytes = None
    if num_shards is not None:
        dataset = dataset.repartition(num_shards)  # one block, so one write task, per shard
    elif _min_bytes_per_write_supported():
        min_bytes = shard_bytes or SHARD_BYTES  # streams: Ray gathers blocks up to the size
    else:
        dataset = _shards_for(dataset, shard_bytes or SHARD_BYTES)
    sink = TFRecordDatasink.create(prefix, compression, storage_options, ".tfrecord", min_bytes)
    dataset.write_datasink(sink)
    _warn_of_unversioned_shards(prefix, ".tfrecord", storage_options)
    return list(sink.paths or [])


def _warn_of_unversioned_shards(prefix: str, suffix: str, storage_options: dict | None) -> None:
    """Name the files ``{prefix}-NNNNN{suffix}`` (the shard names before sets were published): no
    manifest covers them, so readers cannot tell them from the set's. Best effort."""
    directory, stem = os.path.split(prefix)
    pattern = re.compile(re.escape(stem) + r"-\d{5}" + re.escape(suffix) + "$")
    listed, entries = attempt(list_dir, directory or ".", storage_options, fresh=True)
    if not listed:  # a store may raise anything; the set itself is published
        return
    found = [e for e in entries if pattern.match(e.rstrip("/").rsplit("/", 1)[-1])]
    if found:
        warnings.warn(
            f"{TOOL}: {len(found)} file(s) named as earlier headrace versions named these shards lie "
            f"beside the set {prefix}-*-of-*: {', '.join(found[:10])}{' ...' if len(found) > 10 else ''}. "
            f"No manifest covers them, so a glob such as {prefix}-* reads them with the set; delete them",
            ShardSetWarning,
            stacklevel=user_stacklevel(),
        )


__all__: Sequence[str] = ["read_tfrecords", "write_tfrecords"]
