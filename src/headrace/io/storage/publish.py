"""Safe publication of the files headrace writes: one mechanism for shards, conversions and caches.

- A file is written under a temporary name that records its writer
  (``NAME.incomplete-<host>-<pid>-<start>-<random>``), synced, then renamed to ``NAME``: a reader
  sees the whole file or nothing. :func:`reclaim_temporaries` removes the temporaries of writers
  that are dead (never those of a live process or of another host); for a shard set, local or
  ``protocol://``, see :mod:`headrace.io.storage.reclaim`.
- A set of shards (``PREFIX-NNNNN-of-MMMMM``) is published with ``.PREFIX.manifest.json``: it is
  written with ``"state": "publishing"`` before the first shard gets its final name, and rewritten
  with ``"state": "complete"`` (each shard's size and CRC32C) last. :func:`check_shard_files` lets a
  reader refuse a set that is not complete: shards of a writer that stopped half-way, a shard
  missing or changed since, a stray temporary. Shards without a manifest (written by TensorFlow or
  by hand) are not checked.

>>> import os, tempfile
>>> from headrace.io import write_shards
>>> prefix = os.path.join(tempfile.mkdtemp(), "train")
>>> paths = write_shards([b"a", b"b"], prefix, num_shards=2)
>>> read_manifest(manifest_path(prefix))["state"]
'complete'
>>> check_shard_files(paths)
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
import zlib
from collections.abc import Iterable
from typing import Any

from ...core.errors import DataLossError, attempt, on_failure
from ..limits import load_json
from ..records.crc import crc32c
from . import fs as storage
from .fs import is_url

MANIFEST_SUFFIX = ".manifest.json"
MANIFEST_FORMAT = "headrace shard set"
_MANIFEST_VERSION = 1
_MAX_MANIFEST_BYTES = 64 << 20
# A temporary, or a sidecar written beside one (its index: ``....incomplete-...-<random>.hridx``).
_TEMPORARY = re.compile(r"\.incomplete-([0-9a-f]{8})-(\d+)-(\d+)-[0-9a-f]+(?:\.[a-z]+)?$")
_SHARD = re.compile(r"^(.*)-(\d{5,})-of-(\d{5,})([^/]*)$")


class ShardSetError(DataLossError):
    """A shard set headrace wrote is incomplete or changed since; the message names the file and
    what to do."""


# --- writers and whether they are alive ------------------------------------------------------------
def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return ""


def _process_stat(pid: int) -> tuple[str, int] | None:
    """(state, start time in clock ticks since boot) of a process, from /proc; None where unknown."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return fields[0], int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _pid_namespace() -> str:
    """This process's pid namespace ("" where unknown): two containers may share a host name (host
    networking) but not their pids, so a pid is only checked inside its own namespace."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def process_identity() -> dict:
    """What identifies this process across pid reuse and reboots: pid, host, pid namespace, boot id,
    start time."""
    stat = _process_stat(os.getpid())
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "pid_namespace": _pid_namespace(),
        "boot": _boot_id(),
        "started": stat and stat[1],
    }


def on_this_host(identity: dict) -> bool:
    """Whether the process ``identity`` names can be checked from here: same host name and (where
    recorded) same pid namespace."""
    namespace = identity.get("pid_namespace")
    return identity.get("host") == socket.gethostname() and namespace in (None, _pid_namespace())


def is_alive(identity: dict) -> bool:
    """False when the process ``identity`` names has surely ended (dead, zombie, pid reused, rebooted).
    A process on another host (or in another container's pid namespace) cannot be checked and
    counts as alive."""
    if not on_this_host(identity):
        return True
    boot = _boot_id()
    if identity.get("boot") and boot and identity["boot"] != boot:
        return False
    pid = identity.get("pid")
    if type(pid) is not int or not 0 < pid < 2**31:  # a pid is a positive C int: no process has another
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    stat = _process_stat(pid)
    if stat is not None:
        if stat[0] == "Z":
            return False
        if identity.get("started") is not None and stat[1] != identity["started"]:
            return False  # the pid now belongs to another process
    return True


def host_tag(identity: dict | None = None) -> str:
    """The 8 hex digits that temporary names carry for the host and pid namespace of ``identity``
    (default: this process), so a reader of a name knows whether it can check the writer's pid."""
    identity = identity or {"host": socket.gethostname(), "pid_namespace": _pid_namespace()}
    where = identity.get("host", "")
    if identity.get("pid_namespace"):
        where += "\0" + identity["pid_namespace"]
    return f"{zlib.crc32(where.encode()):08x}"


def temporary_writer(name: str) -> tuple[str, int, int] | None:
    """(host tag, pid, start time) of the writer a temporary's name records, None if it is not one.

    >>> temporary_writer("a.tfrecord.incomplete-0123abcd-42-7-9f9f")
    ('0123abcd', 42, 7)
    """
    match = _TEMPORARY.search(name)
    if match is None:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3))


