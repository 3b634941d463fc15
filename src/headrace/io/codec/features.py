"""Feature specs for parsing tf.train.Example, with tf.io's names, arguments and defaults.

dtypes may be numpy dtypes, names (``"float32"``, ``"int64"``, ``"string"``) or TensorFlow dtypes;
an Example can only hold float32, int64 and byte strings, so those are the three allowed.

>>> FixedLenFeature([3], "float32", default_value=0.0)
FixedLenFeature(shape=(3,), dtype=float32, default_value=[0.0, 0.0, 0.0])
>>> VarLenFeature("string")
VarLenFeature(dtype=string)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ...core.errors import InvalidArgumentError
from ...core.spec import as_dtype, string

FLOAT32 = np.dtype(np.float32)
INT64 = np.dtype(np.int64)
DTYPES = (FLOAT32, INT64, string)


def feature_dtype(dtype: Any) -> np.dtype:
    """The numpy dtype of a feature: float32, int64, or object (byte strings)."""
    numpy_dtype = getattr(dtype, "as_numpy_dtype", None)  # a tf.DType, without importing tensorflow
    if numpy_dtype is not None:
        dtype = "string" if getattr(dtype, "name", "") == "string" else numpy_dtype
    resolved = as_dtype(dtype)
    if resolved not in DTYPES:
        raise InvalidArgumentError(
            f"dtype={dtype!r} is not allowed: tf.train.Example holds only 'float32', 'int64' and 'string'"
        )
    return resolved


def dtype_name(dtype: np.dtype) -> str:
    return "string" if dtype == string else dtype.name


def _shape(shape: Any, what: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{what}: shape={shape!r} must be a list of non-negative ints") from None
    if any(d < 0 for d in dims) or any(d is None for d in shape):
        raise InvalidArgumentError(f"{what}: shape={shape!r} must be a list of non-negative ints")
    return dims


def _default(value: Any, shape: tuple[int, ...], dtype: np.dtype, what: str) -> np.ndarray | None:
    """A default value as an array of ``shape``; a single value fills the whole shape (tf.io needs
    exactly ``prod(shape)`` values)."""
    if value is None:
        return None
    if dtype == string:
        flat = np.asarray(value, dtype=object).ravel().tolist()
        if not all(isinstance(v, (bytes, str)) for v in flat):
            raise InvalidArgumentError(f"{what}: default_value={value!r} must hold bytes or str values")
        array = np.empty(len(flat), dtype=object)
        array[:] = [v.encode() if isinstance(v, str) else v for v in flat]
    else:
        try:
            array = np.asarray(value, dtype=dtype).ravel()
        except (TypeError, ValueError):
            raise InvalidArgumentError(
                f"{what}: default_value={value!r} is not a {dtype_name(dtype)} value"
            ) from None
    size = int(np.prod(shape))
    if array.size == 1 and size != 1:
        out = np.empty(shape, dtype=dtype)
        out[...] = array[0]
        return out
    if array.size != size:
        raise InvalidArgumentError(
            f"{what}: default_value has {array.size} values but shape {shape} needs {size} (or give one value)"
        )
    return array.reshape(shape)


def _default_repr(value: np.ndarray | None) -> str:
    return "None" if value is None else repr(value.tolist())


@dataclasses.dataclass(frozen=True, eq=False)
class FixedLenFeature:
    """Exactly ``prod(shape)`` values per example, parsed into a dense ``(batch, *shape)`` array.
    A missing feature takes ``default_value``; without one it is an error."""

    shape: Any
    dtype: Any
    default_value: Any = None

    def __post_init__(self):
        dtype = feature_dtype(self.dtype)
        shape = _shape(self.shape, "FixedLenFeature")
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(
            self, "default_value", _default(self.default_value, shape, dtype, "FixedLenFeature")
        )

    def __repr__(self) -> str:
        return (
            f"FixedLenFeature(shape={self.shape}, dtype={dtype_name(self.dtype)}, "
            f"default_value={_default_repr(self.default_value)})"
        )


@dataclasses.dataclass(frozen=True, eq=False)
class VarLenFeature:
    """Any number of values per example, parsed into a :class:`~headrace.io.codec.ragged.Ragged` batch
    (tf.io returns a SparseTensor; ``Ragged.to_sparse()`` gives its three parts)."""

    dtype: Any

    def __post_init__(self):
        object.__setattr__(self, "dtype", feature_dtype(self.dtype))

    def __repr__(self) -> str:
        return f"VarLenFeature(dtype={dtype_name(self.dtype)})"


@dataclasses.dataclass(frozen=True, eq=False)
class FixedLenSequenceFeature:
    """A variable number of items of ``shape`` each. In a SequenceExample's feature lists: one item
    per step. In an Example (``allow_missing=True`` required, as in tf.io): the values split into
    items. Batches are padded to the longest with ``default_value`` (zeros/empty when None)."""

    shape: Any
    dtype: Any
    allow_missing: bool = False
    default_value: Any = None

    def __post_init__(self):
        dtype = feature_dtype(self.dtype)
        shape = _shape(self.shape, "FixedLenSequenceFeature")
        if not isinstance(self.allow_missing, bool):
            raise InvalidArgumentError(
                f"FixedLenSequenceFeature: allow_missing={self.allow_missing!r} must be a bool"
            )
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(
            self, "default_value", _default(self.default_value, (), dtype, "FixedLenSequenceFeature")
        )

    def __repr__(self) -> str:
        return (
            f"FixedLenSequenceFeature(shape={self.shape}, dtype={dtype_name(self.dtype)}, "
            f"allow_missing={self.allow_missing}, default_value={_default_repr(self.default_value)})"
        )


@dataclasses.dataclass(frozen=True)
class RowSplits:
    """Partition by a feature holding row splits (starting at 0)."""

    key: str


@dataclasses.dataclass(frozen=True)
class RowLengths:
    """Partition by a feature holding the length of each row."""

    key: str


@dataclasses.dataclass(frozen=True)
class RowStarts:
    """Partition by a feature holding the start offset of each row."""

    key: str


@dataclasses.dataclass(frozen=True)
class RowLimits:
    """Partition by a feature holding the end offset of each row."""

    key: str


@dataclasses.dataclass(frozen=True)
class ValueRowIds:
    """Partition by a feature holding, for each value, the row it belongs to (non-decreasing)."""

    key: str


@dataclasses.dataclass(frozen=True)
class UniformRowLength:
    """Partition into rows of ``length`` values each."""

    length: int


PARTITIONS = (RowSplits, RowLengths, RowStarts, RowLimits, ValueRowIds, UniformRowLength)


@dataclasses.dataclass(frozen=True, eq=False)
class RaggedFeature:
    """Values of ``value_key`` (default: the feature's own key) as a ragged batch, optionally split
    further by ``partitions`` (outermost first), as ``tf.io.RaggedFeature``.

    >>> RaggedFeature("int64", partitions=[RaggedFeature.RowLengths("lengths")]).partitions
    (RowLengths(key='lengths'),)
    """

    dtype: Any
    value_key: str | None = None
    partitions: Any = ()
    row_splits_dtype: Any = "int64"
    validate: bool = False

    RowSplits = RowSplits
    RowLengths = RowLengths
    RowStarts = RowStarts
    RowLimits = RowLimits
    ValueRowIds = ValueRowIds
    UniformRowLength = UniformRowLength

    def __post_init__(self):
        object.__setattr__(self, "dtype", feature_dtype(self.dtype))
        partitions = tuple(self.partitions)
        for partition in partitions:
            if not isinstance(partition, PARTITIONS):
                raise InvalidArgumentError(
                    f"RaggedFeature: partition {partition!r} is not one of RaggedFeature.RowSplits, RowLengths, "
                    "RowStarts, RowLimits, ValueRowIds, UniformRowLength"
                )
        object.__setattr__(self, "partitions", partitions)
        if self.value_key is not None and not isinstance(self.value_key, str):
            raise InvalidArgumentError(f"RaggedFeature: value_key={self.value_key!r} must be a str or None")

    def __repr__(self) -> str:
        return (
            f"RaggedFeature(dtype={dtype_name(self.dtype)}, value_key={self.value_key!r}, "
            f"partitions={self.partitions!r})"
        )


FEATURE_TYPES = (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, RaggedFeature)
