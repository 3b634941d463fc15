"""``headrace inspect``, ``index``, ``convert`` and ``reclaim``: record files from the shell.

Wired into the ``headrace`` command by :func:`add_commands`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from typing import IO, Any

from ..core.errors import HeadraceError, on_failure
from ..io.codec.schema import NotAMessage, decode_example, decode_sequence_example, infer_schema, record_kind
from ..io.records.compression import detect_compression
from ..io.records.index import build_index, check_index
from ..io.records.tfrecord import RecordReader
from ..io.storage.fs import file_size, open_file
from ..io.storage.reclaim import ShardSetWarning, reclaim_shards
from .convert import convert

SAMPLE_RECORDS = 200  # records read for the schema


class ProgressBar:
    """One line on stderr, redrawn at most 10 times a second; when stderr is not a terminal, only the
    final state is printed."""

    def __init__(self, label: str, total: int | None = None, unit: str = "B", stream: IO[str] | None = None):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.done = 0
        self.start = time.monotonic()
        self._drawn = 0.0

    def _amount(self, value: float) -> str:
        if self.unit != "B":
            return f"{value:,.0f}"
        for unit in ("B", "KB", "MB", "GB"):
            if value < 1000 or unit == "GB":
                return f"{value:.1f} {unit}" if unit != "B" else f"{value:.0f} B"
            value /= 1000
        return f"{value:.1f} GB"  # pragma: no cover

    def text(self) -> str:
        elapsed = max(time.monotonic() - self.start, 1e-9)
        rate = (
            f"{self._amount(self.done / elapsed)}/s"
            if self.unit == "B"
            else f"{self.done / elapsed:,.0f} {self.unit}/s"
        )
        if self.total:
            fraction = min(self.done / self.total, 1.0)
            bar = "#" * int(fraction * 24)
            return (
                f"{self.label} [{bar:<24}] {fraction:6.1%} "
                f"{self._amount(self.done)}/{self._amount(self.total)} {rate}"
            )
        return f"{self.label} {self._amount(self.done)} {rate}"

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        now = time.monotonic()
        if self.live and now - self._drawn >= 0.1:
            self.stream.write("\r" + self.text())
            self.stream.flush()
            self._drawn = now

    def close(self) -> None:
        self.stream.write(("\r" if self.live else "") + self.text() + "\n")
        self.stream.flush()

    def end_line(self) -> None:
        """End the progress line after a failure, so the error starts on its own."""
        if self.live:
            self.stream.write("\n")


def _size(text: str) -> int:
    """``64MB``, ``1.5GiB``, ``100000`` -> bytes."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([kKmMgGtT]?)(i?)[bB]?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 64MB or 100000")
    number, prefix, binary = match.groups()
    base = 1024 if binary else 1000
    return int(float(number) * base ** " kmgt".index(prefix.lower() or " "))


def _storage_option(text: str) -> tuple[list[str], Any]:
    """``KEY=VALUE`` of ``--storage-option``: dots in KEY nest (``client_kwargs.endpoint_url=...``),
    VALUE is JSON when it parses (``anon=true``, ``retries=3``), else a string."""
    key, sep, value = text.partition("=")
    if not sep or not key or any(not part for part in key.split(".")):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not KEY=VALUE (e.g. anon=true or client_kwargs.endpoint_url=http://host:9000)"
        )
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = value
    return key.split("."), parsed


def storage_options_of(items: list | None) -> dict | None:
    """The ``storage_options`` dict that repeated ``--storage-option KEY=VALUE`` flags spell."""
    if not items:
        return None
    options: dict = {}
    for keys, value in items:
        target = options
        for key in keys[:-1]:
            target = target.setdefault(key, {})
            if not isinstance(target, dict):
                raise HeadraceError(f"--storage-option {'.'.join(keys)}: {key} is already a value")
        target[keys[-1]] = value
    return options


def _compression_of(path: str, given: str | None, storage_options: dict | None = None) -> str | None:
    if given is not None:
        return given
    with open_file(path, "rb", storage_options) as f:
        return detect_compression(f.read(16))


