"""Fingerprints of pipelines: a digest that changes when a stage's code or arguments change.

Two keys come from one hasher: :func:`fingerprint` keys disk caches; :func:`pipeline_key` keys
checkpoints (and tuned configurations), leaving out execution settings, files' sizes and times, and
the contents of mutable values functions capture (see its docstring).

A disk cache is keyed by the fingerprint of the pipeline above it, so editing a map function, a value
it captures or an op's argument makes the old cache unusable instead of silently reused.

What goes in, per stage: the stage's class, every argument it holds (numpy arrays by content) and its
parents' fingerprints. User functions go in by what decides their behaviour: bytecode, constants and
names (nested code objects too), default arguments, closure cell values, and the values of the module
globals their code names (helper functions recursively, arrays by content, modules by name only).
Line numbers, file names and comments stay out: moving a function or editing a comment keeps the
cache. Library code (the standard library, installed packages, headrace itself) goes in by qualified
name and package version (its closures and default arguments still count: they may hold user
functions). Other objects go in by what pickle would save of them (``__reduce_ex__``),
without pickling anything. Seeds a stage drew for itself when given none (``fallback_seed``) stay out,
so an unseeded shuffle above a cache does not make every run miss it.

Limits: a fingerprint cannot see state read at run time (files a function opens, environment
variables, attributes of modules such as ``config.SCALE``, the network, randomness), values changed
after it was taken (it is taken once per stage, when a cache first needs it), or the contents of files
a source reads (sources holding a list of local files add each file's size and modification time).
Objects it cannot look into at all (locks, open files, some C extension objects) go in by type only
and are listed by :func:`blind_spots`. Fallback, when it cannot tell: change the cache's file name
(add a version) or delete the file.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import struct
import sys
import types
from typing import Any

import numpy as np

from .errors import attempt
from .node import Node, Role, derived, post_order

FINGERPRINT_VERSION = 2

#: Which node arguments count is each node class's declaration (``Node.fields``): resources (stores,
#: credentials, seeds drawn per construction) never; execution settings (parallelism, executor, order,
#: names, distribute's rank) in cache fingerprints only, so a checkpoint moves between serial, thread
#: and process execution, survives renaming a stage and restores into any rank.
_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, np.generic, np.dtype)
_SAMPLED_BYTES = 16 << 20  # arrays larger than this count in checkpoint keys by an even sample
_CLASS_NOISE = frozenset(
    {"__dict__", "__weakref__", "__module__", "__doc__", "__qualname__", "__firstlineno__"}
)
_MAX_DEPTH = 80


def fingerprint(node: Node) -> str:
    """Hex digest of ``node`` and every stage above it; computed once per node and kept on it.

    >>> import headrace as hr
    >>> a = hr.Dataset.range(5).map(lambda x: x + 1).node
    >>> b = hr.Dataset.range(5).map(lambda x: x + 2).node
    >>> fingerprint(a) == fingerprint(a), fingerprint(a) == fingerprint(b)
    (True, False)
    """
    return _node_result(node)[0]


def pipeline_key(node: Node) -> str:
    """The structural identity of a pipeline: what checkpoints (and tuned configurations) are keyed by.

    The same as :func:`fingerprint` except the files a source reads: a checkpoint stays usable when
    its files are copied elsewhere (each source checks the files it is restored into itself).
    Functions count by qualified name, code, constants, defaults and captured values, never by
    file or line: moving a function keeps old checkpoints, changing a captured value refuses them.
    Captured values count "where cheap": immutable values (numbers, strings, tuples of them, numpy
    arrays) by content, mutable containers and other objects by type only, since a list a function
    appends to or an object with a cache changes as the pipeline runs; arrays over 16 MiB by an
    even sample of 16 MiB (it is taken at every ``iter()``). Execution settings
    (``num_parallel_calls``, ``executor``, ``deterministic``, a stage's ``name``) stay out.

    >>> import headrace as hr
    >>> scale = 2
    >>> a = pipeline_key(hr.Dataset.range(5).map(lambda x: x * scale).node)
    >>> scale = 3
    >>> a == pipeline_key(hr.Dataset.range(5).map(lambda x: x * scale).node)
    False
    """
    return _node_result(node, checkpoint=True)[0]


def blind_spots(node: Node) -> list[str]:
    """What the fingerprint of ``node`` could not look into (keyed by type only), as readable paths.

    >>> import threading, headrace as hr
    >>> lock = threading.Lock()
    >>> blind_spots(hr.Dataset.range(3).map(lambda x: lock and x).node)
    ["stage map(<lambda> at <doctest ...>:1) > map_func > global 'lock': a lock (cannot pickle '_thread.lock' object)"]
    """
    return list(_node_result(node)[1])


def value_fingerprint(value: Any) -> str:
    """Hex digest of one value as the pipeline fingerprint sees it (functions by code, arrays by content).

    >>> value_fingerprint(lambda x: x + 1) == value_fingerprint(lambda x: x + 1)
    True
    >>> value_fingerprint(np.arange(3)) == value_fingerprint(np.arange(4))
    False
    """
    hasher = _Hasher("value")
    hasher.value(value)
    return hasher.hexdigest()


def _node_result(node: Node, checkpoint: bool = False) -> tuple[str, tuple[str, ...]]:
    key = ("fingerprint", checkpoint)
    cached = derived(node).get(key)
    if cached is None:
        # Parents first, iteratively: a pipeline may be 10,000 stages deep.
        for stage in post_order(node):
            if key not in derived(stage):
                _one_node_result(stage, checkpoint)
        cached = derived(node)[key]
    return cached


def _one_node_result(node: Node, checkpoint: bool) -> None:
    """Hash one stage, its parents' digests being known already."""
    hasher = _Hasher(f"stage {node!r}", checkpoint)
    hasher.node_arguments(node)
    spots = list(hasher.blind)
    seen = set(spots)
    for parent in node.parents:
        digest, parent_spots = derived(parent)[("fingerprint", checkpoint)]
        hasher.token(b"P", digest.encode())
        for spot in parent_spots:
            if spot not in seen:
                seen.add(spot)
                spots.append(spot)
    # nodes are immutable: the digest never goes stale
    derived(node)[("fingerprint", checkpoint)] = (hasher.hexdigest(), tuple(spots))


@functools.cache
def library_version(module: str | None) -> str | None:
    """``"<package> <version>"`` when ``module`` is library code (hashed by name), None for user code.

    >>> library_version("json").startswith("python "), library_version("headrace.ops.map").startswith("headrace ")
    (True, True)
    """
    if not module:
        return None
    top = module.partition(".")[0]
    if top == "headrace":
        from ..version import __version__  # noqa: PLC0415 (a cycle at import time otherwise)

        return f"headrace {__version__}"
    if top == "builtins" or top in getattr(sys, "stdlib_module_names", ()):
        return f"python {sys.version_info[0]}.{sys.version_info[1]}"
    path = getattr(sys.modules.get(top), "__file__", None) or ""
    if f"{os.sep}site-packages{os.sep}" in path or f"{os.sep}dist-packages{os.sep}" in path:
        try:
            return f"{top} {importlib.metadata.version(top)}"
        except importlib.metadata.PackageNotFoundError:
            return f"{top} {getattr(sys.modules.get(top), '__version__', '?')}"
    return None


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _describe_type(value: Any) -> str:
    kind = type(value)
    name = kind.__qualname__.lstrip("_")
    if name.endswith("lock") or name == "RLock":
        return "a lock"
    return f"{kind.__module__}.{kind.__qualname__}"


class _Hasher:
    """Feeds tagged, length-prefixed tokens into SHA-256; containers seen twice become back-references."""

    def __init__(self, where: str, checkpoint: bool = False):
        self.checkpoint = checkpoint
        self._functions = 0  # depth inside user functions (checkpoint keys hash mutable values by type)
        self._hash = hashlib.sha256(b"headrace fingerprint %d" % FINGERPRINT_VERSION)
        self._memo: dict[int, int] = {}
        self._keep: list = []  # holds temporaries (reduce results) so their ids stay unique
        self._path = [where]
        self.blind: list[str] = []

    def hexdigest(self) -> str:
        return self._hash.hexdigest()

    def token(self, tag: bytes, payload: bytes = b"") -> None:
        self._hash.update(tag + struct.pack("<Q", len(payload)) + payload)

    def _blind(self, value: Any, why: str) -> None:
        self.token(b"?", f"{type(value).__module__}.{type(value).__qualname__}".encode())
        spot = f"{' > '.join(self._path)}: {_describe_type(value)} ({why})"
        if spot not in self.blind:
            self.blind.append(spot)

    def _named(self, label: str, value: Any) -> None:
        self._path.append(label)
        try:
            self.value(value)
        finally:
            self._path.pop()

    # --- stages -------------------------------------------------------------------------------------
    def node_arguments(self, node: Node) -> None:
        kind = type(node)
        self.token(b"S", (kind.__dict__.get("key_name") or f"{kind.__module__}.{kind.__qualname__}").encode())
        self.token(b"v", (library_version(kind.__module__) or "").encode())
        arguments = node.arguments()
        roles = kind.roles()
        counted = (Role.IDENTITY,) if self.checkpoint else (Role.IDENTITY, Role.SETTING)
        for key in sorted(arguments):
            if roles[key] not in counted:
                continue
            self.token(b"k", key.encode())
            self._named(key, arguments[key])
        filenames = arguments.get("filenames")
        if not self.checkpoint and isinstance(filenames, (list, tuple)):
            for filename in filenames:
                if isinstance(filename, str) and "://" not in filename and os.path.isfile(filename):
                    stat = os.stat(filename)
                    self.token(b"m", struct.pack("<qq", stat.st_size, stat.st_mtime_ns))

    # --- values -------------------------------------------------------------------------------------
    def value(self, value: Any) -> None:
        kind = type(value)
        if value is None or value is Ellipsis or value is NotImplemented:
            self.token(b"c", repr(value).encode())
        elif kind is bool:
            self.token(b"?b", b"1" if value else b"0")
        elif kind is int:
            self.token(b"i", str(value).encode())
        elif kind is float:
            self.token(b"f", struct.pack("<d", value))
        elif kind is complex:
            self.token(b"j", struct.pack("<dd", value.real, value.imag))
        elif kind is str:
            self.token(b"s", value.encode("utf-8", "surrogatepass"))
        elif kind is bytes:
            self.token(b"b", value)
        elif isinstance(value, np.ndarray):
            if not self._seen(value):
                self._array(value)
        elif isinstance(value, np.generic):
            self._array(np.asarray(value))
        elif isinstance(value, np.dtype):
            self.token(b"d", str(value.descr if value.fields else value.str).encode())
        elif isinstance(value, Node):
            digest, spots = _node_result(value, self.checkpoint)
            self.token(b"N", digest.encode())
            self.blind.extend(spot for spot in spots if spot not in self.blind)
        else:
            self._composite(value)

    def _array(self, array: np.ndarray) -> None:
        self.token(b"a", f"{array.dtype.str}{array.shape}".encode())
        if array.dtype.hasobject:
            for index, item in enumerate(array.ravel().tolist()):
                self._named(f"[{index}]", item)
        elif array.dtype.fields is not None:
            self.token(b"d", str(array.dtype.descr).encode())
            self._hash.update(np.ascontiguousarray(array).tobytes())
        elif self.checkpoint and array.nbytes > _SAMPLED_BYTES:
            # A checkpoint key is taken at every iter(): a large array (a memory-mapped file) counts by
            # an even sample of about _SAMPLED_BYTES, not a full read each time.
            flat = array.reshape(-1)
            step = -(-array.nbytes // _SAMPLED_BYTES)
            self.token(b"~", str(step).encode())
            # numpy declares the buffer protocol (__buffer__) to type checkers only for Python >= 3.12
            self._hash.update(np.ascontiguousarray(flat[::step]).view(np.uint8))  # type: ignore[arg-type]
        else:
            self._hash.update(np.ascontiguousarray(array).reshape(-1).view(np.uint8))  # type: ignore[arg-type]

    def _seen(self, value: Any) -> bool:
        """True (and a back-reference hashed) when ``value`` was hashed already; else remember it."""
        key = id(value)
        if key in self._memo:
            self.token(b"r", str(self._memo[key]).encode())
            return True
        self._memo[key] = len(self._memo)
        self._keep.append(value)
        return False

    def _composite(self, value: Any) -> None:
        if self.checkpoint and self._functions and not _stable(value):
            kind = type(value)
            self.token(b"T", f"{kind.__module__}.{kind.__qualname__}".encode())
            return
        if self._seen(value):
            return
        if len(self._path) > _MAX_DEPTH:
            self._blind(value, f"nested more than {_MAX_DEPTH} levels deep")
            return
        kind = type(value)
        if kind in (tuple, list) or (isinstance(value, tuple) and hasattr(value, "_fields")):
            self.token(b"t" if isinstance(value, tuple) else b"l", str(len(value)).encode())
            if kind not in (tuple, list):
                self.value(kind)
            for index, item in enumerate(value):
                self._named(f"[{index}]", item)
        elif kind in (set, frozenset):
            digests = []
            for item in value:
                sub = _Hasher(" > ".join(self._path), self.checkpoint)
                sub.value(item)
                digests.append(sub.hexdigest())
                self.blind.extend(spot for spot in sub.blind if spot not in self.blind)
            self.token(b"e", "".join(sorted(digests)).encode())
        elif kind is dict or (isinstance(value, dict) and library_version(kind.__module__)):
            self.token(b"D", f"{kind.__qualname__}:{len(value)}".encode())
            for item_key, item in value.items():
                self.value(item_key)
                self._named(f"[{item_key!r}]", item)
        elif kind is types.FunctionType:
            self._function(value)
        elif kind is types.CodeType:
            self._code(value)
        elif kind is types.MethodType:
            self.token(b"B")
            self._named("__func__", value.__func__)
            self._named("__self__", value.__self__)
        elif kind is functools.partial:
            self.token(b"p")
            self._named("func", value.func)
            self._named("args", value.args)
            self._named("keywords", value.keywords)
        elif kind is types.ModuleType:
            self.token(b"M", value.__name__.encode())
        elif isinstance(value, type):
            self._class(value)
        elif isinstance(value, (staticmethod, classmethod)):
            self.token(b"x")
            self._named("__func__", value.__func__)
        elif isinstance(value, np.ufunc):
            self.token(b"u", value.__name__.encode())
        elif isinstance(value, (types.BuiltinFunctionType, types.MethodWrapperType)):
            owner = value.__self__
            self.token(b"n", f"{getattr(value, '__module__', '')}.{value.__qualname__}".encode())
            if owner is not None and not isinstance(owner, types.ModuleType):
                self._named("__self__", owner)
        elif isinstance(
            value, (types.WrapperDescriptorType, types.MethodDescriptorType, types.GetSetDescriptorType)
        ):
            self.token(b"n", f"{value.__objclass__.__module__}.{value.__qualname__}".encode())
        elif hasattr(value, "py_func") and kind.__module__.startswith("numba"):
            self.token(b"J")  # a numba-compiled function: its Python source decides what it computes
            self._named("py_func", value.py_func)
        else:
            wrapped = getattr(value, "__wrapped__", None)  # functools.wraps-style wrappers (lru_cache, ...)
            if wrapped is not None:
                self._named("__wrapped__", wrapped)
            self._object(value)

    def _function(self, fn: types.FunctionType) -> None:
        self._functions += 1
        try:
            self._function_parts(fn)
        finally:
            self._functions -= 1

    def _function_parts(self, fn: types.FunctionType) -> None:
        code = fn.__code__
        version = library_version(fn.__module__)
        if version is not None and not code.co_filename.startswith("<"):
            # Library code by name; its closure and defaults may still hold the user's values.
            self.token(b"L", f"{fn.__module__}.{fn.__qualname__} {version}".encode())
        else:
            self.token(b"F", fn.__qualname__.encode())
            self._code(code)
            namespace = fn.__globals__
            for name in sorted(_global_names(code)):
                if name in namespace:
                    self.token(b"g", name.encode())
                    self._named(f"global {name!r}", namespace[name])
        self._named("defaults", fn.__defaults__)
        self._named("keyword defaults", fn.__kwdefaults__)
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            self.token(b"z", name.encode())
            try:
                contents = cell.cell_contents
            except ValueError:  # a cell not filled yet
                self.token(b"0")
                continue
            self._named(f"closure {name!r}", contents)

    def _code(self, code: types.CodeType) -> None:
        # Bytecode and names decide behaviour; line tables and file names do not.
        self.token(b"K", code.co_code)
        self.token(
            b"k",
            repr(
                (
                    code.co_argcount,
                    code.co_posonlyargcount,
                    code.co_kwonlyargcount,
                    code.co_flags,
                    code.co_names,
                    code.co_varnames,
                    code.co_freevars,
                    code.co_cellvars,
                )
            ).encode(),
        )
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self._code(const)
            else:
                self.value(const)

    def _class(self, cls: type) -> None:
        version = library_version(cls.__module__)
        self.token(b"C", f"{cls.__module__}.{cls.__qualname__}".encode())
        if version is not None:
            self.token(b"v", version.encode())
            return
        for base in cls.__bases__:
            self._named("base", base)
        for name in sorted(cls.__dict__):
            if name in _CLASS_NOISE:
                continue
            self.token(b"k", name.encode())
            self._named(f"{cls.__qualname__}.{name}", cls.__dict__[name])

    def _object(self, value: Any) -> None:
        looked, reduced = attempt(lambda: value.__reduce_ex__(4))
        if not looked:  # any failure means: cannot look inside
            self._blind(value, str(reduced) or type(reduced).__name__)
            return
        if isinstance(reduced, str):  # a module-level singleton, named
            self.token(b"o", f"{type(value).__module__}.{reduced}".encode())
            return
        if not isinstance(reduced, tuple) or len(reduced) < 2:
            self._blind(value, "unusual __reduce_ex__ result")
            return
        self.token(b"o", str(len(reduced)).encode())
        self._named("type", type(value))
        parts = list(reduced[1:])
        for index in (2, 3):  # list and dict items come as iterators
            if len(parts) > index and parts[index] is not None:
                parts[index] = list(parts[index])
        self._keep.append(parts)
        self._named("reduce", (reduced[0], *parts))


def _stable(value: Any) -> bool:
    """Whether a value a function captured goes into a checkpoint key by content: values that do not
    change while a pipeline runs (functions and classes by their code, tuples of such values)."""
    if type(value) is tuple or (isinstance(value, tuple) and hasattr(value, "_fields")):
        return True
    if hasattr(value, "py_func") or hasattr(value, "__wrapped__"):  # numba, functools wrappers
        return True
    return isinstance(
        value,
        (
            *_IMMUTABLE,
            frozenset,
            np.ndarray,
            Node,
            type,
            types.FunctionType,
            types.CodeType,
            types.MethodType,
            types.ModuleType,
            types.BuiltinFunctionType,
            types.MethodWrapperType,
            types.WrapperDescriptorType,
            types.MethodDescriptorType,
            functools.partial,
            staticmethod,
            classmethod,
            np.ufunc,
        ),
    )
