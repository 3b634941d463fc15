"""TensorFlow's array ops on numpy: shapes, building, joining, slicing and padding tensors."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.spec import TensorShape
from ..core.trace_hook import traceable
from ._tensor import (
    ALL,
    INTS,
    STRING,
    DTypeError,
    as_tensor,
    check_dtype,
    convert,
    dtype_arg,
    infer,
    int_list,
    match,
    out,
    python_as,
    tf_name,
)
from ._tensor import (
    is_tensor as is_tensor_value,
)

INDEX = (np.dtype(np.int32), np.dtype(np.int64))


def _tensor(value: Any) -> np.ndarray:
    from ..io.codec.ragged import Ragged  # noqa: PLC0415 (io imports this package)
    from ..io.codec.sparse import SparseTensor  # noqa: PLC0415

    if isinstance(value, (Ragged, SparseTensor)):
        raise DTypeError(f"this op takes a dense tensor, not a {type(value).__name__} (densify it first)")
    return as_tensor(value) if is_tensor_value(value) else infer(value)


def _out_type(out_type: Any, op: str) -> np.dtype:
    dtype = dtype_arg(out_type)
    check_dtype(op, dtype, INDEX, "out_type")
    return dtype


# ---- creating tensors ------------------------------------------------------------------------------


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const") -> Any:
    """tf.constant: Python values by TensorFlow's inference; ``dtype`` converts them (numpy values are
    cast, as TensorFlow casts numpy arrays); ``shape`` broadcasts a scalar or reshapes a list of the
    same size."""
    if dtype is not None:
        dtype = dtype_arg(dtype)
        if is_tensor_value(value):
            array = as_tensor(value)
            if array.dtype != dtype:  # tf.constant(tensor, dtype) does not cast
                raise DTypeError(
                    f"Expected tensor with dtype {tf_name(dtype)}, but got dtype {tf_name(array.dtype)}."
                )
        else:
            array = python_as(value, dtype)
    else:
        array = _tensor(value)
    if shape is not None:
        dims = int_list(shape, "shape")
        size = int(np.prod(dims, dtype=np.int64))
        if array.size == 1:
            array = np.broadcast_to(array.reshape(()), dims).copy()
        elif array.size == size:
            array = array.reshape(dims)
        else:
            raise DTypeError(
                f"Eager execution of tf.constant with unsupported shape. Tensor has {array.size} elements, "
                f"but got `shape` {tuple(dims)} with {size} elements)."
            )
    return out(array)


def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None, name: str | None = None) -> Any:
    """tf.convert_to_tensor: a tensor of another ``dtype`` is refused; ``dtype_hint`` is a preference."""
    if dtype is None and dtype_hint is not None and not is_tensor_value(value):
        try:
            return out(python_as(value, dtype_arg(dtype_hint)))
        except (TypeError, ValueError):
            pass
    return out(convert(value, dtype))


def identity(input: Any, name: str | None = None) -> Any:  # noqa: A002
    return (
        input if not isinstance(input, (list, tuple, int, float, bool, str, bytes)) else out(_tensor(input))
    )


def _dims(shape: Any, op: str) -> list[int]:
    dims = int_list(shape, "shape")
    for d in dims:
        if d < 0:
            raise InvalidArgumentError(f"{op}: Dimension {d} must be >= 0")
    return dims


def zeros(shape: Any, dtype: Any = np.float32, name: str | None = None, layout: Any = None) -> Any:
    dtype = dtype_arg(dtype)
    dims = _dims(shape, "Fill")
    return out(np.full(dims, b"", dtype=object) if dtype == STRING else np.zeros(dims, dtype))


def ones(shape: Any, dtype: Any = np.float32, name: str | None = None, layout: Any = None) -> Any:
    dtype = dtype_arg(dtype)
    if dtype == STRING:
        raise DTypeError("ones: a string tensor has no one")
    return out(np.ones(_dims(shape, "Fill"), dtype))


def fill(dims: Any, value: Any, name: str | None = None, layout: Any = None) -> Any:
    array = _tensor(value)
    if array.ndim != 0:
        raise InvalidArgumentError(f"Fill: value must be a scalar, got shape {list(array.shape)}")
    return out(np.full(_dims(dims, "Fill"), array[()], dtype=array.dtype))


@traceable("zeros_like")
def zeros_like(input: Any, dtype: Any = None, name: str | None = None, layout: Any = None) -> Any:  # noqa: A002
    array = _tensor(input)
    return zeros(array.shape, array.dtype if dtype is None else dtype)


@traceable("ones_like")
def ones_like(input: Any, dtype: Any = None, name: str | None = None, layout: Any = None) -> Any:  # noqa: A002
    array = _tensor(input)
    return ones(array.shape, array.dtype if dtype is None else dtype)


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range") -> Any:  # noqa: A001
    """tf.range: int32 for Python ints, float32 when any bound is a float, or the tensors' dtype."""
    if limit is None:
        start, limit = 0, start
    values = [start, limit, delta]
    if dtype is not None:
        target = dtype_arg(dtype)
        arrays = [as_tensor(v).astype(target) if is_tensor_value(v) else python_as(v, target) for v in values]
    else:
        inferred = [as_tensor(v) if is_tensor_value(v) else infer(v) for v in values]
        order = [np.dtype(t) for t in (np.int32, np.int64, np.float16, np.float32, np.float64)]
        for a in inferred:
            if a.dtype not in order:
                raise DTypeError(
                    f"Range: Value for attr 'Tidx' of {tf_name(a.dtype)} is not in the list of allowed values"
                )
        target = max((a.dtype for a in inferred), key=order.index)
        arrays = [a.astype(target) for a in inferred]
    s, lim, d = (a.reshape(-1)[0] if a.size == 1 and a.ndim <= 1 else _scalar_error(a) for a in arrays)
    if d == 0:
        raise InvalidArgumentError(f"Range: Requires delta != 0: {d}")
    if d > 0 and s > lim:
        raise InvalidArgumentError(f"Range: Requires start <= limit when delta > 0: {s}/{lim}")
    if d < 0 and s < lim:
        raise InvalidArgumentError(f"Range: Requires start >= limit when delta < 0: {s}/{lim}")
    if target.kind in "iu":
        count = -(-(int(lim) - int(s)) // int(d)) if d > 0 else -(-(int(s) - int(lim)) // -int(d))
    else:
        count = int(np.ceil(np.abs((np.float64(lim) - np.float64(s)) / np.float64(d))))
    return np.asarray(s + np.arange(count, dtype=target) * d, dtype=target)


def _scalar_error(a: np.ndarray) -> Any:
    raise InvalidArgumentError(f"Range: start, limit and delta must be scalars, got shape {list(a.shape)}")


def linspace(start: Any, stop: Any, num: Any, name: str | None = None, axis: int = 0) -> Any:
    a, b = match(
        "LinSpace", [start, stop], (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
    )
    return out(np.linspace(a, b, int(num), axis=axis).astype(a.dtype))


def eye(
    num_rows: int,
    num_columns: int | None = None,
    batch_shape: Any = None,
    dtype: Any = np.float32,
    name: str | None = None,
) -> Any:
    matrix = np.eye(int(num_rows), None if num_columns is None else int(num_columns), dtype=dtype_arg(dtype))
    if batch_shape is not None:
        matrix = np.broadcast_to(matrix, [*int_list(batch_shape, "batch_shape"), *matrix.shape]).copy()
    return matrix


# ---- shapes ----------------------------------------------------------------------------------------


@traceable("shape")
def shape(input: Any, out_type: Any = np.int32, name: str | None = None) -> Any:  # noqa: A002
    from ..io.codec.sparse import SparseTensor  # noqa: PLC0415

    if isinstance(input, SparseTensor):
        return input.dense_shape.astype(_out_type(out_type, "Shape"))
    return np.asarray(_tensor(input).shape, dtype=_out_type(out_type, "Shape"))


@traceable("size")
def size(input: Any, out_type: Any = np.int32, name: str | None = None) -> Any:  # noqa: A002
    return out(np.asarray(_tensor(input).size, dtype=_out_type(out_type, "Size")))


def rank(input: Any, name: str | None = None) -> Any:  # noqa: A002
    return np.int32(_tensor(input).ndim)


@traceable("reshape")
def reshape(tensor: Any, shape: Any, name: str | None = None) -> Any:
    array = _tensor(tensor)
    dims = int_list(shape, "shape")
    known = [d for d in dims if d != -1]
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise InvalidArgumentError(f"Reshape: only one input size may be -1, and no size below it: {dims}")
    product = int(np.prod(known, dtype=np.int64))
    if -1 in dims:
        if product == 0 or array.size % product:
            raise InvalidArgumentError(
                f"Reshape: Input to reshape is a tensor with {array.size} values, but the requested shape "
                f"requires a multiple of {product}"
            )
    elif product != array.size:
        raise InvalidArgumentError(
            f"Reshape: Input to reshape is a tensor with {array.size} values, but the requested shape has "
            f"{product}"
        )
    return out(array.reshape(dims))


@traceable("expand_dims")
def expand_dims(input: Any, axis: Any, name: str | None = None) -> Any:  # noqa: A002
    array = _tensor(input)
    a = _int_scalar(axis, "ExpandDims", "axis")
    if not -array.ndim - 1 <= a <= array.ndim:
        raise InvalidArgumentError(
            f"ExpandDims: Tried to expand dim index {a} for tensor with {array.ndim} dimensions."
        )
    return np.expand_dims(array, a)


def _int_scalar(value: Any, op: str, what: str) -> int:
    array = np.asarray(value)
    if array.dtype.kind not in "iu" or array.size != 1:
        raise DTypeError(f"{op}: {what} must be an int scalar, got {value!r}")
    return int(array.reshape(-1)[0])


@traceable("squeeze")
def squeeze(input: Any, axis: Any = None, name: str | None = None) -> Any:  # noqa: A002
    array = _tensor(input)
    if axis is None:
        return out(np.squeeze(array))
    axes = []
    for a in int_list(axis, "axis"):
        if not -array.ndim <= a < array.ndim:
            raise InvalidArgumentError(
                f"Squeeze: Tried to squeeze dim index {a} for tensor with {array.ndim} dimensions."
            )
        a %= array.ndim
        if array.shape[a] != 1:
            raise InvalidArgumentError(
                f"Squeeze: Can not squeeze dim[{a}], expected a dimension of 1, got {array.shape[a]}"
            )
        axes.append(a)
    return out(np.squeeze(array, axis=tuple(sorted(set(axes)))))


@traceable("transpose")
def transpose(a: Any, perm: Any = None, conjugate: bool = False, name: str = "transpose") -> Any:
    array = _tensor(a)
    if perm is not None:
        order = int_list(perm, "perm")
        if sorted(order) != list(np.arange(array.ndim)):
            raise InvalidArgumentError(f"Transpose: {order} is not a permutation of 0..{array.ndim - 1}")
        result = np.transpose(array, order)
    else:
        result = np.transpose(array)
    return out(np.conj(result) if conjugate and array.dtype.kind == "c" else result.copy())


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Any:  # noqa: A002
    array = _tensor(input)
    dims = int_list(shape, "shape")
    try:
        return out(np.broadcast_to(array, dims).copy())
    except ValueError:
        raise InvalidArgumentError(
            f"BroadcastTo: Unable to broadcast tensor of shape {list(array.shape)} to tensor of shape {dims}"
        ) from None


# ---- joining and splitting -------------------------------------------------------------------------


@traceable("concat")
def concat(values: Any, axis: Any, name: str = "concat") -> Any:
    if is_tensor_value(values):
        values = [values]
    arrays = match("ConcatV2", list(values), ALL)
    if not arrays:
        raise ValueError("concat: values must hold at least one tensor")
    if len(arrays) == 1:
        return out(arrays[0])
    rank0 = arrays[0].ndim
    if rank0 == 0:
        raise InvalidArgumentError("ConcatOp : Can't concatenate scalars (use tf.stack instead)")
    a = _int_scalar(axis, "ConcatV2", "axis")
    if not -rank0 <= a < rank0:
        raise InvalidArgumentError(
            f"ConcatOp : Expected concatenating dimensions in the range [{-rank0}, {rank0}), but got {a}"
        )
    a %= rank0
    for index, array in enumerate(arrays[1:], start=1):
        same = array.ndim == rank0 and all(
            i == a or m == n for i, (m, n) in enumerate(zip(arrays[0].shape, array.shape))
        )
        if not same:
            raise InvalidArgumentError(
                f"ConcatOp : Dimensions of inputs should match: shape[0] = {list(arrays[0].shape)} vs. "
                f"shape[{index}] = {list(array.shape)}"
            )
    return np.concatenate(arrays, axis=a)


@traceable("stack")
def stack(values: Any, axis: int = 0, name: str = "stack") -> Any:
    values = list(values)
    if values and not any(is_tensor_value(v) for v in values):  # Python values: converted together, as tf
        packed = infer(values)
        if not -packed.ndim <= axis < packed.ndim:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-packed.ndim}, {packed.ndim})")
        return np.moveaxis(packed, 0, axis)
    arrays = match("Pack", values, ALL)
    if not arrays:
        raise ValueError("stack: values must hold at least one tensor")
    for index, array in enumerate(arrays[1:], start=1):
        if array.shape != arrays[0].shape:
            raise InvalidArgumentError(
                f"Pack: Shapes of all inputs must match: values[0].shape = {list(arrays[0].shape)} != "
                f"values[{index}].shape = {list(array.shape)}"
            )
    rank = arrays[0].ndim + 1
    if not -rank <= axis < rank:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-rank}, {rank})")
    return np.stack(arrays, axis=axis)


