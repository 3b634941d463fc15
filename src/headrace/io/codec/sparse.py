"""``SparseTensor``: a sparse array in COO form (tf.sparse.SparseTensor without TensorFlow).

>>> s = SparseTensor(indices=[[0, 1], [2, 0]], values=[5, 7], dense_shape=[3, 2])
>>> s.to_dense().tolist()
[[0, 5], [0, 0], [7, 0]]
>>> SparseTensor.from_dense(np.array([[0, 3], [4, 0]])).values.tolist()
[3, 4]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.errors import InvalidArgumentError
from ...core.spec import to_array


class SparseTensor:
    """``indices`` (int64, ``[n, rank]``, row-major order), ``values`` (``[n]``) and ``dense_shape``
    (int64, ``[rank]``), checked when built."""

    __slots__ = ("indices", "values", "dense_shape")

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        dense_shape = np.asarray(dense_shape, dtype=np.int64).reshape(-1)
        indices = np.asarray(indices, dtype=np.int64).reshape(-1, len(dense_shape))
        values = to_array(values).reshape(-1)
        if len(indices) != len(values):
            raise InvalidArgumentError(f"SparseTensor: {len(indices)} indices but {len(values)} values")
        if (dense_shape < 0).any():
            raise InvalidArgumentError(
                f"SparseTensor: dense_shape {dense_shape.tolist()} has a negative size"
            )
        if len(indices) and ((indices < 0).any() or (indices >= dense_shape).any()):
            raise InvalidArgumentError(
                f"SparseTensor: an index is outside dense_shape {dense_shape.tolist()}"
            )
        self.indices, self.values, self.dense_shape = indices, values, dense_shape

    @classmethod
    def from_dense(cls, array: Any) -> SparseTensor:
        """The non-zero (non-empty for strings) entries of ``array``."""
        array = to_array(array)
        mask = array != (b"" if array.dtype == object else 0)
        return cls(np.argwhere(mask), array[mask], array.shape)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.dense_shape)

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    def to_dense(self, default_value: Any = None) -> np.ndarray:
        """The dense array, ``default_value`` (0, or b"" for strings) where no entry is given."""
        if default_value is None:
            default_value = b"" if self.values.dtype == object else 0
        out = np.full(self.shape, default_value, dtype=self.values.dtype)
        if len(self.indices):
            out[tuple(self.indices.T)] = self.values
        return out

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SparseTensor)
            and self.shape == other.shape
            and np.array_equal(self.indices, other.indices)
            and np.array_equal(self.values, other.values)
        )

    def __repr__(self) -> str:
        return f"SparseTensor(indices={self.indices.tolist()}, values={self.values.tolist()}, dense_shape={self.shape})"
