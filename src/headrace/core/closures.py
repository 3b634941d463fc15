"""Closure capture when a transformation is created, as tf.data's tracing does.

tf.data traces ``map_func`` when ``map()`` is called, so the values a lambda reads from its enclosing
scope are the ones they had then. A Python closure reads its cells when it runs, so without this a
lambda made in a loop would see the loop's last value:

>>> import headrace as hr
>>> def labelled(datasets):
...     out = []
...     for i, ds in enumerate(datasets):
...         out.append(ds.map(lambda x: (x, i)))
...     return out
>>> [[int(label) for _, label in ds] for ds in labelled([hr.Dataset.range(1)] * 3)]
[[0], [1], [2]]

What is frozen: the closure cells of the function (the object each name refers to, not a copy of
it), and, for a function defined in the main script or notebook (module ``__main__``), the module
globals its code reads: a lambda made in a module-level loop keeps the loop variable's value then.
Cells and globals the function itself rebinds (``nonlocal n; n += 1``, ``global n``) stay shared, so
counters keep working; a global not defined yet when the transformation is created leaves the
function's globals live. Functions of imported modules read their module's globals when they run
(a library's globals are its own state: caches, lazy imports). A captured numpy array, list, dict or
set that is changed between ``map()`` and the first iteration draws a ``CapturedValueChanged``
warning: tf.data would have used the old value. The frozen function is a plain function with a plain
globals dict: calling it costs what calling the original does.
"""

from __future__ import annotations

import dis
import functools
import hashlib
import types
import warnings
from typing import Any, NamedTuple

import numpy as np

from .errors import user_stacklevel

#: Captured objects bigger than this are not digested (the warning is a cheap help, never a cost).
_DIGEST_LIMIT_BYTES = 1 << 24
_DIGEST_LIMIT_ITEMS = 10_000


class CapturedValueChanged(UserWarning):
    """A value a user function captured changed after the transformation was created."""


class _Names(NamedTuple):
    rebound: frozenset[str]  # free/cell variables assigned or deleted (STORE_DEREF, DELETE_DEREF)
    read_globals: frozenset[str]  # module globals read (LOAD_GLOBAL; LOAD_NAME in nested class bodies)
    writes_globals: bool  # a ``global`` statement assigns or deletes one


@functools.lru_cache(maxsize=4096)
def _names(code: types.CodeType) -> _Names:
    """What ``code`` (and every function nested in it) does with names: analysed once per code object,
    since datasets built per element (``interleave(lambda f: TFRecordDataset(f).map(g))``) freeze the
    same functions again and again."""
    rebound: set[str] = set()
    read: set[str] = set()
    writes = False
    for instruction in dis.get_instructions(code):
        name = instruction.opname
        if name in ("STORE_DEREF", "DELETE_DEREF"):
            rebound.add(instruction.argval)
        elif name in ("LOAD_GLOBAL", "LOAD_NAME"):
            read.add(instruction.argval)
        elif name in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            writes = True
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            inner = _names(constant)
            rebound |= inner.rebound
            read |= inner.read_globals
            writes = writes or inner.writes_globals
    return _Names(frozenset(rebound), frozenset(read), writes)


def _frozen_globals(fn: types.FunctionType, names: _Names) -> dict | None:
    """A snapshot of the module globals ``fn`` reads, for a function of ``__main__``; None where the
    function must keep its module's live globals."""
    namespace = fn.__globals__
    if namespace.get("__name__") != "__main__" or names.writes_globals or not names.read_globals:
        return None
    builtins = namespace.get("__builtins__")
    builtin_names = builtins if isinstance(builtins, dict) else vars(builtins) if builtins is not None else {}
    snapshot = {key: value for key, value in namespace.items() if key.startswith("__") and key.endswith("__")}
    found = False
    for name in names.read_globals:
        if name in namespace:
            snapshot[name] = namespace[name]
            found = True
        elif name not in builtin_names:
            # Defined later (a helper below the pipeline, a class-body name): keep reading them live.
            return None
    return snapshot if found else None  # builtins only: nothing to freeze


_PLAIN = frozenset({type(None), bool, int, float, str, bytes})


def _plain(container: Any) -> bool:
    """Every item (every key and value of a dict) is None, a bool, int, float, str or bytes."""
    if isinstance(container, dict):
        return _PLAIN.issuperset(map(type, container.values())) and _PLAIN.issuperset(map(type, container))
    return _PLAIN.issuperset(map(type, container))


