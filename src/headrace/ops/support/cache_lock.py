"""The writer lock of a disk cache: one writer per cache file, and a dead writer's lock taken over.

The lock file records pid, host, boot id and process start time, so a writer that died (SIGKILL, a
reused pid, a reboot) is recognised as dead (the liveness check is :func:`headrace.io.storage.publish.is_alive`,
shared with every headrace writer); a lock from another host is always respected.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from ...io.limits import load_json
from ...io.storage.publish import is_alive, process_identity, temporary_path
from .cache_file import write_error

_MAX_LOCK_BYTES = 1 << 16  # a lock holds one process identity: a few hundred bytes


class WriterLock:
    """``<cache>.lock``: records which process writes ``<cache>``, so other iterators read their input
    instead of writing too, and a writer that died (even by SIGKILL) is noticed and taken over.

    The lock only avoids duplicate work; correctness never depends on it (every writer writes its own
    temporary file and publishes it with one atomic rename).
    """

    #: an unreadable lock younger than this is a writer between creating and filling it
    FRESH_SECONDS = 10.0

    def __init__(self, cache_path: str):
        self.cache_path = cache_path
        self.path = cache_path + ".lock"
        self.owned = False
        self.identity: dict | None = None
        self.holder: dict | None = None  # who holds it, when acquire() failed

    def _read(self) -> dict | None:
        try:
            with open(self.path, "rb") as f:
                data = f.read(_MAX_LOCK_BYTES + 1)
            value = load_json(data, f"cache lock {self.path}", _MAX_LOCK_BYTES)
        except FileNotFoundError:
            raise
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def _write_new(self, data: bytes) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def acquire(self, temp: str) -> bool:
        """Take the lock for a writer of ``temp``; False when a live process holds it."""
        identity = {**process_identity(), "temp": temp, "since": time.time()}
        data = json.dumps(identity).encode()
        directory = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise write_error(exc, directory, "create the cache directory") from exc
        for _ in range(3):
            try:
                self._write_new(data)
            except FileExistsError:
                pass
            except OSError as exc:
                raise write_error(exc, self.path, "create the lock file") from exc
            else:
                self.owned, self.identity = True, identity
                return True
            try:
                holder = self._read()
            except FileNotFoundError:
                continue  # released meanwhile: try again
            if holder is None:
                try:
                    age = time.time() - os.stat(self.path).st_mtime
                except FileNotFoundError:
                    continue
                if age < self.FRESH_SECONDS:
                    self.holder = {}
                    return False
            elif is_alive(holder):
                self.holder = holder
                return False
            if self._take_over(holder, data):
                self.owned, self.identity = True, identity
                return True
            return False
        return False

    def _take_over(self, stale: dict | None, data: bytes) -> bool:
        replacement = temporary_path(self.path)  # reclaimable, should this process die right here
        try:
            with open(replacement, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(replacement, self.path)
            with open(self.path, "rb") as f:
                won = f.read(1 << 16) == data  # another taker may have replaced it after us
        except OSError:
            try:
                os.unlink(replacement)
            except OSError:
                pass
            return False
        if won and stale:
            self._remove_stale_temp(stale.get("temp"))
        return won

    def _remove_stale_temp(self, temp: Any) -> None:
        # Only ever a temporary file of this cache: a lock file's contents are not trusted.
        prefix = os.path.basename(self.cache_path) + ".incomplete-"
        if (
            isinstance(temp, str)
            and os.path.dirname(os.path.abspath(temp)) == os.path.dirname(os.path.abspath(self.cache_path))
            and os.path.basename(temp).startswith(prefix)
        ):
            try:
                os.unlink(temp)
            except OSError:
                pass

    def release(self) -> None:
        """Remove the lock if this process still holds it; idempotent."""
        if not self.owned:
            return
        self.owned = False
        try:
            if self._read() == self.identity:
                os.unlink(self.path)
        except OSError:
            pass
