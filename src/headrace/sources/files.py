"""``Dataset.list_files``: the file names matching glob patterns, as bytes.

Only the matching lives here; the facade adds tf.data's shuffle on top (``shuffle=None`` means
shuffled, as in tf.data).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.node import Fields
from ..io.storage.fs import check_storage_options, glob
from ..io.storage.publish import check_shard_files
from .tensor_slices import TensorSlicesNode


def _patterns(file_pattern: Any) -> list[str]:
    if isinstance(file_pattern, (str, bytes, os.PathLike)):
        items = [file_pattern]
    elif isinstance(file_pattern, np.ndarray) and file_pattern.ndim <= 1:
        items = file_pattern.reshape(-1).tolist()
    elif isinstance(file_pattern, (list, tuple)):
        items = list(file_pattern)
    else:
        raise InvalidArgumentError(
            f"file_pattern={file_pattern!r} is not allowed: a glob pattern (str) or a list of them"
        )
    patterns = []
    for item in items:
        if isinstance(item, bytes):
            item = os.fsdecode(item)
        if not isinstance(item, (str, os.PathLike)):
            raise InvalidArgumentError(f"file_pattern holds {item!r}, which is not a str pattern")
        patterns.append(os.fspath(item))
    return patterns


def match_files(file_pattern: Any, storage_options: dict | None = None) -> list[bytes]:
    """Sorted names matching any of the patterns (duplicates kept, as tf.data's matching_files).

    Local or ``protocol://`` patterns (through fsspec, with ``storage_options``). Wildcards ``*``,
    ``?`` and ``[...]`` match in every path component, including names that start with a dot;
    ``**`` is an ordinary ``*`` (no recursion). headrace's own sidecars (indexes, manifests) are
    never matched.
    """
    patterns = _patterns(file_pattern)
    names: list[str] = []
    for pattern in patterns:
        names.extend(glob(pattern, storage_options))
    if not names:
        where = "" if all("://" in p for p in patterns) else f"; working directory {os.getcwd()}"
        raise InvalidArgumentError(
            f"No files matched pattern: {', '.join(patterns)} (list_files needs at least one match{where})"
        )
    return sorted(os.fsencode(name) for name in names)


class ListFilesNode(TensorSlicesNode):
    """The sorted matches of ``file_pattern``, found once when the dataset is built (as in tf.data)."""

    op = "list_files"
    fields = Fields("patterns", resources=("storage_options",))
    reads_input = True

    def __init__(self, file_pattern: Any, storage_options: dict | None = None):
        storage_options = check_storage_options(storage_options, "list_files")
        names = match_files(file_pattern, storage_options)
        # Refuse a half-published shard set headrace wrote (remote sets too: one manifest GET per set).
        check_shard_files(names, "list_files", storage_options=storage_options)
        array = np.empty(len(names), dtype=object)
        array[:] = names
        super().__init__(array)
        self.patterns = _patterns(file_pattern)
        self.storage_options = storage_options

    def describe_args(self) -> str:
        patterns = ", ".join(repr(os.path.basename(p) or p) for p in self.patterns)
        return f"{patterns}: {self.length} files"
