"""Nested element structures: tuples and dicts of leaves (numpy arrays, numpy scalars, bytes).

Tuples and dicts are structure; everything else is a leaf, as in ``tf.nest`` (lists are leaves too,
because tf.data converts them to tensors). Dict keys are visited in sorted order; a rebuilt dict keeps
its own key order, as tf.nest does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .errors import StructureError


def is_structure(value: Any) -> bool:
    return isinstance(value, (tuple, dict))


def flatten(element: Any) -> list:
    """Leaves of ``element`` in a fixed order.

    >>> flatten(({"b": 2, "a": 1}, 3))
    [1, 2, 3]
    """
    if isinstance(element, tuple):
        out = []
        for item in element:
            out.extend(flatten(item))
        return out
    if isinstance(element, dict):
        out = []
        for key in sorted(element):
            out.extend(flatten(element[key]))
        return out
    return [element]


def pack_as(structure: Any, leaves: list) -> Any:
    """Inverse of :func:`flatten`: rebuild ``structure``'s shape from ``leaves``."""
    iterator = iter(leaves)
    result = _pack(structure, iterator)
    if next(iterator, _END) is not _END:
        raise StructureError(f"too many leaves to pack into {describe_structure(structure)}")
    return result


_END = object()


def _pack(structure: Any, leaves: Iterator[Any]) -> Any:
    if isinstance(structure, tuple):
        values = [_pack(item, leaves) for item in structure]
        return type(structure)(*values) if hasattr(structure, "_fields") else tuple(values)
    if isinstance(structure, dict):
        # Leaves come in sorted-key order; the dict keeps its own key order, as tf.nest packs it.
        by_key = {key: _pack(structure[key], leaves) for key in sorted(structure)}
        return {key: by_key[key] for key in structure}
    try:
        return next(leaves)
    except StopIteration:
        raise StructureError(f"too few leaves to pack into {describe_structure(structure)}") from None


def map_structure(fn: Callable, *elements: Any) -> Any:
    """Apply ``fn`` leaf-wise over elements of the same structure.

    >>> map_structure(lambda a, b: a + b, (1, {"x": 2}), (10, {"x": 20}))
    (11, {'x': 22})
    """
    first = elements[0]
    if isinstance(first, tuple):
        for other in elements[1:]:
            if not isinstance(other, tuple) or len(other) != len(first):
                raise StructureError(
                    f"elements do not share one structure: {describe_structure(first)} "
                    f"vs {describe_structure(other)}"
                )
        values = [map_structure(fn, *items) for items in zip(*elements)]
        return type(first)(*values) if hasattr(first, "_fields") else tuple(values)
    if isinstance(first, dict):
        for other in elements[1:]:
            if not isinstance(other, dict) or set(other) != set(first):
                raise StructureError(
                    f"elements do not share one structure: {describe_structure(first)} "
                    f"vs {describe_structure(other)}"
                )
        return {key: map_structure(fn, *(e[key] for e in elements)) for key in first}
    for other in elements[1:]:
        if is_structure(other):
            raise StructureError(
                f"elements do not share one structure: {describe_structure(first)} "
                f"vs {describe_structure(other)}"
            )
    return fn(*elements)


def same_structure(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` have the same tuples (and tuple types), dict keys and nesting.

    >>> same_structure((1, {"k": 2}), (3, {"k": 4})), same_structure((1, 2), (1, 2, 3))
    (True, False)
    """
    if isinstance(a, tuple):
        return type(b) is type(a) and len(a) == len(b) and all(map(same_structure, a, b))
    if isinstance(a, dict):
        return type(b) is type(a) and a.keys() == b.keys() and all(same_structure(a[k], b[k]) for k in a)
    return not is_structure(b)


def describe_structure(element: Any) -> str:
    """Short text for a structure, used in error messages (namedtuples by their class name).

    >>> describe_structure((1, {"b": 2, "a": b"x"}))
    "(leaf, {'a': leaf, 'b': leaf})"
    """
    if isinstance(element, tuple):
        name = type(element).__name__ if hasattr(element, "_fields") else ""
        return (
            name
            + "("
            + ", ".join(describe_structure(e) for e in element)
            + ("," if len(element) == 1 else "")
            + ")"
        )
    if isinstance(element, dict):
        return "{" + ", ".join(f"{k!r}: {describe_structure(v)}" for k, v in sorted(element.items())) + "}"
    return "leaf"