@traceable("unstack")
def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack") -> list:
    array = _tensor(value)
    if array.ndim == 0:
        raise ValueError("Input shape must have rank >= 1 to unstack")
    if not -array.ndim <= axis < array.ndim:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-array.ndim}, {array.ndim})")
    if num is not None and num != array.shape[axis]:
        raise InvalidArgumentError(
            f"Unpack: Input shape axis {axis} must equal {num}, got shape {list(array.shape)}"
        )
    return [out(part) for part in np.moveaxis(array, axis, 0)]


@traceable("split")
def split(
    value: Any, num_or_size_splits: Any, axis: Any = 0, num: int | None = None, name: str = "split"
) -> list:
    array = _tensor(value)
    a = _int_scalar(axis, "Split", "axis")
    if not -array.ndim <= a < array.ndim:
        raise InvalidArgumentError(f"Split: axis {a} out of range for rank {array.ndim}")
    a %= array.ndim
    sizes = np.asarray(num_or_size_splits)
    if sizes.ndim == 0:
        n = int(sizes)
        if n <= 0 or array.shape[a] % n:
            raise InvalidArgumentError(
                f"Split: Number of ways to split should evenly divide the split dimension, but got "
                f"split_dim {a} (size = {array.shape[a]}) and num_split {n}"
            )
        return list(np.split(array, n, axis=a))
    parts = [int(s) for s in sizes.reshape(-1)]
    if parts.count(-1) == 1:
        parts[parts.index(-1)] = array.shape[a] - (sum(parts) + 1)
    if sum(parts) != array.shape[a] or min(parts) < 0:
        raise InvalidArgumentError(
            f"SplitV: Determined shape must either match input shape along split_dim exactly if fully "
            f"specified, or be less than the size of the input along split_dim if not fully specified. "
            f"Got: {sum(parts)}"
        )
    return list(np.split(array, np.cumsum(parts)[:-1], axis=a))


