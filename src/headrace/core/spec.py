"""``TensorSpec``: the shape and dtype of one leaf of an element, with ``None`` for unknown sizes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import numpy as np

from .args import is_int
from .errors import InvalidArgumentError, StructureError
from .structure import map_structure

#: dtype of string leaves (Python ``bytes``; batched strings are object arrays of ``bytes``).
string = np.dtype(object)


def as_dtype(dtype: Any) -> np.dtype:
    """Accept numpy dtypes and names, plus tf.data's ``"string"``.

    >>> as_dtype("float32"), as_dtype("string")
    (dtype('float32'), dtype('O'))
    """
    if isinstance(dtype, str) and dtype in ("string", "str", "bytes"):
        return string
    if dtype is bytes or dtype is str:
        return string
    try:
        return np.dtype(dtype)
    except TypeError:
        raise InvalidArgumentError(
            f"dtype={dtype!r} is not a dtype: use a numpy dtype or a name such as 'float32', 'int64', 'string'"
        ) from None


def to_array(leaf: Any) -> np.ndarray:
    """A leaf as a numpy array, with tf.data's conversions for Python values.

    Python floats become float32 (as in TensorFlow), ints int64, bytes and str object arrays of bytes.

    >>> to_array(1.5).dtype, to_array([1, 2]).dtype, to_array(b"a").dtype
    (dtype('float32'), dtype('int64'), dtype('O'))
    """
    if isinstance(leaf, np.ndarray) and leaf.dtype.kind not in "US":
        return leaf  # numpy bytes (S) arrays become object arrays of bytes below, as tf.string
    if isinstance(leaf, np.generic) and not isinstance(leaf, np.str_):
        return np.asarray(leaf)
    if isinstance(leaf, (bytes, str)):
        out = np.empty((), dtype=object)
        out[()] = leaf.encode() if isinstance(leaf, str) else leaf
        return out
    array = np.asarray(leaf)
    if array.dtype.kind in "US" and not isinstance(leaf, np.ndarray):
        # numpy's fixed-width strings drop trailing NUL bytes (b"a\\x00" -> b"a"): serialized records
        # end in them, so Python strings are taken as the objects they are.
        objects = np.array(leaf, dtype=object)
        if objects.shape == array.shape:
            return encode_strings(objects.astype(object), every_item=True)
    # Array-likes that carry a dtype (pandas columns and frames, torch or jax arrays) keep it, as
    # TensorFlow does; only Python numbers get tf's float32 and one integer type.
    typed = hasattr(leaf, "__array__")
    if array.dtype == np.float64 and not typed:
        return array.astype(np.float32)
    if array.dtype.kind in "US":
        return encode_strings(array, every_item=True)
    if array.dtype.kind == "i" and array.dtype != np.int64 and not typed:
        return array.astype(np.int64)
    if array.dtype == object and typed:
        return encode_strings(array)  # a pandas column of str
    return array


def encode_strings(array: np.ndarray, every_item: bool = False) -> np.ndarray:
    """An object array of ``array``'s items with ``str`` encoded as UTF-8 ``bytes`` (tf.string);
    other items unchanged, or with ``every_item`` made ``bytes`` too (numpy string arrays).

    >>> encode_strings(np.array(["a", b"b"], dtype=object)).tolist()
    [b'a', b'b']
    """
    if every_item:
        return np.vectorize(lambda s: s.encode() if isinstance(s, str) else bytes(s), otypes=[object])(array)
    if not any(isinstance(item, str) for item in array.flat):
        return array
    return np.vectorize(lambda s: s.encode() if isinstance(s, str) else s, otypes=[object])(array)


class TensorShape:
    """tf.TensorShape: a list of sizes (ints, None for unknown), or an unknown rank (``dims=None``).

    ``TensorSpec``, ``padded_batch`` and ``from_generator`` take it wherever they take a shape.

    >>> shape = TensorShape([None, 3])
    >>> shape.rank, shape.as_list(), shape.is_fully_defined(), shape == [None, 3]
    (2, [None, 3], False, True)
    >>> shape.is_compatible_with([5, 3]), TensorShape(None).rank
    (True, None)
    """

    __slots__ = ("dims",)
    dims: tuple[int | None, ...] | None

    def __init__(self, dims: Any):
        if isinstance(dims, TensorShape):
            dims = dims.dims
        elif dims is not None:
            if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
                dims = [dims]
            try:
                dims = [None if d is None or (not isinstance(d, bool) and d == -1) else int(d) for d in dims]
            except (TypeError, ValueError):
                raise InvalidArgumentError(
                    f"TensorShape({dims!r}): give a list of sizes (ints >= 0, None for unknown) or None"
                ) from None
            if any(d is not None and d < 0 for d in dims):
                raise InvalidArgumentError(f"TensorShape({dims!r}): sizes must be >= 0 or None")
            dims = tuple(dims)
        self.dims = dims

    @property
    def rank(self) -> int | None:
        return None if self.dims is None else len(self.dims)

    ndims = rank

    def as_list(self) -> list:
        if self.dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape")
        return list(self.dims)

    def is_fully_defined(self) -> bool:
        return self.dims is not None and None not in self.dims

    def is_compatible_with(self, other: Any) -> bool:
        other = TensorShape(other)
        if self.dims is None or other.dims is None:
            return True
        return len(self.dims) == len(other.dims) and all(
            a is None or b is None or a == b for a, b in zip(self.dims, other.dims)
        )

    def merge_with(self, other: Any) -> TensorShape:
        other = TensorShape(other)
        if not self.is_compatible_with(other):
            raise InvalidArgumentError(f"shapes {self} and {other} are not compatible")
        if self.dims is None:
            return other
        if other.dims is None:
            return self
        return TensorShape([a if a is not None else b for a, b in zip(self.dims, other.dims)])

    def concatenate(self, other: Any) -> TensorShape:
        other = TensorShape(other)
        if self.dims is None or other.dims is None:
            return TensorShape(None)
        return TensorShape(self.dims + other.dims)

    def num_elements(self) -> int | None:
        if not self.is_fully_defined():
            return None
        return int(np.prod(cast("tuple[int, ...]", self.dims), dtype=np.int64))  # no None: fully defined

    def __len__(self) -> int:
        if self.dims is None:
            raise ValueError("cannot take the length of a shape of unknown rank")
        return len(self.dims)

    def __iter__(self) -> Iterator[Any]:
        if self.dims is None:
            raise ValueError("cannot iterate over a shape of unknown rank")
        return iter(self.dims)

    def __getitem__(self, key: Any) -> Any:
        if self.dims is None:
            return None if isinstance(key, int) else TensorShape(None)
        value = self.dims[key]
        return TensorShape(value) if isinstance(key, slice) else value

    def __eq__(self, other: object) -> bool:
        try:
            other = TensorShape(other)
        except InvalidArgumentError:
            return NotImplemented
        return self.dims == other.dims

    def __hash__(self) -> int:
        return hash(self.dims)

    def __repr__(self) -> str:
        return "TensorShape(None)" if self.dims is None else f"TensorShape({list(self.dims)})"


class SpecShape(tuple):
    """A known-rank ``TensorSpec.shape`` (and an eager tensor's ``shape``): the tuple it always was
    (``None`` for unknown sizes), plus ``TensorShape``'s ``rank``, ``as_list``, ``is_compatible_with``,
    ``is_fully_defined``, ``merge_with`` as in tf.

    >>> TensorSpec((None, 3)).shape.rank, TensorSpec((None, 3)).shape.is_compatible_with([2, 3])
    (2, True)
    """

    __slots__ = ()

    @property
    def rank(self) -> int:
        return len(self)

    ndims = rank

    @property
    def dims(self) -> tuple:
        return tuple(self)

    def as_list(self) -> list:
        return list(self)

    def is_fully_defined(self) -> bool:
        return None not in self

    def is_compatible_with(self, other: Any) -> bool:
        return TensorShape(list(self)).is_compatible_with(other)

    def num_elements(self) -> int | None:
        return TensorShape(list(self)).num_elements()

    def merge_with(self, other: Any) -> TensorShape:
        return TensorShape(list(self)).merge_with(other)

    def concatenate(self, other: Any) -> TensorShape:
        return TensorShape(list(self)).concatenate(other)


class TensorSpec:
    """Shape and dtype of a leaf. ``shape`` entries are ints or ``None`` (unknown); ``shape=None``
    means even the rank is unknown.

    >>> spec = TensorSpec((None, 3), "float32")
    >>> spec
    TensorSpec(shape=(None, 3), dtype=float32)
    >>> spec.is_compatible_with(TensorSpec((5, 3), "float32"))
    True
    """

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape: Any, dtype: Any = np.float32, name: str | None = None):
        if isinstance(shape, TensorShape):
            shape = None if shape.rank is None else shape.as_list()
        elif is_int(shape):
            shape = (shape,)  # as tf.TensorShape(3)
        if shape is not None:
            shape = SpecShape(None if d is None else int(d) for d in shape)
            for d in shape:
                if d is not None and d < 0:
                    raise InvalidArgumentError(f"shape={shape} is not allowed: sizes must be >= 0 or None")
        self.shape = shape
        self.dtype = as_dtype(dtype)
        self.name = name

    @classmethod
    def from_value(cls, leaf: Any) -> TensorSpec:
        if leaf is None:
            return NoneTensorSpec()
        array = to_array(leaf)
        return cls(array.shape, array.dtype)

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def is_compatible_with(self, other: TensorSpec | Any) -> bool:
        """True when ``other`` (a spec or a value) could be described by this spec."""
        if not isinstance(other, TensorSpec):
            other = TensorSpec.from_value(other)
        if self.dtype != other.dtype:
            return False
        if self.shape is None or other.shape is None:
            return True
        if len(self.shape) != len(other.shape):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self.shape, other.shape))

    def most_specific_common(self, other: TensorSpec) -> TensorSpec:
        """The narrowest spec that describes both (unknown where they differ)."""
        dtype = self.dtype if self.dtype == other.dtype else np.dtype(object)
        if self.shape is None or other.shape is None or len(self.shape) != len(other.shape):
            return TensorSpec(None, dtype)
        return TensorSpec(tuple(a if a == b else None for a, b in zip(self.shape, other.shape)), dtype)

    def with_leading(self, size: int | None) -> TensorSpec:
        return TensorSpec(None if self.shape is None else (size, *self.shape), self.dtype)

    def without_leading(self) -> TensorSpec:
        if self.shape is None:
            return TensorSpec(None, self.dtype)
        if not self.shape:
            raise InvalidArgumentError("cannot remove the leading dimension of a scalar spec")
        return TensorSpec(self.shape[1:], self.dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorSpec) and self.shape == other.shape and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        dtype = "string" if self.dtype == string else self.dtype.name
        return f"TensorSpec(shape={self.shape}, dtype={dtype})"


class NoneTensorSpec(TensorSpec):
    """The spec of a ``None`` component (tf.data's ``NoneTensorSpec``): None batches to None.

    >>> import headrace as hr
    >>> hr.Dataset.range(2).map(lambda x: (x, None)).element_spec
    (TensorSpec(shape=(), dtype=int64), NoneTensorSpec())
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__((), string)

    def is_compatible_with(self, other: Any) -> bool:
        return other is None or isinstance(other, NoneTensorSpec)

    def most_specific_common(self, other: TensorSpec) -> TensorSpec:
        return self if isinstance(other, NoneTensorSpec) else super().most_specific_common(other)

    def with_leading(self, size: int | None) -> TensorSpec:
        return self

    def without_leading(self) -> TensorSpec:
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoneTensorSpec)

    def __hash__(self) -> int:
        return hash(NoneTensorSpec)

    def __repr__(self) -> str:
        return "NoneTensorSpec()"


def spec_of(element: Any) -> Any:
    """The spec structure of a concrete element."""
    return map_structure(TensorSpec.from_value, element)


def common_spec(specs: list, names: list[str], op: str) -> Any:
    """One spec for the elements of every dataset: the same structure and dtypes, shapes relaxed to
    ``None`` where they differ (tf.data's most specific compatible type)."""

    def merge(a: TensorSpec, b: TensorSpec) -> TensorSpec:
        if a.dtype != b.dtype:
            raise StructureError(f"dtypes differ: {a.dtype} vs {b.dtype}")
        return a.most_specific_common(b)

    result = specs[0]
    for spec, name in zip(specs[1:], names[1:]):
        try:
            result = map_structure(merge, result, spec)
        except StructureError as exc:
            raise InvalidArgumentError(
                f"{op}: {name} has elements {spec!r} but {names[0]} has {specs[0]!r} ({exc}); the datasets "
                "must share one structure and dtypes (cast with map first)"
            ) from None
    return result
