"""Stacking elements into batches and splitting batches into elements (shared by batch ops)."""

from __future__ import annotations

import itertools
from operator import itemgetter
from typing import Any

import numpy as np

from ...core.errors import StructureError
from ...core.spec import to_array
from ...core.state import Element, StateFields
from ...core.structure import describe_structure, flatten, pack_as, same_structure

#: dtype kinds that batch together (numpy would silently upcast across them, e.g. ints and str to str)
_KIND = {
    "b": "bool",
    "i": "int",
    "u": "int",
    "f": "float",
    "c": "complex",
    "S": "string",
    "U": "string",
    "O": "string",
}
_PYTHON_KIND = {bool: "bool", int: "int", float: "float", complex: "complex", bytes: "string", str: "string"}


def leaf_kind(value: Any) -> str:
    """What kind of values a leaf holds (bool, int, float, complex, string), for batching checks.

    >>> leaf_kind(3), leaf_kind(np.float32(1)), leaf_kind(np.zeros(2, np.uint8)), leaf_kind(b"x")
    ('int', 'float', 'int', 'string')
    """
    kind = _PYTHON_KIND.get(type(value))
    if kind is not None:
        return kind
    if isinstance(value, (tuple, dict)):
        return type(value).__name__
    dtype = getattr(value, "dtype", None)
    if not isinstance(dtype, np.dtype):
        try:
            dtype = np.asarray(value).dtype
        except ValueError:  # a ragged list
            return type(value).__name__
    return _KIND.get(dtype.kind) or str(dtype)  # (a default argument would format every time)


def _structure_error(elements: list, stage: str, first_index: int) -> StructureError:
    first = elements[0]
    offset = next(i for i, e in enumerate(elements) if not same_structure(e, first))
    return StructureError(
        f"{stage}: element {first_index + offset} has structure {describe_structure(elements[offset])} "
        f"but element {first_index} has {describe_structure(first)}; every element of a batch needs one "
        "structure (the same tuple length, dict keys and nesting)"
    )


def leaf_columns(
    elements: list, stage: str = "batch", first_index: int = 0, check_leaves: bool = True
) -> tuple[list[str], list[list]]:
    """The paths and values of each leaf across ``elements`` (in :func:`flatten` order), checking that
    every element has the first one's structure; column-wise, so a batch costs a few C-level calls
    per tuple or dict rather than a Python-level walk per element. With ``check_leaves=False`` a
    column of leaves is not scanned for a stray tuple or dict: the caller finds it when stacking
    (``stack`` does, at no cost on the common path).

    >>> leaf_columns([(1, {"a": b"x"}), (2, {"a": b"y"})])
    (['[0]', "[1]['a']"], [[1, 2], [b'x', b'y']])
    """
    paths: list[str] = []
    columns: list[list] = []
    if not _gather(elements, "", paths, columns, check_leaves):
        raise _structure_error(elements, stage, first_index)
    return paths, columns


def _gather(values: list, path: str, paths: list, columns: list, check_leaves: bool) -> bool:
    first = values[0]
    if isinstance(first, tuple):
        if set(map(type, values)) != {type(first)} or set(map(len, values)) != {len(first)}:
            return False
        return all(
            _gather(list(column), f"{path}[{i}]", paths, columns, check_leaves)
            for i, column in enumerate(zip(*values))
        )
    if isinstance(first, dict):
        if set(map(type, values)) != {type(first)} or set(map(len, values)) != {len(first)}:
            return False
        for key in sorted(first):
            try:
                column = list(map(itemgetter(key), values))  # equal sizes and all keys: equal key sets
            except KeyError:
                return False
            if not _gather(column, f"{path}[{key!r}]", paths, columns, check_leaves):
                return False
        return True
    if check_leaves and any(issubclass(kind, (tuple, dict)) for kind in set(map(type, values))):
        return False
    paths.append(path)
    columns.append(values)
    return True


def check_kinds(values: list, path: str, stage: str, first_index: int) -> None:
    """Raise StructureError naming the first value of a column whose kind (bool, int, float, complex,
    string) differs from the first one's: numpy would silently convert them (to floats, or all to
    strings). Called where a column did not stack cleanly, so the common path pays nothing."""
    expected = leaf_kind(values[0])
    for offset, value in enumerate(values):
        if leaf_kind(value) != expected:
            raise StructureError(
                f"{stage}: element {first_index + offset}{path} is {_describe_leaf(value)} but element "
                f"{first_index}{path} is {_describe_leaf(values[0])}; every element of a batch needs one "
                "dtype per component: convert in a map first (e.g. np.float32(x), or str(x).encode())"
            )


def _describe_leaf(value: Any) -> str:
    if isinstance(value, (tuple, dict)):
        return f"a {type(value).__name__} {describe_structure(value)}"
    kind = leaf_kind(value)
    dtype = getattr(value, "dtype", None)
    detail = f"{type(value).__name__}" if dtype is None else f"{type(value).__name__} of dtype {dtype}"
    return f"a{'n' if kind[0] in 'aeiou' else ''} {kind} ({detail})"


