"""tf.lookup: static tables mapping tokens or ids to values, on numpy.

``StaticHashTable(initializer, default_value)`` and ``StaticVocabularyTable(initializer,
num_oov_buckets)``, filled by ``KeyValueTensorInitializer(keys, values)`` or ``TextFileInitializer``
(read through ``tf.io.gfile``, so ``gs://`` and other fsspec paths work). A table is filled when it is
built, as TensorFlow's are in eager mode, and TensorFlow's checks run then: the key and value dtypes
its kernels exist for, duplicate keys with different values, empty lines, bad fields.

``table.lookup(keys)`` maps any shape elementwise (a ``SparseTensor`` or ``RaggedTensor``'s values),
so it runs inside ``Dataset.map`` functions and in vectorised maps (the batched keys are looked up in
one call). Out-of-vocabulary ids of a ``StaticVocabularyTable`` are
``vocab_size + Fingerprint64(key) % num_oov_buckets`` (integer keys hashed as their decimal text), as
TensorFlow's. Tables pickle with their contents (process workers get them with the map function).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable
from ._hash import fingerprint64
from ._tensor import STRING, DTypeError, as_tensor, dtype_arg, infer, is_tensor, out, python_as, tf_name
from .errors import FailedPreconditionError, OutOfRangeError

__all__ = [
    "KeyValueTensorInitializer",
    "StaticHashTable",
    "StaticVocabularyTable",
    "TextFileIndex",
    "TextFileInitializer",
]

_I32, _I64, _F32, _F64 = (np.dtype(t) for t in (np.int32, np.int64, np.float32, np.float64))
_BOOL = np.dtype(bool)

#: the (key dtype, value dtype) pairs TensorFlow's HashTableV2 has a kernel for
_KERNELS = {
    STRING: (STRING, _I64, _I32, _F32, _F64, _BOOL),
    _I64: (STRING, _I64, _I32, _F32, _F64),
    _I32: (STRING, _I32, _F32, _F64),
}


class TextFileIndex:
    """Special column indices of ``TextFileInitializer``: the whole line, or its number (from 0)."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


def _dtype_repr(dtype: np.dtype) -> str:
    return f"<dtype: '{tf_name(dtype)}'>"


def _convert(value: Any, dtype: Any, what: str) -> np.ndarray:
    """``tf.convert_to_tensor(value, dtype, name=what)``: a tensor of another dtype is a ValueError, a
    Python value that does not convert a TypeError (as TensorFlow's)."""
    if dtype is None:
        return as_tensor(value) if is_tensor(value) else infer(value)
    dtype = dtype_arg(dtype)
    if is_tensor(value) or isinstance(value, bytes):
        array = as_tensor(value) if is_tensor(value) else infer(value)
        if array.dtype != dtype:
            # bytes are a string tensor (an element) and a Python value at once: TF's ValueError for a
            # tensor, its TypeError for a Python value
            error = _ConversionError if isinstance(value, bytes) else ValueError
            raise error(
                f"{what}: Tensor conversion requested dtype {tf_name(dtype)} for Tensor with dtype "
                f"{tf_name(array.dtype)}"
            )
        return array
    return python_as(value, dtype)


class _ConversionError(TypeError, ValueError):
    """A value of another dtype than the one asked for (TensorFlow's TypeError or ValueError)."""


