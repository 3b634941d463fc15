"""The hook through which ops reach the vectorising tracer (``ops/vectorize.py``).

An op decorated with :func:`traceable` runs as written, unless a trace is being recorded in this
thread: then the call goes to the tracer, which records it with the op's batching rule (or gives up
on vectorising the function). Outside a trace the cost is one context-variable read per call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar


class Recorder(Protocol):
    def call(self, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any: ...


TRACING: ContextVar[Recorder | None] = ContextVar("headrace_tracing", default=None)

#: op name -> ``rule(node, parent)``: the stage and its parent as one stage that may run vectorised,
#: or None. ``ops/vectorize.py`` registers batch's (``map(f).batch(n)``); ``Node.vectorized_with``
#: reads it, so the op modules never import the tracer (and the tracer imports them).
VECTORIZERS: dict[str, Callable[[Any, Any], Any]] = {}

F = TypeVar("F", bound=Callable)


def traceable(name: str) -> Callable[[F], F]:
    """Route calls of the decorated op to the recorder while a trace is recorded (``name`` is the
    key of its batching rule, e.g. ``"cast"``, ``"io.parse_single_example"``)."""

    def decorate(fn: F) -> F:
        get = TRACING.get

        @functools.wraps(fn)
        def op(*args: Any, **kwargs: Any) -> Any:
            recorder = get()
            if recorder is None:
                return fn(*args, **kwargs)
            return recorder.call(name, fn, args, kwargs)

        op.__traced_op__ = name  # type: ignore[attr-defined]
        return op  # type: ignore[return-value]

    return decorate
