"""tf.RaggedTensor and tf.ragged: ``hr.io.Ragged`` (flat values and int64 row splits)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..io.codec.ragged import Ragged
from ._tensor import as_tensor, infer, is_tensor


class _RaggedMeta(type):
    def __instancecheck__(cls, value: object) -> bool:
        return isinstance(value, Ragged)


class RaggedTensor(metaclass=_RaggedMeta):
    """``tf.RaggedTensor``'s constructors, giving ``hr.io.Ragged``; ``isinstance(x, RaggedTensor)``
    is true for a ``Ragged``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "use RaggedTensor.from_row_splits, from_row_lengths, from_value_rowids or from_tensor"
        )

    @staticmethod
    def from_row_splits(values: Any, row_splits: Any, name: Any = None, validate: bool = True) -> Ragged:
        return Ragged(_values(values), np.asarray(row_splits), validate=validate)

    @staticmethod
    def from_row_lengths(values: Any, row_lengths: Any, name: Any = None, validate: bool = True) -> Ragged:
        lengths = np.asarray(row_lengths)
        if validate and (lengths < 0).any():
            raise InvalidArgumentError(
                "Arguments to from_row_lengths do not form a valid RaggedTensor: negative length"
            )
        return Ragged.from_row_lengths(_values(values), lengths.tolist())

    @staticmethod
    def from_value_rowids(
        values: Any, value_rowids: Any, nrows: Any = None, name: Any = None, validate: bool = True
    ) -> Ragged:
        ids = np.asarray(value_rowids, dtype=np.int64)
        if validate and len(ids) > 1 and (np.diff(ids) < 0).any():
            raise InvalidArgumentError(
                "Arguments to from_value_rowids do not form a valid RaggedTensor: value_rowids must be sorted"
            )
        rows = int(nrows) if nrows is not None else (int(ids[-1]) + 1 if len(ids) else 0)
        return Ragged.from_row_lengths(_values(values), np.bincount(ids, minlength=rows)[:rows].tolist())

    @staticmethod
    def from_nested_row_lengths(
        flat_values: Any, nested_row_lengths: Any, name: Any = None, validate: bool = True
    ) -> Ragged:
        result: Any = _values(flat_values)
        for lengths in reversed(list(nested_row_lengths)):
            result = Ragged.from_row_lengths(result, np.asarray(lengths).tolist())
        return result

    @staticmethod
    def from_nested_row_splits(
        flat_values: Any, nested_row_splits: Any, name: Any = None, validate: bool = True
    ) -> Ragged:
        result: Any = _values(flat_values)
        for splits in reversed(list(nested_row_splits)):
            result = Ragged(result, np.asarray(splits), validate=validate)
        return result

    @staticmethod
    def from_tensor(
        tensor: Any,
        lengths: Any = None,
        padding: Any = None,
        ragged_rank: int = 1,
        name: Any = None,
        row_splits_dtype: Any = np.int64,
    ) -> Ragged:
        """Rows of a dense [rows, cols, ...] tensor, cut to ``lengths`` or with trailing ``padding`` dropped."""
        array = _values(tensor)
        if array.ndim < 2:
            raise ValueError(f"from_tensor: tensor must have rank >= 2, got {array.ndim}")
        rows = list(array)
        if lengths is not None:
            cuts = [int(n) for n in np.asarray(lengths).reshape(-1)]
        elif padding is not None:
            cuts = []
            for row in rows:
                n = len(row)
                while n and np.all(row[n - 1] == padding):
                    n -= 1
                cuts.append(n)
        else:
            cuts = [array.shape[1]] * len(rows)
        values = (
            np.concatenate([row[:n] for row, n in zip(rows, cuts)])
            if rows
            else array.reshape(0, *array.shape[2:])
        )
        return Ragged.from_row_lengths(values, cuts)


def _values(values: Any) -> Any:
    if isinstance(values, Ragged):
        return values
    return as_tensor(values) if is_tensor(values) else infer(values)


def constant(
    pylist: Any,
    dtype: Any = None,
    ragged_rank: Any = None,
    inner_shape: Any = None,
    name: Any = None,
    row_splits_dtype: Any = np.int64,
) -> Any:
    """A ``Ragged`` of nested Python lists (rows of any length at every level but the last)."""

    def depth(item: Any) -> int:
        return 1 + max((depth(x) for x in item), default=0) if isinstance(item, (list, tuple)) else 0

    def build(items: list, level: int) -> Any:
        if level == 1:
            flat = infer(list(items)) if dtype is None else np.asarray(items, dtype=dtype)
            return flat
        lengths = [len(row) for row in items]
        inner = [x for row in items for x in row]
        return Ragged.from_row_lengths(build(inner, level - 1), lengths)

    levels = depth(pylist)
    if levels < 2:
        return infer(pylist) if dtype is None else np.asarray(pylist, dtype=dtype)
    return build(list(pylist), levels)


__all__ = ["RaggedTensor", "constant"]
