"""``Dataset.reduce``: fold every element into one value (runs the pipeline; not a stage)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.errors import InvalidArgumentError
from ..core.naming import describe
from ..core.node import Context, Node, call_noted, session_of
from ..core.options import Options
from .support.user_state import as_state, check_new_state

_CHUNK = 256  # elements pulled per call: the per-call cost is paid once per chunk


def reduce(node: Node, initial_state: Any, reduce_func: Callable, options: Options | None = None) -> Any:
    """Run the pipeline of ``node`` once and return ``reduce_func(...reduce_func(initial_state, e0)..., en)``.

    ``reduce_func(state, element)`` gets the element as one argument; the state keeps the structure
    and dtypes of ``initial_state`` (Python ints become int64, floats float32, as in tf.data).
    """
    if not callable(reduce_func):
        raise InvalidArgumentError(
            f"reduce_func={reduce_func!r} is not callable: pass a function (state, element) -> new state"
        )
    state = as_state(initial_state, "initial_state")
    stage = f"reduce({describe(reduce_func)})"
    iterator = node.iterator(Context(options, session=session_of(node)))
    position = 0
    try:
        while True:
            try:
                chunk = iterator.next_chunk(_CHUNK)
            except StopIteration:
                return state
            for element in chunk:
                new = call_noted(reduce_func, (state, element), stage, position)
                state = check_new_state(state, new, stage, position)
                position += 1
    finally:
        iterator.close()
