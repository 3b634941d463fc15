"""``SparseFeature``: a sparse tensor assembled from an Example's index and value lists.

``parse_example`` turns each ``SparseFeature`` into plain ``VarLenFeature``s for its index and value
keys (the one parser reads them), then builds a :class:`SparseTensor` per batch from the results.

>>> import headrace as hr
>>> record = hr.io.serialize_example({"ix": [3, 0], "val": [0.5, 2.0]})
>>> spec = {"s": SparseFeature("ix", "val", "float32", 5)}
>>> sparse = hr.io.parse_example([record], spec)["s"]
>>> sparse.indices.tolist(), sparse.values.tolist(), sparse.shape
([[0, 0], [0, 3]], [2.0, 0.5], (1, 5))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...core.errors import InvalidArgumentError
from .features import VarLenFeature, feature_dtype
from .ragged import Ragged
from .sparse import SparseTensor


@dataclasses.dataclass(frozen=True, eq=False)
class SparseFeature:
    """tf.io.SparseFeature: ``index_key`` (a key, or a list of keys for several dimensions) and
    ``value_key`` name int64 index lists and a value list of ``dtype``; ``size`` (an int, or one per
    index key) is the dense shape after the batch dimension. ``already_sorted=False`` sorts each
    record's entries by index, as TensorFlow does."""

    index_key: Any
    value_key: str
    dtype: Any
    size: Any
    already_sorted: bool = False

    def __post_init__(self) -> None:
        keys = [self.index_key] if isinstance(self.index_key, str) else list(self.index_key)
        sizes = [self.size] if isinstance(self.size, (int, np.integer)) else list(self.size)
        if not keys or not all(isinstance(k, str) for k in keys):
            raise InvalidArgumentError(
                f"SparseFeature: index_key={self.index_key!r} must be a str or a list of str"
            )
        if len(sizes) != len(keys) or not all(isinstance(s, (int, np.integer)) and s >= 0 for s in sizes):
            raise InvalidArgumentError(
                f"SparseFeature: size={self.size!r} must give one size >= 0 per index key ({len(keys)})"
            )
        object.__setattr__(self, "dtype", feature_dtype(self.dtype))

    @property
    def index_keys(self) -> list[str]:
        return [self.index_key] if isinstance(self.index_key, str) else list(self.index_key)

    @property
    def sizes(self) -> list[int]:
        return [int(self.size)] if isinstance(self.size, (int, np.integer)) else [int(s) for s in self.size]


def split_sparse(features: Mapping[str, Any]) -> tuple[dict, dict]:
    """``(plain features, sparse features)``: the plain ones include the VarLenFeatures the sparse
    ones read (a key also asked for directly must be asked for as the same VarLenFeature)."""
    sparse = {key: spec for key, spec in features.items() if isinstance(spec, SparseFeature)}
    if not sparse:
        return dict(features), {}
    plain = {key: spec for key, spec in features.items() if not isinstance(spec, SparseFeature)}
    for name, spec in sparse.items():
        for key, dtype in [(k, np.dtype(np.int64)) for k in spec.index_keys] + [(spec.value_key, spec.dtype)]:
            wanted = plain.get(key)
            if wanted is None:
                plain[key] = VarLenFeature(dtype)
            elif not (isinstance(wanted, VarLenFeature) and feature_dtype(wanted.dtype) == dtype):
                raise InvalidArgumentError(
                    f"features[{name!r}] reads {key!r} as a {dtype} list, but features[{key!r}] asks for it as "
                    f"{wanted!r}; request it as VarLenFeature({dtype}) or drop one of them"
                )
    return plain, sparse


def assemble(parsed: dict, sparse: dict, requested: Mapping[str, Any], batch: int, function: str) -> dict:
    """``parsed`` with a SparseTensor per sparse feature, and without the helper columns nobody asked for."""
    for name, spec in sparse.items():
        indices = [_rows(parsed[k]) for k in spec.index_keys]
        values = _rows(parsed[spec.value_key])
        entries, out_values = [], []
        for record in range(batch):
            columns = [ix[record] for ix in indices]
            count = len(values[record])
            if any(len(c) != count for c in columns):
                raise InvalidArgumentError(
                    f"{function}: record {record} has {count} values for SparseFeature {name!r} ({spec.value_key!r}) "
                    f"but {[len(c) for c in columns]} indices ({spec.index_keys}); they must match"
                )
            if count == 0:
                continue
            stacked = np.stack(columns, axis=1)
            bad = (stacked < 0) | (stacked >= np.asarray(spec.sizes))
            if bad.any():
                row = int(np.argwhere(bad)[0][0])
                raise InvalidArgumentError(
                    f"{function}: record {record}: SparseFeature {name!r} index {stacked[row].tolist()} is outside "
                    f"size {spec.sizes}"
                )
            order = np.arange(count) if spec.already_sorted else np.lexsort(stacked.T[::-1])
            entries.append(np.column_stack([np.full(count, record), stacked[order]]))
            out_values.append(np.asarray(values[record])[order])
        rank = len(spec.sizes) + 1
        flat_indices = np.concatenate(entries) if entries else np.empty((0, rank), np.int64)
        flat_values = np.concatenate(out_values) if out_values else np.empty(0, spec.dtype)
        parsed[name] = SparseTensor(flat_indices, flat_values.astype(spec.dtype), [batch, *spec.sizes])
    for spec in sparse.values():
        for key in [*spec.index_keys, spec.value_key]:
            if key not in requested:
                parsed.pop(key, None)
    return parsed


def _rows(column: Any) -> list:
    if isinstance(column, Ragged):
        return [column[i] for i in range(len(column))]
    return list(column)


def sparse_row(value: SparseTensor) -> SparseTensor:
    """Row 0 of a parsed batch of one, without the batch dimension (``parse_single_example``)."""
    return SparseTensor(value.indices[:, 1:], value.values, value.dense_shape[1:])
