"""tf.autograph: functions run as Python here, so there is nothing to convert; these accept the calls."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any


def to_graph(
    entity: Callable, recursive: bool = True, experimental_optional_features: Any = None
) -> Callable:
    return entity


def do_not_convert(func: Callable | None = None) -> Any:
    return func if func is not None else (lambda f: f)


def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    return None


def _set_loop_options(
    parallel_iterations: Any = None,
    swap_memory: Any = None,
    maximum_iterations: Any = None,
    shape_invariants: Any = None,
) -> None:
    """Loop options steer graph while-loops; a Python loop needs none."""
    return None


experimental = types.SimpleNamespace(
    do_not_convert=do_not_convert, set_loop_options=_set_loop_options, Feature=None
)

__all__ = ["do_not_convert", "experimental", "set_verbosity", "to_graph"]
