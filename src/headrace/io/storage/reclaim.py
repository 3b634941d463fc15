"""Reclaiming what interrupted writers of a shard set left behind, local or ``protocol://``.

Every temporary file names its writer (``NAME.incomplete-<host tag>-<pid>-<start>-<random>``, see
:func:`headrace.io.storage.publish.temporary_path`). ``write_shards`` and ``convert`` begin by removing the
temporaries of their prefix whose writer ran on this host and has surely ended (its pid is gone or
now belongs to another process); a live writer's files are never touched. A writer on another host,
or in another container's pid namespace, cannot be checked from here: its temporaries are left and
a :class:`ShardSetWarning` names them, the host, and the call that removes them once you know that
writer is gone, :func:`reclaim_shards` with ``force=True``.

>>> import os, tempfile, warnings
>>> from headrace.io import write_shards
>>> prefix = os.path.join(tempfile.mkdtemp(), "train")
>>> paths = write_shards([b"a", b"b"], prefix, num_shards=2)
>>> reclaim_shards(prefix)  # a finished set: nothing to remove
[]
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import warnings
from typing import Any

from ...core.errors import attempt, check, user_stacklevel
from . import fs as storage
from .publish import (
    ShardSetError,
    host_tag,
    manifest_path,
    on_this_host,
    read_manifest,
    reclaim_call,
    temporary_writer,
    temporary_writer_is_dead,
    write_manifest,
)

_MARK = ".incomplete-"
_SHOWN = 10  # file names quoted in a warning; the rest are counted (the pattern names them all)


class ShardSetWarning(UserWarning):
    """Files an interrupted writer of a shard set left that headrace cannot remove safely; the
    message names them, the host that wrote them and the call that removes them."""


def _of_set(name: str, stem: str) -> bool:
    """Whether the file ``name`` (a temporary) belongs to the set ``stem``: a shard's
    (``stem-NNNNN...``, its index included) or a hidden sidecar's (``.stem.manifest.json``)."""
    head = name.split(_MARK, 1)[0]
    return head.startswith(f".{stem}.") or re.match(re.escape(stem) + r"-\d{5,}", head) is not None


def set_temporaries(prefix: str, storage_options: dict | None = None) -> list[str]:
    """The temporaries of headrace writers in ``prefix``'s folder that belong to its set: its shards',
    their indexes', its manifest's. One fresh listing of the folder (never fsspec's cached one)."""
    directory, stem = os.path.split(prefix)
    try:
        entries = storage.list_dir(directory or ".", storage_options, fresh=True)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for entry in entries:
        name = entry.rstrip("/").rsplit("/", 1)[-1]
        if _MARK in name and temporary_writer(name) is not None and _of_set(name, stem):
            found.append(os.path.join(directory, name))
    return found


def _remove(path: str, storage_options: dict | None) -> bool:
    try:
        storage.remove(path, storage_options)
    except FileNotFoundError:
        return False  # gone already: another rerun reclaimed it first
    return True