def _digest(value: Any, budget: list[int]) -> bytes | None:
    """A digest of a mutable value's contents, or None when it is too big or of another kind."""
    hasher = hashlib.blake2b(digest_size=16)

    def feed(item: Any) -> bool:
        budget[0] -= 1
        if budget[0] < 0:
            return False
        if isinstance(item, np.ndarray):
            if item.nbytes > _DIGEST_LIMIT_BYTES or item.dtype == object:
                return False
            hasher.update(str((item.dtype, item.shape)).encode())
            hasher.update(np.ascontiguousarray(item).tobytes())
            return True
        if isinstance(item, (list, tuple, dict, set, frozenset)) and _plain(item):
            # Flat containers of plain values (lists of names, label dicts) at C speed: repr, or an
            # order-free hash for sets, instead of one Python call per item.
            budget[0] -= len(item)
            if budget[0] < 0:
                return False
            flat = hash(frozenset(item)) if isinstance(item, (set, frozenset)) else item
            hasher.update(b"%s%d:" % (type(item).__name__.encode(), len(item)) + repr(flat).encode())
            return True
        if isinstance(item, (list, tuple)):
            hasher.update(b"[%d" % len(item))
            return all(feed(v) for v in item)
        if isinstance(item, (set, frozenset)):
            hasher.update(b"{%d" % len(item))
            return all(feed(v) for v in sorted(item, key=repr))
        if isinstance(item, dict):
            hasher.update(b"<%d" % len(item))
            return all(feed(k) and feed(v) for k, v in item.items())
        if item is None or isinstance(item, (bool, int, float, str, bytes, np.generic)):
            hasher.update(repr(item).encode())
            return True
        return False

    if not isinstance(value, (np.ndarray, list, dict, set)):
        return None
    return hasher.digest() if feed(value) else None


def freeze(fn: Any) -> Any:
    """A copy of ``fn`` whose closure cells hold the values they hold now.

    Anything that is not a plain Python function with a closure (builtins, partials, callable
    objects, functions without free variables) is returned as it is; a ``functools.partial``'s
    function is frozen inside it.

    >>> def make():
    ...     n = 1
    ...     f = lambda x: x + n
    ...     n = 100
    ...     return f
    >>> make()(0)  # plain Python: late binding
    100
    >>> def make_frozen():
    ...     n = 1
    ...     f = freeze(lambda x: x + n)
    ...     n = 100
    ...     return f
    >>> make_frozen()(0)
    1
    """
    if isinstance(fn, functools.partial):
        inner = freeze(fn.func)
        return fn if inner is fn.func else functools.partial(inner, *fn.args, **fn.keywords)
    if type(fn) is not types.FunctionType or getattr(fn, "__headrace_frozen__", False):
        return fn
    names = _names(fn.__code__)
    namespace = _frozen_globals(fn, names)
    if not fn.__closure__ and namespace is None:
        return fn
    rebound = names.rebound
    cells = []
    digests = []
    if namespace is not None:
        for name in names.read_globals:
            if name in namespace:
                digest = _digest(namespace[name], [_DIGEST_LIMIT_ITEMS])
                if digest is not None:
                    digests.append((name, namespace[name], digest))
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # not assigned yet (a function referring to itself): keep it shared
            cells.append(cell)
            continue
        if name in rebound:
            cells.append(cell)
            continue
        cells.append(types.CellType(value))
        digest = _digest(value, [_DIGEST_LIMIT_ITEMS])
        if digest is not None:
            digests.append((name, value, digest))
    frozen = types.FunctionType(
        fn.__code__,
        fn.__globals__ if namespace is None else namespace,
        fn.__name__,
        fn.__defaults__,
        tuple(cells) if fn.__closure__ else None,
    )
    frozen.__kwdefaults__ = fn.__kwdefaults__
    frozen.__dict__.update(fn.__dict__)
    frozen.__qualname__ = fn.__qualname__
    frozen.__module__ = fn.__module__
    frozen.__doc__ = fn.__doc__
    frozen.__annotations__ = fn.__annotations__
    frozen.__dict__.update(__headrace_frozen__=True, __headrace_captured__=digests)
    return frozen


def check_captured(fn: Any, stage: str) -> None:
    """Warn once if a value ``fn`` captured when frozen has changed since (called when iteration
    starts); later changes are not looked for, so functions that update their captures are fine."""
    fn = getattr(fn, "func", fn)  # a partial
    digests = getattr(fn, "__headrace_captured__", None)
    if not digests:
        return
    fn.__headrace_captured__ = []
    for name, value, digest in digests:
        if _digest(value, [_DIGEST_LIMIT_ITEMS]) != digest:
            warnings.warn(
                f"{stage}: the function captured {name!r} ({type(value).__name__}) when the transformation "
                "was created, and its contents have changed since. headrace reads the contents as they are "
                "now; tf.data would have used the contents it had then. Build the dataset after the value "
                "is final, or capture a copy",
                CapturedValueChanged,
                stacklevel=user_stacklevel(),
            )


def check_pipeline(root: Any) -> None:
    """``check_captured`` for every frozen function of every stage of a pipeline."""
    for node in root.walk():
        for value in vars(node).values():
            if callable(value) and getattr(getattr(value, "func", value), "__headrace_captured__", None):
                check_captured(value, repr(node))
