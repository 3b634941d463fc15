"""Opening files: local paths with the standard library, ``protocol://`` paths through fsspec.

fsspec is optional (``pip install headrace[fsspec]``): it is imported only when a path names a
protocol such as ``s3://``, ``gs://``, ``http://`` or ``memory://``. Every function takes
``storage_options``, the keyword arguments of the protocol's filesystem (credentials, endpoint,
region ...), as ``fsspec.open`` does; local paths ignore them.

Remote files opened for reading retry transient errors (a dropped connection, a timeout, a
throttled request) with exponential backoff, reopening the file at the offset that failed, within
one end-to-end budget per read: ``storage_options["retries"]`` attempts (default
:data:`READ_ATTEMPTS`) and ``storage_options["deadline"]`` seconds (default :data:`DEADLINE_S`).
headrace takes both keys out and sets the layers below from them, so their retries do not multiply
with its own: s3fs and botocore make one attempt per headrace attempt and time out a stalled
connection within the deadline; fsspec's HTTP client times out within it too. Then
:class:`RemoteReadError` says how many attempts were made, over how long, and the last cause.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "a.bin")
>>> with open_file(path, "wb") as f:
...     _ = f.write(b"abc")
>>> file_size(path)
3
>>> [os.path.basename(p) for p in glob(os.path.join(os.path.dirname(path), "*"))]
['a.bin']
"""

from __future__ import annotations

import datetime
import glob as _glob
import os
import random
import re
import sys
import time
from collections.abc import Mapping
from typing import IO, Any

from ...core.errors import InvalidArgumentError, attempt

_PROTOCOL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")

#: Tries of one read (or open) of a remote file before :class:`RemoteReadError`.
READ_ATTEMPTS = 5
#: Seconds before the first retry; doubled for each later one (with up to 50% random jitter).
RETRY_BACKOFF_S = 0.2
#: Seconds one remote read (an open, a read, a seek), its retries included, may take in all.
DEADLINE_S = 60.0
#: storage_options keys headrace reads itself (the budget of each read), never passed to fsspec.
BUDGET_KEYS = ("deadline", "retries")

# The files headrace writes beside the user's data. Globs never return them: a `dir/*` read as data
# would fail on them. (Kept in step with index.index_path, publish.manifest_path and
# convert.settings_path by tests/io/test_remote_fs.py.)
_SIDECAR_SUFFIXES = (".hridx",)
_HIDDEN_SIDECAR_SUFFIXES = (".manifest.json", ".convert.json")
_TEMPORARY_MARK = ".incomplete-"


def as_path(path: Any, argument: str = "path") -> str:
    """A path as ``str``: accepts str, bytes, ``os.PathLike`` and numpy string scalars.

    Bytes are decoded as the operating system does (``os.fsdecode``: UTF-8 with surrogateescape on
    POSIX), so a file name that is not UTF-8, e.g. from ``list_files``, opens the same file."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if hasattr(path, "item") and getattr(path, "shape", None) == ():  # numpy scalar or 0-d array
        path = path.item()
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str) or not path:
        raise InvalidArgumentError(
            f"{argument}={path!r} is not a file path: pass a non-empty str, bytes or os.PathLike"
        )
    if path.startswith("file://"):
        return path[len("file://") :]
    return path


def is_url(path: str) -> bool:
    """True for ``protocol://...`` paths, which go through fsspec."""
    head, sep, _ = path.partition("://")
    return bool(sep) and _PROTOCOL.fullmatch(head) is not None


def check_storage_options(storage_options: Any, where: str) -> dict | None:
    """``storage_options`` as a plain dict (None when empty), or InvalidArgumentError naming ``where``.

    >>> check_storage_options({"anon": True}, "list_files")
    {'anon': True}
    """
    if storage_options is None:
        return None
    if not isinstance(storage_options, Mapping) or not all(isinstance(k, str) for k in storage_options):
        raise InvalidArgumentError(
            f"{where}: storage_options={storage_options!r} is not allowed: pass a dict of the "
            "filesystem's keyword arguments, e.g. {'key': ..., 'secret': ..., 'client_kwargs': {...}}"
        )
    return dict(storage_options) or None


def read_budget(storage_options: dict | None) -> tuple[float, int]:
    """``(deadline in seconds, attempts)`` of one remote read, from ``storage_options``.

    >>> read_budget({"deadline": 5, "key": "k"})
    (5.0, 5)
    """
    options = storage_options or {}
    deadline, attempts = options.get("deadline", DEADLINE_S), options.get("retries", READ_ATTEMPTS)
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or not deadline > 0:
        raise InvalidArgumentError(
            f"storage_options['deadline']={deadline!r}: pass the seconds a remote read may take, retries "
            f"included (> 0; default {DEADLINE_S:g})"
        )
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise InvalidArgumentError(
            f"storage_options['retries']={attempts!r}: pass how many attempts a remote read may make "
            f"across every layer (an int >= 1; default {READ_ATTEMPTS})"
        )
    return float(deadline), attempts


