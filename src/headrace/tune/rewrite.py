"""Static rewrites of a pipeline, applied when iteration starts and shown by ``Dataset.explain()``.

Each rewrite keeps the elements a pipeline yields (values and order) and only changes how they are
computed; ``Options.experimental_optimization`` turns each one off.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.naming import describe
from ..core.node import AUTOTUNE, Node, derived
from ..core.options import Options
from ..core.results import CONVERTED, tf_result
from ..ops.batch import BatchNode
from ..ops.map import MapNode
from ..ops.prefetch import PrefetchNode
from ..ops.repeat import RepeatNode
from ..ops.shard import ShardNode
from ..ops.skip import SkipNode
from ..ops.take import TakeNode
from ..runtime import choose

_BATCH_SAFE = "__headrace_batch_safe__"
_PLURAL = {"thread": "threads", "process": "processes"}


def batch_safe(fn: Callable) -> Callable:
    """Declare that ``fn`` gives the same result on a batch as on each element, stacked (it is
    vectorised), so ``map(fn).batch(n)`` may run as ``batch(n).map(fn)``: one call per batch.

    >>> import numpy as np, headrace as hr
    >>> @hr.batch_safe
    ... def scale(x):
    ...     return x * 2
    >>> ds = hr.Dataset.range(4).map(scale).batch(2)
    >>> [b.tolist() for b in ds]
    [[0, 2], [4, 6]]
    >>> print(ds.explain().splitlines()[-1])
    - map(scale at <doctest headrace.tune.rewrite.batch_safe[1]>:1) moved after batch(2, drop_remainder=False): one call per batch (declared batch_safe)
    """
    setattr(fn, _BATCH_SAFE, True)
    return fn


def is_batch_safe(fn: Callable) -> bool:
    return bool(getattr(fn, _BATCH_SAFE, False))


class FusedFunction:
    """``second(first(x))`` with tf.data's unpacking of tuples at each step; picklable."""

    def __init__(self, first: Callable, second: Callable):
        self.first, self.second = first, second

    def __call__(self, *args: Any) -> Any:
        middle = self.first(*args)
        if type(middle) in CONVERTED:  # the unfused map would have yielded tf_result(middle)
            middle = tf_result(middle)
        return self.second(*middle) if type(middle) is tuple else self.second(middle)

    def __repr__(self) -> str:
        return f"{describe(self.first)} -> {describe(self.second)}"


@dataclass
class Plan:
    logical: Node
    optimised: Node
    applied: list[str] = field(default_factory=list)


def _is_noop(node: Node) -> bool:
    if isinstance(node, TakeNode):
        return node.count == -1
    if isinstance(node, SkipNode):
        return node.count == 0
    if isinstance(node, RepeatNode):
        return node.count == 1
    if isinstance(node, PrefetchNode):
        return node.buffer_size == 0
    if isinstance(node, ShardNode):
        return node.num_shards == 1
    return False


def _serial_unseeded(node: Node) -> bool:
    return (
        isinstance(node, MapNode)
        and node.num_parallel_calls is None
        and node.executor is None
        and node.seed is None
    )


def _has_parallel_stage(node: Node) -> bool:
    return any(getattr(n, "num_parallel_calls", None) is not None for n in node.walk())


def optimise(root: Node, options: Options) -> Plan:
    """Rewrite the pipeline under ``root`` as ``options`` allow; the result is cached on ``root``."""
    settings = options.experimental_optimization
    key = repr(sorted(settings.to_dict().items()))
    cache = derived(root).setdefault("optimized", {})
    if key in cache:
        return cache[key]
    applied: list[str] = []
    rewritten: dict[int, Node] = {}

    def visit(node: Node) -> Node:
        if id(node) in rewritten:
            return rewritten[id(node)]
        parents = [visit(p) for p in node.parents]
        out = node if all(a is b for a, b in zip(parents, node.parents)) else node.with_parents(*parents)
        if settings.noop_elimination and _is_noop(out):
            applied.append(f"- {node!r} removed: it changes nothing")
            out = parents[0]
        elif settings.map_fusion and _serial_unseeded(out) and _serial_unseeded(parents[0]):
            inner = parents[0]
            name = f"{inner.describe_args()} -> {out.describe_args()}"
            fused = MapNode(inner.parents[0], FusedFunction(inner.map_func, out.map_func), name=name)
            applied.append(f"- {inner!r} and {node!r} fused into one stage: one call of overhead per element")
            out = fused
        elif (
            settings.map_batch_vectorization
            and isinstance(out, BatchNode)
            and isinstance(parents[0], MapNode)
            and parents[0].seed is None
            and is_batch_safe(parents[0].map_func)
        ):
            inner = parents[0]
            batched = out.with_parents(inner.parents[0])
            out = inner.with_parents(batched)
            applied.append(f"- {inner!r} moved after {node!r}: one call per batch (declared batch_safe)")
        rewritten[id(node)] = out
        return out

    optimised = visit(root)
    if (
        settings.inject_prefetch
        and not isinstance(optimised, PrefetchNode)
        and _has_parallel_stage(optimised)
    ):
        optimised = PrefetchNode(optimised, AUTOTUNE)
        applied.append(
            "- prefetch(AUTOTUNE) added at the end: the pipeline's parallel stages overlap the training step"
        )
    result = cache[key] = Plan(root, optimised, applied)
    return result


def explain(root: Node, options: Options) -> str:
    """Logical plan, optimised plan and the rewrites between them."""
    plan = optimise(root, options)

    def lines(node: Node) -> list[str]:
        out: list[str] = []

        def walk(n: Node, depth: int) -> None:
            for parent in n.parents:
                walk(parent, depth + 1)
            out.append("  " * depth + repr(n))

        walk(node, 0)
        return out

    text = ["logical plan (input first):", *("  " + line for line in lines(plan.logical))]
    text += ["optimised plan (input first):", *("  " + line for line in lines(plan.optimised))]
    text += ["rewrites:", *(plan.applied or ["- none"])]
    executors = executor_lines(plan.optimised)
    if executors:
        text += ["executors:", *executors]
    return "\n".join(text)


def executor_lines(root: Node) -> list[str]:
    """Where each parallel map runs and why: given by ``executor=``, or measured at the pipeline's
    first iteration and kept for every later one (see :mod:`headrace.runtime.choose`)."""
    out = []
    for node in root.walk():
        if not isinstance(node, MapNode) or node.num_parallel_calls is None:
            continue
        if node.executor is not None:
            out.append(f"- {node!r}: {_PLURAL[node.executor]} (executor={node.executor!r} was given)")
            continue
        choice = choose.remembered(node)
        if choice is None:
            out.append(
                f"- {node!r}: threads or processes, chosen by measuring map_func at the first iteration "
                "(pass executor= to force one)"
            )
        else:
            out.append(f"- {node!r}: {_PLURAL[choice.kind]}, chosen at the first iteration: {choice.reason}")
    return out
