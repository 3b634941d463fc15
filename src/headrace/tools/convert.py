"""``headrace convert``: turn a folder of images, .npy/.npz arrays, a CSV or a Parquet file into
sharded TFRecord files of tf.train.Example, on all cores, resumable after an interruption.

The input is split into ``num_shards`` contiguous parts up front, and each part is written to a
temporary file that is synced and renamed to ``PREFIX-0000k-of-0000N.tfrecord`` once complete. A
rerun with the same settings skips the shards that exist, so an interrupted conversion picks up
where it stopped; a hidden settings file (``out/.train.convert.json`` for ``out/train``) makes a
rerun with other settings fail instead of mixing. The set is published like
:func:`~headrace.io.write_shards`' (see :mod:`headrace.io.storage.publish`): its manifest says
``publishing`` until the last shard is in place, so readers refuse a half-converted set, and a
rerun reclaims the temporaries of dead workers. Workers exit when the converting process dies,
even by SIGKILL.

Examples hold:

- images (``SRC/<class>/<file>``, classes sorted): ``image/encoded`` (file bytes), ``image/format``,
  ``image/filename``, ``image/class/label`` (int64 index of the class), ``image/class/text``;
- .npy: one feature named after the file, one row per example; .npz: one feature per array;
- CSV (header row) and Parquet: one feature per column; int columns -> int64, other numbers ->
  float32, the rest bytes. Empty CSV cells leave the feature out of that example.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import csv
import json
import math
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..core.cpus import available_cpus
from ..core.errors import InvalidArgumentError, on_failure
from ..io.codec.example import serialize_example
from ..io.limits import load_json
from ..io.records.compression import normalize_compression
from ..io.records.index import INDEX_SUFFIX, index_path
from ..io.records.writer import TFRecordWriter, shard_name
from ..io.storage.fs import (
    as_path,
    check_storage_options,
    download,
    exists,
    filesystem,
    is_dir,
    is_url,
    upload,
)
from ..io.storage.publish import (
    ShardSetError,
    abandon_set,
    begin_set,
    file_crc32c,
    finish_set,
    manifest_path,
    publish_file,
    read_manifest,
    record_shard,
    refuse_a_live_writer,
    temporary_path,
    temporary_writer_is_dead,
    write_atomic,
)
from ..io.storage.reclaim import reclaim_set_temporaries
from ..runtime.launcher import set_parent_death_signal

if TYPE_CHECKING:
    from ..ray.executor import RayExecutor

IMAGE_EXTENSIONS = {
    ".jpg": b"jpeg",
    ".jpeg": b"jpeg",
    ".png": b"png",
    ".bmp": b"bmp",
    ".gif": b"gif",
    ".webp": b"webp",
}
DEFAULT_SHARD_SIZE = 64 << 20
_SAMPLE = 64


class Part:
    """Items ``start:stop`` of a source; picklable, so a worker process can write its shard."""

    def __init__(self, source: Source, start: int, stop: int):
        self.source, self.start, self.stop = source, start, stop

    def examples(self) -> Iterator[bytes]:
        return self.source.examples(self.start, self.stop)


class Source:
    kind = "source"

    def __len__(self) -> int:
        raise NotImplementedError

    def examples(self, start: int, stop: int) -> Iterator[bytes]:
        raise NotImplementedError

    def describe(self) -> dict:
        return {"kind": self.kind, "items": len(self)}


class ImageFolder(Source):
    """``root/<class name>/<image file>``; classes sorted by name, files sorted within a class."""

    kind = "images"

    def __init__(self, root: str):
        self.root = root
        self.classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
        self.files: list[tuple[str, int]] = []
        for label, name in enumerate(self.classes):
            folder = os.path.join(root, name)
            for file in sorted(os.listdir(folder)):
                if os.path.splitext(file)[1].lower() in IMAGE_EXTENSIONS:
                    self.files.append((os.path.join(name, file), label))
        if not self.files:
            raise InvalidArgumentError(
                f"convert: {root!r} holds no images in class sub-folders (expected {root}/<class>/<image>.jpg; "
                f"extensions {', '.join(sorted(IMAGE_EXTENSIONS))})"
            )

    def __len__(self) -> int:
        return len(self.files)

    def examples(self, start: int, stop: int) -> Iterator[bytes]:
        for relative, label in self.files[start:stop]:
            with open(os.path.join(self.root, relative), "rb") as f:
                encoded = f.read()
            yield serialize_example(
                {
                    "image/encoded": encoded,
                    "image/format": IMAGE_EXTENSIONS[os.path.splitext(relative)[1].lower()],
                    "image/filename": relative.encode("utf-8"),
                    "image/class/label": label,
                    "image/class/text": self.classes[label].encode("utf-8"),
                }
            )

    def describe(self) -> dict:
        return {**super().describe(), "classes": self.classes}


class ArrayFile(Source):
    """A .npy (one feature named after the file) or .npz (one feature per array) file; the arrays are
    memory-mapped where possible, so workers read only their rows."""

    kind = "arrays"

    def __init__(self, path: str):
        self.path = path
        arrays = self._arrays()
        sizes = {name: a.shape[0] if a.ndim else None for name, a in arrays.items()}
        if None in sizes.values() or len(set(sizes.values())) != 1:
            raise InvalidArgumentError(
                f"convert: the arrays of {path!r} must share their first dimension (one example per row), got {sizes}"
            )
        for name, array in arrays.items():
            if array.dtype.kind not in "fiubSU":
                raise InvalidArgumentError(
                    f"convert: array {name!r} of {path!r} has dtype {array.dtype}, not numbers or strings"
                )
        self.length = cast(int, next(iter(sizes.values())))  # a None size was refused above
        self.names = list(arrays)

    def _arrays(self) -> dict[str, np.ndarray]:
        try:
            if self.path.endswith(".npz"):
                with np.load(self.path, allow_pickle=False) as archive:
                    return {name: archive[name] for name in archive.files}
            stem = os.path.splitext(os.path.basename(self.path))[0]
            return {stem: np.load(self.path, mmap_mode="r", allow_pickle=False)}
        except ValueError as exc:
            why = (
                "it holds Python objects (dtype=object), which convert does not unpickle; save numbers or "
                "fixed-width strings (e.g. array.astype('S'))"
                if "allow_pickle" in str(exc) or "Python objects" in str(exc)
                else f"it is not a valid .npy/.npz file ({exc})"
            )
            raise InvalidArgumentError(f"convert: cannot read {self.path!r}: {why}") from None
        except (OSError, EOFError) as exc:
            if isinstance(exc, OSError) and exc.errno is not None:
                raise
            raise InvalidArgumentError(
                f"convert: cannot read {self.path!r}: it is not a valid .npy/.npz file ({exc})"
            ) from None

    def __len__(self) -> int:
        return self.length

    def examples(self, start: int, stop: int) -> Iterator[bytes]:
        arrays = {name: array[start:stop] for name, array in self._arrays().items()}
        for i in range(stop - start):
            yield serialize_example({name: np.asarray(array[i]) for name, array in arrays.items()})

    def describe(self) -> dict:
        return {**super().describe(), "features": self.names}


class Table(Source):
    """Columns of equal length (lists of values, None for missing) from a CSV or Parquet file."""

    kind = "table"

    def __init__(self, columns: dict[str, list]):
        self.columns = columns
        self.length = len(next(iter(columns.values()))) if columns else 0

    def __len__(self) -> int:
        return self.length

    def part(self, start: int, stop: int) -> Table:
        return Table({name: values[start:stop] for name, values in self.columns.items()})

    def examples(self, start: int, stop: int) -> Iterator[bytes]:
        names = list(self.columns)
        for i in range(start, stop):
            yield serialize_example(
                {name: _cell(self.columns[name][i]) for name in names if self.columns[name][i] is not None}
            )

    def describe(self) -> dict:
        return {**super().describe(), "features": list(self.columns)}


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        return np.float32(value)
    if isinstance(value, (list, tuple)):
        return np.asarray(value) if value and not isinstance(value[0], (bytes, str)) else list(value)
    return value


def _typed(values: list[str]) -> list:
    """CSV cells as ints if all are ints, else floats if all are numbers, else bytes; "" is missing."""
    present = [v for v in values if v != ""]
    for convert in (int, float):
        try:
            converted = [convert(v) for v in present]
        except ValueError:
            continue
        it = iter(converted)
        return [None if v == "" else next(it) for v in values]
    return [None if v == "" else v.encode("utf-8") for v in values]


def read_csv(path: str) -> Table:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        try:
            rows = list(reader)
        except csv.Error as exc:
            raise InvalidArgumentError(
                f"convert: {path!r} line {reader.line_num}: {exc} (a cell may hold at most "
                f"{csv.field_size_limit()} characters; store large values as .npy arrays or image files)"
            ) from None
        except UnicodeDecodeError as exc:
            raise InvalidArgumentError(
                f"convert: {path!r} is not UTF-8 text (byte {exc.start}: {exc.reason}); save the CSV as UTF-8"
            ) from None
    if not rows:
        raise InvalidArgumentError(f"convert: {path!r} is empty; a CSV needs a header row")
    header, body = rows[0], rows[1:]
    if len(set(header)) != len(header):
        raise InvalidArgumentError(f"convert: {path!r} repeats a column name in its header {header}")
    for line, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise InvalidArgumentError(
                f"convert: {path!r} line {line} has {len(row)} cells, the header has {len(header)}"
            )
    return Table({name: _typed([row[i] for row in body]) for i, name in enumerate(header)})


def read_parquet(path: str) -> Table:
    try:
        import pyarrow.parquet as pq  # noqa: PLC0415 (optional dependency)
    except ImportError:
        raise InvalidArgumentError(
            f"convert: reading {path!r} needs pyarrow: pip install 'headrace[parquet]'"
        ) from None
    table = pq.read_table(path)
    columns = {}
    for name in table.column_names:
        values = table.column(name).to_pylist()
        columns[name] = [v.encode("utf-8") if isinstance(v, str) else v for v in values]
    return Table(columns)


def open_source(src: str) -> Source:
    """The right reader for ``src``: a folder of class folders, .npy/.npz, .csv, or .parquet."""
    if os.path.isdir(src):
        return ImageFolder(src)
    if not os.path.exists(src):
        raise InvalidArgumentError(f"convert: {src!r} does not exist")
    extension = os.path.splitext(src)[1].lower()
    if extension in (".npy", ".npz"):
        return ArrayFile(src)
    if extension == ".csv":
        return read_csv(src)
    if extension in (".parquet", ".pq"):
        return read_parquet(src)
    raise InvalidArgumentError(
        f"convert: cannot tell how to read {src!r}: give a folder of class sub-folders of images, "
        "a .npy/.npz, a .csv or a .parquet file"
    )


def _part(source: Source, start: int, stop: int) -> Part:
    if isinstance(source, Table):  # send a worker its rows only, not the whole table
        return Part(source.part(start, stop), 0, stop - start)
    return Part(source, start, stop)


def _discard(writer: TFRecordWriter) -> None:
    """Remove a failed shard's temporary file and its index sidecar (the file may be broken: only its
    removal matters now)."""
    writer.closed = True
    for leftover in (writer.path, index_path(writer.path)):
        with contextlib.suppress(OSError):
            os.unlink(leftover)


def _write_shard(part: Part, final: str, compression: str, index: bool) -> dict:
    """Write one shard to a temporary file (named in this process, so it is reclaimable once this
    process is dead), sync it and give it its final name; returns its manifest entry."""
    writer = TFRecordWriter(temporary_path(final), compression, index=index)
    with on_failure(_discard, writer):
        for record in part.examples():
            writer.write(record)
        writer.close(sync=True)
        if index:  # the sidecar first: the shard's final name is what marks it done
            publish_file(index_path(writer.path), index_path(final))
        publish_file(writer.path, final)
    return {
        "file": os.path.basename(final),
        "bytes": writer.file_bytes,
        "crc32c": writer.file_crc32c,
        "records": writer.records,
    }


def _entry_of(final: str, records: int) -> dict:
    """The manifest entry of a shard published by an earlier, interrupted run."""
    return {
        "file": os.path.basename(final),
        "bytes": os.path.getsize(final),
        "crc32c": file_crc32c(final),
        "records": records,
    }


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: exit when the converting process dies, even by SIGKILL."""
    set_parent_death_signal()
    if os.getppid() != parent:  # it died before the kernel was told to watch it
        os._exit(70)

    def watch() -> None:  # where the kernel cannot watch (not Linux), poll
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(70)

    threading.Thread(target=watch, name="headrace convert lifeline", daemon=True).start()