def _layer_options(protocol: str, options: dict, deadline: float) -> dict:
    """``options`` for the protocol's filesystem, with its own retries off and its timeouts within
    ``deadline`` (where the layer lets us set them), so one budget holds across the layers."""
    if protocol in ("s3", "s3a"):
        config = dict(options.get("config_kwargs") or {})
        config["retries"] = {"total_max_attempts": 1, "mode": "standard"}  # botocore: no retry of its own
        config["connect_timeout"] = min(config.get("connect_timeout", deadline), deadline)
        config["read_timeout"] = min(config.get("read_timeout", deadline), deadline)
        return {**options, "config_kwargs": config}
    if protocol in ("http", "https"):
        client = dict(options.get("client_kwargs") or {})
        if "timeout" not in client:
            import aiohttp  # noqa: PLC0415 (fsspec's HTTP filesystem needs it)

            client["timeout"] = aiohttp.ClientTimeout(
                total=deadline, sock_connect=deadline, sock_read=deadline
            )
        return {**options, "client_kwargs": client}
    return options


def filesystem(path: str, storage_options: dict | None = None):
    """``(fsspec filesystem, path inside it)`` for a ``protocol://`` path, its layers set to the
    budget of :func:`read_budget` (see the module's docstring)."""
    try:
        import fsspec  # noqa: PLC0415 (optional dependency, only for protocol:// paths)
    except ImportError:
        raise InvalidArgumentError(
            f"{path!r} names a remote filesystem, which needs fsspec: pip install 'headrace[fsspec]' "
            "(plus the protocol's package, e.g. s3fs or gcsfs)"
        ) from None
    deadline, _ = read_budget(storage_options)
    options = {k: v for k, v in (storage_options or {}).items() if k not in BUDGET_KEYS}
    protocol = path.partition("://")[0].lower()
    try:
        fs, inner = fsspec.core.url_to_fs(path, **_layer_options(protocol, options, deadline))
    except ImportError as exc:  # fsspec knows the protocol but its package is missing
        raise InvalidArgumentError(f"{path!r}: {exc}") from None
    except ValueError as exc:
        raise InvalidArgumentError(f"{path!r}: {exc}") from None
    if protocol in ("s3", "s3a") and getattr(fs, "retries", 1) != 1:
        fs.retries = 1  # s3fs's own retry loop (an instance made with headrace's botocore config)
    return fs, inner


# --- transient errors -------------------------------------------------------------------------------
_PERMANENT = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError, FileExistsError)
_TRANSIENT_MODULES = ("aiohttp", "urllib3", "requests", "http")


def is_transient(exc: BaseException) -> bool:
    """Whether retrying the same read may succeed: connection, timeout and service errors, not a
    missing file or a refused permission."""
    cause = exc.__cause__
    if isinstance(exc, FileNotFoundError) and cause is not None and not isinstance(cause, _PERMANENT):
        # fsspec's HTTP filesystem reports any failure to look a file up (a timeout, a 503) as
        # FileNotFoundError: what it came from decides.
        status = getattr(cause, "status", None)
        if isinstance(status, int):
            return status >= 500 or status == 429
        return is_transient(cause)
    if isinstance(exc, _PERMANENT):
        return False
    if isinstance(exc, OSError):  # ConnectionError, TimeoutError, and what s3fs/gcsfs translate to
        return True
    module = type(exc).__module__.split(".")[0]
    if module in _TRANSIENT_MODULES:
        return True
    name = type(exc).__name__
    return module == "botocore" and any(w in name for w in ("Connection", "Timeout", "IncompleteRead"))


def _backoff_s(attempt: int) -> float:
    return RETRY_BACKOFF_S * (2**attempt) * (1 + 0.5 * random.random())


class RemoteReadError(OSError):
    """A remote read that ran out of its budget (attempts or deadline); ``path`` and ``offset`` say
    where, ``attempts`` and ``seconds`` what it tried, ``__cause__`` the last error."""

    def __init__(
        self, path: str, offset: int, attempts: int, cause: BaseException, seconds: float = 0.0, why: str = ""
    ):
        super().__init__(
            f"{path}: reading at byte offset {offset} failed after {attempts} attempt"
            f"{'s' if attempts != 1 else ''} over {seconds:.1f} s{' (' + why + ')' if why else ''}; last "
            f"cause: {type(cause).__name__}: {cause}. Check the connection, the endpoint and the "
            "credentials (storage_options; 'deadline' and 'retries' set the budget), then resume from "
            "the last checkpoint"
        )
        self.path, self.offset, self.attempts, self.seconds = path, offset, attempts, seconds