def _distinct_shapes(values: list, limit: int = 8) -> list[str]:
    """The different shapes among ``values``, smallest first, at most ``limit`` of them (for errors)."""
    shapes = sorted({np.shape(v) if not isinstance(v, dict) else (-1,) for v in values})
    text = [str(shape) for shape in shapes[:limit]]
    return text + [f"... {len(shapes) - limit} more"] if len(shapes) > limit else text


def _stack_leaf(values: list, path: str, first_index: int, stage: str = "batch") -> np.ndarray | None:
    first = values[0]
    if first is None and all(value is None for value in values):
        return None  # a None component batches to None, as tf.data's NoneTensorSpec
    if isinstance(first, np.ndarray) and first.dtype != object:
        shape, dtype = first.shape, first.dtype
        kind = _KIND.get(dtype.kind)
        for offset, value in enumerate(values):
            if not isinstance(value, np.ndarray) or value.shape != shape:
                check_kinds(values, path, stage, first_index)  # another kind is the better message
                shapes = _distinct_shapes(values)
                raise StructureError(
                    f"{stage}: element {first_index + offset}{path} has shape {np.shape(value)} but element "
                    f"{first_index}{path} has {shape} (shapes in this batch: {', '.join(shapes)}); "
                    "resize or pad them first, or use padded_batch"
                )
            if value.dtype != dtype and _KIND.get(value.dtype.kind) != kind:
                check_kinds(values, path, stage, first_index)
        return np.stack(values)
    if type(first) is bytes and set(map(type, values)) == {bytes}:  # C-level check, ~3 µs per 256
        # Records and other scalar strings: one C-level fill instead of a conversion per element.
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    if isinstance(first, (bytes, str)) or (isinstance(first, np.ndarray) and first.dtype == object):
        check_kinds(values, path, stage, first_index)  # this path converts each value anyway
        arrays = [to_array(v) for v in values]
        shape = arrays[0].shape
        for offset, array in enumerate(arrays):
            if array.shape != shape:
                raise StructureError(
                    f"{stage}: element {first_index + offset}{path} has shape {array.shape} but element "
                    f"{first_index}{path} has {shape}; use padded_batch"
                )
        out = np.empty((len(arrays), *shape), dtype=object)
        for i, array in enumerate(arrays):
            out[i, ...] = array  # [i] would store a 0-d array itself for scalar strings
        return out
    # numpy scalars and Python numbers: one C-level conversion for the whole batch, checked after:
    # a value of another kind shows as a result of another kind (ints and a float give floats, a
    # str gives strings), a stray array or tuple as an object result or another rank.
    try:
        array = np.asarray(values)
    except ValueError:  # scalars mixed with arrays (numpy refuses inhomogeneous shapes)
        array = np.empty(0, dtype=object)
    if (
        array.dtype == object
        or array.ndim != 1 + np.ndim(first)
        or _KIND.get(array.dtype.kind) != leaf_kind(first)
    ):
        check_kinds(values, path, stage, first_index)
        shapes = _distinct_shapes(values)
        raise StructureError(
            f"{stage}: elements {first_index}..{first_index + len(values) - 1}{path} cannot be stacked "
            f"(shapes {', '.join(shapes)}); use padded_batch for ragged elements"
        )
    if not isinstance(first, (np.generic, np.ndarray)):
        array = to_array(array) if array.dtype.kind != "f" else array.astype(np.float32)
    return array


def stack(elements: list, first_index: int = 0) -> Any:
    """Stack a list of same-structure elements into one element of arrays with a leading dimension.

    >>> stack([(np.int64(1), b"a"), (np.int64(2), b"b")])
    (array([1, 2]), array([b'a', b'b'], dtype=object))
    """
    first = elements[0]
    paths, columns = leaf_columns(elements, "batch", first_index, check_leaves=False)
    try:
        leaves = [_stack_leaf(column, path, first_index) for column, path in zip(columns, paths)]
    except StructureError:
        # A tuple or dict where the first element has a leaf: say so, rather than the leaf's symptom.
        if not all(map(same_structure, elements, itertools.repeat(first))):
            raise _structure_error(elements, "batch", first_index) from None
        raise
    return pack_as(first, leaves) if isinstance(first, (tuple, dict)) else leaves[0]


def leaf_paths(element: Any, prefix: str = "") -> list[str]:
    """Where each leaf sits, in :func:`flatten` order, for error messages.

    >>> leaf_paths(({"b": 1, "a": 2}, 3))
    ["[0]['a']", "[0]['b']", '[1]']
    """
    if isinstance(element, tuple):
        out = []
        for i, item in enumerate(element):
            out.extend(leaf_paths(item, f"{prefix}[{i}]"))
        return out
    if isinstance(element, dict):
        out = []
        for key in sorted(element):
            out.extend(leaf_paths(element[key], f"{prefix}[{key!r}]"))
        return out
    return [prefix]


