"""tf.io.gfile (and TF1's tf.gfile names): files on local paths, and on ``protocol://`` paths through
fsspec (``gs://`` needs gcsfs, ``s3://`` s3fs). Missing files raise ``tf.errors.NotFoundError``."""

from __future__ import annotations

import glob as _glob
import os
import shutil
from collections.abc import Iterator
from typing import Any

from ..io.storage import fs
from .errors import AlreadyExistsError, FailedPreconditionError, NotFoundError


def _path(path: Any) -> str:
    if isinstance(path, bytes):
        return path.decode()
    return os.fspath(path)


def _remote(path: str) -> Any:
    return fs.filesystem(path)


def exists(path: Any) -> bool:
    return fs.exists(_path(path))


def isdir(path: Any) -> bool:
    return fs.is_dir(_path(path))


def glob(pattern: Any) -> list[str]:
    """Matching paths, sorted; ``pattern`` may be a list of patterns."""
    patterns = [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) else list(pattern)
    found: list[str] = []
    for item in patterns:
        p = _path(item)
        if fs.is_url(p):
            filesystem, inner = _remote(p)
            protocol = p.split("://", 1)[0]
            found.extend(f"{protocol}://{m}" if "://" not in m else m for m in filesystem.glob(inner))
        else:
            found.extend(_glob.glob(p))
    return sorted(set(found))


def listdir(path: Any) -> list[str]:
    p = _path(path)
    if not isdir(p):
        raise NotFoundError(f"Could not find directory {p}")
    if fs.is_url(p):
        filesystem, inner = _remote(p)
        return sorted(os.path.basename(e.rstrip("/")) for e in filesystem.ls(inner, detail=False))
    return sorted(os.listdir(p))


def makedirs(path: Any) -> None:
    p = _path(path)
    if fs.is_url(p):
        filesystem, inner = _remote(p)
        filesystem.makedirs(inner, exist_ok=True)
    else:
        os.makedirs(p, exist_ok=True)


def mkdir(path: Any) -> None:
    p = _path(path)
    if exists(p):
        raise AlreadyExistsError(f"{p} already exists")
    if fs.is_url(p):
        filesystem, inner = _remote(p)
        filesystem.mkdir(inner)
        return
    try:
        os.mkdir(p)
    except FileNotFoundError:
        raise NotFoundError(f"{p}: its parent directory does not exist") from None


def remove(path: Any) -> None:
    p = _path(path)
    if not exists(p):
        raise NotFoundError(f"{p} does not exist")
    fs.remove(p)


def rmtree(path: Any) -> None:
    p = _path(path)
    if not exists(p):
        raise NotFoundError(f"{p} does not exist")
    if fs.is_url(p):
        filesystem, inner = _remote(p)
        filesystem.rm(inner, recursive=True)
    else:
        shutil.rmtree(p)


def copy(src: Any, dst: Any, overwrite: bool = False) -> None:
    s, d = _path(src), _path(dst)
    if not exists(s):
        raise NotFoundError(f"{s} does not exist")
    if exists(d) and not overwrite:
        raise AlreadyExistsError(f"{d} already exists (pass overwrite=True)")
    with GFile(s, "rb") as reader, GFile(d, "wb") as writer:
        shutil.copyfileobj(reader, writer)


def rename(src: Any, dst: Any, overwrite: bool = False) -> None:
    s, d = _path(src), _path(dst)
    if not exists(s):
        raise NotFoundError(f"{s} does not exist")
    if exists(d) and not overwrite:
        raise AlreadyExistsError(f"{d} already exists (pass overwrite=True)")
    if fs.is_url(s) or fs.is_url(d):
        copy(s, d, overwrite=True)
        remove(s)
    else:
        os.replace(s, d)


def walk(top: Any, topdown: bool = True, onerror: Any = None) -> Iterator[tuple[str, list[str], list[str]]]:
    """(directory, subdirectory names, file names) for ``top`` and every directory below it."""
    p = _path(top)
    if not isdir(p):
        return
    if fs.is_url(p):
        filesystem, inner = _remote(p)
        protocol = p.split("://", 1)[0]
        for root, dirs, files in filesystem.walk(inner, topdown=topdown):
            yield f"{protocol}://{root}", sorted(dirs), sorted(files)
        return
    for root, dirs, files in os.walk(p, topdown=topdown, onerror=onerror):
        dirs.sort()
        yield root, dirs, sorted(files)


class FileStatistics:
    """What ``stat`` gives: ``length``, ``mtime_nsec``, ``is_directory``."""

    def __init__(self, length: int, mtime_nsec: int, is_directory: bool):
        self.length, self.mtime_nsec, self.is_directory = length, mtime_nsec, is_directory

    def __repr__(self) -> str:
        return f"FileStatistics(length={self.length}, mtime_nsec={self.mtime_nsec}, is_directory={self.is_directory})"


def stat(path: Any) -> FileStatistics:
    p = _path(path)
    if not exists(p):
        raise NotFoundError(f"{p} does not exist")
    return FileStatistics(fs.file_size(p) or 0, fs.modified_ns(p) or 0, isdir(p))


class GFile:
    """tf.io.gfile.GFile: ``mode`` 'r'/'w'/'a' gives ``str``, with 'b' ``bytes``; opens on first use."""

    def __init__(self, name: Any, mode: str = "r"):
        self.name = _path(name)
        self.mode = mode
        if mode.replace("b", "").replace("+", "") not in ("r", "w", "a"):
            raise ValueError(f"mode must be one of 'r', 'w', 'a', with an optional 'b', got {mode!r}")
        self._file: Any = None

    def _open(self) -> Any:
        if self._file is None:
            binary = "b" in self.mode
            raw_mode = self.mode.replace("b", "") + "b"
            if "r" in self.mode and not exists(self.name):
                raise NotFoundError(f"{self.name}; No such file or directory")
            if fs.is_url(self.name):
                filesystem, inner = _remote(self.name)
                handle = filesystem.open(inner, raw_mode)
            else:
                handle = open(self.name, raw_mode)  # noqa: SIM115 (closed by close())
            if not binary:
                import io  # noqa: PLC0415

                handle = io.TextIOWrapper(handle, encoding="utf-8", newline="")
            self._file = handle
        return self._file

    def read(self, n: int = -1) -> Any:
        if "r" not in self.mode:
            raise FailedPreconditionError("File isn't open for reading")
        return self._open().read(n)

    def readline(self) -> Any:
        return self._open().readline()

    def readlines(self) -> list:
        return self._open().readlines()

    def write(self, file_content: Any) -> None:
        if "r" in self.mode and "+" not in self.mode:
            raise FailedPreconditionError("File isn't open for writing")
        handle = self._open()
        if "b" in self.mode and isinstance(file_content, str):
            file_content = file_content.encode()
        elif "b" not in self.mode and isinstance(file_content, bytes):
            file_content = file_content.decode()
        handle.write(file_content)

    def seek(self, offset: int | None = None, whence: int = 0, position: int | None = None) -> None:
        self._open().seek(position if offset is None else offset, whence)

    def tell(self) -> int:
        return self._open().tell()

    def size(self) -> int:
        return stat(self.name).length

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __iter__(self) -> Iterator:
        return iter(self._open())

    def __next__(self) -> Any:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# TF1's names (tf.gfile.*)
Exists = exists
Glob = glob
IsDirectory = isdir
ListDirectory = listdir
MakeDirs = makedirs
MkDir = mkdir
Remove = remove
DeleteRecursively = rmtree
Copy = copy
Rename = rename
Walk = walk
Stat = stat
Open = GFile
FastGFile = GFile