@traceable("tile")
def tile(input: Any, multiples: Any, name: str | None = None) -> Any:  # noqa: A002
    array = _tensor(input)
    counts = int_list(multiples, "multiples")
    if len(counts) != array.ndim:
        raise InvalidArgumentError(
            f"Tile: Expected multiples argument to be a vector of length {array.ndim} but got length {len(counts)}"
        )
    if any(c < 0 for c in counts):
        raise InvalidArgumentError(f"Tile: Expected multiples[i] >= 0, got {counts}")
    return out(np.tile(array, counts) if counts else array.copy())


@traceable("pad")
def pad(
    tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0, name: str | None = None
) -> Any:
    """tf.pad: CONSTANT, REFLECT or SYMMETRIC (any case); ``paddings`` is [rank, 2]."""
    array = _tensor(tensor)
    widths = np.asarray(paddings)
    if widths.dtype.kind not in "iu":
        raise DTypeError(f"Pad: paddings must be integers, got {paddings!r}")
    if widths.shape != (array.ndim, 2):
        raise InvalidArgumentError(
            f"Pad: The first dimension of paddings must be the rank of inputs {[array.ndim, 2]}, "
            f"got {list(widths.shape)}"
        )
    if (widths < 0).any():
        raise InvalidArgumentError(f"Pad: Paddings must be non-negative: {widths.tolist()}")
    pairs = [(int(lo), int(hi)) for lo, hi in widths]
    kind = str(mode).upper()
    if kind == "CONSTANT":
        (fill_value,) = match("Pad", [array, constant_values])[1:]
        if fill_value.ndim:
            raise InvalidArgumentError("Pad: constant_values must be a scalar")
        if array.dtype == STRING:
            result = np.full(
                [n + lo + hi for n, (lo, hi) in zip(array.shape, pairs)], fill_value[()], dtype=object
            )
            result[tuple(builtins.slice(lo, lo + n) for n, (lo, _) in zip(array.shape, pairs))] = array
            return out(result)
        return out(np.pad(array, pairs, mode="constant", constant_values=fill_value[()]))
    if kind not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(
            f'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or "SYMMETRIC". Received `mode` = {mode}'
        )
    offset = 1 if kind == "REFLECT" else 0
    for n, (lo, hi) in zip(array.shape, pairs):
        if lo > n - offset or hi > n - offset:
            raise InvalidArgumentError(
                f"MirrorPad: paddings must be less than{'' if offset else ' or equal to'} the dimension size: "
                f"{lo}, {hi} not {'less than' if offset else 'less than or equal to'} {n}"
            )
    return out(np.pad(array, pairs, mode="reflect" if offset else "symmetric"))