#: Leading bytes that name a value's format, for ``inspect``'s one-line summaries.
_MAGIC = (
    (b"\xff\xd8\xff", "JPEG"),
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"\x1f\x8b", "gzip"),
    (b"%PDF", "PDF"),
    (b"\x93NUMPY", "npy"),
)
TEXT_SHOWN = 60  # characters of text shown whole (longer text: its first TEXT_PREFIX and its length)
TEXT_PREFIX = 40
HEX_PREFIX = 16  # bytes of a binary value shown as hex
PROGRESS_MIN_BYTES = 64 * 10**6  # smaller files are read in well under a second: no progress line


def _kind_of_bytes(value: bytes) -> str | None:
    for magic, kind in _MAGIC:
        if value.startswith(magic):
            return kind
    if value[:4] == b"RIFF" and value[8:12] == b"WEBP":
        return "WebP"
    return None


def describe_bytes(value: bytes, full: bool = False) -> str:
    """One bytes value as ``inspect`` shows it: short text whole, anything else as its kind, length and
    first bytes (``full``: the whole value, text or hex).

    >>> describe_bytes(b"cat")
    "'cat'"
    >>> describe_bytes(bytes.fromhex("ffd8ffe0") + bytes(69_000))
    '<JPEG, 69,004 bytes: ffd8ffe000000000...>'
    >>> describe_bytes(bytes(range(5)))
    '<5 bytes: 0001020304>'
    """
    kind = _kind_of_bytes(value)
    text = None
    if kind is None:
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            if not (text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable()):
                text = None
    if full:
        return repr(text) if text is not None else value.hex()
    if text is not None:
        if len(text) <= TEXT_SHOWN:
            return repr(text)
        return f"<UTF-8 text, {len(value):,} bytes: {text[:TEXT_PREFIX]!r}...>"
    head = value[:HEX_PREFIX].hex() + ("..." if len(value) > HEX_PREFIX else "")
    return f"<{kind + ', ' if kind else ''}{len(value):,} bytes: {head}>"


def _format_values(values: list, limit: int = 5, full: bool = False) -> str:
    shown = values if full else values[:limit]
    parts = [
        describe_bytes(v, full) if isinstance(v, bytes) else repr(round(v, 6) if isinstance(v, float) else v)
        for v in shown
    ]
    more = f" ... ({len(values)} values)" if len(values) > len(shown) else ""
    return f"[{', '.join(parts)}]{more}"


