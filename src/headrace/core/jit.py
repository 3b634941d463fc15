"""headrace's one way to compile a kernel: ``numba.njit`` with a cache that never crashes, is shared
by every process and can be filled before the first run.

numba's own ``cache=True`` has three traps for a library:

- it raises ``RuntimeError: cannot cache function ...: no locator available`` when neither the package
  folder nor the home folder is writable (a read-only container image);
- N processes starting together each compile every kernel (about 30 s of CPU each on 2 cores);
- the cache lives beside the sources, so a fresh ``pip install`` compiles everything on first use.

Here, compiled kernels are looked up first in the package's own ``_kernel_cache`` folder (filled at
build time by ``python -m headrace.warmup``, see ``setup.py``, or by ``make``), then in one writable
cache folder: ``$NUMBA_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/headrace`` (``~/.cache``), else the
temporary folder. Compiling takes an inter-process file lock in that folder, so a second process waits
for the first and then loads its result. With nothing writable, kernels compile in memory, with one
warning. This module imports numba only when a kernel module is imported (numba takes ~0.4 s).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from .errors import attempt

#: The package's prebuilt cache (``python -m headrace.warmup`` fills it).
PACKAGED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_kernel_cache")

_writable: str | None | bool = False  # False: not looked up yet; None: nothing writable
_warned = False
_lock = threading.RLock()
_depth = threading.local()


def _try_dir(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def writable_dir() -> str | None:
    """The folder compiled kernels are saved to and the compile lock lives in (None: nowhere)."""
    global _writable
    if _writable is False:
        candidates = []
        if os.environ.get("NUMBA_CACHE_DIR"):
            candidates.append(os.path.join(os.environ["NUMBA_CACHE_DIR"], "headrace"))
        else:
            candidates.append(PACKAGED)
            home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            candidates.append(os.path.join(home, "headrace", "kernels"))
            uid = os.getuid() if hasattr(os, "getuid") else 0
            candidates.append(os.path.join(tempfile.gettempdir(), f"headrace-kernels-{uid}"))
        _writable = next((path for path in candidates if _try_dir(path)), None)
    return _writable if isinstance(_writable, str) else None


def read_dirs() -> list[str]:
    """Folders searched for a compiled kernel, in order."""
    found = []
    # A NUMBA_CACHE_DIR (the fuzz runs' bounds-checked builds) or bounds checks on: never the
    # packaged builds, whose cache keys do not record compile flags.
    if not os.environ.get("NUMBA_CACHE_DIR") and not os.environ.get("NUMBA_BOUNDSCHECK"):
        found.append(PACKAGED)
    target = writable_dir()
    if target is not None and target not in found:
        found.append(target)
    return found


@contextlib.contextmanager
def compile_lock() -> Iterator[None]:
    """Held while compiling: one process (and thread) compiles a kernel, the others then load it.

    Re-entrant, because compiling one kernel compiles the kernels it calls."""
    with _lock:
        depth = getattr(_depth, "value", 0)
        _depth.value = depth + 1
        handle = None
        try:
            target = writable_dir()
            if depth == 0 and target is not None:
                try:
                    import fcntl  # noqa: PLC0415 (POSIX only; elsewhere processes may compile twice)

                    handle = open(os.path.join(target, ".compile.lock"), "a+b")  # noqa: SIM115
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                except (ImportError, OSError):
                    if handle is not None:
                        handle.close()
                    handle = None
            yield
        finally:
            if handle is not None:
                handle.close()  # releases the flock
            _depth.value = depth


def _warn_uncached() -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(
            "headrace cannot save its compiled kernels (no writable cache folder: the package folder, "
            "~/.cache and the temporary folder are all read-only), so every process compiles them "
            "again; set NUMBA_CACHE_DIR to a writable folder, or run `python -m headrace.warmup` "
            "where the package folder is writable",
            RuntimeWarning,
            stacklevel=3,
        )


def _make_cache(py_func: Callable) -> Any:
    from numba.core import caching  # noqa: PLC0415

    class Locator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        def __init__(self, path: str):
            self._py_file = py_func.__code__.co_filename
            self._lineno = py_func.__code__.co_firstlineno
            self._path = path

        def get_cache_path(self) -> str:
            return self._path

        def ensure_cache_path(self) -> None:
            os.makedirs(self._path, exist_ok=True)

    class Impl(caching.CompileResultCacheImpl):
        def __init__(self, func: Callable):  # no numba locator search: the folders are ours
            self._lineno = func.__code__.co_firstlineno
            self._locator = Locator(writable_dir() or PACKAGED)  # numba's own file: unused by Cache below
            module = func.__module__.removeprefix("headrace.")
            self._filename_base = self.get_filename_base(f"{module}.{func.__qualname__}", sys.abiflags)

    class Cache(caching.FunctionCache):
        _impl_class = Impl

        def __init__(self, func: Callable):
            super().__init__(func)
            stamp = self._impl.locator.get_source_stamp()
            base = self._impl.filename_base
            self._files = [caching.IndexDataCacheFile(path, base, stamp) for path in read_dirs()]
            target = writable_dir()
            self._target = caching.IndexDataCacheFile(target, base, stamp) if target else None

        def _load_overload(self, sig: Any, target_context: Any) -> Any:
            if not self._enabled:
                return None
            key = self._index_key(sig, target_context.codegen())
            for cache_file in self._files:
                loaded, data = attempt(cache_file.load, key)  # a damaged or foreign cache file: compile
                if loaded and data is not None:
                    return self._impl.rebuild(target_context, data)
            return None

        def _save_overload(self, sig: Any, data: Any) -> None:
            if self._target is None:
                _warn_uncached()
                return
            if not self._impl.check_cachable(data):
                return
            key = self._index_key(sig, data.codegen)
            try:
                self._target.save(key, self._impl.reduce(data))
            except OSError:
                _warn_uncached()

    return Cache(py_func)


def _attach(dispatcher: Any) -> Any:
    if not hasattr(dispatcher, "py_func"):  # NUMBA_DISABLE_JIT=1: a plain Python function
        return dispatcher
    dispatcher._cache = _make_cache(dispatcher.py_func)
    compile_ = dispatcher.compile

    def compile(sig: Any) -> Any:
        with compile_lock():
            return compile_(sig)

    dispatcher.compile = compile
    return dispatcher


def njit(*args: Any, **kwargs: Any) -> Any:
    """``numba.njit`` with headrace's cache (``cache=True`` is implied; pass ``cache=False`` to opt out)."""
    import numba  # noqa: PLC0415

    cache = kwargs.pop("cache", True)
    if args and callable(args[0]):
        dispatcher = numba.njit(**kwargs)(args[0])
        return _attach(dispatcher) if cache else dispatcher

    def decorate(fn: Callable) -> Any:
        dispatcher = numba.njit(*args, **kwargs)(fn)
        return _attach(dispatcher) if cache else dispatcher

    return decorate
