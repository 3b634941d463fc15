"""What a tensor is here, and TensorFlow's rules for turning Python values into one.

Elements are numpy arrays, numpy scalars and ``bytes``, which is what tf.data hands a map function as
``tf.Tensor``s: so numpy values count as tensors with a fixed dtype (two of them must agree, as two
tensors must in TensorFlow), and Python numbers and lists are converted as ``tf.convert_to_tensor``
converts them (ints to int32, or int64 when they do not fit; floats to float32; into the dtype of a
tensor they are combined with, where TensorFlow allows it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.spec import SpecShape, TensorShape, as_dtype, string

STRING = string
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class DTypeError(InvalidArgumentError, TypeError):
    """TensorFlow refuses these dtypes (a ``TypeError`` or an ``InvalidArgumentError`` there, depending
    on the op and the path; this is both)."""


class UnimplementedError(InvalidArgumentError, NotImplementedError):
    """tf.errors.UnimplementedError: TensorFlow has no kernel for this (e.g. casting strings)."""

    error_code = 12


class _TensorMeta(type):
    def __instancecheck__(cls, value: object) -> bool:
        return isinstance(value, (np.ndarray, np.generic))


class Tensor(metaclass=_TensorMeta):
    """``tf.Tensor`` for ``isinstance`` checks: numpy arrays and numpy scalars are tensors here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("tf.Tensor cannot be built directly: use tf.constant or tf.convert_to_tensor")


_SHAPE = np.ndarray.__dict__["shape"]  # numpy's own descriptor, for the tuple under the tf shape


class EagerTensor(np.ndarray):
    """A value with ``tf.Tensor``'s methods: what ``py_function`` bodies and the functions of an
    ``import headrace.compat.eager as tf`` pipeline receive. A numpy array (every numpy function takes
    it) plus ``numpy()`` (a numpy scalar, or ``bytes``, for a scalar), ``shape`` with TensorShape's
    methods (``as_list()``, ``rank``, ``merge_with``), ``get_shape()`` / ``set_shape()``, indexing and
    iteration that give tensors (a string is a 0-d object tensor holding ``bytes``), and ``==`` that
    compares strings as TensorFlow does (``bytes`` with a numpy ``str`` array elementwise).

    >>> t = tensor(np.array([b"a", b"b"], dtype=object))
    >>> t[0].numpy(), (t == np.array(["a", "c"])).numpy().tolist(), t.shape.as_list()
    (b'a', [True, False], [2])
    """

    @property  # a tuple still, as numpy's: with TensorShape's methods
    def shape(self) -> SpecShape:
        return SpecShape(_SHAPE.__get__(self))

    @shape.setter
    def shape(self, value: Any) -> None:
        _SHAPE.__set__(self, value)

    def numpy(self) -> Any:
        plain = self.view(np.ndarray)
        return plain[()] if plain.ndim == 0 else plain.copy()

    def get_shape(self) -> SpecShape:
        return self.shape

    def set_shape(self, shape: Any) -> None:
        """Check that ``shape`` fits (an eager tensor's shape is known: nothing to refine)."""
        if not TensorShape(shape).is_compatible_with(tuple(self.shape)):
            raise ValueError(
                f"Tensor's shape {tuple(self.shape)} is not compatible with supplied shape {TensorShape(shape)}."
            )

    def __getitem__(self, key: Any) -> Any:
        item = np.ndarray.__getitem__(self, key)
        # ``t[()]`` stays numpy's idiom for a 0-d array's scalar, which numpy code (ours too) relies on
        return item if type(key) is tuple and not key else tensor(item)

    def __iter__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> Any:
        return _compare(self, other, np.equal)

    def __ne__(self, other: object) -> Any:
        return _compare(self, other, np.not_equal)

    __hash__ = None  # as tf.Tensor (and numpy arrays): unhashable

    def __repr__(self) -> str:
        return f"<tf.Tensor: shape={tuple(self.shape)}, dtype={tf_name(self.dtype)}, numpy={self.numpy()!r}>"


