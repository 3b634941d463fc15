"""Readable names for user functions: ``parse at prep.py:12`` instead of ``<function ...>``."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable

# " at prep.py:12", " at <doctest x[1]>:1", " at <string>:3": where describe() says a function is.
_LOCATION = re.compile(r" at (?:<[^>]*>|[^\s,()\[\]<>]+):\d+")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # src/headrace/


def describe(fn: Callable | None) -> str:
    """Name a callable by its name and where it is defined.

    >>> def double(x):
    ...     return 2 * x
    >>> describe(double).startswith("double at ")
    True
    >>> import headrace
    >>> describe(headrace.TFRecordDataset)
    'TFRecordDataset'
    """
    if fn is None:
        return "None"
    if isinstance(fn, functools.partial):
        return f"partial({describe(fn.func)})"
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if name is None:
        name = type(fn).__qualname__
        code = getattr(type(fn).__dict__.get("__call__"), "__code__", None)
    name = name.rsplit("<locals>.", 1)[-1]  # a closure's qualname is noise; file:line says where it is
    if code is None or code.co_filename.startswith(_PACKAGE):
        return name  # headrace's own (interleave(TFRecordDataset)): its file:line tells the user nothing
    return f"{name} at {os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def without_locations(text: str) -> str:
    """``text`` (a stage name or a pipeline signature) without the file:line of its functions, for
    keys that must survive an edit elsewhere in the file: derived seeds, a frozen tuned config.

    >>> without_locations("map(parse at prep.py:12)<-[range(0, 3, 1)]")
    'map(parse)<-[range(0, 3, 1)]'
    """
    return _LOCATION.sub("", text)


def fused_name(names: list[str]) -> str:
    """``a -> b -> c``; a long chain is shortened in the middle (``a -> b -> c -> ... 7 more -> y ->
    z``) so stage names stay short however many maps fuse; ``names`` may hold such a shortened name's
    pieces."""
    count = sum(int(n.split()[1]) if _MORE.fullmatch(n) else 1 for n in names)
    if count > 6:
        kept = [n for n in names if not _MORE.fullmatch(n)]
        names = [*kept[:3], f"... {count - 5} more", *kept[-2:]]
    return " -> ".join(names)


_MORE = re.compile(r"\.\.\. \d+ more")