def temporary_path(final: str) -> str:
    """A fresh temporary name next to ``final`` that records which process writes it.

    >>> temporary_path("out/a.tfrecord").startswith("out/a.tfrecord.incomplete-")
    True
    """
    me = process_identity()
    return f"{final}.incomplete-{host_tag(me)}-{me['pid']}-{me['started'] or 0}-{secrets.token_hex(4)}"


def remove_temporary(temporary: str, storage_options: dict | None = None) -> None:
    """Remove a failed write's temporary file if it is there (``with on_failure(remove_temporary,
    temporary)`` around the write and its rename)."""
    if storage.exists(temporary, storage_options):
        storage.remove(temporary, storage_options)


def _remove_temporary_quietly(temporary: str, storage_options: dict | None) -> None:
    with contextlib.suppress(Exception):  # the write's error is the one to report
        remove_temporary(temporary, storage_options)


def temporary_writer_is_dead(name: str) -> bool:
    """True when ``name`` is a temporary of :func:`temporary_path` whose writer has surely ended."""
    writer = temporary_writer(name)
    if writer is None:
        return False
    tag, pid, started = writer
    if tag != host_tag():
        return False  # another machine's (or container's) writer, on shared storage: cannot tell
    return not is_alive({"host": socket.gethostname(), "pid": pid, "started": started or None})


def temporary_state(path: str) -> str:
    """Who left the temporary ``path`` and what removes it, for messages."""
    tag, pid, _ = temporary_writer(path) or ("?", 0, 0)
    head = path.split(".incomplete-", 1)[0]
    prefix = re.sub(r"-\d{5,}(-of-\d{5,})?[^/]*$", "", head)
    if tag != host_tag():
        return (
            f"written on another host or container (host tag {tag}; here it is {host_tag()} on "
            f"{socket.gethostname()}), which cannot be checked from here; if that writer no longer runs, "
            f"{reclaim_call(prefix, force=True)} removes it"
        )
    if temporary_writer_is_dead(path):
        return f"its writer, pid {pid} on this host, has ended; {reclaim_call(prefix)} or a rerun removes it"
    return f"its writer, pid {pid} on this host, is still running"


def reclaim_temporaries(directory: str, stem: str) -> list[str]:
    """Remove the temporaries in ``directory`` whose names start with ``stem`` and whose writers are
    dead (killed, crashed, out of disk); returns the paths removed. Remote paths are left alone."""
    if is_url(directory):
        return []
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return []
    removed = []
    for name in names:
        if name.startswith(stem) and ".incomplete-" in name and temporary_writer_is_dead(name):
            path = os.path.join(directory, name)
            try:
                os.unlink(path)
            except OSError:
                continue
            removed.append(path)
    return removed


# --- files --------------------------------------------------------------------------------------------
def os_error(exc: OSError, path: str, doing: str, advice: str) -> OSError:
    """An OSError of the same errno whose message names ``path``, what failed and what to change."""
    return OSError(exc.errno, f"cannot {doing} ({exc.strerror or exc}); {advice}", path)


