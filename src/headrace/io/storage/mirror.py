"""A local copy of a remote file that headrace reads and writes as a whole (the disk cache).

The disk cache needs what object stores lack (appends, renames, memory maps, lock files), so a
remote cache is worked on locally: :meth:`RemoteMirror.fetch` downloads the remote file when its
version (ETag, or size and time) differs from the local copy's, :meth:`RemoteMirror.publish`
uploads a finished local file. Uploads to object stores are atomic: a reader sees the old object
or the whole new one. Copies live in ``$HEADRACE_MIRROR_DIR`` (default
``~/.cache/headrace/mirrors``), one per remote path; delete the folder to reclaim the space.

>>> import fsspec, os, tempfile
>>> with fsspec.open("memory://doc-mirror/a.bin", "wb") as f:
...     _ = f.write(b"abc")
>>> mirror = RemoteMirror("memory://doc-mirror/a.bin", directory=tempfile.mkdtemp())
>>> mirror.fetch(), open(mirror.local, "rb").read()
(True, b'abc')
"""

from __future__ import annotations

import hashlib
import json
import os

from ...core.errors import on_failure
from .fs import filesystem
from .publish import remove_temporary, temporary_path

_VERSION_FIELDS = ("ETag", "etag", "md5Hash", "generation", "size", "LastModified", "mtime", "updated")


def mirror_dir() -> str:
    """Where local copies of remote files live (``$HEADRACE_MIRROR_DIR`` or the user's cache)."""
    configured = os.environ.get("HEADRACE_MIRROR_DIR")
    if configured:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "headrace", "mirrors")


def _version(info: dict) -> str:
    """What changes when the remote object does: its ETag (or generation), size and time."""
    return json.dumps({k: info[k] for k in _VERSION_FIELDS if k in info}, sort_keys=True, default=str)


class RemoteMirror:
    """The local copy ``local`` of the remote file ``url`` (in ``directory``, default :func:`mirror_dir`)."""

    def __init__(self, url: str, storage_options: dict | None = None, directory: str | None = None):
        self.url, self.storage_options = url, storage_options
        digest = hashlib.sha256(url.encode()).hexdigest()[:20]
        name = url.rstrip("/").rsplit("/", 1)[-1] or "file"
        self.local = os.path.join(directory or mirror_dir(), f"{digest}-{name}")
        self._stamp = self.local + ".version"

    def _remote(self):
        return filesystem(self.url, self.storage_options)

    def _read_stamp(self) -> str | None:
        try:
            with open(self._stamp, encoding="utf-8") as f:
                return f.read()
        except OSError:
            return None

    def _write_stamp(self, version: str) -> None:
        temporary = temporary_path(self._stamp)
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(version)
        os.replace(temporary, self._stamp)

    def _forget(self) -> None:
        for path in (self.local, self._stamp):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def fetch(self) -> bool:
        """Make ``local`` the remote file's current version; False (and no local copy) when the
        remote file does not exist."""
        fs, inner = self._remote()
        try:
            info = fs.info(inner)
        except FileNotFoundError:
            self._forget()  # the remote file was deleted: so is what it cached
            return False
        version = _version(info)
        if os.path.exists(self.local) and self._read_stamp() == version:
            return True
        os.makedirs(os.path.dirname(self.local), exist_ok=True)
        temporary = temporary_path(self.local)
        with on_failure(remove_temporary, temporary):
            fs.get_file(inner, temporary)
            os.replace(temporary, self.local)
        self._write_stamp(version)
        return True

    def publish(self) -> None:
        """Upload ``local`` (a finished file) to the remote path."""
        fs, inner = self._remote()
        parent = inner.rsplit("/", 1)[0] if "/" in inner else ""
        if parent:
            fs.makedirs(parent, exist_ok=True)
        fs.put_file(self.local, inner)
        fs.invalidate_cache(inner)
        self._write_stamp(_version(fs.info(inner)))
