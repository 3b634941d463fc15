"""tf.math on numpy: elementwise arithmetic, comparisons, logic, reductions, cast, with TensorFlow's
dtype rules (one dtype per op, no promotion; integer division by zero refused; int truediv to float)."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable
from ._tensor import (
    BOOL,
    COMPLEX,
    FLOATS,
    INTS,
    NUMBERS,
    REAL,
    SIGNED,
    STRING,
    DTypeError,
    UnimplementedError,
    as_tensor,
    check_dtype,
    convert,
    dtype_arg,
    infer,
    is_tensor,
    match,
    out,
    tf_name,
)

INDEX = (np.dtype(np.int32), np.dtype(np.int64))

# ---- elementwise binary ops ------------------------------------------------------------------------


def _broadcast(op: str, x: np.ndarray, y: np.ndarray) -> None:
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise InvalidArgumentError(
            f"{op}: Incompatible shapes: {list(x.shape)} vs. {list(y.shape)}"
        ) from None


def _binary(op: str, allowed: tuple, fn: Callable, x: Any, y: Any, keep_dtype: bool = True) -> Any:
    a, b = match(op, [x, y], allowed)
    _broadcast(op, a, b)
    with np.errstate(all="ignore"):
        result = fn(a, b)
    return out(np.asarray(result, dtype=a.dtype) if keep_dtype else result)


@traceable("add")
def add(x: Any, y: Any, name: str | None = None) -> Any:
    """tf.add (also strings: concatenation)."""
    a, b = match("AddV2", [x, y], NUMBERS + (STRING,), first_decides=True)
    _broadcast("AddV2", a, b)
    if a.dtype == STRING:
        return out(np.frompyfunc(lambda s, t: s + t, 2, 1)(a, b).astype(object))
    with np.errstate(all="ignore"):
        return out(np.asarray(a + b, dtype=a.dtype))


@traceable("subtract")
def subtract(x: Any, y: Any, name: str | None = None) -> Any:
    return _binary("Sub", NUMBERS, np.subtract, x, y)


@traceable("multiply")
def multiply(x: Any, y: Any, name: str | None = None) -> Any:
    return _binary("Mul", NUMBERS, np.multiply, x, y)


def _check_int_divisor(op: str, b: np.ndarray) -> None:
    if b.dtype.kind in "iu" and (b == 0).any():
        raise InvalidArgumentError(f"{op}: Integer division by zero")


@traceable("truediv")
def truediv(x: Any, y: Any, name: str | None = None) -> Any:
    """x / y; integers become floats first (int8/16, uint8/16 to float32, wider ints to float64)."""
    return _truediv(x, y, first_decides=True)


def _truediv(x: Any, y: Any, first_decides: bool) -> Any:
    a, b = match("truediv", [x, y], NUMBERS, first_decides=first_decides)
    _broadcast("RealDiv", a, b)
    if a.dtype.kind in "iu":
        target = np.float32 if a.dtype.itemsize <= 2 else np.float64
        a, b = a.astype(target), b.astype(target)
    with np.errstate(all="ignore"):
        return out(np.asarray(a / b, dtype=a.dtype))


@traceable("divide")
def divide(x: Any, y: Any, name: str | None = None) -> Any:
    """x / y (as ``truediv``, but a Python ``x`` takes a tensor ``y``'s dtype, as in TensorFlow)."""
    return _truediv(x, y, first_decides=False)


def realdiv(x: Any, y: Any, name: str | None = None) -> Any:
    a, b = match("RealDiv", [x, y], FLOATS + COMPLEX)
    _broadcast("RealDiv", a, b)
    with np.errstate(all="ignore"):
        return out(np.asarray(a / b, dtype=a.dtype))


def divide_no_nan(x: Any, y: Any, name: str | None = None) -> Any:
    a, b = match("DivNoNan", [x, y], FLOATS + COMPLEX)
    _broadcast("DivNoNan", a, b)
    with np.errstate(all="ignore"):
        return out(np.asarray(np.where(b == 0, 0, a / np.where(b == 0, 1, b)), dtype=a.dtype))


def _truncdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return np.asarray(q + fix, dtype=a.dtype)


@traceable("floordiv")
def floordiv(x: Any, y: Any, name: str | None = None) -> Any:
    a, b = match("FloorDiv", [x, y], REAL)
    _broadcast("FloorDiv", a, b)
    _check_int_divisor("FloorDiv", b)
    with np.errstate(all="ignore"):
        result = np.floor_divide(a, b) if a.dtype.kind in "iu" else np.floor(a / b)
    return out(np.asarray(result, dtype=a.dtype))


@traceable("floormod")
def floormod(x: Any, y: Any, name: str | None = None) -> Any:
    a, b = match("FloorMod", [x, y], REAL)
    _broadcast("FloorMod", a, b)
    _check_int_divisor("FloorMod", b)
    with np.errstate(all="ignore"):
        return out(np.asarray(np.mod(a, b), dtype=a.dtype))


mod = floormod


def truncatediv(x: Any, y: Any, name: str | None = None) -> Any:
    a, b = match("TruncateDiv", [x, y], REAL)
    _broadcast("TruncateDiv", a, b)
    _check_int_divisor("TruncateDiv", b)
    with np.errstate(all="ignore"):
        result = _truncdiv(a, b) if a.dtype.kind in "iu" else np.trunc(a / b)
    return out(np.asarray(result, dtype=a.dtype))


def truncatemod(x: Any, y: Any, name: str | None = None) -> Any:
    a, b = match("TruncateMod", [x, y], INDEX + FLOATS[1:])
    _broadcast("TruncateMod", a, b)
    _check_int_divisor("TruncateMod", b)
    with np.errstate(all="ignore"):
        return out(np.asarray(np.fmod(a, b), dtype=a.dtype))


@traceable("pow")
def pow(x: Any, y: Any, name: str | None = None) -> Any:  # noqa: A001 (tf.pow)
    a, b = match("Pow", [x, y], FLOATS + SIGNED + COMPLEX)
    _broadcast("Pow", a, b)
    if a.dtype.kind in "iu" and (b < 0).any():
        raise InvalidArgumentError("Pow: Integers to negative integer powers are not allowed")
    with np.errstate(all="ignore"):
        return out(np.asarray(np.power(a, b), dtype=a.dtype))


@traceable("maximum")
def maximum(x: Any, y: Any, name: str | None = None) -> Any:
    return _binary("Maximum", REAL, np.maximum, x, y)


@traceable("minimum")
def minimum(x: Any, y: Any, name: str | None = None) -> Any:
    return _binary("Minimum", REAL, np.minimum, x, y)


@traceable("squared_difference")
def squared_difference(x: Any, y: Any, name: str | None = None) -> Any:
    return _binary("SquaredDifference", FLOATS + INDEX + COMPLEX, lambda a, b: (a - b) * np.conj(a - b), x, y)


def atan2(y: Any, x: Any, name: str | None = None) -> Any:
    return _binary("Atan2", FLOATS, np.arctan2, y, x)


# ---- comparisons and logic -------------------------------------------------------------------------


def _compare(op: str, allowed: tuple, fn: Callable, x: Any, y: Any) -> Any:
    a, b = match(op, [x, y], allowed)
    _broadcast(op, a, b)
    with np.errstate(all="ignore"):
        return out(np.asarray(fn(a, b), dtype=bool))


@traceable("equal")
def equal(x: Any, y: Any, name: str | None = None) -> Any:
    return _compare("Equal", NUMBERS + BOOL + (STRING,), np.equal, x, y)


@traceable("not_equal")
def not_equal(x: Any, y: Any, name: str | None = None) -> Any:
    return _compare("NotEqual", NUMBERS + BOOL + (STRING,), np.not_equal, x, y)


@traceable("less")
def less(x: Any, y: Any, name: str | None = None) -> Any:
    return _compare("Less", REAL, np.less, x, y)


@traceable("less_equal")
def less_equal(x: Any, y: Any, name: str | None = None) -> Any:
    return _compare("LessEqual", REAL, np.less_equal, x, y)


@traceable("greater")
def greater(x: Any, y: Any, name: str | None = None) -> Any:
    return _compare("Greater", REAL, np.greater, x, y)


@traceable("greater_equal")
def greater_equal(x: Any, y: Any, name: str | None = None) -> Any:
    return _compare("GreaterEqual", REAL, np.greater_equal, x, y)


def _logical(op: str, fn: Callable, *values: Any) -> Any:
    arrays = [convert(v, np.bool_) if not is_tensor(v) else as_tensor(v) for v in values]
    for index, array in enumerate(arrays):
        if array.dtype != np.bool_:
            raise DTypeError(
                f"cannot compute {op} as input #{index}(zero-based) was expected to be a bool tensor "
                f"but is a {tf_name(array.dtype)} tensor"
            )
    if len(arrays) == 2:
        _broadcast(op, arrays[0], arrays[1])
    return out(fn(*arrays))


@traceable("logical_and")
def logical_and(x: Any, y: Any, name: str | None = None) -> Any:
    return _logical("LogicalAnd", np.logical_and, x, y)


@traceable("logical_or")
def logical_or(x: Any, y: Any, name: str | None = None) -> Any:
    return _logical("LogicalOr", np.logical_or, x, y)


@traceable("logical_xor")
def logical_xor(x: Any, y: Any, name: str | None = None) -> Any:
    return _logical("LogicalXor", np.logical_xor, x, y)


@traceable("logical_not")
def logical_not(x: Any, name: str | None = None) -> Any:
    return _logical("LogicalNot", np.logical_not, x)


# ---- elementwise unary ops -------------------------------------------------------------------------


def _unary(op: str, allowed: tuple, fn: Callable, x: Any, result_dtype: Any = None) -> Any:
    (a,) = match(op, [x], allowed)
    with np.errstate(all="ignore"):
        result = fn(a)
    return out(np.asarray(result, dtype=a.dtype if result_dtype is None else result_dtype))


@traceable("abs")
def abs(x: Any, name: str | None = None) -> Any:  # noqa: A001 (tf.abs)
    (a,) = match("Abs", [x], FLOATS + SIGNED + COMPLEX)
    if a.dtype.kind == "c":
        return out(np.abs(a).astype(np.float32 if a.dtype == np.complex64 else np.float64))
    with np.errstate(all="ignore"):
        return out(np.asarray(np.abs(a), dtype=a.dtype))


@traceable("negative")
def negative(x: Any, name: str | None = None) -> Any:
    return _unary("Neg", FLOATS + SIGNED + COMPLEX, np.negative, x)


@traceable("sign")
def sign(x: Any, name: str | None = None) -> Any:
    return _unary("Sign", FLOATS + SIGNED + COMPLEX, np.sign, x)


@traceable("square")
def square(x: Any, name: str | None = None) -> Any:
    return _unary("Square", NUMBERS, np.square, x)


@traceable("sqrt")
def sqrt(x: Any, name: str | None = None) -> Any:
    return _unary("Sqrt", FLOATS + COMPLEX, np.sqrt, x)


@traceable("rsqrt")
def rsqrt(x: Any, name: str | None = None) -> Any:
    return _unary("Rsqrt", FLOATS + COMPLEX, lambda a: 1 / np.sqrt(a), x)


@traceable("exp")
def exp(x: Any, name: str | None = None) -> Any:
    return _unary("Exp", FLOATS + COMPLEX, np.exp, x)


def expm1(x: Any, name: str | None = None) -> Any:
    return _unary("Expm1", FLOATS + COMPLEX, np.expm1, x)


@traceable("log")
def log(x: Any, name: str | None = None) -> Any:
    return _unary("Log", FLOATS + COMPLEX, np.log, x)


@traceable("log1p")
def log1p(x: Any, name: str | None = None) -> Any:
    return _unary("Log1p", FLOATS + COMPLEX, np.log1p, x)


def reciprocal(x: Any, name: str | None = None) -> Any:
    return _unary("Reciprocal", FLOATS + COMPLEX, np.reciprocal, x)


def sin(x: Any, name: str | None = None) -> Any:
    return _unary("Sin", FLOATS + COMPLEX, np.sin, x)


def cos(x: Any, name: str | None = None) -> Any:
    return _unary("Cos", FLOATS + COMPLEX, np.cos, x)


def tan(x: Any, name: str | None = None) -> Any:
    return _unary("Tan", FLOATS + COMPLEX, np.tan, x)


@traceable("tanh")
def tanh(x: Any, name: str | None = None) -> Any:
    return _unary("Tanh", FLOATS + COMPLEX, np.tanh, x)


@traceable("sigmoid")
def sigmoid(x: Any, name: str | None = None) -> Any:
    return _unary("Sigmoid", FLOATS + COMPLEX, lambda a: 1 / (1 + np.exp(-a)), x)


@traceable("floor")
def floor(x: Any, name: str | None = None) -> Any:
    return _unary("Floor", FLOATS, np.floor, x)


@traceable("ceil")
def ceil(x: Any, name: str | None = None) -> Any:
    return _unary("Ceil", FLOATS, np.ceil, x)


@traceable("rint")
def rint(x: Any, name: str | None = None) -> Any:
    """Round half to even, floats only."""
    return _unary("Rint", FLOATS[1:], np.rint, x)


@traceable("round")
def round(x: Any, name: str | None = None) -> Any:  # noqa: A001 (tf.round)
    """Round half to even; integers unchanged."""
    (a,) = match("Round", [x], FLOATS + INTS + COMPLEX)
    return out(a if a.dtype.kind in "iu" else np.asarray(np.rint(a), dtype=a.dtype))


def is_nan(x: Any, name: str | None = None) -> Any:
    return _unary("IsNan", FLOATS, np.isnan, x, bool)


def is_inf(x: Any, name: str | None = None) -> Any:
    return _unary("IsInf", FLOATS, np.isinf, x, bool)


def is_finite(x: Any, name: str | None = None) -> Any:
    return _unary("IsFinite", FLOATS, np.isfinite, x, bool)


# ---- cast ------------------------------------------------------------------------------------------


@traceable("cast")
def cast(x: Any, dtype: Any, name: str | None = None) -> Any:
    """tf.cast: floats to ints truncate toward zero, NaN and out-of-range floats give the integer
    minimum (x86's conversion, as TensorFlow's CPU kernel), wider ints wrap, complex to real keeps the
    real part, anything to bool is ``!= 0``; strings cannot be cast (tf.strings.to_number)."""
    from ..io.codec.sparse import SparseTensor  # noqa: PLC0415 (io imports this package)

    target = dtype_arg(dtype)
    if isinstance(x, SparseTensor):
        return SparseTensor(x.indices, cast(x.values, target), x.dense_shape)
    a = as_tensor(x) if is_tensor(x) else infer(x)
    return out(cast_array(a, target))


def cast_array(a: np.ndarray, target: np.dtype) -> np.ndarray:
    if a.dtype == target:
        return a
    if a.dtype == STRING or target == STRING:
        raise UnimplementedError(f"Cast {tf_name(a.dtype)} to {tf_name(target)} is not supported")
    if target == np.bool_:
        return a != 0
    if a.dtype.kind == "c" and target.kind != "c":
        a = a.real
    if a.dtype.kind == "f" and target.kind in "iu":
        return _float_to_int(a, target)
    with np.errstate(all="ignore"):
        return a.astype(target)


def _float_to_int(a: np.ndarray, target: np.dtype) -> np.ndarray:
    # CPU conversions (cvttss2si): a 32-bit conversion for types up to 32 bits (uint32 goes through
    # 64), a 64-bit one for 64-bit types; NaN and out-of-range give the minimum of that conversion.
    wide = np.int64 if target.itemsize == 8 or target == np.uint32 else np.int32
    info = np.iinfo(wide)
    with np.errstate(all="ignore"):
        truncated = np.trunc(a.astype(np.float64))
        bad = ~((truncated >= info.min) & (truncated <= info.max))
        as_wide = np.where(bad, info.min, np.where(bad, 0, truncated)).astype(wide)
    return as_wide.astype(target)


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Any:
    target = dtype_arg(dtype)
    a = as_tensor(value) if is_tensor(value) else infer(value)
    if target.kind in "iu" and a.dtype.kind in "iuf":
        info = np.iinfo(target)
        a = (
            np.clip(a, info.min, info.max)
            if a.dtype.kind != "f"
            else np.clip(a, float(info.min), float(info.max))
        )
    return cast(a, target)


# ---- clip, cumulative ------------------------------------------------------------------------------


@traceable("clip_by_value")
def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Any:
    """min(max(t, clip_value_min), clip_value_max), in ``t``'s dtype; bounds must broadcast to t."""
    a, lo, hi = match("clip_by_value", [t, clip_value_min, clip_value_max], REAL)
    for bound in (lo, hi):
        try:
            shape = np.broadcast_shapes(a.shape, bound.shape)
        except ValueError:
            shape = None
        if shape != a.shape:
            raise InvalidArgumentError(
                f"clip_by_value: Incompatible shapes: {list(a.shape)} vs. {list(bound.shape)}"
            )
    return out(np.asarray(np.maximum(np.minimum(a, hi), lo), dtype=a.dtype))  # tf's order: lo wins


@traceable("cumsum")
def cumsum(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Any:
    return _cumulative("Cumsum", np.cumsum, 0, x, axis, exclusive, reverse)


@traceable("cumprod")
def cumprod(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Any:
    return _cumulative("Cumprod", np.cumprod, 1, x, axis, exclusive, reverse)


def _cumulative(
    op: str, fn: Callable, identity: int, x: Any, axis: Any, exclusive: bool, reverse: bool
) -> Any:
    (a,) = match(op, [x], NUMBERS)
    if a.ndim == 0:
        raise InvalidArgumentError(f"{op}: input must be at least 1-D")
    axis = _axis(op, axis, a.ndim)
    if reverse:
        a = np.flip(a, axis)
    with np.errstate(all="ignore"):
        result = np.asarray(fn(a, axis=axis, dtype=a.dtype), dtype=a.dtype)
    if exclusive:
        pad = np.full_like(np.take(result, [0], axis=axis), identity)
        result = np.concatenate([pad, np.take(result, np.arange(a.shape[axis] - 1), axis=axis)], axis=axis)
    if reverse:
        result = np.flip(result, axis)
    return out(result)


def _axis(op: str, axis: Any, rank: int) -> int:
    value = np.asarray(axis)
    if value.dtype.kind not in "iu" or value.ndim != 0:
        raise DTypeError(f"{op}: axis must be an int scalar, got {axis!r}")
    a = int(value)
    if not -rank <= a < builtins.max(rank, 1):
        raise InvalidArgumentError(f"{op}: Expected axis in the range [{-rank}, {rank}), but got {a}")
    return a % builtins.max(rank, 1)


# ---- reductions ------------------------------------------------------------------------------------


def _axes(op: str, axis: Any, rank: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(rank))
    values = np.asarray(axis)
    if values.dtype.kind not in "iu" and values.size:
        raise DTypeError(f"{op}: axis must be integers, got {axis!r}")
    axes = []
    for a in values.reshape(-1).tolist():
        if not -rank <= a < rank:
            raise InvalidArgumentError(
                f"{op}: Invalid reduction dimension ({a} for input with {rank} dimension(s)"
            )
        axes.append(a % rank)
    return tuple(sorted(set(axes)))


def _reduce(op: str, allowed: tuple, fn: Callable, x: Any, axis: Any, keepdims: bool) -> Any:
    (a,) = match(op, [x], allowed)
    axes = _axes(op, axis, a.ndim)
    with np.errstate(all="ignore"):
        result = fn(a, axes)
    result = np.asarray(result, dtype=a.dtype)
    if keepdims:
        result = np.reshape(result, [1 if i in axes else n for i, n in enumerate(a.shape)])
    return out(result)


@traceable("reduce_sum")
def reduce_sum(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Any:
    return _reduce(
        "Sum", NUMBERS, lambda a, ax: np.sum(a, axis=ax, dtype=a.dtype), input_tensor, axis, keepdims
    )


@traceable("reduce_prod")
def reduce_prod(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Any:
    return _reduce(
        "Prod", NUMBERS, lambda a, ax: np.prod(a, axis=ax, dtype=a.dtype), input_tensor, axis, keepdims
    )


def _mean(a: np.ndarray, axes: tuple) -> np.ndarray:
    count = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    if a.dtype.kind in "iu":  # integer mean: the sum divided with truncation, as TensorFlow's kernel
        total = np.sum(a, axis=axes, dtype=a.dtype)
        if count == 0:
            return np.zeros_like(total)
        return _truncdiv(np.asarray(total), np.asarray(count, dtype=a.dtype))
    return np.sum(a, axis=axes, dtype=a.dtype) / a.dtype.type(count)


@traceable("reduce_mean")
def reduce_mean(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Any:
    return _reduce("Mean", NUMBERS, _mean, input_tensor, axis, keepdims)


def _extreme(fn: Callable, fill: str) -> Callable:
    def reduce(a: np.ndarray, axes: tuple) -> np.ndarray:
        if a.size == 0:  # TensorFlow gives the identity: -inf / lowest for max, inf / highest for min
            shape = [n for i, n in enumerate(a.shape) if i not in axes]
            if a.dtype.kind == "f":
                value = -np.inf if fill == "low" else np.inf
            else:
                info = np.iinfo(a.dtype)
                value = info.min if fill == "low" else info.max
            return np.full(shape, value, dtype=a.dtype)
        return fn(a, axis=axes)

    return reduce


@traceable("reduce_max")
def reduce_max(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Any:
    return _reduce("Max", REAL, _extreme(np.max, "low"), input_tensor, axis, keepdims)


@traceable("reduce_min")
def reduce_min(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Any:
    return _reduce("Min", REAL, _extreme(np.min, "high"), input_tensor, axis, keepdims)


@traceable("reduce_any")
def reduce_any(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Any:
    return _reduce("Any", BOOL, lambda a, ax: np.any(a, axis=ax), input_tensor, axis, keepdims)


@traceable("reduce_all")
def reduce_all(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Any:
    return _reduce("All", BOOL, lambda a, ax: np.all(a, axis=ax), input_tensor, axis, keepdims)


def _moment(op: str, x: Any, axis: Any, keepdims: bool, root: bool) -> Any:
    a = as_tensor(x) if is_tensor(x) else infer(x)
    if a.dtype.kind not in "fc":
        raise DTypeError(f"Input must be either real or complex. Received integer type {tf_name(a.dtype)}.")
    axes = _axes(op, axis, a.ndim)
    with np.errstate(all="ignore"):
        mean = np.mean(a, axis=axes, keepdims=True, dtype=a.dtype)
        result = np.mean(np.abs(a - mean) ** 2, axis=axes, keepdims=keepdims)
        if root:
            result = np.sqrt(result)
    real = np.float32 if a.dtype in (np.float32, np.complex64) else a.dtype
    if a.dtype == np.complex128:
        real = np.float64
    return out(np.asarray(result, dtype=real))


@traceable("reduce_variance")
def reduce_variance(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Any:
    return _moment("reduce_variance", input_tensor, axis, keepdims, root=False)


@traceable("reduce_std")
def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Any:
    return _moment("reduce_std", input_tensor, axis, keepdims, root=True)


@traceable("reduce_logsumexp")
def reduce_logsumexp(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Any:
    def logsumexp(a: np.ndarray, axes: tuple) -> np.ndarray:
        peak = np.max(a, axis=axes, keepdims=True) if a.size else np.zeros([1] * a.ndim, a.dtype)
        peak = np.where(np.isfinite(peak), peak, 0)
        return np.log(np.sum(np.exp(a - peak), axis=axes, keepdims=True)).squeeze(axis=axes) + peak.squeeze(
            axis=axes
        )

    return _reduce("ReduceLogSumExp", FLOATS, logsumexp, input_tensor, axis, keepdims)


def _arg(op: str, fn: Callable, x: Any, axis: Any, output_type: Any) -> Any:
    (a,) = match(op, [x], REAL + BOOL)
    check_dtype(
        op,
        dtype_arg(output_type),
        (np.dtype(np.int16), np.dtype(np.uint16), np.dtype(np.int32), np.dtype(np.int64)),
        "output_type",
    )
    axis = _axis(op, 0 if axis is None else axis, a.ndim)
    if a.shape[axis] == 0:
        raise InvalidArgumentError(f"{op}: Reduction axis {axis} is empty in shape {list(a.shape)}")
    return out(fn(a, axis=axis).astype(dtype_arg(output_type)))


@traceable("argmax")
def argmax(input: Any, axis: Any = None, output_type: Any = np.int64, name: str | None = None) -> Any:  # noqa: A002
    return _arg("ArgMax", np.argmax, input, axis, output_type)


@traceable("argmin")
def argmin(input: Any, axis: Any = None, output_type: Any = np.int64, name: str | None = None) -> Any:  # noqa: A002
    return _arg("ArgMin", np.argmin, input, axis, output_type)


def add_n(inputs: Any, name: str | None = None) -> Any:
    arrays = match("AddN", list(inputs), NUMBERS)
    if not arrays:
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and shape")
    if len({a.shape for a in arrays}) > 1:
        raise InvalidArgumentError("AddN: inputs must have the same shape")
    with np.errstate(all="ignore"):
        return out(np.asarray(np.sum(arrays, axis=0, dtype=arrays[0].dtype), dtype=arrays[0].dtype))


def count_nonzero(
    input: Any, axis: Any = None, keepdims: bool = False, dtype: Any = np.int64, name: str | None = None
) -> Any:  # noqa: A002
    a = as_tensor(input) if is_tensor(input) else infer(input)
    nonzero = a != (b"" if a.dtype == STRING else 0)
    axes = _axes("count_nonzero", axis, a.ndim)
    return out(np.asarray(np.sum(nonzero, axis=axes, keepdims=keepdims), dtype=dtype_arg(dtype)))


def matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    name: str | None = None,
    **kwargs: Any,
) -> Any:
    x, y = match("MatMul", [a, b], NUMBERS)
    if x.ndim < 2 or y.ndim < 2:
        raise InvalidArgumentError(
            f"MatMul: inputs must be at least 2-D, got shapes {list(x.shape)} and {list(y.shape)}"
        )
    if transpose_a:
        x = np.swapaxes(x, -1, -2)
    if transpose_b:
        y = np.swapaxes(y, -1, -2)
    if x.shape[-1] != y.shape[-2]:
        raise InvalidArgumentError(
            f"MatMul: Matrix size-incompatible: In[0]: {list(x.shape)}, In[1]: {list(y.shape)}"
        )
    with np.errstate(all="ignore"):
        return out(np.asarray(np.matmul(x, y), dtype=x.dtype))


real_div = realdiv


# ---- inverse and hyperbolic trigonometry (tf.math, also at TensorFlow's top level) -----------------


def asin(x: Any, name: str | None = None) -> Any:
    return _unary("Asin", FLOATS + COMPLEX, np.arcsin, x)


def acos(x: Any, name: str | None = None) -> Any:
    return _unary("Acos", FLOATS + COMPLEX, np.arccos, x)


def atan(x: Any, name: str | None = None) -> Any:
    return _unary("Atan", FLOATS + COMPLEX, np.arctan, x)


def sinh(x: Any, name: str | None = None) -> Any:
    return _unary("Sinh", FLOATS + COMPLEX, np.sinh, x)


def cosh(x: Any, name: str | None = None) -> Any:
    return _unary("Cosh", FLOATS + COMPLEX, np.cosh, x)


def asinh(x: Any, name: str | None = None) -> Any:
    return _unary("Asinh", FLOATS + COMPLEX, np.arcsinh, x)


def acosh(x: Any, name: str | None = None) -> Any:
    return _unary("Acosh", FLOATS + COMPLEX, np.arccosh, x)


def atanh(x: Any, name: str | None = None) -> Any:
    return _unary("Atanh", FLOATS + COMPLEX, np.arctanh, x)


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Any:
    """``scalar * x``; ``scalar`` must be a scalar."""
    if np.ndim(scalar) != 0:
        raise ValueError(f"Only scalar multiply works, got shape {list(np.shape(scalar))}")
    return multiply(scalar, x)


# --- tf.nn's names that TensorFlow keeps in tf.math too (tf.nn re-exports them) ------------------
@traceable("nn.softplus")
def softplus(features: Any, name: str | None = None) -> Any:
    return _unary("Softplus", FLOATS, lambda a: np.logaddexp(a.dtype.type(0), a), features)


@traceable("nn.softsign")
def softsign(features: Any, name: str | None = None) -> Any:
    return _unary("Softsign", FLOATS, lambda a: a / (np.abs(a) + a.dtype.type(1)), features)


def _softmax(op: str, log: bool, logits: Any, axis: Any) -> Any:
    (a,) = match(op, [logits], FLOATS)
    if a.ndim == 0:
        raise InvalidArgumentError(f"{op}: logits must have >= 1 dimension, got shape []")
    (axis_,) = _axes(op, -1 if axis is None else axis, a.ndim)
    with np.errstate(all="ignore"):
        shifted = a - np.max(a, axis=axis_, keepdims=True)
        if log:
            result = shifted - np.log(np.sum(np.exp(shifted), axis=axis_, keepdims=True))
        else:
            e = np.exp(shifted)
            result = e / np.sum(e, axis=axis_, keepdims=True)
    return out(np.asarray(result, dtype=a.dtype))


@traceable("nn.softmax")
def softmax(logits: Any, axis: Any = None, name: str | None = None) -> Any:
    return _softmax("Softmax", False, logits, axis)


@traceable("nn.log_softmax")
def log_softmax(logits: Any, axis: Any = None, name: str | None = None) -> Any:
    return _softmax("LogSoftmax", True, logits, axis)


@traceable("nn.l2_normalize")
def l2_normalize(
    x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None, dim: Any = None
) -> Any:
    """``x / sqrt(max(sum(x**2, axis), epsilon))``; ``dim`` is TF's deprecated name for ``axis``."""
    (a,) = match("L2Normalize", [x], FLOATS)
    axes = _axes("L2Normalize", dim if axis is None and dim is not None else axis, a.ndim)
    with np.errstate(all="ignore"):
        squares = np.sum(np.square(a), axis=axes, keepdims=True, dtype=a.dtype)
        result = a / np.sqrt(np.maximum(squares, a.dtype.type(epsilon)))
    return out(np.asarray(result, dtype=a.dtype))