class _Initializer:
    """What a table is filled from: ``key_dtype``, ``value_dtype`` and the (key, value) pairs."""

    _key_dtype: np.dtype
    _value_dtype: np.dtype

    @property
    def key_dtype(self) -> np.dtype:
        return self._key_dtype

    @property
    def value_dtype(self) -> np.dtype:
        return self._value_dtype

    def _pairs(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _what(self) -> str:
        return type(self).__name__


class KeyValueTensorInitializer(_Initializer):
    """A table's contents as two tensors of the same shape: ``keys`` and ``values``. ``key_dtype`` and
    ``value_dtype`` convert Python lists (``[1, 2]`` as int64); a tensor must have them already."""

    def __init__(
        self, keys: Any, values: Any, key_dtype: Any = None, value_dtype: Any = None, name: str | None = None
    ):
        self._keys = _convert(keys, key_dtype, "keys")
        self._values = _convert(values, value_dtype, "values")
        self._key_dtype, self._value_dtype = self._keys.dtype, self._values.dtype
        self._name = name or "key_value_init"

    def _pairs(self) -> tuple[np.ndarray, np.ndarray]:
        if self._keys.shape != self._values.shape:
            raise InvalidArgumentError(
                f"LookupTableImportV2: Expected shape {list(self._keys.shape)} for value, got "
                f"{list(self._values.shape)}"
            )
        if self._keys.size == 0:
            raise InvalidArgumentError("LookupTableImportV2: keys and values cannot be empty tensors.")
        return self._keys.reshape(-1), self._values.reshape(-1)


_INT = re.compile(rb"\s*[+-]?[0-9]+\s*")
_FLOAT = re.compile(
    rb"\s*[+-]?([0-9]+\.?[0-9]*([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?|inf|infinity|nan)\s*", re.I
)
_HEX_FLOAT = re.compile(rb"\s*[+-]?0x([0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(p[+-]?[0-9]+)?\s*", re.I)


def _parse(field: bytes, dtype: np.dtype, line: int, name: str) -> Any:
    """A text field as ``dtype``, with TensorFlow's ``safe_strto*`` rules (surrounding blanks allowed, no
    hex, no overflow)."""
    if dtype == STRING:
        return field
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        if _INT.fullmatch(field) and info.min <= int(field) <= info.max:
            return int(field)
    elif _FLOAT.fullmatch(field):
        return float(field)
    elif _HEX_FLOAT.fullmatch(field):  # strtod reads C99 hex floats
        return float.fromhex(field.decode().strip())
    raise InvalidArgumentError(
        f"Field {field.decode('utf-8', 'replace')} in line {line} is not a valid {tf_name(dtype)} ({name})."
    )


def _check_index(role: str, index: int, dtype: np.dtype) -> None:
    """TF's checks of a TextFileInitializer column (``role`` "key" or "value") and its dtype."""
    if index < -2:
        raise ValueError(f"`{role}_index` should be >= -2, received: {index}.")
    if index == TextFileIndex.LINE_NUMBER and dtype != _I64:
        raise ValueError(
            f"`{role}_dtype` must be int64 if `{role}_index` is {TextFileIndex.LINE_NUMBER}, received: "
            f"{_dtype_repr(dtype)}"
        )
    if index == TextFileIndex.WHOLE_LINE and dtype.kind not in "iu" and dtype != STRING:
        raise ValueError(
            f"`{role}_dtype` should be either integer or string for `{role}_index` "
            f"{TextFileIndex.WHOLE_LINE}, received: {_dtype_repr(dtype)}"
        )


class TextFileInitializer(_Initializer):
    """A table's contents from a text file, one pair a line: ``key_index`` and ``value_index`` pick a
    column (split on ``delimiter``, one character), ``TextFileIndex.WHOLE_LINE`` (-2) the line,
    ``TextFileIndex.LINE_NUMBER`` (-1) its number (plus ``value_index_offset``). ``vocab_size``: read
    that many lines (the file must have as many). The file is read when the table is built."""

    def __init__(
        self,
        filename: Any,
        key_dtype: Any,
        key_index: int,
        value_dtype: Any,
        value_index: int,
        vocab_size: int | None = None,
        delimiter: str = "\t",
        name: str | None = None,
        value_index_offset: int = 0,
    ):
        if is_tensor(filename):
            filename = np.asarray(filename)[()]
        if not filename:
            raise ValueError("`filename` argument required for tf.lookup.TextFileInitializer")
        key_dtype, value_dtype = dtype_arg(key_dtype), dtype_arg(value_dtype)
        _check_index("key", key_index, key_dtype)
        _check_index("value", value_index, value_dtype)
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}")
        self._filename = filename.decode() if isinstance(filename, bytes) else str(filename)
        self._key_dtype, self._value_dtype = key_dtype, value_dtype
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._delimiter = vocab_size, delimiter
        self._offset = value_index_offset
        self._name = name

    def _what(self) -> str:
        return self._filename

    def _pairs(self) -> tuple[np.ndarray, np.ndarray]:
        from .gfile import GFile  # noqa: PLC0415 (gfile imports io, which imports this package)

        name = self._filename
        delimiter = self._delimiter.encode() if isinstance(self._delimiter, str) else bytes(self._delimiter)
        if len(delimiter) != 1:
            raise InvalidArgumentError("InitializeTableFromTextFileV2: delimiter should be only 1 char")
        with GFile(name, "rb") as handle:
            data = handle.read()
        if not data:
            raise OutOfRangeError(
                f"InitializeTableFromTextFileV2: {name} is empty (TensorFlow: Read less bytes than requested)"
            )
        lines = data.split(b"\n")
        if data.endswith(b"\n"):
            lines.pop()
        limit = len(lines) if self._vocab_size is None else min(self._vocab_size, len(lines))
        keys: list = []
        values: list = []
        position = 0
        needed = max(self._key_index, self._value_index) + 1
        for number in range(limit):
            raw = lines[number]
            position += len(raw) + 1
            line = raw[:-1] if raw.endswith(b"\r") else raw
            if not line:
                raise InvalidArgumentError(
                    f"Invalid content in {name}: empty line found at position {min(position, len(data))}."
                )
            fields = line.split(delimiter) if needed else []
            if needed > len(fields):
                raise InvalidArgumentError(
                    f"Invalid number of columns in {name} line {number} ({line.decode('utf-8', 'replace')}) "
                    f": expected at least {needed} got {len(fields)}"
                )
            keys.append(self._column(self._key_index, self._key_dtype, line, fields, number, 0))
            values.append(
                self._column(self._value_index, self._value_dtype, line, fields, number, self._offset)
            )
        if self._vocab_size is not None and len(lines) < self._vocab_size:
            raise InvalidArgumentError(
                f"Invalid vocab_size in {name}: expected {self._vocab_size} but got {len(lines)}"
            )
        return _array(keys, self._key_dtype), _array(values, self._value_dtype)

    def _column(
        self, index: int, dtype: np.dtype, line: bytes, fields: list, number: int, offset: int
    ) -> Any:
        if index == TextFileIndex.LINE_NUMBER:
            return number + offset
        field = line if index == TextFileIndex.WHOLE_LINE else fields[index]
        return _parse(field, dtype, number, self._filename)