def fsync_directory(directory: str) -> None:
    """Make a rename in ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename, durable once this returns (local paths)."""
    temporary = temporary_path(path)
    try:
        with open(temporary, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise os_error(exc, path, "write", "free some space or choose a writable directory") from exc
    fsync_directory(os.path.dirname(path))


def file_crc32c(path: str, chunk: int = 1 << 20) -> int:
    """CRC32C of a whole file's bytes, read in chunks."""
    value = 0
    with open(path, "rb") as f:
        while block := f.read(chunk):
            value = crc32c(block, value)
    return value


# --- manifests of shard sets -----------------------------------------------------------------------
def manifest_path(prefix: str) -> str:
    """Where the manifest of the shards ``prefix-NNNNN-of-MMMMM`` lives: a hidden file beside them,
    so the globs people read shards with (``train*``, ``dir/*.tfrecord``) do not pick it up.

    >>> manifest_path("out/train")
    'out/.train.manifest.json'
    """
    directory, stem = os.path.split(prefix)
    return os.path.join(directory, f".{stem}{MANIFEST_SUFFIX}")


def _checksum(body: dict) -> int:
    return crc32c(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())


def write_manifest(prefix: str, body: dict, storage_options: dict | None = None) -> None:
    """Atomically write the manifest of ``prefix`` (``body`` gains format, version and a checksum). On
    an object store (``s3://``, ``gs://`` ...) one PUT replaces the whole object; on other
    ``protocol://`` filesystems (``local://``, ``sftp://`` ...), where a write is seen half done, it
    is written under a temporary name and moved. Readers see the old manifest or the new one."""
    body = {"format": MANIFEST_FORMAT, "version": _MANIFEST_VERSION, **body}
    body.pop("checksum", None)
    data = json.dumps({**body, "checksum": _checksum(body)}, indent=1, sort_keys=True).encode()
    path = manifest_path(prefix)
    if not is_url(prefix):
        write_atomic(path, data)
    elif storage.writes_whole_objects(path, storage_options):
        with storage.open_file(path, "wb", storage_options) as f:
            f.write(data)
    else:
        temporary = temporary_path(path)
        with on_failure(_remove_temporary_quietly, temporary, storage_options):
            storage.make_parent_dirs(temporary, storage_options)
            with storage.open_file(temporary, "wb", storage_options) as f:
                f.write(data)
            storage.replace(temporary, path, storage_options)


def read_manifest(path: str, storage_options: dict | None = None) -> dict:
    """A manifest's contents; :class:`ShardSetError` naming the file if it is damaged or foreign."""
    try:
        with storage.open_file(path, "rb", storage_options) as f:
            data = f.read(_MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        raise ShardSetError(f"shard set manifest {path} cannot be read ({exc}); {_RESTART}") from None
    try:
        body = load_json(data, "its JSON", _MAX_MANIFEST_BYTES)
    except ValueError as exc:
        raise ShardSetError(f"shard set manifest {path} is damaged ({exc}); {_RESTART}") from None
    if not isinstance(body, dict) or body.get("format") != MANIFEST_FORMAT:
        raise ShardSetError(f"{path} is not a headrace shard set manifest; {_RESTART}")
    claimed = body.pop("checksum", None)
    if claimed != _checksum(body) or body.get("state") not in ("publishing", "complete"):
        raise ShardSetError(f"shard set manifest {path} is damaged (its checksum does not match); {_RESTART}")
    if not isinstance(body.get("shards"), list) or not isinstance(body.get("writer"), dict):
        raise ShardSetError(f"shard set manifest {path} lacks its shard list; {_RESTART}")
    return body


_RESTART = "rerun the writer to publish the set again, or delete the manifest to read the files unchecked"


def shard_prefix(path: str) -> str | None:
    """The prefix of a shard name ``PREFIX-NNNNN-of-MMMMM<suffix>``, else None.

    >>> shard_prefix("out/train-00001-of-00004.tfrecord")
    'out/train'
    """
    match = _SHARD.match(path)
    return match.group(1) if match else None


def own_shard_name(prefix: str, name: Any) -> bool:
    """Whether ``name`` (from a manifest, so not trusted) is a bare shard name of ``prefix``."""
    if not isinstance(name, str) or "/" in name or os.sep in name:
        return False
    match = _SHARD.match(name)
    return match is not None and match.group(1) == os.path.basename(prefix)


def _writer_alive(manifest: dict) -> bool:
    writer = manifest["writer"]
    return not writer.get("abandoned") and is_alive(writer)


def abandon_set(prefix: str, body: dict, storage_options: dict | None = None) -> None:
    """After a failed publication: mark the manifest as left by its writer, so readers report the set
    incomplete (rather than still being written) and the next run takes it over. Best effort."""
    body["writer"] = {**body["writer"], "abandoned": True}
    # An object store may raise anything: the manifest then still says "publishing", and readers
    # refuse the set all the same.
    attempt(write_manifest, prefix, body, storage_options)


def _writer_text(manifest: dict) -> str:
    writer = manifest.get("writer", {})
    return f"{manifest.get('tool', 'a writer')} (pid {writer.get('pid')} on {writer.get('host')})"


def reclaim_call(prefix: str, force: bool = False) -> str:
    """The call (and command) that removes what interrupted writers of ``prefix`` left (see
    :mod:`headrace.io.storage.reclaim`).

    >>> reclaim_call("s3://b/train", force=True)
    "headrace.io.reclaim_shards('s3://b/train', force=True, storage_options=...) (shell: headrace reclaim s3://b/train --force --storage-option ...)"
    """
    remote = is_url(prefix)
    arguments = (
        [repr(prefix)] + (["force=True"] if force else []) + (["storage_options=..."] if remote else [])
    )
    flags = (" --force" if force else "") + (" --storage-option ..." if remote else "")
    return f"headrace.io.reclaim_shards({', '.join(arguments)}) (shell: headrace reclaim {prefix}{flags})"


def _if_stopped_elsewhere(prefix: str, manifest: dict) -> str:
    """For a writer this host cannot check: how to take its set over once it is known to be gone."""
    if on_this_host(manifest["writer"]):
        return ""
    return (
        f" (it runs on another host or container, which cannot be checked from here; if it was stopped, "
        f"{reclaim_call(prefix, force=True)} marks the set abandoned and removes its temporaries, so a "
        "rerun can take it over)"
    )


def _local_size(directory: str) -> Any:
    def size_of(name: str) -> int | None:
        try:
            return os.path.getsize(os.path.join(directory, name))
        except OSError:
            return None

    return size_of


def _remote_size(directory: str, storage_options: dict | None) -> Any:
    """Sizes of the files in a ``protocol://`` folder, from one listing (not one request per shard)."""
    fs, inner = storage.filesystem(directory, storage_options)
    try:
        sizes = {os.path.basename(e["name"].rstrip("/")): e.get("size") for e in fs.ls(inner, detail=True)}
    except FileNotFoundError:
        sizes = {}
    return sizes.get


def _check_set(
    prefix: str, manifest: dict, where: str, given: list[str], whole: bool, size_of: Any = None
) -> None:
    """Raise unless the set is complete, each of the ``given`` paths is one of its shards, and the
    shards (all of them if ``whole``, else the given ones) have their published sizes. ``size_of(name)``
    gives a file's size in the set's folder, None if it is missing (default: the local folder)."""
    path = manifest_path(prefix)
    shards = manifest["shards"]
    directory = os.path.dirname(prefix)
    if size_of is None:
        size_of = _local_size(directory)
    if manifest["state"] == "publishing":
        in_place = sum(
            1
            for s in shards
            if isinstance(s, dict)
            and own_shard_name(prefix, s.get("file"))
            and size_of(s["file"]) is not None
        )
        if _writer_alive(manifest):
            raise ShardSetError(
                f"{where}: the shard set {prefix}-* is still being written by {_writer_text(manifest)} "
                f"({in_place} of {len(shards)} shards in place, see {path}); read it once that run finishes"
                + _if_stopped_elsewhere(prefix, manifest)
            )
        raise ShardSetError(
            f"{where}: the shard set {prefix}-* is incomplete: {_writer_text(manifest)} stopped with "
            f"{in_place} of {len(shards)} shards in place (see {path}); rerun it to finish the set (its "
            "temporary files are reclaimed), or delete the shards and the manifest"
        )
    sizes: dict[str, int] = {}
    for shard in shards:
        # JSON from the manifest: own_shard_name checks it is a shard's name (a str).
        name: Any = shard.get("file") if isinstance(shard, dict) else None
        if not own_shard_name(prefix, name) or type(shard.get("bytes")) is not int:
            raise ShardSetError(f"shard set manifest {path} lists an invalid shard {shard!r}; {_RESTART}")
        sizes[name] = shard["bytes"]
    for file in given:
        if os.path.basename(file) not in sizes:
            raise ShardSetError(
                f"{where}: {file} is not one of the shards {path} lists (a leftover of an earlier set?); "
                "delete it, or narrow the file pattern"
            )
    for name in sizes if whole else [os.path.basename(f) for f in given]:
        file = os.path.join(directory, name)
        size = size_of(name)
        if size is None:
            raise ShardSetError(
                f"{where}: shard {file} of the set {path} lists is missing; restore it, rerun the writer, "
                "or delete the manifest to read the remaining files unchecked"
            )
        if size != sizes[name]:
            raise ShardSetError(
                f"{where}: shard {file} has {size} bytes but {path} says {sizes[name]}: it changed after "
                "it was published; rerun the writer, or delete the manifest to read it unchecked"
            )


_manifests: dict[str, tuple[tuple, dict]] = {}  # path -> (stat signature, contents): parse each once


def _cached_manifest(path: str) -> dict | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ShardSetError(f"shard set manifest {path} cannot be read ({exc}); {_RESTART}") from None
    signature = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    cached = _manifests.get(path)
    if cached is None or cached[0] != signature:
        if len(_manifests) > 256:
            _manifests.clear()
        cached = _manifests[path] = (signature, read_manifest(path))
    return cached[1]


def check_shard_files(
    paths: Iterable[Any],
    where: str = "reading",
    *,
    whole_sets: bool = True,
    storage_options: dict | None = None,
) -> None:
    """Refuse to read files of a shard set headrace wrote unless that set is complete and unchanged.

    A file named ``PREFIX-NNNNN-of-MMMMM...`` with a ``.PREFIX.manifest.json`` must be one of the shards
    that manifest lists, the manifest must say ``complete``, and the file must have its published
    size; with ``whole_sets`` every shard of the set must exist with its size (one ``stat`` per
    shard). A temporary ``.incomplete-`` file of a headrace writer is refused too. Other files, and
    shards without a manifest (written by TensorFlow), pass unchecked. ``protocol://`` sets are
    checked the same way (one GET of the manifest and one listing of the folder per set).
    """
    by_prefix: dict[str, list[str]] = {}
    for item in paths:
        path = os.fsdecode(item) if isinstance(item, bytes) else str(item)
        if _TEMPORARY.search(path):
            raise ShardSetError(
                f"{where}: {path} is an unfinished temporary file of a headrace writer "
                f"({temporary_state(path)}); narrow the file pattern to the finished files (e.g. "
                "'...-*-of-*.tfrecord')"
            )
        prefix = shard_prefix(path)
        if prefix is not None:
            by_prefix.setdefault(prefix, []).append(path)
    for prefix, given in by_prefix.items():
        if is_url(prefix):
            path = manifest_path(prefix)
            reached, found = attempt(storage.exists, path, storage_options)
            # Not reached: a store this process cannot reach (no credentials here: the dataset may be
            # built on a driver and read on workers that have them). Reading reports its own error.
            if reached and found:
                size_of = _remote_size(os.path.dirname(prefix), storage_options)
                _check_set(prefix, read_manifest(path, storage_options), where, given, whole_sets, size_of)
            continue
        local = _cached_manifest(manifest_path(prefix))
        if local is not None:
            _check_set(prefix, local, where, given, whole_sets)


# --- publishing a shard set ------------------------------------------------------------------------
def _previous(prefix: str, storage_options: dict | None = None) -> dict | None:
    path = manifest_path(prefix)
    try:
        return read_manifest(path, storage_options) if storage.exists(path, storage_options) else None
    except ShardSetError:
        return None  # a damaged manifest names nothing we may delete; the new one replaces it


def _refuse_a_live_writer(prefix: str, tool: str, previous: dict) -> None:
    if previous["state"] == "publishing" and previous["writer"].get("pid") != os.getpid():
        if _writer_alive(previous):
            raise ShardSetError(
                f"{tool}: {_writer_text(previous)} is writing the shard set {prefix}-* right now "
                f"(see {manifest_path(prefix)}); wait for it, or write to another prefix"
                + _if_stopped_elsewhere(prefix, previous)
            )


def refuse_a_live_writer(prefix: str, tool: str, storage_options: dict | None = None) -> None:
    """Raise :class:`ShardSetError` if another writer may be publishing ``prefix`` now: a writer calls
    this before writing its shards, so it does not write them all for :func:`begin_set` to refuse."""
    previous = _previous(prefix, storage_options)
    if previous is not None:
        _refuse_a_live_writer(prefix, tool, previous)


def begin_set(
    prefix: str,
    tool: str,
    shards: list[dict | None],
    settings: dict | None = None,
    storage_options: dict | None = None,
) -> dict:
    """Write ``prefix``'s manifest in state ``publishing`` (call before any shard gets its final
    name) and return it. ``shards[k]`` is shard k's entry (``file``, ``bytes``, ``crc32c``,
    ``records``) or None until it is done. Shards of the previous set that the new one does not
    reuse are removed by :func:`finish_set` (listed as ``retired`` meanwhile). A live writer of the
    same prefix is refused."""
    previous = _previous(prefix, storage_options)
    retired: set[Any] = set()  # names read from a manifest, untrusted until filtered below
    if previous is not None:
        _refuse_a_live_writer(prefix, tool, previous)
        for entry in previous["shards"]:
            if isinstance(entry, dict):
                retired.add(entry.get("file"))
        retired.update(previous.get("retired") or [])
    body = {
        "state": "publishing",
        "tool": tool,
        "writer": process_identity(),
        "shards": shards,
        "retired": sorted(n for n in retired if own_shard_name(prefix, n)),
        "settings": settings or {},
    }
    write_manifest(prefix, body, storage_options)
    return body


def record_shard(prefix: str, body: dict, number: int, entry: dict) -> None:
    """Note shard ``number`` as published in the (still ``publishing``) manifest."""
    body["shards"][number] = entry
    write_manifest(prefix, body)


def publish_file(temporary: str, final: str, storage_options: dict | None = None) -> None:
    """Give a finished, synced temporary file its final name (on an object store: a copy and a
    delete; readers see no object or the whole one)."""
    if is_url(final):
        storage.replace(temporary, final, storage_options)
        return
    try:
        os.replace(temporary, final)
    except OSError as exc:
        raise os_error(exc, final, f"rename {temporary} to", "check the directory is writable") from exc


def finish_set(
    prefix: str, body: dict, companions: tuple[str, ...] = (), storage_options: dict | None = None
) -> None:
    """Remove the retired shards (and their ``companions`` suffixes, e.g. index sidecars), then
    rewrite the manifest as ``complete``: the last step of publishing a set."""
    if any(entry is None for entry in body["shards"]):
        raise RuntimeError(f"finish_set({prefix!r}) before every shard was published")
    directory = os.path.dirname(prefix)
    current = {entry["file"] for entry in body["shards"]}
    for name in set(body["retired"]) - current:
        for path in [os.path.join(directory, name)] + [os.path.join(directory, name) + c for c in companions]:
            if is_url(path):
                if storage.exists(path, storage_options):
                    storage.remove(path, storage_options)
                continue
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise os_error(
                    exc, path, "remove the retired shard", "check the directory is writable"
                ) from exc
    if not is_url(directory):
        fsync_directory(directory)
    body.update(state="complete", retired=[], writer=process_identity())
    write_manifest(prefix, body, storage_options)