@traceable("roll")
def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Any:  # noqa: A002
    array = _tensor(input)
    shifts, axes = int_list(shift, "shift"), int_list(axis, "axis")
    if len(shifts) != len(axes):
        raise InvalidArgumentError(f"Roll: shift and axis must have the same size, got {shifts} and {axes}")
    for a in axes:
        if not -array.ndim <= a < array.ndim:
            raise InvalidArgumentError(f"Roll: axis {a} is out of range for a tensor of rank {array.ndim}")
    return out(np.roll(array, shifts, axes) if axes else array.copy())


@traceable("reverse")
def reverse(tensor: Any, axis: Any, name: str | None = None) -> Any:
    array = _tensor(tensor)
    axes = int_list(axis, "axis")
    for a in axes:
        if not -array.ndim <= a < array.ndim:
            raise InvalidArgumentError(
                f"ReverseV2: axis {a} is out of range for a tensor of rank {array.ndim}"
            )
    return out(np.flip(array, tuple(axes)).copy() if axes else array.copy())


@traceable("slice")
def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Any:  # noqa: A001
    array = _tensor(input_)
    starts, sizes = int_list(begin, "begin"), int_list(size, "size")
    if len(starts) != array.ndim or len(sizes) != array.ndim:
        raise InvalidArgumentError(
            f"Slice: Expected begin and size arguments to be 1-D tensors of size {array.ndim}"
        )
    index = []
    for dim, (b, s, n) in enumerate(zip(starts, sizes, array.shape)):
        s = n - b if s == -1 else s
        if b < 0 or s < 0 or b + s > n:
            raise InvalidArgumentError(f"Slice: Expected size[{dim}] in [0, {n - b}], but got {s}")
        index.append(np.s_[b : b + s])
    return out(array[tuple(index)].copy())