def _sorted_by_writer(paths: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """(temporaries of dead writers on this host, {host tag: temporaries of other hosts' writers});
    those of live writers on this host are in neither."""
    dead: list[str] = []
    elsewhere: dict[str, list[str]] = {}
    here = host_tag()
    for path in paths:
        name = os.path.basename(path)
        writer = temporary_writer(name)
        if writer is None:
            continue
        tag = writer[0]
        if tag != here:
            elsewhere.setdefault(tag, []).append(path)
        elif temporary_writer_is_dead(name):
            dead.append(path)
    return dead, elsewhere


def _manifest(prefix: str, storage_options: dict | None) -> dict | None:
    path = manifest_path(prefix)
    try:
        return read_manifest(path, storage_options) if storage.exists(path, storage_options) else None
    except ShardSetError:
        return None  # damaged: it names no writer; the next run replaces it


def _left_message(tool: str, prefix: str, elsewhere: dict[str, list[str]], manifest: dict | None) -> str:
    writer = (manifest or {}).get("writer") or {}
    known = {host_tag(writer): f"host {writer.get('host')}"} if writer.get("host") else {}
    groups = []
    for tag, paths in sorted(elsewhere.items()):
        shown = ", ".join(paths[:_SHOWN]) + (
            f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
        )
        groups.append(
            f"{len(paths)} by {known.get(tag, 'an unknown host')} (every name holds '{_MARK}{tag}-'): {shown}"
        )
    return (
        f"{tool}: left the temporary files of the shard set {prefix}-* that writers on another host or "
        f"container wrote, since their processes cannot be checked from here (this is "
        f"{socket.gethostname()}, host tag {host_tag()}): {'; '.join(groups)}. Readers of {prefix}-* "
        f"refuse them. If those writers no longer run, remove them with {reclaim_call(prefix, force=True)}"
    )


def reclaim_set_temporaries(
    prefix: str, storage_options: dict | None = None, *, tool: str | None = None
) -> list[str]:
    """What a writer of the set ``prefix`` does first (and ``convert`` again once its workers are
    gone): remove the temporaries of dead writers on this host, best effort. With ``tool``, the
    temporaries of other hosts' writers are named in a :class:`ShardSetWarning`. Returns the paths
    removed."""
    listed, temporaries = attempt(set_temporaries, prefix, storage_options)
    if not listed:  # a store may raise anything; this write reports its own errors
        return []
    dead, elsewhere = _sorted_by_writer(temporaries)
    removed = []
    for path in dead:
        with contextlib.suppress(Exception):  # left for the next run; readers refuse it meanwhile
            if _remove(path, storage_options):
                removed.append(path)
    if tool is not None and elsewhere:
        message = _left_message(tool, prefix, elsewhere, _manifest(prefix, storage_options))
        warnings.warn(message, ShardSetWarning, stacklevel=user_stacklevel())
    return removed


def reclaim_shards(prefix: Any, *, storage_options: dict | None = None, force: bool = False) -> list[str]:
    """Remove what interrupted writers of the shard set ``prefix`` left; returns the paths removed.

    Temporaries (``.incomplete-``) whose writer ran on this host and has ended are removed; a rerun
    of ``write_shards`` or ``convert`` does this too. A writer on another host or container cannot
    be checked from here: its temporaries are left and named in a :class:`ShardSetWarning`, unless
    ``force=True``, which says that no writer of ``prefix`` runs anywhere else. Then they are
    removed, and a manifest such a writer left ``publishing`` is marked abandoned, so readers
    report the set incomplete and the next ``write_shards`` takes it over. A live writer on this
    host is never touched, even with ``force``. Published shards are never removed.

    >>> import os, tempfile
    >>> from headrace.io.storage.publish import host_tag, temporary_path
    >>> prefix = os.path.join(tempfile.mkdtemp(), "train")
    >>> left = temporary_path(prefix + "-00000.tfrecord")  # as if a writer on another host...
    >>> left = left.replace(host_tag(), "0" * 8 if host_tag() != "0" * 8 else "1" * 8)
    >>> open(left, "wb").close()  # ...had been killed while writing
    >>> reclaim_shards(prefix, force=True) == [left]
    True
    """
    prefix = storage.as_path(prefix, "prefix")
    storage_options = storage.check_storage_options(storage_options, "reclaim_shards")
    check(isinstance(force, bool), "force", force, "True or False")
    dead, elsewhere = _sorted_by_writer(set_temporaries(prefix, storage_options))
    removed = [path for path in dead if _remove(path, storage_options)]
    manifest = _manifest(prefix, storage_options)
    if force:
        removed += [path for paths in elsewhere.values() for path in paths if _remove(path, storage_options)]
        writer = (manifest or {}).get("writer") or {}
        if manifest is not None and manifest["state"] == "publishing" and not writer.get("abandoned"):
            if not on_this_host(writer):
                manifest["writer"] = {**writer, "abandoned": True}
                write_manifest(prefix, manifest, storage_options)
    elif elsewhere:
        message = _left_message("reclaim_shards", prefix, elsewhere, manifest)
        warnings.warn(message, ShardSetWarning, stacklevel=user_stacklevel())
    return removed
