"""Padding elements of different shapes into one batch (``padded_batch``, ``bucket_by_sequence_length``).

``padded_shapes`` and ``padding_values`` follow tf.data: a shape per component (``None`` or ``-1``
sizes pad to the largest in the batch; ``None`` for the whole shape pads every dimension so), a
scalar padding value per component (or one for all), defaulting to 0, ``False`` for bools and
``b""`` for strings. Both are matched against an element's structure the first time one is seen.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.errors import InvalidArgumentError, StructureError
from ...core.spec import TensorSpec, to_array
from ...core.structure import describe_structure, flatten, pack_as
from .batching import leaf_columns, leaf_paths


def as_shape(value: Any, where: str) -> tuple[int | None, ...] | None:
    """One component's padded shape: a list of sizes where ``None`` or ``-1`` means the batch maximum.

    >>> as_shape([None, 5], "padded_shapes"), as_shape([-1], "x"), as_shape(None, "x")
    ((None, 5), (None,), None)
    """
    if value is None:
        return None
    if isinstance(value, TensorSpec):
        return value.shape
    if hasattr(value, "as_list") and callable(value.as_list):  # a tf.TensorShape, for migrations
        try:
            value = value.as_list()
        except ValueError:  # unknown rank
            return None
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
        value = value.tolist()
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = [value]  # as tf.TensorShape(40): one dimension of that size
    if not isinstance(value, (list, tuple)):
        raise InvalidArgumentError(
            f"{where}={value!r} is not a shape: give a list of sizes such as [None] or [None, 128] "
            "(None or -1 pads to the largest size in the batch), or [] for a scalar"
        )
    sizes: list[int | None] = []
    for size in value:
        if size is None or (
            isinstance(size, (int, np.integer)) and not isinstance(size, bool) and size == -1
        ):
            sizes.append(None)
        elif isinstance(size, (int, np.integer)) and not isinstance(size, bool) and size >= 0:
            sizes.append(int(size))
        else:
            raise InvalidArgumentError(
                f"{where}={list(value)!r} is not allowed: sizes must be ints >= 0, or None / -1 for the "
                "largest size in the batch"
            )
    return tuple(sizes)


def check_padding_value(value: Any, where: str) -> None:
    """Reject what can never be a padding value (called where the pipeline is built)."""
    if value is None or isinstance(value, (bool, int, float, bytes, str, np.generic)):
        return
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return
    raise InvalidArgumentError(
        f"{where}={value!r} is not a padding value: give a scalar (a number, a bool, or bytes for strings)"
    )


def _up_to(element: Any, value: Any, argument: str, path: str = "") -> list:
    """``value`` cut at the leaves of ``element``'s structure (lists count as tuples here)."""
    if isinstance(element, tuple):
        if isinstance(value, list):
            value = tuple(value)
        if not isinstance(value, tuple) or len(value) != len(element):
            raise InvalidArgumentError(
                f"{argument}{path} must match the element structure {describe_structure(element)}, "
                f"got {value!r}"
            )
        out = []
        for i, (item, part) in enumerate(zip(element, value)):
            out.extend(_up_to(item, part, argument, f"{path}[{i}]"))
        return out
    if isinstance(element, dict):
        if not isinstance(value, dict) or set(value) != set(element):
            raise InvalidArgumentError(
                f"{argument}{path} must be a dict with the element's keys {sorted(element)}, got {value!r}"
            )
        out = []
        for key in sorted(element):
            out.extend(_up_to(element[key], value[key], argument, f"{path}[{key!r}]"))
        return out
    return [value]


def resolve_padded_shapes(padded_shapes: Any, element: Any, stage: str) -> list:
    """One target shape per leaf of ``element`` (flatten order); ``None`` pads every dimension."""
    leaves = flatten(element)
    if padded_shapes is None:
        return [None] * len(leaves)
    parts = _up_to(element, padded_shapes, f"{stage}: padded_shapes")
    paths = leaf_paths(element)
    return [as_shape(part, f"{stage}: padded_shapes{path}") for part, path in zip(parts, paths)]


def resolve_padding_values(padding_values: Any, element: Any, stage: str) -> list:
    """One padding value (or None for the default) per leaf of ``element``."""
    leaves = flatten(element)
    if padding_values is None:
        return [None] * len(leaves)
    if isinstance(element, (tuple, dict)) and not isinstance(padding_values, (tuple, dict, list)):
        return [padding_values] * len(leaves)  # one value for every component, as tf.data
    return _up_to(element, padding_values, f"{stage}: padding_values")


def padding_scalar(value: Any, dtype: np.dtype, where: str) -> Any:
    """``value`` as a scalar of ``dtype``; the default (0, False, b"") when None.

    Python numbers are converted when the value survives the conversion; strings pad string
    components only, numbers numeric ones.

    >>> padding_scalar(-1, np.dtype("int32"), "x"), padding_scalar(None, np.dtype(object), "x")
    (np.int32(-1), b'')
    """
    if dtype.kind == "O":
        if value is None:
            return b""
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype == object:
            value = value[()]
        if isinstance(value, str):
            return value.encode()
        if isinstance(value, (bytes, np.bytes_)):
            return bytes(value)
        raise StructureError(f"{where}: padding value {value!r} cannot pad a string component; use bytes")
    if value is None:
        return np.zeros((), dtype)[()]
    array = np.asarray(value)
    if array.shape != ():
        raise StructureError(f"{where}: padding value {value!r} must be a scalar, got shape {array.shape}")
    kind = array.dtype.kind
    if kind not in "biuf" or (dtype.kind == "b") != (kind == "b"):
        raise StructureError(f"{where}: padding value {value!r} cannot pad a component of dtype {dtype}")
    converted = array.astype(dtype)
    if dtype.kind in "iu" and (kind not in "iu" or converted.astype(array.dtype) != array):
        raise StructureError(f"{where}: padding value {value!r} does not fit the component's dtype {dtype}")
    return converted[()]