def _array(items: list, dtype: np.dtype) -> np.ndarray:
    if dtype == STRING:
        array = np.empty(len(items), dtype=object)
        array[:] = items
        return array
    return np.array(items, dtype=dtype)


def _keys_tensor(keys: Any) -> np.ndarray:
    """The keys argument of ``lookup``: a tensor (numpy value, or ``bytes`` as string elements are)."""
    if isinstance(keys, (bytes, np.bytes_)):
        return infer(bytes(keys))
    if not is_tensor(keys):
        raise TypeError(
            f"lookup: keys must be a tensor (a dataset element or tf.constant(...)), got {type(keys).__name__}"
        )
    return as_tensor(keys)


def _on_values(keys: Any, fn: Any) -> Any:
    """``fn`` on the values of a SparseTensor or RaggedTensor (the same structure back), else on keys."""
    from ..io.codec.ragged import Ragged  # noqa: PLC0415 (io imports this package)
    from ..io.codec.sparse import SparseTensor  # noqa: PLC0415

    if isinstance(keys, SparseTensor):
        return SparseTensor(keys.indices, fn(keys.values), keys.dense_shape)
    if isinstance(keys, Ragged):
        inner = keys.values
        values = _on_values(inner, fn) if isinstance(inner, Ragged) else fn(inner)
        return Ragged(values, keys.row_splits, validate=False)
    return out(fn(keys))