def tensor(value: Any) -> Any:
    """``value`` as an :class:`EagerTensor` when it is a tensor (a numpy array or scalar, ``bytes``),
    else unchanged."""
    kind = type(value)
    if kind is EagerTensor:
        return value
    if kind is np.ndarray:
        return value.view(EagerTensor)
    if kind is bytes or isinstance(value, (np.bytes_, np.str_)):
        return infer(value).view(EagerTensor)
    if isinstance(value, np.generic):
        return np.asarray(value).view(EagerTensor)
    return value


def plain(value: Any) -> Any:
    """An :class:`EagerTensor` as the element form kernels take (a numpy array, a numpy scalar or
    ``bytes``), anything else unchanged."""
    if type(value) is EagerTensor:
        array = value.view(np.ndarray)
        return array[()] if array.ndim == 0 else array
    return value


def _compare(left: Any, right: Any, op: Any) -> Any:
    if _stringy(left) or _stringy(right):  # TensorFlow converts both to strings: numpy would say False
        left, right = _as_bytes(left), _as_bytes(right)
    return tensor(op(np.asarray(left).view(np.ndarray), right))


def _stringy(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "OUS"
    return isinstance(value, (bytes, str, np.bytes_, np.str_))


def _as_bytes(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.dtype.kind in "US":
        return _strings(value)
    if isinstance(value, (str, np.str_)):
        return value.encode()
    if isinstance(value, np.bytes_):
        return bytes(value)
    return np.asarray(value).view(np.ndarray) if isinstance(value, np.ndarray) else value


def tf_name(dtype: np.dtype) -> str:
    """The dtype as TensorFlow's messages name it (float32 is 'float', float64 'double')."""
    dtype = np.dtype(dtype)
    if dtype == STRING:
        return "string"
    return {"float32": "float", "float64": "double", "float16": "half"}.get(dtype.name, dtype.name)


def is_tensor(value: Any) -> bool:
    return isinstance(value, (np.ndarray, np.generic))


def as_tensor(value: np.ndarray | np.generic) -> np.ndarray:
    """A numpy value as an array; numpy's fixed-width strings become object arrays of bytes."""
    array = np.asarray(value)
    if array.dtype.kind in "US":
        return _strings(array)
    return array


def _strings(array: np.ndarray) -> np.ndarray:
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        out[index] = item.encode() if isinstance(item, str) else bytes(item)
    return out


def _is_string(value: Any) -> bool:
    return isinstance(value, (bytes, str, np.bytes_, np.str_))


def infer(value: Any) -> np.ndarray:
    """``tf.convert_to_tensor(value)`` for a Python value: TensorFlow's dtype inference."""
    if is_tensor(value):
        return as_tensor(value)
    if value is None:
        raise ValueError(
            "Attempt to convert a value (None) with an unsupported type (<class 'NoneType'>) to a Tensor."
        )
    if isinstance(value, TensorShape):
        if not value.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {value} to a Tensor.")
        return _ints(np.asarray(value.as_list(), dtype=object))
    if _is_string(value):
        out = np.empty((), dtype=object)
        out[()] = value.encode() if isinstance(value, str) else bytes(value)
        return out
    if isinstance(value, (list, tuple)) and _holds_tensor(value):
        return _pack(value)
    if hasattr(value, "__array__") and not isinstance(value, (list, tuple)):
        # pandas DataFrame / Series and other array-likes: TensorFlow converts np.asarray(value), so
        # its dtype stays (float64 columns stay float64); object arrays are inferred below
        array = np.asarray(value)
        if array.dtype.kind != "O":
            return as_tensor(array)
    try:
        array = np.array(value, dtype=object)
    except ValueError as exc:
        raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor ({exc}).") from None
    flat = array.reshape(-1).tolist()
    if array.dtype == object and any(isinstance(item, (list, tuple)) for item in flat):
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.")
    if not flat:
        return np.zeros(array.shape, np.float32)
    if all(_is_string(item) for item in flat):
        return _strings(array)
    if all(isinstance(item, (bool, np.bool_)) for item in flat):
        return array.astype(bool)
    if all(_is_int(item) for item in flat):
        return _ints(array)
    if all(_is_int(item) or isinstance(item, (float, np.floating)) for item in flat):
        return array.astype(np.float32)
    if all(isinstance(item, (int, float, complex, np.number)) for item in flat):
        return array.astype(np.complex128)
    kinds = sorted({type(item).__name__ for item in flat})
    raise TypeError(f"Can't convert a Python sequence of {', '.join(kinds)} to a Tensor.")


def _is_int(item: Any) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))