# ---- gathering and selecting -----------------------------------------------------------------------


@traceable("gather")
def gather(
    params: Any,
    indices: Any,
    validate_indices: Any = None,
    axis: Any = None,
    batch_dims: int = 0,
    name: str | None = None,
) -> Any:
    array = _tensor(params)
    index = _tensor(indices)
    check_dtype("GatherV2", index.dtype, INDEX + (np.dtype(np.int16),), "Tindices")
    a = 0 if axis is None else _int_scalar(axis, "GatherV2", "axis")
    if batch_dims < 0:
        batch_dims += index.ndim
    if a < 0:
        a += array.ndim
    if not 0 <= a < max(array.ndim, 1) or array.ndim == 0:
        raise InvalidArgumentError(
            f"GatherV2: Expected axis in the range [{-array.ndim}, {array.ndim}), but got {a}"
        )
    n = array.shape[a]
    bad = (index < 0) | (index >= n)
    if bad.any():
        first = int(index[bad].reshape(-1)[0])
        raise InvalidArgumentError(f"GatherV2: indices = {first} is not in [0, {n})")
    if batch_dims == 0:
        return out(np.take(array, index, axis=a))
    if batch_dims > a:
        raise ValueError(f"batch_dims ({batch_dims}) must be less than or equal to axis ({a}).")
    results = [gather(p, i, axis=a - 1, batch_dims=batch_dims - 1) for p, i in zip(array, index)]
    return np.stack(results)


def gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: str | None = None) -> Any:
    array = _tensor(params)
    index = _tensor(indices)
    check_dtype("GatherNd", index.dtype, INDEX, "Tindices")
    if batch_dims:
        return np.stack([gather_nd(p, i, batch_dims - 1) for p, i in zip(array, index)])
    depth = index.shape[-1]
    if depth > array.ndim:
        raise InvalidArgumentError(
            f"GatherNd: index innermost dimension length must be <= params rank; saw: {depth} vs. {array.ndim}"
        )
    flat = index.reshape(-1, depth)
    limits = np.asarray(array.shape[:depth])
    bad = ((flat < 0) | (flat >= limits)).any(axis=1)
    if bad.any():
        raise InvalidArgumentError(
            f"GatherNd: indices{flat[bad][0].tolist()} does not index into param shape {list(array.shape)}"
        )
    picked = array[tuple(flat.T)] if depth else np.broadcast_to(array, (len(flat), *array.shape))
    return out(picked.reshape(index.shape[:-1] + array.shape[depth:]))


@traceable("where")
def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Any:
    """tf.where: with one argument the int64 coordinates of the true entries, else x where true, y
    elsewhere (broadcast, one dtype)."""
    cond = _tensor(condition)
    if x is None and y is None:
        mask = cond != (b"" if cond.dtype == STRING else 0)
        return np.argwhere(mask).astype(np.int64)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    if cond.dtype != np.bool_:
        raise DTypeError(f"SelectV2: condition must be a bool tensor, got {tf_name(cond.dtype)}")
    a, b = match("SelectV2", [x, y], start=1)
    try:
        np.broadcast_shapes(cond.shape, a.shape, b.shape)
    except ValueError:
        raise InvalidArgumentError(
            f"SelectV2: condition {list(cond.shape)}, then {list(a.shape)} and else {list(b.shape)} do not broadcast"
        ) from None
    return out(np.where(cond, a, b).astype(a.dtype))


def boolean_mask(tensor: Any, mask: Any, axis: Any = None, name: str = "boolean_mask") -> Any:
    array = _tensor(tensor)
    keep = _tensor(mask)
    if keep.dtype != np.bool_:
        raise DTypeError(f"boolean_mask: mask must be a bool tensor, got {tf_name(keep.dtype)}")
    a = 0 if axis is None else int(axis)
    if keep.ndim == 0:
        raise ValueError("mask cannot be scalar.")
    if array.shape[a : a + keep.ndim] != keep.shape:
        raise ValueError(f"Shapes {list(array.shape)} and {list(keep.shape)} are incompatible")
    flat = (
        array.reshape(array.shape[:a] + (-1,) + array.shape[a + keep.ndim :])
        if keep.size
        else array.reshape(array.shape[:a] + (0,) + array.shape[a + keep.ndim :])
    )
    return np.compress(keep.reshape(-1), flat, axis=a)