class _Table:
    """Keys to positions in ``self._values``: a dict for strings, sorted keys for numbers."""

    _key_dtype: np.dtype
    _value_dtype: np.dtype
    #: the op its ``lookup`` records in a trace: a map function holding a table may run vectorised
    #: (the tracer's candidate check looks for this on the values a function refers to)
    __traced_op__ = "lookup.lookup"

    @property
    def key_dtype(self) -> np.dtype:
        return self._key_dtype

    @property
    def value_dtype(self) -> np.dtype:
        return self._value_dtype

    @property
    def initializer(self) -> None:
        """TF1's init op; tables here are filled when built."""
        return None

    def __getitem__(self, keys: Any) -> Any:
        return self.lookup(keys)

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        raise NotImplementedError

    def _lookup_array(self, keys: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _check_keys(self, keys: Any) -> Any:
        from ..io.codec.ragged import Ragged  # noqa: PLC0415
        from ..io.codec.sparse import SparseTensor  # noqa: PLC0415

        values = keys.flat_values if isinstance(keys, Ragged) else keys
        values = values.values if isinstance(values, SparseTensor) else values
        dtype = _keys_tensor(values).dtype
        if dtype != self._key_dtype:
            raise DTypeError(
                f"Dtype of argument `keys` must be {_dtype_repr(self._key_dtype)}, received: {_dtype_repr(dtype)}"
            )
        return keys if isinstance(keys, (Ragged, SparseTensor)) else _keys_tensor(keys)


class StaticHashTable(_Table):
    """A table from ``initializer``; keys it does not hold look up as ``default_value`` (a scalar of the
    value dtype)."""

    def __init__(
        self,
        initializer: _Initializer,
        default_value: Any,
        name: str | None = None,
        experimental_is_anonymous: bool = False,
    ):
        if not isinstance(initializer, _Initializer):
            raise TypeError(
                "initializer must be a tf.lookup.KeyValueTensorInitializer or TextFileInitializer, got "
                f"{type(initializer).__name__}"
            )
        self._key_dtype, self._value_dtype = initializer.key_dtype, initializer.value_dtype
        default = _convert(default_value, self._value_dtype, "default_value")
        if default.ndim != 0:
            raise ValueError(f"Shapes {tuple(default.shape)} and () are not compatible")
        if self._value_dtype not in _KERNELS.get(self._key_dtype, ()):
            raise DTypeError(
                f"HashTableV2: no kernel for key_dtype {tf_name(self._key_dtype)} and value_dtype "
                f"{tf_name(self._value_dtype)}; TensorFlow has "
                + ", ".join(f"{tf_name(k)} -> {tf_name(v)}" for k, vs in _KERNELS.items() for v in vs)
            )
        self._default = default
        self._name = name or "hash_table"
        keys, values = initializer._pairs()
        self._fill(keys, values, initializer._what())

    def _fill(self, keys: np.ndarray, values: np.ndarray, source: str) -> None:
        positions: dict = {}
        first: list[int] = []
        for i, key in enumerate(keys.tolist()):
            at = positions.get(key)
            if at is None:
                positions[key] = len(first)
                first.append(i)
            elif values[i] != values[first[at]]:
                raise FailedPreconditionError(
                    f"HashTable has different value for same key. Key {_show(key)} has "
                    f"{_show(values[first[at]])} and trying to add value {_show(values[i])} ({source})"
                )
        self._keys = keys[first]
        self._values = values[first]
        if self._key_dtype == STRING:
            self._index: dict | None = positions
            self._sorted = self._order = None
        else:
            self._index = None
            self._order = np.argsort(self._keys, kind="stable")
            self._sorted = self._keys[self._order]

    def _positions(self, keys: np.ndarray) -> np.ndarray:
        """Each key's position in the table, -1 where it is not there."""
        if self._index is not None:
            get = self._index.get
            flat = [get(k, -1) for k in keys.reshape(-1).tolist()]
            return np.array(flat, dtype=np.int64).reshape(keys.shape)
        assert self._sorted is not None and self._order is not None
        if not len(self._sorted):
            return np.full(keys.shape, -1, np.int64)
        at = np.minimum(np.searchsorted(self._sorted, keys), len(self._sorted) - 1)
        return np.where(self._sorted[at] == keys, self._order[at], -1)

    def _lookup_array(self, keys: np.ndarray) -> np.ndarray:
        positions = self._positions(keys)
        result = np.where(positions >= 0, self._values[np.maximum(positions, 0)], self._default)
        return result.astype(object if self._value_dtype == STRING else self._value_dtype)

    @property
    def default_value(self) -> Any:
        return out(self._default)

    @property
    def name(self) -> str:
        return self._name

    def size(self, name: str | None = None) -> np.int64:
        return np.int64(len(self._keys))

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The value of each key (any shape; a SparseTensor's or RaggedTensor's values), the default
        value where the table has none."""
        return _lookup(self, keys)

    def export(self, name: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The keys and values, in the order they were added (TensorFlow's: its hash table's)."""
        return self._keys.copy(), self._values.copy()

    def __repr__(self) -> str:
        return (
            f"<StaticHashTable {tf_name(self._key_dtype)} -> {tf_name(self._value_dtype)}, "
            f"{len(self._keys)} keys>"
        )


@traceable("lookup.lookup")
def _lookup(table: _Table, keys: Any) -> Any:
    """``table.lookup(keys)``: elementwise (its batching rule looks a batch of keys up at once)."""
    keys = table._check_keys(keys)
    return _on_values(keys, table._lookup_array)


def _show(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class StaticVocabularyTable(_Table):
    """Keys to int64 ids: the initializer's (its values must be int64), and for the others
    ``vocab_size + Fingerprint64(key) % num_oov_buckets``. Without an initializer every key is hashed.
    ``lookup_key_dtype``: the dtype of the keys given to ``lookup`` (an integer dtype for an int64
    table: they are cast to int64)."""

    def __init__(
        self,
        initializer: _Initializer | None,
        num_oov_buckets: int,
        lookup_key_dtype: Any = None,
        name: str | None = None,
        experimental_is_anonymous: bool = False,
    ):
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        self._table: StaticHashTable | None
        if initializer is not None:
            key_dtype = dtype_arg(lookup_key_dtype) if lookup_key_dtype is not None else initializer.key_dtype
            if initializer.key_dtype not in (_I64, STRING):
                raise DTypeError(
                    "Invalid `key_dtype`, expected one of (tf.int64, tf.string), but got "
                    f"{_dtype_repr(initializer.key_dtype)}."
                )
            if (initializer.key_dtype.kind in "iu") != (key_dtype.kind in "iu"):
                raise DTypeError(
                    "Invalid `key_dtype`, expected "
                    f"{'integer' if key_dtype.kind in 'iu' else 'non-integer'} but got "
                    f"{_dtype_repr(initializer.key_dtype)}."
                )
            if initializer.value_dtype != _I64:
                raise DTypeError(
                    f"Invalid `value_dtype`, expected {_dtype_repr(_I64)} but got "
                    f"{_dtype_repr(initializer.value_dtype)}."
                )
            self._table = StaticHashTable(initializer, np.int64(-1))
        else:
            key_dtype = STRING
            self._table = None
        if key_dtype.kind not in "iu" and key_dtype != STRING:
            raise DTypeError(f"Invalid `key_dtype`, expected integer or string, got {_dtype_repr(key_dtype)}")
        self._key_dtype, self._value_dtype = key_dtype, _I64
        self._buckets = int(num_oov_buckets)
        self._name = name or "hash_bucket"

    @property
    def name(self) -> str:
        return self._name

    def size(self, name: str | None = None) -> np.int64:
        return np.int64((0 if self._table is None else len(self._table._keys)) + self._buckets)

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """Each key's id (any shape; a SparseTensor's or RaggedTensor's values)."""
        return _lookup(self, keys)

    def _lookup_array(self, keys: np.ndarray) -> np.ndarray:
        if self._table is not None and self._table._key_dtype == _I64:
            keys = keys.astype(np.int64)
        if self._table is None:
            return _hash_buckets(keys, self._buckets)
        ids = self._table._lookup_array(keys)
        missing = ids == -1  # (a vocabulary value of -1 too, as in TF, which compares with the default)
        if missing.any():
            ids[missing] = _hash_buckets(keys[missing], self._buckets) + np.int64(len(self._table._keys))
        return ids

    def __repr__(self) -> str:
        return f"<StaticVocabularyTable {tf_name(self._key_dtype)} -> int64, {int(self.size())} ids>"


def _hash_buckets(keys: np.ndarray, num_buckets: int) -> np.ndarray:
    """``Fingerprint64(key) % num_buckets`` of each key (numbers as their decimal text, as TF's
    ``as_string``)."""
    flat = keys.reshape(-1).tolist()
    if keys.dtype != STRING:
        flat = [str(int(k)).encode() for k in flat]
    return np.array([fingerprint64(s) % num_buckets for s in flat], dtype=np.int64).reshape(keys.shape)
