"""tf.nest: lists, tuples, namedtuples and dicts (visited in sorted key order) are structure; anything
else, ``None`` and strings included, is a leaf."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def is_nested(seq: Any) -> bool:
    return isinstance(seq, (list, tuple, Mapping)) or hasattr(type(seq), "__attrs_attrs__")


is_sequence = is_nested


def _keys(mapping: Mapping) -> list:
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError("nest only supports dicts with sortable keys.") from None


def _children(seq: Any) -> list:
    if isinstance(seq, Mapping):
        return [seq[key] for key in _keys(seq)]
    if hasattr(type(seq), "__attrs_attrs__"):
        return [getattr(seq, a.name) for a in type(seq).__attrs_attrs__]
    return list(seq)


def flatten(structure: Any, expand_composites: bool = False) -> list:
    """The leaves of ``structure`` in order."""
    if not is_nested(structure):
        return [structure]
    leaves: list = []
    for child in _children(structure):
        leaves.extend(flatten(child))
    return leaves


def _rebuild(seq: Any, children: list) -> Any:
    if isinstance(seq, Mapping):
        by_key = dict(zip(_keys(seq), children))
        return type(seq)((key, by_key[key]) for key in seq)  # type: ignore[call-arg]
    if hasattr(type(seq), "__attrs_attrs__"):
        return type(seq)(*children)
    if isinstance(seq, tuple) and hasattr(seq, "_fields"):
        return type(seq)(*children)
    return type(seq)(children)


def _count(structure: Any) -> int:
    return len(flatten(structure))


def pack_sequence_as(structure: Any, flat_sequence: Any, expand_composites: bool = False) -> Any:
    """Rebuild ``structure`` with the leaves of ``flat_sequence``."""
    if not is_nested(flat_sequence):
        raise TypeError(
            f"Attempted to pack value:\n  {flat_sequence!r}\ninto a structure, but found incompatible type `{type(flat_sequence).__name__}` instead."
        )
    flat = list(flat_sequence)
    if not is_nested(structure):
        if len(flat) != 1:
            raise ValueError(
                f"The target structure is of type `{type(structure).__name__}`\n  {structure!r}\nHowever the input is a sequence ({type(flat_sequence).__name__}) of length {len(flat)}."
            )
        return flat[0]
    expected = _count(structure)
    if expected != len(flat):
        raise ValueError(
            f"Could not pack sequence. Structure had {expected} atoms, but flat_sequence had {len(flat)} items. "
            f"Structure: {structure!r}, flat_sequence: {flat!r}."
        )
    leaves = iter(flat)

    def build(node: Any) -> Any:
        if not is_nested(node):
            return next(leaves)
        return _rebuild(node, [build(child) for child in _children(node)])

    return build(structure)


def assert_same_structure(
    nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False
) -> None:
    """ValueError when the nesting differs, TypeError when ``check_types`` and sequence types differ."""
    n1, n2 = is_nested(nest1), is_nested(nest2)
    if n1 != n2:
        raise ValueError(
            f"The two structures don't have the same nested structure.\n\nFirst structure: {nest1!r}\n\n"
            f"Second structure: {nest2!r}"
        )
    if not n1:
        return
    if check_types:
        t1, t2 = type(nest1), type(nest2)
        same = t1 is t2 or (isinstance(nest1, Mapping) and isinstance(nest2, Mapping))
        if not same:
            raise TypeError(
                f"The two structures don't have the same sequence type. Input structure has type {t1!r}, "
                f"while shallow structure has type {t2!r}."
            )
    if isinstance(nest1, Mapping) and isinstance(nest2, Mapping) and set(nest1) != set(nest2):
        raise ValueError(
            f"The two dictionaries don't have the same set of keys. First structure has keys "
            f"{sorted(nest1, key=str)}, while second structure has keys {sorted(nest2, key=str)}."
        )
    c1, c2 = _children(nest1), _children(nest2)
    if len(c1) != len(c2):
        raise ValueError(
            f"The two structures don't have the same nested structure.\n\nFirst structure: {nest1!r}\n\n"
            f"Second structure: {nest2!r}\n\nMore specifically: The two namedtuples don't have the same "
            f"sequence type or length: {len(c1)} vs {len(c2)}"
        )
    for a, b in zip(c1, c2):
        assert_same_structure(a, b, check_types)


def map_structure(func: Callable, *structure: Any, **kwargs: Any) -> Any:
    """``func`` on corresponding leaves of each structure, packed as the first."""
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func!r}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(
            f"Only valid keyword arguments are `check_types` and `expand_composites`, not: `{', '.join(kwargs)}`"
        )
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])


def _paths(structure: Any, prefix: tuple) -> list:
    if not is_nested(structure):
        return [(prefix, structure)]
    if isinstance(structure, Mapping):
        keys: list = _keys(structure)
    elif isinstance(structure, tuple) and hasattr(structure, "_fields"):
        keys = list(structure._fields)
    else:
        keys = list(range(len(_children(structure))))
    out: list = []
    for key, child in zip(keys, _children(structure)):
        out.extend(_paths(child, (*prefix, key)))
    return out


def flatten_with_joined_string_paths(
    structure: Any, separator: str = "/", expand_composites: bool = False
) -> list:
    return [(separator.join(str(k) for k in path), leaf) for path, leaf in _paths(structure, ())]


def map_structure_with_paths(func: Callable, *structure: Any, **kwargs: Any) -> Any:
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=kwargs.get("check_types", True))
    paths = [path for path, _ in _paths(structure[0], ())]
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(
        structure[0], [func("/".join(str(k) for k in p), *leaves) for p, *leaves in zip(paths, *flats)]
    )


def list_to_tuple(structure: Any) -> Any:
    def convert(node: Any) -> Any:
        if isinstance(node, list):
            return tuple(convert(item) for item in node)
        if is_nested(node):
            return _rebuild(node, [convert(child) for child in _children(node)])
        return node

    return convert(structure)