def convert(
    src: Any,
    dest_prefix: Any,
    *,
    num_shards: int | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    compression_type: str | None = None,
    workers: int | None = None,
    index: bool = False,
    progress: Callable[[int, int], None] | None = None,
    storage_options: dict | None = None,
    ray_address: str | bool | None = None,
) -> list[str]:
    """Convert ``src`` into ``dest_prefix-NNNNN-of-MMMMM.tfrecord`` shards; returns all shard paths.

    ``num_shards`` defaults to what gives shards of about ``shard_size`` bytes. ``workers`` processes
    write shards in parallel (default: all cores). ``progress(records_done, records_total)`` is
    called as shards complete. ``src`` or ``dest_prefix`` may be ``protocol://`` paths (with
    ``storage_options``): the conversion then runs in a local temporary folder and the finished
    shards are uploaded under a manifest as local sets get (a remote conversion is not resumable).
    ``ray_address`` writes the shards as Ray tasks on the cluster there (``True``: a local Ray),
    ``workers`` ignored; the source and ``dest_prefix`` must be on storage every node sees.
    """
    src, prefix = as_path(src, "src"), as_path(dest_prefix, "dest_prefix")
    storage_options = check_storage_options(storage_options, "convert")
    if not (ray_address is None or isinstance(ray_address, (bool, str))):
        raise InvalidArgumentError(
            f"convert: ray_address={ray_address!r} is not allowed: a Ray address 'HOST:PORT' or 'auto', "
            "True for a local Ray, or None/False for local processes"
        )
    if ray_address is False:
        ray_address = None
    if is_url(src) or is_url(prefix):
        options = dict(
            num_shards=num_shards,
            shard_size=shard_size,
            compression_type=compression_type,
            workers=workers,
            index=index,
            progress=progress,
        )
        return _convert_remote(src, prefix, storage_options, options)
    compression = normalize_compression(compression_type)
    source = open_source(src)
    total = len(source)
    if num_shards is None:
        sample = list(source.examples(0, min(total, _SAMPLE)))
        average = sum(map(len, sample)) / max(len(sample), 1)
        num_shards = max(1, min(total, math.ceil(total * (average + 16) / shard_size)))
    if not isinstance(num_shards, int) or num_shards < 1:
        raise InvalidArgumentError(f"convert: num_shards={num_shards!r} must be a positive int")
    settings = {
        "source": os.path.abspath(src),
        **source.describe(),
        "num_shards": num_shards,
        "compression": compression,
        "index": index,
    }
    _check_settings(prefix, settings)
    bounds = [total * k // num_shards for k in range(num_shards + 1)]
    finals = [shard_name(prefix, k, num_shards) for k in range(num_shards)]
    reclaim_set_temporaries(prefix, tool="convert")
    recorded = _recorded_shards(prefix, num_shards)
    entries: list[dict | None] = []
    for k, final in enumerate(finals):
        earlier = recorded[k]
        if not os.path.exists(final):
            entries.append(None)
        elif earlier is not None and earlier["bytes"] == os.path.getsize(final):
            entries.append(earlier)
        else:  # published by a run killed before it could note it
            entries.append(_entry_of(final, bounds[k + 1] - bounds[k]))
    pending = [k for k in range(num_shards) if entries[k] is None]
    done_records = total - sum(bounds[k + 1] - bounds[k] for k in pending)
    if progress is not None:
        progress(done_records, total)
    if not pending and _complete(prefix):  # a rerun of a finished conversion changes nothing
        return finals
    body = begin_set(prefix, "headrace convert", entries, {"convert": settings_path(prefix)})
    jobs = {k: (_part(source, bounds[k], bounds[k + 1]), finals[k], compression, index) for k in pending}
    workers = available_cpus() if workers is None else max(1, int(workers))
    try:
        with on_failure(abandon_set, prefix, body):
            if ray_address is None and (workers == 1 or len(jobs) <= 1):
                for k, job in jobs.items():
                    record_shard(prefix, body, k, _write_shard(*job))
                    done_records += bounds[k + 1] - bounds[k]
                    if progress is not None:
                        progress(done_records, total)
            else:
                if ray_address is not None:
                    from ..ray.executor import RayExecutor  # noqa: PLC0415 (the optional ray extra)

                    pool: RayExecutor | concurrent.futures.ProcessPoolExecutor = RayExecutor(
                        None if ray_address is True else ray_address
                    )
                else:
                    pool = concurrent.futures.ProcessPoolExecutor(
                        max_workers=min(workers, len(jobs)),
                        initializer=_exit_with_parent,
                        initargs=(os.getpid(),),
                    )
                try:
                    futures = {pool.submit(_write_shard, *job): k for k, job in jobs.items()}
                    for future in concurrent.futures.as_completed(futures):
                        k = futures[future]
                        record_shard(prefix, body, k, future.result())
                        done_records += bounds[k + 1] - bounds[k]
                        if progress is not None:
                            progress(done_records, total)
                finally:  # on an error, drop the shards not started and wait for the ones running
                    pool.shutdown(wait=True, cancel_futures=True)
            finish_set(prefix, body, companions=(INDEX_SUFFIX,))
    finally:  # the workers have exited: whatever temporary file they left is reclaimable
        reclaim_set_temporaries(prefix)
    return finals


_STAGING = "headrace-convert"


@contextlib.contextmanager
def _staging_folder() -> Iterator[str]:
    """A local folder for a remote conversion, removed afterwards. It is named like a temporary
    file (it records this process), so the folder of a killed run is removed by the next one."""
    root = tempfile.gettempdir()
    with contextlib.suppress(OSError):
        for name in os.listdir(root):
            if name.startswith(_STAGING + ".incomplete-") and temporary_writer_is_dead(name):
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    staging = temporary_path(os.path.join(root, _STAGING))
    os.makedirs(staging)
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _convert_remote(src: str, prefix: str, storage_options: dict | None, options: dict) -> list[str]:
    """Convert in a local temporary folder (downloading a remote ``src``), then upload the shards
    (and their indexes) to a remote ``prefix``; the folder is removed whatever happens (by the next
    remote conversion if this process is killed)."""
    with _staging_folder() as staging:
        if is_url(src):
            if not exists(src, storage_options):
                raise InvalidArgumentError(f"convert: {src!r} does not exist")
            local_src = os.path.join(staging, "src", src.rstrip("/").rsplit("/", 1)[-1])
            os.makedirs(os.path.dirname(local_src))
            if is_dir(src, storage_options):
                fs, inner = filesystem(src, storage_options)
                fs.get(inner.rstrip("/") + "/", local_src, recursive=True)
            else:
                download(src, local_src, storage_options)
            src = local_src
        if not is_url(prefix):
            return convert(src, prefix, **options)
        reclaim_set_temporaries(prefix, storage_options, tool="convert")
        refuse_a_live_writer(prefix, "convert", storage_options)
        local_prefix = os.path.join(staging, "out", prefix.rstrip("/").rsplit("/", 1)[-1])
        shards = convert(src, local_prefix, **options)
        finals = [prefix + shard[len(local_prefix) :] for shard in shards]
        # The same publication as a local set: a manifest saying "publishing" first (readers refuse
        # the set meanwhile), the uploads, then "complete" with each shard's size and CRC32C.
        staged = read_manifest(manifest_path(local_prefix))
        body = begin_set(prefix, "convert", staged["shards"], staged.get("settings"), storage_options)
        with on_failure(abandon_set, prefix, body, storage_options):
            for shard, final in zip(shards, finals):
                if options["index"]:  # the sidecar first, as local publication does
                    upload(index_path(shard), index_path(final), storage_options)
                upload(shard, final, storage_options)
            finish_set(prefix, body, companions=(INDEX_SUFFIX,), storage_options=storage_options)
        return finals


def _complete(prefix: str) -> bool:
    try:
        return read_manifest(manifest_path(prefix))["state"] == "complete"
    except (ShardSetError, OSError):
        return False


def _recorded_shards(prefix: str, num_shards: int) -> list[dict | None]:
    """What an earlier run's manifest says about each shard (None where it says nothing usable)."""
    recorded: list[dict | None] = [None] * num_shards
    try:
        manifest = read_manifest(manifest_path(prefix)) if os.path.exists(manifest_path(prefix)) else None
    except ShardSetError:
        return recorded
    for k, entry in enumerate((manifest or {}).get("shards", [])[:num_shards]):
        if isinstance(entry, dict) and entry.get("file") == os.path.basename(
            shard_name(prefix, k, num_shards)
        ):
            recorded[k] = entry
    return recorded


_MAX_SETTINGS = 1 << 20  # convert's recorded settings: a few dozen fields


def settings_path(prefix: str) -> str:
    """Where convert records its settings: a hidden file beside the shards, out of their globs.

    >>> settings_path("out/train")
    'out/.train.convert.json'
    """
    directory, stem = os.path.split(prefix)
    return os.path.join(directory, f".{stem}.convert.json")


def _check_settings(prefix: str, settings: dict) -> None:
    path = settings_path(prefix)
    if os.path.exists(path):
        try:
            with open(path, "rb") as f:
                saved = load_json(f.read(_MAX_SETTINGS + 1), "its JSON", _MAX_SETTINGS)
        except ValueError as exc:
            raise InvalidArgumentError(
                f"convert: {path} is damaged ({exc}); delete it and the shards of {prefix} to start over"
            ) from None
        if not isinstance(saved, dict) or saved != json.loads(json.dumps(settings)):
            saved = saved if isinstance(saved, dict) else {}
            changed = sorted(k for k in set(saved) | set(settings) if saved.get(k) != settings.get(k))
            raise InvalidArgumentError(
                f"convert: {path} records an earlier conversion with other settings (differing: "
                f"{', '.join(changed)}); resume with the same settings, or delete its shards and {path}"
            )
        return
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    write_atomic(path, json.dumps(settings, indent=1, sort_keys=True).encode())