@traceable("one_hot")
def one_hot(
    indices: Any,
    depth: Any,
    on_value: Any = None,
    off_value: Any = None,
    axis: Any = None,
    dtype: Any = None,
    name: str | None = None,
) -> Any:
    """tf.one_hot: an index outside [0, depth) gives a row of off_value; on/off values must agree in
    dtype (float32 by default)."""
    index = _tensor(indices)
    check_dtype(
        "OneHot",
        index.dtype,
        (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.int64)),
        "TI",
    )
    on = None if on_value is None else (as_tensor(on_value) if is_tensor_value(on_value) else None)
    off = None if off_value is None else (as_tensor(off_value) if is_tensor_value(off_value) else None)
    target = dtype_arg(dtype) if dtype is not None else None
    if target is None:
        inferred = [
            v if v is not None else (infer(raw) if raw is not None else None)
            for v, raw in ((on, on_value), (off, off_value))
        ]
        target = next((v.dtype for v in inferred if v is not None), np.dtype(np.float32))
        if inferred[0] is not None and inferred[1] is not None and inferred[0].dtype != inferred[1].dtype:
            raise DTypeError(
                f"dtype {tf_name(inferred[0].dtype)} of on_value does not match dtype {tf_name(inferred[1].dtype)} of off_value"
            )
    on = (
        convert(1 if on_value is None else on_value, target, "on_value")
        if on_value is None or not is_tensor_value(on_value) or as_tensor(on_value).dtype == target
        else _mismatch("on_value", on_value, target)
    )
    off = (
        convert(0 if off_value is None else off_value, target, "off_value")
        if off_value is None or not is_tensor_value(off_value) or as_tensor(off_value).dtype == target
        else _mismatch("off_value", off_value, target)
    )
    if target == STRING and (on_value is None or off_value is None):
        raise DTypeError("one_hot of strings needs on_value and off_value")
    n = _int_scalar(depth, "OneHot", "depth")
    if n < 0:
        raise InvalidArgumentError(f"OneHot: depth must be non-negative, got: {n}")
    a = -1 if axis is None else int(axis)
    if not -1 <= a <= index.ndim:
        raise InvalidArgumentError(
            f"OneHot: Expected axis to be -1 or between [0, {index.ndim}].  But received: {a}"
        )
    hot = index[..., None] == np.arange(n)
    result = np.where(hot, on[()], off[()]).astype(target)
    if a != -1:
        result = np.moveaxis(result, -1, a)
    return out(result)


def _mismatch(what: str, value: Any, target: np.dtype) -> Any:
    raise DTypeError(
        f"dtype {tf_name(as_tensor(value).dtype)} of {what} does not match dtype {tf_name(target)}"
    )


@traceable("sort")
def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None) -> Any:
    array = _tensor(values)
    check_dtype(
        "sort",
        array.dtype,
        tuple(d for d in INTS) + (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)),
    )
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(
            f"Argument `direction` should be one of ASCENDING, DESCENDING. Received: {direction}"
        )
    result = np.sort(array, axis=axis, kind="stable")
    return out(np.flip(result, axis) if direction == "DESCENDING" else result)


@traceable("argsort")
def argsort(
    values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False, name: str | None = None
) -> Any:
    array = _tensor(values)
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(
            f"Argument `direction` should be one of ASCENDING, DESCENDING. Received: {direction}"
        )
    if direction == "DESCENDING":
        order = np.argsort(-array if array.dtype.kind != "u" else ~array, axis=axis, kind="stable")
    else:
        order = np.argsort(array, axis=axis, kind="stable")
    return out(order.astype(np.int32))


def unique(x: Any, out_idx: Any = np.int32, name: str | None = None) -> tuple:
    array = _tensor(x)
    if array.ndim != 1:
        raise InvalidArgumentError(f"Unique: unique expects a 1D vector, got shape {list(array.shape)}")
    seen: dict = {}
    idx = np.empty(len(array), dtype=dtype_arg(out_idx))
    for i, item in enumerate(array.tolist()):
        idx[i] = seen.setdefault(item, len(seen))
    y = np.array(list(seen), dtype=array.dtype) if seen else array[:0]
    return y, idx


def meshgrid(*args: Any, **kwargs: Any) -> list:
    indexing = kwargs.pop("indexing", "xy")
    arrays = match("meshgrid", list(args))
    return list(np.meshgrid(*arrays, indexing=indexing))


def shape_n(input: Any, out_type: Any = np.int32, name: str | None = None) -> list:  # noqa: A002
    return [shape(t, out_type) for t in input]


@traceable("ensure_shape")
def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Any:
    """``x`` unchanged when its shape is compatible with ``shape`` (``None`` for any size), else
    InvalidArgumentError: the way to write ``x.set_shape(shape)`` here (numpy arrays have no
    ``set_shape``), and, in a vectorised map, what fixes a decoded image's size for the trace."""
    array = _tensor(x)
    if not TensorShape(shape).is_compatible_with(TensorShape(list(array.shape))):
        raise InvalidArgumentError(
            f"EnsureShape: Shape of tensor {list(array.shape)} is not compatible with expected shape {TensorShape(shape)}."
        )
    return x


# ---- more of TensorFlow's top level (the public-code scan in docs/porting.md) ------------------------

#: ``x[..., tf.newaxis]``
newaxis = None


