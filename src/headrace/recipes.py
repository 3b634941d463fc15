"""Pipelines that are easy to get wrong, written once: shuffling records spread over many files.

A shuffle buffer over files read one after another only mixes the few files that fit in the buffer
(tf.data's classic trap). The recipe below shuffles the file order every epoch, reads many files at
once with one record from each in turn, and shuffles that stream through a buffer, so every batch
draws from many files. For random-access data, ``Dataset.global_shuffle`` is exact and needs no
buffer at all.
"""

from __future__ import annotations

import os
from typing import Any

from .core.errors import InvalidArgumentError
from .core.node import AUTOTUNE
from .dataset import Dataset, TFRecordDataset
from .sources.files import match_files

#: most files read at once by the recipe (open files cost memory and file handles)
MAX_CYCLE_LENGTH = 64


def shuffled_records(
    file_pattern: str | list[str],
    buffer_size: int = 10_000,
    seed: int | None = None,
    cycle_length: int | None = None,
    compression_type: str | None = None,
    num_parallel_calls: int | None = None,
    reshuffle_each_iteration: bool = True,
    *,
    storage_options: dict | None = None,
) -> Dataset:
    """Records of every file matching ``file_pattern``, well mixed across files.

    Patterns may be remote (``s3://bucket/train-*``); ``storage_options`` are the filesystem's
    arguments (credentials, endpoint), given to the listing and to every file's reader.

    The recipe: ``list_files(shuffle=True, seed)`` -> ``interleave(TFRecordDataset,
    cycle_length=min(files, 64), block_length=1)`` -> ``shuffle(buffer_size, seed)``. Reading as many
    files at once as there are (up to 64) keeps every stretch of the stream mixed, including the end
    of the epoch, where a small cycle would leave only the last few files.

    >>> import os, tempfile
    >>> from headrace.io import write_shards
    >>> folder = tempfile.mkdtemp()
    >>> _ = write_shards([b"%d" % i for i in range(100)], os.path.join(folder, "part"), num_shards=4)
    >>> records = shuffled_records(os.path.join(folder, "part-*"), buffer_size=50, seed=1)
    >>> sorted(int(r) for r in records) == list(range(100))
    True
    """
    patterns = [file_pattern] if isinstance(file_pattern, (str, os.PathLike)) else list(file_pattern)
    try:
        num_files = len(set(match_files(patterns, storage_options)))
    except InvalidArgumentError:
        raise InvalidArgumentError(f"file_pattern={file_pattern!r} matches no file") from None
    if cycle_length is None:
        cycle_length = min(num_files, MAX_CYCLE_LENGTH)

    def read(path: Any) -> Dataset:
        return TFRecordDataset(path, compression_type=compression_type, storage_options=storage_options)

    files = Dataset.list_files(patterns, shuffle=True, seed=seed, storage_options=storage_options)
    records = files.interleave(
        read, cycle_length=cycle_length, block_length=1, num_parallel_calls=num_parallel_calls
    )
    return records.shuffle(buffer_size, seed=seed, reshuffle_each_iteration=reshuffle_each_iteration)


__all__ = ["AUTOTUNE", "MAX_CYCLE_LENGTH", "shuffled_records"]