def pad_stack(
    values: list, shape: tuple | None, padding_value: Any, stage: str, path: str, first_index: int
) -> np.ndarray:
    """Stack one component of a batch, padding each value up to ``shape`` (batch maxima where None)."""
    arrays = [to_array(v) for v in values]
    first = arrays[0]
    rank, dtype = first.ndim, first.dtype
    for offset, array in enumerate(arrays):
        if array.ndim != rank or array.dtype != dtype:
            raise StructureError(
                f"{stage}: element {first_index + offset}{path} has shape {array.shape} and dtype "
                f"{array.dtype} but element {first_index}{path} has {first.shape} and {dtype}; "
                "padding needs one rank and dtype per component"
            )
    if shape is None:
        shape = (None,) * rank
    elif len(shape) != rank:
        raise StructureError(
            f"{stage}: padded_shapes{path} is {list(shape)} (rank {len(shape)}) but element "
            f"{first_index}{path} has shape {first.shape} (rank {rank}); give one size per dimension"
        )
    shapes = [array.shape for array in arrays]
    largest = tuple(max(s[d] for s in shapes) for d in range(rank))
    target = tuple(big if fixed is None else fixed for big, fixed in zip(largest, shape))
    for dim, (big, size) in enumerate(zip(largest, target)):
        if big > size:
            offset = next(i for i, s in enumerate(shapes) if s[dim] > size)
            raise StructureError(
                f"{stage}: element {first_index + offset}{path} has shape {shapes[offset]}, larger than the "
                f"padded shape {list(target)} in dimension {dim}; raise padded_shapes or use None "
                "(-1) to pad that dimension to the largest in the batch"
            )
    if all(s == target for s in shapes):
        return np.stack(arrays) if dtype.kind != "O" else _stack_objects(arrays, target)
    fill = padding_scalar(padding_value, dtype, f"{stage}: padding_values{path}")
    out = np.full((len(arrays), *target), fill, dtype=dtype)
    if rank and all(s[1:] == target[1:] for s in shapes):
        # Only the first dimension varies (sequences, [length, features]): one masked copy of the
        # concatenated values, in row-major order, instead of one Python-level copy per element.
        lengths = np.fromiter((s[0] for s in shapes), dtype=np.intp, count=len(shapes))
        out[np.arange(target[0]) < lengths[:, None]] = np.concatenate(arrays)
        return out
    for i, array in enumerate(arrays):
        region: tuple[int | slice, ...] = (i, *(slice(0, d) for d in array.shape))
        out[region] = array
    return out


def _stack_objects(arrays: list, shape: tuple) -> np.ndarray:
    out = np.empty((len(arrays), *shape), dtype=object)
    for i, array in enumerate(arrays):
        out[i, ...] = array
    return out


def padded_stack(elements: list, shapes: list, padding_values: list, stage: str, first_index: int = 0) -> Any:
    """Stack same-structure elements, padding each component (``shapes``/``padding_values`` per leaf).

    >>> padded_stack([np.array([1, 2]), np.array([3])], [None], [None], "padded_batch")
    array([[1, 2],
           [3, 0]])
    """
    first = elements[0]
    if not isinstance(first, (tuple, dict)):
        leaf_columns(elements, stage, first_index)  # no element may be a tuple or dict either
        return pad_stack(elements, shapes[0], padding_values[0], stage, "", first_index)
    paths, columns = leaf_columns(elements, stage, first_index)
    return pack_as(
        first,
        [
            pad_stack(column, shape, value, stage, path, first_index)
            for column, shape, value, path in zip(columns, shapes, padding_values, paths)
        ],
    )


def check_padded_shapes(value: Any, where: str = "padded_shapes") -> None:
    """Early check of ``padded_shapes`` before any element is seen (its structure is matched later)."""
    if value is None or isinstance(value, TensorSpec) or hasattr(value, "as_list"):
        return
    if isinstance(value, dict):
        for key, part in value.items():
            check_padded_shapes(part, f"{where}[{key!r}]")
        return
    if isinstance(value, (list, tuple)):
        if all(size is None or isinstance(size, (int, np.integer)) for size in value):
            as_shape(value, where)
            return
        for i, part in enumerate(value):
            check_padded_shapes(part, f"{where}[{i}]")
        return
    as_shape(value, where)  # raises with the message that says what a shape is


def check_padding_values(value: Any, where: str = "padding_values") -> None:
    """Early check of ``padding_values``: scalars, or tuples/dicts/lists of them."""
    if isinstance(value, dict):
        for key, part in value.items():
            check_padding_values(part, f"{where}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for i, part in enumerate(value):
            check_padding_values(part, f"{where}[{i}]")
    else:
        check_padding_value(value, where)


def padded_spec(spec: Any, padded_shapes: Any, leading: int | None, stage: str) -> Any:
    """Element spec after padding: fixed sizes from ``padded_shapes``, unknown where it says None/-1,
    the input's sizes where ``padded_shapes`` is None; ``leading`` is the batch dimension."""
    shapes = resolve_padded_shapes(padded_shapes, spec, stage)
    leaves = []
    for leaf, shape in zip(flatten(spec), shapes):
        if padded_shapes is None:
            inner = leaf.shape
        elif shape is None:  # this component pads every dimension to the batch maximum
            inner = None if leaf.shape is None else (None,) * len(leaf.shape)
        else:
            inner = shape
        leaves.append(TensorSpec(None if inner is None else (leading, *inner), leaf.dtype))
    return pack_as(spec, leaves) if isinstance(spec, (tuple, dict)) else leaves[0]