def is_tensor(x: Any) -> bool:
    """tf.is_tensor: numpy arrays and scalars are the tensors here, and so are headrace's sparse and
    ragged values."""
    from ..io.codec.ragged import Ragged  # noqa: PLC0415 (io imports this package)
    from ..io.codec.sparse import SparseTensor  # noqa: PLC0415

    return is_tensor_value(x) or isinstance(x, (Ragged, SparseTensor))


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """Every value is known here (eager): the value as a numpy array."""
    return np.asarray(_tensor(tensor))


def identity_n(input: Any, name: str | None = None) -> list:  # noqa: A002
    return [identity(t) for t in input]


def repeat(input: Any, repeats: Any, axis: Any = None, name: str | None = None) -> Any:  # noqa: A002
    """tf.repeat: each slice along ``axis`` repeated ``repeats`` times (a scalar, or one count per
    slice); with no axis the input is flattened first."""
    array = _tensor(input)
    counts = _tensor(repeats)
    check_dtype("Repeat", counts.dtype, INDEX, "repeats")
    if axis is None:
        array, a = array.reshape(-1), 0
    else:
        a = _int_scalar(axis, "Repeat", "axis")
        if not -array.ndim <= a < array.ndim:
            raise InvalidArgumentError(
                f"Repeat: Expected axis in the range [{-array.ndim}, {array.ndim}), but got {a}"
            )
        a %= array.ndim
    if counts.ndim > 1 or (counts.ndim == 1 and counts.shape[0] not in (1, array.shape[a])):
        raise InvalidArgumentError(
            f"Repeat: repeats must be a scalar or a vector of length {array.shape[a]} (the size of axis "
            f"{a}), got shape {list(counts.shape)}"
        )
    counts = np.maximum(counts, 0)  # TensorFlow repeats a slice a negative number of times as zero
    return out(np.repeat(array, counts.reshape(-1) if counts.ndim else int(counts), axis=a))


def bitcast(input: Any, type: Any, name: str | None = None) -> Any:  # noqa: A002
    """tf.bitcast: the same bytes read as ``type``; a wider input gains a last dimension, a narrower one
    loses its last dimension (which must hold exactly the ratio)."""
    array = _tensor(input)
    target = dtype_arg(type)
    if STRING in (array.dtype, target) or np.dtype(bool) in (array.dtype, target):
        raise DTypeError(f"Bitcast: cannot bitcast from {tf_name(array.dtype)} to {tf_name(target)}")
    src, dst = array.dtype.itemsize, target.itemsize
    contiguous = np.ascontiguousarray(array)
    if src == dst:
        return out(contiguous.view(target))
    if src > dst:
        return out(contiguous.reshape(*array.shape, 1).view(target))
    if array.ndim == 0 or array.shape[-1] != dst // src:
        raise InvalidArgumentError(
            f"Bitcast: Cannot bitcast from {tf_name(array.dtype)} to {tf_name(target)}: the last dimension "
            f"must be {dst // src}, got shape {list(array.shape)}"
        )
    return out(contiguous.view(target).reshape(array.shape[:-1]))


def _scatter_target(op: str, array: np.ndarray, indices: Any, updates: Any) -> tuple:
    index = _tensor(indices)
    check_dtype(op, index.dtype, INDEX, "Tindices")
    values = convert(updates, array.dtype, "updates") if not is_tensor_value(updates) else _tensor(updates)
    if values.dtype != array.dtype:
        raise DTypeError(
            f"{op}: updates must have the dtype of the tensor ({tf_name(array.dtype)}), got {tf_name(values.dtype)}"
        )
    if index.ndim == 0:
        raise InvalidArgumentError(f"{op}: indices must be at least a vector, got a scalar")
    depth = index.shape[-1]
    if depth > array.ndim:
        raise InvalidArgumentError(
            f"{op}: index innermost dimension length must be <= tensor rank; saw: {depth} vs. {array.ndim}"
        )
    want = index.shape[:-1] + array.shape[depth:]
    if values.shape != want:
        raise InvalidArgumentError(
            f"{op}: updates must have shape {list(want)} (indices.shape[:-1] + tensor.shape[{depth}:]), "
            f"got {list(values.shape)}"
        )
    flat = index.reshape(-1, depth)
    limits = np.asarray(array.shape[:depth])
    bad = ((flat < 0) | (flat >= limits)).any(axis=1)
    if bad.any():
        raise InvalidArgumentError(
            f"{op}: indices{flat[bad][0].tolist()} does not index into shape {list(array.shape)}"
        )
    return tuple(flat.T), values.reshape((len(flat), *array.shape[depth:]))


def _tensor_scatter(op: str, fn: Any, tensor: Any, indices: Any, updates: Any) -> Any:
    array = _tensor(tensor)
    where_, values = _scatter_target(op, array, indices, updates)
    result = array.copy()
    if fn is None:
        result[where_] = values
    else:
        fn.at(result, where_, values)
    return out(result)


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    """A copy of ``tensor`` with the slices at ``indices`` replaced by ``updates`` (the last of
    duplicate indices wins)."""
    return _tensor_scatter("TensorScatterUpdate", None, tensor, indices, updates)


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    return _tensor_scatter("TensorScatterAdd", np.add, tensor, indices, updates)


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    return _tensor_scatter("TensorScatterSub", np.subtract, tensor, indices, updates)