class RetryingFile:
    """A remote file opened for reading whose reads survive transient errors: a failed read is
    retried with backoff on a freshly opened file at the same offset, within the budget of
    :func:`read_budget` per read."""

    def __init__(
        self, path: str, fs: Any, inner: str, deadline: float = DEADLINE_S, attempts: int = READ_ATTEMPTS
    ):
        self.path, self._fs, self._inner = path, fs, inner
        self.deadline, self.attempts = deadline, attempts
        self._position = 0
        self._file = self._retry(lambda: fs.open(inner, "rb"), reopen=False)

    def _retry(self, operation, reopen: bool = True):
        start = time.monotonic()
        for tried in range(self.attempts):
            try:
                if reopen and self._file is None:
                    self._file = self._fs.open(self._inner, "rb")
                    self._file.seek(self._position)
                return operation()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                if reopen:
                    self._drop()  # a broken connection: the next try (or a later read) opens a new one
                spent = time.monotonic() - start
                delay = _backoff_s(tried)
                if tried + 1 == self.attempts:
                    why = f"the budget of {self.attempts} attempts"
                elif spent + delay >= self.deadline:
                    why = f"the deadline of {self.deadline:g} s"
                else:
                    time.sleep(delay)
                    continue
                raise RemoteReadError(self.path, self._position, tried + 1, exc, spent, why) from exc
        raise AssertionError("unreachable")

    def _drop(self) -> None:
        file, self._file = getattr(self, "_file", None), None
        if file is not None:
            attempt(file.close)  # a broken connection may fail to close too: the new one replaces it

    def read(self, size: int = -1) -> bytes:
        data = self._retry(lambda: self._file.read(size))
        self._position += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(memoryview(buffer).nbytes)
        memoryview(buffer).cast("B")[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        self._position = self._retry(lambda: self._file.seek(offset, whence))
        return self._position

    def tell(self) -> int:
        return self._position

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return self._file is None

    def close(self) -> None:
        self._drop()

    def __enter__(self) -> RetryingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- files --------------------------------------------------------------------------------------------
def open_file(path: str, mode: str = "rb", storage_options: dict | None = None) -> IO[bytes]:
    """Open a local path with ``open``, a ``protocol://`` path with fsspec (reads retried)."""
    if is_url(path):
        fs, inner = filesystem(path, storage_options)
        if mode == "rb":
            deadline, attempts = read_budget(storage_options)
            return RetryingFile(path, fs, inner, deadline, attempts)  # type: ignore[return-value]
        return fs.open(inner, mode)
    return open(path, mode)  # noqa: SIM115 (the caller closes it)


def exists(path: str, storage_options: dict | None = None) -> bool:
    if is_url(path):
        fs, inner = filesystem(path, storage_options)
        return fs.exists(inner)
    return os.path.exists(path)


def file_size(path: str, storage_options: dict | None = None) -> int | None:
    """Size in bytes, or None when the filesystem cannot tell."""
    if is_url(path):
        fs, inner = filesystem(path, storage_options)
        try:
            size = fs.size(inner)
        except (NotImplementedError, KeyError):
            return None
        return None if size is None else int(size)
    return os.path.getsize(path)


def modified_ns(path: str, storage_options: dict | None = None) -> int | None:
    """Modification time in nanoseconds, or None when the filesystem cannot tell."""
    if is_url(path):
        fs, inner = filesystem(path, storage_options)
        try:
            stamp = fs.modified(inner)
        except (NotImplementedError, KeyError, AttributeError, OSError):
            return None
        if isinstance(stamp, datetime.datetime):
            return int(stamp.timestamp() * 1e9)
        return None
    return os.stat(path).st_mtime_ns


def replace(source: str, destination: str, storage_options: dict | None = None) -> None:
    """Move ``source`` over ``destination`` (atomic on local filesystems; a copy and a delete on
    object stores, where a reader sees the old object or the whole new one)."""
    if is_url(destination):
        fs, inner_source = filesystem(source, storage_options)
        _, inner_destination = filesystem(destination, storage_options)
        fs.mv(inner_source, inner_destination)
        return
    os.replace(source, destination)


# Stores where one write replaces a whole object at once (a reader sees the old object or the new
# one). On other filesystems (local://, sftp://, hdfs:// ...) a reader can see a file half written.
_WHOLE_OBJECT_PROTOCOLS = frozenset(
    {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oci", "oss", "memory"}
)


def writes_whole_objects(path: str, storage_options: dict | None = None) -> bool:
    """Whether a write to the ``protocol://`` path ``path`` becomes visible all at once (object stores).

    >>> writes_whole_objects("memory://bucket/a"), writes_whole_objects("local:///tmp/a")
    (True, False)
    """
    fs, _ = filesystem(path, storage_options)
    protocols = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    return any(p in _WHOLE_OBJECT_PROTOCOLS for p in protocols)


def remove(path: str, storage_options: dict | None = None) -> None:
    if is_url(path):
        fs, inner = filesystem(path, storage_options)
        fs.rm(inner)
        return
    os.remove(path)


def make_parent_dirs(path: str, storage_options: dict | None = None) -> None:
    if is_url(path):
        fs, inner = filesystem(path, storage_options)
        parent = inner.rsplit("/", 1)[0] if "/" in inner else ""
        if parent:
            fs.makedirs(parent, exist_ok=True)
        return
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)


def upload(local: str, remote: str, storage_options: dict | None = None) -> None:
    """Copy the local file ``local`` to the ``protocol://`` path ``remote``."""
    fs, inner = filesystem(remote, storage_options)
    fs.put_file(local, inner)


def download(remote: str, local: str, storage_options: dict | None = None) -> None:
    """Copy the ``protocol://`` file ``remote`` to the local path ``local``."""
    fs, inner = filesystem(remote, storage_options)
    fs.get_file(inner, local)


def list_dir(path: str, storage_options: dict | None = None, *, fresh: bool = False) -> list[str]:
    """Full paths of the entries of a directory, sorted. ``fresh=True``: never from a listing fsspec
    cached (another process may have changed the folder since)."""
    if is_url(path):
        fs, inner = filesystem(path, storage_options)
        if fresh:
            fs.invalidate_cache(inner)
        return sorted(_outer(path, fs, entry) for entry in fs.ls(inner, detail=False))
    return sorted(os.path.join(path, name) for name in os.listdir(path))


def is_dir(path: str, storage_options: dict | None = None) -> bool:
    if is_url(path):
        fs, inner = filesystem(path, storage_options)
        return fs.isdir(inner)
    return os.path.isdir(path)


# --- globbing -----------------------------------------------------------------------------------------
def is_sidecar(path: str) -> bool:
    """Whether ``path`` is a file headrace keeps beside data (an index, a shard set's manifest,
    convert's settings, or a temporary of one): never data to read.

    >>> is_sidecar("out/train-00000-of-00002.hridx"), is_sidecar("out/.train.manifest.json")
    (True, True)
    >>> is_sidecar("out/train-00000-of-00002"), is_sidecar("out/.hidden.tfrecord")
    (False, False)
    """
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if os.sep != "/":  # pragma: no cover (Windows)
        name = name.rsplit(os.sep, 1)[-1]
    name = name.split(_TEMPORARY_MARK, 1)[0]  # a sidecar's temporary is a sidecar too
    if name.endswith(_SIDECAR_SUFFIXES):
        return True
    return name.startswith(".") and name.endswith(_HIDDEN_SIDECAR_SUFFIXES)


def _outer(pattern: str, fs: Any, inner: str) -> str:
    """A path fsspec returned, spelled the way the user spelled the protocol (``memory://b/x``, not
    ``memory:///b/x``), so it reopens with the same ``storage_options``."""
    protocol, _, rest = pattern.partition("://")
    marker = getattr(fs, "root_marker", "") or ""
    if marker and inner.startswith(marker) and not rest.startswith(marker):
        inner = inner[len(marker) :]
    return f"{protocol}://{inner}"


def glob(pattern: str, storage_options: dict | None = None) -> list[str]:
    """Paths matching one glob pattern, sorted, local or ``protocol://`` (as ``tf.io.gfile.glob``).

    ``*``, ``?`` and ``[...]`` match in every path component, names starting with a dot included;
    ``**`` is an ordinary ``*`` (no recursion). headrace's own sidecar files (:func:`is_sidecar`)
    are never returned.
    """
    if is_url(pattern):
        fs, inner = filesystem(pattern, storage_options)
        # fsspec's "**" recurses; tf.io.gfile's does not.
        found = [_outer(pattern, fs, p) for p in fs.glob(inner.replace("**", "*"))]
    elif sys.version_info >= (3, 11):
        found = _glob.glob(pattern, include_hidden=True)
    else:  # pragma: no cover (Python 3.10: dot-files need an explicit dot in the pattern)
        found = _glob.glob(pattern)
    return sorted(p for p in found if not is_sidecar(p))
