"""tf.sparse and tf.SparseTensor: ``hr.io.SparseTensor`` (COO indices, values, dense_shape)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..io.codec.ragged import Ragged
from ..io.codec.sparse import SparseTensor


def to_dense(
    sp_input: SparseTensor, default_value: Any = None, validate_indices: bool = True, name: str | None = None
) -> np.ndarray:
    """The dense tensor; ``validate_indices`` refuses repeated or unsorted indices, as TensorFlow.

    A ``VarLenFeature`` parses to what TensorFlow densifies here: a dense 1-D array from
    ``parse_single_example`` (returned as it is: it has no gaps to fill) and an ``hr.io.Ragged`` from
    ``parse_example`` (rows padded with ``default_value``), so ``tf.sparse.to_dense(parsed[key])`` ports
    unchanged. Other dense arrays are refused, as TensorFlow refuses them."""
    if isinstance(sp_input, np.ndarray) and sp_input.ndim == 1:
        return sp_input
    if isinstance(sp_input, Ragged) and not isinstance(sp_input.values, Ragged):
        if default_value is None:
            default_value = b"" if sp_input.values.dtype == object else 0
        return sp_input.to_dense(default_value)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}")
    if validate_indices and len(sp_input.indices) > 1:
        flat = (
            np.ravel_multi_index(tuple(sp_input.indices.T), sp_input.shape)
            if sp_input.indices.size
            else np.zeros(0)
        )
        steps = np.diff(flat)
        if (steps == 0).any():
            raise InvalidArgumentError("SparseToDense: indices are repeated")
        if (steps < 0).any():
            raise InvalidArgumentError(
                "SparseToDense: indices are not in lexicographic order (use tf.sparse.reorder)"
            )
    return sp_input.to_dense(default_value)


def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    return SparseTensor.from_dense(tensor)


def reorder(sp_input: SparseTensor, name: str | None = None) -> SparseTensor:
    """The same entries with indices in row-major order."""
    if not len(sp_input.indices):
        return sp_input
    order = np.lexsort(sp_input.indices.T[::-1])
    return SparseTensor(sp_input.indices[order], sp_input.values[order], sp_input.dense_shape)


__all__ = ["SparseTensor", "from_dense", "reorder", "to_dense"]