def check_batched(element: Any, stage: str, position: int, hint: str = "") -> int:
    """The batch size of ``element``, or a StructureError naming the component that is not batched."""
    leaves = flatten(element)
    sizes = [np.shape(leaf)[0] if np.ndim(leaf) > 0 else None for leaf in leaves]
    if len(set(sizes)) != 1 or sizes[0] is None:
        paths = [path or "the element" for path in leaf_paths(element)]
        shapes = ", ".join(f"{path} {np.shape(leaf)}" for path, leaf in zip(paths, leaves))
        problem = "is a scalar" if None in sizes else "has different leading sizes"
        raise StructureError(
            f"{stage}: input element {position} {problem} ({shapes}); every component needs the same "
            f"leading (batch) dimension{hint}"
        )
    return int(sizes[0])


class Batch(Element):
    """A saved batch, or None (unbatch's and rebatch's unreturned rows, rebatch's 0-row template):
    on load every component must have the same leading (batch) dimension, of 0 rows when ``empty``."""

    def __init__(self, name: str, attr: str | None = None, *, empty: bool = False):
        super().__init__(name, attr, optional=True)
        self.empty = empty

    def load(self, fields: StateFields, stage: Any, values: dict) -> Any:
        value = super().load(fields, stage, values)
        if value is None:
            return None
        try:
            size = check_batched(value, stage.name, values["position"] - 1)
        except StructureError as exc:
            raise fields.fail(self.name, "a value that is not a batch", f"a batch ({exc})") from None
        if self.empty and size:
            raise fields.fail(self.name, f"a batch of {size} rows", "an empty (0-row) batch")
        return value


class LayoutCheck:
    """Checks that successive input elements (batches, for unbatch and rebatch) keep the first one's
    structure and kind of values per component, as tf.data's fixed element spec guarantees.

    >>> check = LayoutCheck("unbatch()")
    >>> check((np.zeros(2), np.zeros(2)), 0)
    >>> check((np.zeros(2),), 1)
    Traceback (most recent call last):
    ...
    headrace.core.errors.StructureError: unbatch(): input element 1 has structure (leaf,) but input element 0 has (leaf, leaf); every input element needs one structure and one dtype per component
    """

    def __init__(self, stage: str):
        self.stage = stage
        self.reference: tuple | None = None  # (position, element, kinds) of the first element seen

    def __call__(self, element: Any, position: int) -> None:
        kinds = [leaf_kind(leaf) for leaf in flatten(element)]
        if self.reference is None:
            self.reference = (position, element, kinds)
            return
        first, reference, expected = self.reference
        if same_structure(element, reference) and kinds == expected:
            return
        if same_structure(element, reference):
            paths = leaf_paths(element)
            index = next(i for i, (a, b) in enumerate(zip(kinds, expected)) if a != b)
            what = f"has {kinds[index]} values at {paths[index] or 'the element'}, where"
            theirs = f"has {expected[index]} values"
        else:
            what, theirs = f"has structure {describe_structure(element)} but", describe_structure(reference)
            theirs = f"has {theirs}"
        raise StructureError(
            f"{self.stage}: input element {position} {what} input element {first} {theirs}; every input "
            "element needs one structure and one dtype per component"
        )


def batch_size_of(element: Any) -> int:
    """Leading dimension shared by every leaf of a batched element."""
    sizes = {int(np.shape(leaf)[0]) if np.ndim(leaf) > 0 else -1 for leaf in flatten(element)}
    if len(sizes) != 1 or -1 in sizes:
        raise StructureError(
            f"expected every component to have the same leading (batch) dimension, got sizes {sorted(sizes)}"
        )
    return sizes.pop()


def split(element: Any) -> list:
    """Inverse of :func:`stack`: the rows of a batched element.

    Each leaf is split by one C-level ``list(array)``; flat tuples and dicts are then zipped without a
    per-row ``pack_as``.

    >>> split((np.array([1, 2]), np.array([b"a", b"b"], dtype=object)))
    [(np.int64(1), b'a'), (np.int64(2), b'b')]
    """
    n = batch_size_of(element)
    if not isinstance(element, (tuple, dict)):
        return list(element)
    if isinstance(element, dict) and not any(isinstance(v, (tuple, dict)) for v in element.values()):
        keys = list(element)  # the element's own key order, as pack_as keeps it
        columns = [list(leaf) if isinstance(leaf, np.ndarray) else leaf for leaf in element.values()]
        return [dict(zip(keys, values)) for values in zip(*columns)]
    leaves = flatten(element)
    rows = [list(leaf) if isinstance(leaf, np.ndarray) else leaf for leaf in leaves]
    if type(element) is tuple and not any(isinstance(item, (tuple, dict)) for item in element):
        return list(zip(*rows))
    return [pack_as(element, [row[i] for row in rows]) for i in range(n)]


def slice_rows(element: Any, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of every leaf of a batched element."""
    leaves = [leaf[start:stop] for leaf in flatten(element)]
    return pack_as(element, leaves) if isinstance(element, (tuple, dict)) else leaves[0]


def concat_rows(elements: list) -> Any:
    """Concatenate batched elements along the batch dimension."""
    first = elements[0]
    columns = list(zip(*(flatten(e) for e in elements)))
    leaves = [np.concatenate(col) for col in columns]
    return pack_as(first, leaves) if isinstance(first, (tuple, dict)) else leaves[0]