class _ScanProgress:
    """The record scan's progress on stderr: only on a terminal, and only for files big enough to take
    a while; the line is erased when the scan ends, so the report is not interleaved with it."""

    def __init__(self, path: str, size: int, compressed: bool, stream: IO[str] | None = None):
        stream = stream if stream is not None else sys.stderr
        live = size >= PROGRESS_MIN_BYTES and hasattr(stream, "isatty") and stream.isatty()
        # Uncompressed, the bytes read are the file's (16 bytes of framing a record); compressed,
        # they are the stream's, whose total is unknown.
        self.bar = (
            ProgressBar(f"inspect {path}", None if compressed else size, stream=stream) if live else None
        )

    def update(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stream.write("\r\033[K")  # erase the line
            self.bar.stream.flush()


def inspect_file(
    path: str,
    compression: str | None = None,
    samples: int = 3,
    storage_options: dict | None = None,
    full: bool = False,
    progress_stream: IO[str] | None = None,
) -> dict:
    """What ``headrace inspect`` reports about one file, as a dict. Bytes values are summarised (kind,
    length, first bytes) unless ``full``; a long scan shows its progress on ``progress_stream``
    (stderr) when that is a terminal."""
    report: dict[str, Any] = {"file": path, "size_bytes": file_size(path, storage_options)}
    detected = _compression_of(path, compression, storage_options)
    if detected is None:
        report["error"] = "not a TFRecord file (neither plain frames nor a GZIP/ZLIB stream)"
        return report
    report["compression"] = detected or "none"
    count = total = 0
    smallest = largest = None
    sample: list[bytes] = []
    progress = _ScanProgress(path, report["size_bytes"], bool(detected), progress_stream)
    try:
        with RecordReader(path, detected, storage_options=storage_options) as reader:
            for chunk in reader.chunks(4096):
                for record in chunk:
                    size = len(record)
                    total += size
                    smallest = size if smallest is None else min(smallest, size)
                    largest = size if largest is None else max(largest, size)
                    if len(sample) < SAMPLE_RECORDS:
                        sample.append(record)
                count += len(chunk)
                progress.update(total + 16 * count)
    except HeadraceError as exc:
        report["error"] = str(exc)
    finally:
        progress.close()
    report.update(records=count, record_bytes=total, smallest=smallest, largest=largest)
    kind = record_kind(sample)
    report["kind"] = kind
    if kind == "Example":
        report["schema"] = {key: repr(spec) for key, spec in infer_schema(sample).items()}
        report["samples"] = [
            {key: f"{k}: {_format_values(v, full=full)}" for key, (k, v) in decode_example(r).items()}
            for r in sample[:samples]
        ]
    elif kind == "SequenceExample":
        shown = []
        for record in sample[:samples]:
            context, lists = decode_sequence_example(record)
            shown.append(
                {
                    "context": {
                        key: f"{k}: {_format_values(v, full=full)}" for key, (k, v) in context.items()
                    },
                    "feature_lists": {key: f"{len(steps)} steps" for key, steps in lists.items()},
                }
            )
        report["samples"] = shown
    elif sample:
        report["samples"] = [describe_bytes(r, full) for r in sample[:samples]]
    return report


def _print_report(report: dict, out: IO[str]) -> None:
    out.write(f"{report['file']}\n")
    for key in ("size_bytes", "compression", "records", "record_bytes", "smallest", "largest", "kind"):
        if key in report:
            out.write(f"  {key}: {report[key]}\n")
    if "schema" in report:
        out.write("  schema:\n")
        for key, spec in report["schema"].items():
            out.write(f"    {key!r}: {spec}\n")
    for i, sample in enumerate(report.get("samples", [])):
        out.write(f"  record {i}:\n")
        if isinstance(sample, dict):
            for key, value in sample.items():
                out.write(f"    {key}: {value}\n")
        else:
            out.write(f"    {sample}\n")
    if "error" in report:
        out.write(f"  ERROR: {report['error']}\n")


def run_inspect(args: argparse.Namespace) -> int:
    reports = []
    for path in args.files:
        try:
            reports.append(
                inspect_file(
                    path, args.compression, args.samples, storage_options_of(args.storage_option), args.full
                )
            )
        except (OSError, NotAMessage) as exc:
            reports.append({"file": path, "error": str(exc)})
    if args.json:
        json.dump(reports, sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        for report in reports:
            _print_report(report, sys.stdout)
    return 1 if any("error" in r for r in reports) else 0


def run_index(args: argparse.Namespace) -> int:
    status = 0
    storage_options = storage_options_of(args.storage_option)
    for path in args.files:
        try:
            compression = _compression_of(path, args.compression, storage_options)
            if compression is None:
                raise HeadraceError(
                    f"{path}: not a TFRecord file (neither plain frames nor a GZIP/ZLIB stream)"
                )
            index, reason = check_index(path, compression, storage_options)
            if index is not None and not args.force:
                print(f"{path}: index is fresh ({len(index)} records)")
                continue
            bar = ProgressBar(path, file_size(path, storage_options) if not compression else None)
            index = build_index(path, compression, progress=bar.update, storage_options=storage_options)
            bar.close()
            print(
                f"{path}: indexed {len(index)} records" + (f" (was {reason})" if reason != "missing" else "")
            )
        except (HeadraceError, OSError) as exc:
            print(f"{path}: ERROR: {exc}", file=sys.stderr)
            status = 1
    return status


def run_convert(args: argparse.Namespace) -> int:
    bar = ProgressBar(f"convert {args.src}", unit="records")
    with on_failure(bar.end_line):  # main() prints the user's errors as one line
        paths = convert(
            args.src,
            args.dest_prefix,
            num_shards=args.num_shards,
            shard_size=args.shard_size,
            compression_type=args.compression,
            workers=args.workers,
            index=args.index,
            progress=bar.update,
            storage_options=storage_options_of(args.storage_option),
            ray_address=getattr(args, "ray", None),
        )
    bar.close()
    print(f"{len(paths)} shards: {paths[0]} .. {paths[-1]}" if len(paths) > 1 else f"1 shard: {paths[0]}")
    return 0


def run_reclaim(args: argparse.Namespace) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ShardSetWarning)
        removed = reclaim_shards(
            args.prefix, storage_options=storage_options_of(args.storage_option), force=args.force
        )
    for path in removed:
        print(f"removed {path}")
    print(f"{len(removed)} temporary file{'' if len(removed) == 1 else 's'} removed")
    for warning in caught:
        print(str(warning.message), file=sys.stderr)
    return 0


def add_commands(subparsers: Any) -> None:
    """Add ``inspect``, ``index``, ``convert`` and ``reclaim`` to the ``headrace`` command's subparsers."""
    compression = {
        "choices": ["", "GZIP", "ZLIB"],
        "default": None,
        "help": "default: detected from the file",
    }
    storage = {
        "action": "append",
        "type": _storage_option,
        "metavar": "KEY=VALUE",
        "help": "an fsspec storage option for protocol:// paths, repeatable "
        "(e.g. client_kwargs.endpoint_url=http://127.0.0.1:9000, anon=true)",
    }
    inspect = subparsers.add_parser(
        "inspect", help="record count, sizes, compression, inferred schema, samples"
    )
    inspect.add_argument("files", nargs="+", metavar="FILE")
    inspect.add_argument("--compression", **compression)
    inspect.add_argument("--samples", type=int, default=3, help="records to show (default 3)")
    inspect.add_argument("--json", action="store_true", help="machine-readable output")
    inspect.add_argument(
        "--full",
        action="store_true",
        help="show whole values (bytes as text or hex, every value of a feature); by default bytes "
        "are summarised as their kind (JPEG, PNG, text ...), length and first bytes",
    )
    inspect.add_argument("--storage-option", **storage)
    inspect.set_defaults(handler=run_inspect)

    index = subparsers.add_parser("index", help="build sidecar indexes (every CRC verified)")
    index.add_argument("files", nargs="+", metavar="FILE")
    index.add_argument("--compression", **compression)
    index.add_argument("--force", action="store_true", help="rebuild fresh indexes too")
    index.add_argument("--storage-option", **storage)
    index.set_defaults(handler=run_index)

    conv = subparsers.add_parser(
        "convert", help="images in class folders, .npy/.npz, CSV or Parquet -> sharded TFRecords of Examples"
    )
    conv.add_argument("src", metavar="SRC")
    conv.add_argument("dest_prefix", metavar="DEST_PREFIX")
    shards = conv.add_mutually_exclusive_group()
    shards.add_argument("--num-shards", type=int, default=None)
    shards.add_argument(
        "--shard-size", type=_size, default=64_000_000, help="target shard size (default 64MB)"
    )
    conv.add_argument("--compression", choices=["", "GZIP", "ZLIB"], default=None)
    conv.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    conv.add_argument("--index", action="store_true", help="also write sidecar indexes")
    conv.add_argument("--storage-option", **storage)
    conv.add_argument(
        "--ray",
        nargs="?",
        const=True,
        default=None,
        metavar="ADDRESS",
        help="write the shards as tasks on the Ray cluster at ADDRESS (HOST:PORT or auto; alone: a local Ray); "
        "needs headrace[ray] and storage every node sees",
    )
    conv.set_defaults(handler=run_convert)

    reclaim = subparsers.add_parser(
        "reclaim", help="remove the temporary files interrupted writers of a shard set left"
    )
    reclaim.add_argument("prefix", metavar="PREFIX")
    reclaim.add_argument(
        "--force",
        action="store_true",
        help="also those of writers on other hosts (say that none runs), and mark their unfinished set abandoned",
    )
    reclaim.add_argument("--storage-option", **storage)
    reclaim.set_defaults(handler=run_reclaim)
