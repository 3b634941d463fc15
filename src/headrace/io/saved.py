"""``Dataset.save`` / ``Dataset.load``: a dataset's elements in a directory of TFRecord shards.

The format (headrace's own; tf.data's is a protobuf snapshot format that needs TensorFlow):

- ``shard-00000.tfrecord``, ``shard-00001.tfrecord``, ...: one record per element, the element as
  the JSON of the checkpoint codec (``core.state.encode_element``: no pickle, so loading never runs
  code), optionally GZIP/ZLIB compressed. Elements of a shard are in the order they were saved.
- ``dataset_spec.json``: format name and version, the element_spec, the shard count, the
  compression and the number of elements. Written last, so a directory without it is an
  interrupted save, which ``load`` refuses.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from ..core.errors import DataLossError, InvalidArgumentError
from ..core.node import call
from ..core.spec import TensorSpec, common_spec, spec_of
from ..core.state import decode_element, decode_structure, encode_element, encode_structure
from .records.compression import normalize_compression
from .records.writer import TFRecordWriter

FORMAT = "headrace-saved-dataset"
VERSION = 1
SPEC_FILE = "dataset_spec.json"


def shard_path(path: str, shard: int) -> str:
    return os.path.join(path, f"shard-{shard:05d}.tfrecord")


def encode_spec(spec: Any) -> Any:
    return encode_structure(
        spec,
        lambda leaf, where: {
            "shape": None if leaf.shape is None else list(leaf.shape),
            "dtype": leaf.dtype.str,
        },
    )


def decode_spec(data: Any) -> Any:
    return decode_structure(data, lambda leaf: TensorSpec(leaf["shape"], leaf["dtype"]))


def encode_saved(element: Any) -> bytes:
    return json.dumps(encode_element(element), separators=(",", ":")).encode()


def decode_saved(record: Any) -> Any:
    """One saved element from its record."""
    try:
        data = json.loads(bytes(record))
    except ValueError as exc:
        raise DataLossError(
            f"a saved-dataset record is not valid JSON ({exc}); the shard is damaged"
        ) from None
    return decode_element(data)


def save(
    elements: Iterable,
    path: Any,
    compression: str | None = None,
    shard_func: Callable | None = None,
) -> int:
    """Write ``elements`` under directory ``path`` (made if missing; an earlier save there is
    replaced) and return how many were written. ``shard_func(element)`` picks each element's shard
    (an int >= 0; default: all in shard 0)."""
    path = os.fspath(path)
    compression = normalize_compression(compression, "compression")
    os.makedirs(path, exist_ok=True)
    spec_file = os.path.join(path, SPEC_FILE)
    if os.path.exists(spec_file):
        os.remove(spec_file)  # from here until the end the directory is not a complete save
    for stale in glob.glob(os.path.join(glob.escape(path), "shard-*.tfrecord")):
        os.remove(stale)
    writers: dict[int, TFRecordWriter] = {}
    count = 0
    spec = None
    try:
        for element in elements:
            shard = 0
            if shard_func is not None:
                shard = call(shard_func, element)
                try:
                    shard = int(shard)
                except (TypeError, ValueError):
                    shard = -1
                if shard < 0:
                    raise InvalidArgumentError(
                        f"save: shard_func returned {shard!r} for element {count}; it must return an int >= 0"
                    )
            writer = writers.get(shard)
            if writer is None:
                writer = writers[shard] = TFRecordWriter(shard_path(path, shard), compression)
            writer.write(encode_saved(element))
            if spec is None:
                spec = spec_of(element)
            else:
                spec = _relaxed(spec, spec_of(element))
            count += 1
    finally:
        for writer in writers.values():
            writer.close()
    num_shards = max(writers, default=-1) + 1
    for shard in range(num_shards):  # shards no element went to exist, empty, so indices stay dense
        if shard not in writers:
            TFRecordWriter(shard_path(path, shard), compression).close()
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "num_shards": num_shards,
        "compression": compression,
        "cardinality": count,
        "element_spec": None if spec is None else encode_spec(spec),
    }
    temporary = spec_file + ".tmp"
    with open(temporary, "w") as file:
        json.dump(meta, file)
    os.replace(temporary, spec_file)
    return count


def _relaxed(a: Any, b: Any) -> Any:
    return common_spec([a, b], ["earlier elements", "a later element"], "save")


def read_meta(path: Any) -> dict:
    """The saved dataset's metadata; refuses what is not a complete save."""
    path = os.fspath(path)
    spec_file = os.path.join(path, SPEC_FILE)
    if not os.path.isdir(path):
        raise InvalidArgumentError(f"load: {path!r} is not a directory written by Dataset.save")
    if not os.path.exists(spec_file):
        raise DataLossError(
            f"load: {path!r} has no {SPEC_FILE}: it is not a saved dataset, or its save was interrupted; "
            "save it again"
        )
    with open(spec_file) as file:
        meta = json.load(file)
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise InvalidArgumentError(
            f"load: {spec_file} is format {meta.get('format')!r} version {meta.get('version')!r}; "
            f"this headrace reads {FORMAT!r} version {VERSION}"
        )
    return meta