def _ints(array: np.ndarray) -> np.ndarray:
    flat = [int(item) for item in array.reshape(-1).tolist()]
    if all(INT32_MIN <= item <= INT32_MAX for item in flat):
        return np.array(flat, dtype=np.int32).reshape(array.shape)
    if all(-(2**63) <= item < 2**63 for item in flat):
        return np.array(flat, dtype=np.int64).reshape(array.shape)
    raise ValueError("Can't convert Python sequence with out-of-range integer to Tensor.")


def _holds_tensor(value: Any) -> bool:
    if is_tensor(value):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_tensor(item) for item in value)


def _pack(value: Any) -> np.ndarray:
    """A list holding tensors: TensorFlow packs it (tf.stack), so the dtypes must agree."""
    parts = [_pack(item) if isinstance(item, (list, tuple)) else item for item in value]
    arrays = match("Pack", parts)
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise InvalidArgumentError(f"Shapes of all inputs must match: {sorted(shapes)}")
    if not arrays:
        return np.zeros((0,), np.float32)
    return np.stack(arrays)


def convert(value: Any, dtype: Any = None, what: str = "value") -> np.ndarray:
    """``tf.convert_to_tensor(value, dtype)``: a tensor must already have ``dtype`` (ValueError); a
    Python value is converted where TensorFlow allows it (TypeError otherwise)."""
    if dtype is None:
        return infer(value)
    dtype = as_dtype(dtype)
    if is_tensor(value):
        array = as_tensor(value)
        if array.dtype != dtype:
            raise DTypeError(
                f"{what}: Tensor conversion requested dtype {tf_name(dtype)} for Tensor with dtype "
                f"{tf_name(array.dtype)}"
            )
        return array
    return python_as(value, dtype)


def python_as(value: Any, dtype: np.dtype) -> np.ndarray:
    """A Python value converted into ``dtype`` as TensorFlow does: ints wrap into narrower ints, ints
    and floats widen into floats; a float into an int, a number into a string (and back) is refused."""
    array = infer(value)
    if array.dtype == dtype:
        return array
    source, target = array.dtype.kind, dtype.kind
    allowed = (
        (target in "iu" and source in "iub" and source != "b")
        or (target in "iu" and source == "b")
        or (target == "f" and source in "iuf")
        or (target == "c" and source in "iufc")
        or (target == "b" and source == "b")
    )
    if not allowed:
        raise DTypeError(f"Cannot convert {_short(value)} to EagerTensor of dtype {tf_name(dtype)}")
    if source in "iu" and target in "iu":
        return np.asarray(np.array(value, dtype=object).astype(np.int64)).astype(dtype)
    return array.astype(dtype)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."


