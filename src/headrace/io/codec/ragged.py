"""``Ragged``: a batch of variable-length rows as flat values plus row splits.

Row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``; ``values`` may itself be a ``Ragged``
(several ragged dimensions, innermost last), as in ``tf.RaggedTensor``. Parsing returns this type for
variable-length features, so no Python list of arrays is built on the hot path.

>>> r = Ragged(np.array([1, 2, 3, 4]), np.array([0, 3, 3, 4]))
>>> r.to_list()
[[1, 2, 3], [], [4]]
>>> len(r), r[0].tolist(), r.row_lengths().tolist()
(3, [1, 2, 3], [3, 0, 1])
>>> r.to_dense(-1).tolist()
[[1, 2, 3], [-1, -1, -1], [4, -1, -1]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ...core.errors import InvalidArgumentError


class Ragged:
    """Flat ``values`` (a numpy array, or a nested ``Ragged``) and int64 ``row_splits``."""

    __slots__ = ("values", "row_splits")

    def __init__(self, values: np.ndarray | Ragged, row_splits: np.ndarray, validate: bool = True):
        row_splits = np.asarray(row_splits, dtype=np.int64)
        if validate:
            if row_splits.ndim != 1 or len(row_splits) == 0 or row_splits[0] != 0:
                raise InvalidArgumentError("Ragged: row_splits must be a 1-D array starting at 0")
            if len(row_splits) > 1 and np.any(np.diff(row_splits) < 0):
                raise InvalidArgumentError("Ragged: row_splits must not decrease")
            if row_splits[-1] != len(values):
                raise InvalidArgumentError(
                    f"Ragged: row_splits end at {row_splits[-1]} but there are {len(values)} values"
                )
        self.values = values
        self.row_splits = row_splits

    @classmethod
    def from_row_lengths(cls, values: np.ndarray | Ragged, row_lengths: Sequence[int]) -> Ragged:
        """Rows of the given lengths, in order.

        >>> Ragged.from_row_lengths(np.arange(3), [2, 1]).to_list()
        [[0, 1], [2]]
        """
        lengths = np.asarray(row_lengths, dtype=np.int64)
        return cls(values, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))

    @classmethod
    def from_rows(cls, rows: Sequence[Any], dtype: Any = None) -> Ragged:
        """Build from a list of 1-D rows (slow path, for tests and small data).

        >>> Ragged.from_rows([[1.5], []], "float32").values.dtype
        dtype('float32')
        """
        arrays = [np.asarray(row, dtype=dtype) for row in rows]
        lengths = [len(a) for a in arrays]
        if arrays:
            values = np.concatenate(arrays)
        else:
            values = np.empty(0, dtype=dtype if dtype is not None else np.float32)
        if dtype is not None:
            values = values.astype(dtype)
        return cls.from_row_lengths(values, lengths)

    # --- shape ---------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.row_splits) - 1

    @property
    def nrows(self) -> int:
        return len(self.row_splits) - 1

    @property
    def flat_values(self) -> np.ndarray:
        values: np.ndarray | Ragged = self.values
        while isinstance(values, Ragged):
            values = values.values
        return values

    @property
    def nested_row_splits(self) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        node: np.ndarray | Ragged = self
        while isinstance(node, Ragged):
            out.append(node.row_splits)
            node = node.values
        return out

    @property
    def ragged_rank(self) -> int:
        return len(self.nested_row_splits)

    @property
    def dtype(self) -> np.dtype:
        return self.flat_values.dtype

    @property
    def shape(self) -> tuple:
        """``(nrows, None, ..., *inner)``: ``None`` for each ragged dimension."""
        return (self.nrows,) + (None,) * self.ragged_rank + tuple(self.flat_values.shape[1:])

    def row_lengths(self) -> np.ndarray:
        return np.diff(self.row_splits)

    # --- access --------------------------------------------------------------------------------------
    def __getitem__(self, i: int) -> np.ndarray | Ragged:
        n = self.nrows
        if not -n <= i < n:
            raise IndexError(f"row {i} is out of range for {n} rows")
        i %= n
        start, stop = int(self.row_splits[i]), int(self.row_splits[i + 1])
        if isinstance(self.values, Ragged):
            return _slice_rows(self.values, start, stop)
        return self.values[start:stop]

    def __iter__(self):
        for i in range(self.nrows):
            yield self[i]

    def to_list(self) -> list:
        """Nested Python lists of the values (bytes stay bytes)."""
        values = self.values.to_list() if isinstance(self.values, Ragged) else self.values.tolist()
        splits = self.row_splits.tolist()
        return [values[a:b] for a, b in zip(splits[:-1], splits[1:])]

    def to_dense(self, default_value: Any = 0, shape: Sequence[int] | None = None) -> np.ndarray:
        """Rows padded with ``default_value`` to the longest row (or to ``shape``)."""
        if isinstance(self.values, Ragged):
            inner = self.values.to_dense(default_value)
            widths = self.row_lengths()
            width = int(widths.max()) if len(widths) else 0
            out = np.full((self.nrows, width, *inner.shape[1:]), default_value, dtype=inner.dtype)
        else:
            inner = self.values
            widths = self.row_lengths()
            width = int(widths.max()) if len(widths) else 0
            out = np.full((self.nrows, width, *inner.shape[1:]), default_value, dtype=inner.dtype)
        rows = np.repeat(np.arange(self.nrows), widths)
        columns = np.arange(len(inner)) - np.repeat(self.row_splits[:-1], widths)
        out[rows, columns] = inner
        if shape is not None:
            out = _fit(out, tuple(shape), default_value)
        return out

    def to_sparse(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(indices, values, dense_shape)`` as ``tf.SparseTensor`` holds them (one ragged dim).

        >>> indices, values, shape = Ragged.from_rows([[7], [8, 9]]).to_sparse()
        >>> indices.tolist(), values.tolist(), shape.tolist()
        ([[0, 0], [1, 0], [1, 1]], [7, 8, 9], [2, 2])
        """
        if isinstance(self.values, Ragged):
            raise InvalidArgumentError("to_sparse supports one ragged dimension; use to_list or flat_values")
        widths = self.row_lengths()
        rows = np.repeat(np.arange(self.nrows, dtype=np.int64), widths)
        columns = np.arange(len(self.values), dtype=np.int64) - np.repeat(self.row_splits[:-1], widths)
        width = int(widths.max()) if len(widths) else 0
        return np.stack([rows, columns], axis=1), self.values, np.array([self.nrows, width], dtype=np.int64)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ragged):
            return NotImplemented
        return (
            np.array_equal(self.row_splits, other.row_splits)
            and type(self.values) is type(other.values)
            and (
                self.values == other.values
                if isinstance(self.values, Ragged)
                else bool(np.array_equal(self.values, cast(np.ndarray, other.values)))  # same type, above
            )
        )

    # mutable arrays inside; assigning None is Python's way to make a class unhashable, which mypy
    # reports as overriding object.__hash__
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        text = repr(self.to_list()) if len(self.flat_values) <= 20 else f"{self.nrows} rows"
        return f"Ragged({text}, dtype={self.dtype})"


def _slice_rows(ragged: Ragged, start: int, stop: int) -> Ragged:
    splits = ragged.row_splits[start : stop + 1]
    values = ragged.values
    inner: np.ndarray | Ragged
    if isinstance(values, Ragged):
        inner = _slice_rows(values, int(splits[0]), int(splits[-1]))
    else:
        inner = values[splits[0] : splits[-1]]
    return Ragged(inner, splits - splits[0], validate=False)


def _fit(array: np.ndarray, shape: tuple, default_value: Any) -> np.ndarray:
    out = np.full(shape, default_value, dtype=array.dtype)
    region = tuple(slice(0, min(a, b)) for a, b in zip(array.shape, shape))
    out[region] = array[region]
    return out