def tensor_scatter_nd_max(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    return _tensor_scatter("TensorScatterMax", np.maximum, tensor, indices, updates)


def tensor_scatter_nd_min(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    return _tensor_scatter("TensorScatterMin", np.minimum, tensor, indices, updates)


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Any:
    """Zeros of ``shape`` with ``updates`` added at ``indices`` (duplicates sum)."""
    values = _tensor(updates)
    dims = int_list(shape, "shape")
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(f"ScatterNd: shape must not have negative dimensions, got {dims}")
    return _tensor_scatter("ScatterNd", np.add, np.zeros(dims, values.dtype), indices, values)


def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = np.bool_, name: str | None = None) -> Any:
    """``mask[..., j] = j < lengths[...]``; ``maxlen`` defaults to the largest length."""
    lens = _tensor(lengths)
    if lens.dtype.kind not in "iuf":  # TF compares float lengths too
        raise DTypeError(f"SequenceMask: lengths must be numbers, got {tf_name(lens.dtype)}")
    limit = int(lens.max()) if maxlen is None and lens.size else 0 if maxlen is None else int(maxlen)
    if limit < 0:
        raise InvalidArgumentError(f"SequenceMask: maxlen must be >= 0, got {limit}")
    mask = np.arange(limit) < lens[..., None]
    target = dtype_arg(dtype)
    return out(mask if target == np.bool_ else mask.astype(target))


def searchsorted(
    sorted_sequence: Any, values: Any, side: str = "left", out_type: Any = np.int32, name: str | None = None
) -> Any:
    """Insertion points of ``values`` in each row of ``sorted_sequence`` (searched along the last axis,
    rows matched by the leading dimensions)."""
    seq, vals = match("SearchSorted", [sorted_sequence, values])
    if side not in ("left", "right"):
        raise ValueError(f"side must be either 'right' or 'left'.  Saw: {side}.")
    if seq.ndim == 0 or vals.ndim == 0 or seq.shape[:-1] != vals.shape[:-1]:
        raise InvalidArgumentError(
            f"SearchSorted: Leading dim_size of both tensors must match, got {list(seq.shape)} and "
            f"{list(vals.shape)}"
        )
    rows_s = seq.reshape(-1, seq.shape[-1])
    rows_v = vals.reshape(-1, vals.shape[-1])
    found = [
        np.searchsorted(s, v, side="left" if side == "left" else "right") for s, v in zip(rows_s, rows_v)
    ]
    result = np.array(found).reshape(vals.shape) if found else np.zeros(vals.shape, np.int64)
    return out(result.astype(_out_type(out_type, "SearchSorted")))


def unique_with_counts(x: Any, out_idx: Any = np.int32, name: str | None = None) -> tuple:
    """``(y, idx, count)``: the unique values in order of first appearance, each element's index into
    ``y``, and how often each appears."""
    y, idx = unique(x, out_idx)
    count = np.bincount(idx, minlength=len(y)).astype(idx.dtype)
    return y, idx, count


def sparse_to_dense(
    sparse_indices: Any,
    output_shape: Any,
    sparse_values: Any,
    default_value: Any = 0,
    validate_indices: bool = True,
    name: str | None = None,
) -> Any:
    """TF1's ``tf.sparse_to_dense``: ``default_value`` everywhere, ``sparse_values`` at the indices (a
    scalar value goes to every index)."""
    index = _tensor(sparse_indices)
    check_dtype("SparseToDense", index.dtype, INDEX, "Tindices")
    dims = int_list(output_shape, "output_shape")
    values = _tensor(sparse_values)
    default = convert(default_value, values.dtype, "default_value")
    flat = index.reshape(-1, 1) if index.ndim <= 1 and len(dims) == 1 else index.reshape(-1, len(dims))
    if index.ndim == 0:
        flat = index.reshape(1, 1)
    limits = np.asarray(dims)
    bad = ((flat < 0) | (flat >= limits)).any(axis=1)
    if bad.any():
        raise InvalidArgumentError(
            f"SparseToDense: indices[{int(np.argmax(bad))}] = {flat[bad][0].tolist()} is out of bounds: need "
            f"0 <= index < {dims}"
        )
    if values.ndim and values.shape[0] != len(flat):
        raise InvalidArgumentError(
            f"SparseToDense: sparse_values has {values.shape[0]} values but there are {len(flat)} indices"
        )
    if validate_indices and len(flat) > 1:
        keys = np.ravel_multi_index(tuple(flat.T), dims)
        if (np.diff(keys) <= 0).any():
            raise InvalidArgumentError("SparseToDense: indices are not in lexicographic order or repeat")
    result = np.full(dims, default, dtype=values.dtype)
    result[tuple(flat.T)] = values
    return out(result)