def match(
    op: str, values: list, allowed: tuple | None = None, start: int = 0, first_decides: bool = False
) -> list[np.ndarray]:
    """The inputs of an op that takes one dtype ``T``: the first tensor's dtype (or the first value's),
    Python values converted into it, a tensor of another dtype refused, as TensorFlow's eager ops do."""
    # The first tensor's dtype is T and Python values are converted into it; tf.add alone converts in
    # order (``first_decides``): a Python value before any tensor fixes T by itself.
    dtype = None if first_decides else next((as_tensor(v).dtype for v in values if is_tensor(v)), None)
    out = []
    for index, value in enumerate(values):
        if is_tensor(value):
            array = as_tensor(value)
        elif dtype is None:
            array = infer(value)
        else:
            try:
                array = python_as(value, dtype)
            except (TypeError, ValueError):
                array = infer(value)
        if dtype is None:
            dtype = array.dtype
        elif array.dtype != dtype:
            raise DTypeError(
                f"cannot compute {op} as input #{index + start}(zero-based) was expected to be a "
                f"{tf_name(dtype)} tensor but is a {tf_name(array.dtype)} tensor"
            )
        out.append(array)
    if allowed is not None and dtype is not None:
        check_dtype(op, dtype, allowed)
    return out


def check_dtype(op: str, dtype: np.dtype, allowed: tuple, attr: str = "T") -> None:
    if np.dtype(dtype) not in allowed:
        names = ", ".join(tf_name(d) for d in allowed)
        raise DTypeError(
            f"{op}: Value for attr '{attr}' of {tf_name(dtype)} is not in the list of allowed values: {names}"
        )


def out(array: Any) -> Any:
    """An op's result as elements look: arrays as they are, scalars as numpy scalars or ``bytes``."""
    array = np.asarray(array)
    return array[()] if array.ndim == 0 else array


def dtype_arg(dtype: Any) -> np.dtype:
    return as_dtype(dtype)


def int_list(value: Any, what: str) -> list[int]:
    """A shape, axis list or multiples argument as Python ints.

    A list holding tensors is packed as TensorFlow packs it into the op's int32 argument: each tensor is
    cast (``tf.cast``: floats truncate), so ``[tf.math.ceil(h / 8), w, 1]`` works there and here; a float
    tensor or Python floats alone are refused, as there."""
    if isinstance(value, TensorShape):
        return value.as_list()
    if isinstance(value, (list, tuple)) and any(is_tensor(v) for v in value):
        value = _packed_ints(value, what)
    array = np.asarray(value)
    if array.dtype.kind not in "iu" and not (array.size == 0 and array.dtype.kind == "f"):
        raise DTypeError(f"{what} must be integers, got {_short(value)}")
    return [int(v) for v in array.reshape(-1)]


def _packed_ints(items: list | tuple, what: str) -> np.ndarray:
    """TensorFlow's packing of a list holding tensors into an int argument: Pack (every tensor of one
    dtype, Python values converted to it), then a cast to int (floats truncate, as ``tf.cast``)."""
    dtype = next(np.asarray(v).dtype for v in items if is_tensor(v))
    for i, item in enumerate(items):
        if is_tensor(item) and np.asarray(item).dtype != dtype:
            raise InvalidArgumentError(
                f"cannot compute Pack as input #{i}(zero-based) was expected to be a {tf_name(dtype)} tensor "
                f"but is a {tf_name(np.asarray(item).dtype)} tensor"
            )
        if dtype.kind not in "biuf" or (isinstance(item, float) and dtype.kind in "biu"):
            raise DTypeError(f"{what} must be integers, got {_short(items)}")
    packed = np.array([np.asarray(v, dtype=dtype) for v in items])
    return packed.astype(np.int64) if dtype.kind in "bf" else packed


def axis_arg(axis: Any, rank: int, op: str) -> int:
    value = np.asarray(axis)
    if value.dtype.kind not in "iu" or value.ndim != 0:
        raise DTypeError(f"{op}: axis must be an int scalar, got {_short(axis)}")
    a = int(value)
    if not -rank <= a < rank:
        raise InvalidArgumentError(f"{op}: Expected axis in the range [{-rank}, {rank}), but got {a}")
    return a % rank if rank else 0


SIGNED = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
UNSIGNED = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
INTS = SIGNED + UNSIGNED
FLOATS = tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64))
COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))
REAL = FLOATS + INTS
NUMBERS = REAL + COMPLEX
BOOL = (np.dtype(bool),)
ALL = NUMBERS + BOOL + (STRING,)
