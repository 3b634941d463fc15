"""Static rewrites of a pipeline, applied when iteration starts and shown by ``Dataset.explain()``.

Each rewrite keeps the elements a pipeline yields (values and order) and only changes how they are
computed; ``Options.experimental_optimization`` turns each one off.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.node import Node, derived, post_order, session_of, tree_lines
from ..core.options import Options
from ..core.run import Session

_PLURAL = {"thread": "threads", "process": "processes", "inline": "inline, in the consumer's thread"}


@dataclass
class Plan:
    logical: Node
    optimised: Node
    applied: list[str] = field(default_factory=list)
    staying: list[str] = field(default_factory=list)  # maps before a batch that stay per element, and why


def _has_parallel_stage(node: Node) -> bool:
    return any(getattr(n, "num_parallel_calls", None) is not None for n in node.walk())


def optimise(root: Node, options: Options, prefetch: Callable[[Node], Node] | None = None) -> Plan:
    """Rewrite the pipeline under ``root`` as ``options`` allow; the result is cached on ``root``.

    The optimiser knows no op: each stage says whether it is a no-op, fuses with its parent or lets
    its parent move after it (``Node.is_noop``, ``fused_with``, ``swapped_with``), and ``prefetch``
    (given by the facade) builds the stage that ``inject_prefetch`` adds at the end.
    """
    settings = options.experimental_optimization
    key = (repr(sorted(settings.to_dict().items())), prefetch is None)
    cache = derived(root).setdefault("optimized", {})
    if key in cache:
        return cache[key]
    applied: list[str] = []
    staying: list[str] = []
    rewritten: dict[int, Node] = {}

    def visit(node: Node) -> Node:  # its parents are visited already (post order)
        parents = [rewritten[id(p)] for p in node.parents]
        out = node if all(a is b for a, b in zip(parents, node.parents)) else node.with_parents(*parents)
        if settings.noop_elimination and out.is_noop():
            applied.append(f"- {node!r} removed: it changes nothing")
            out = parents[0]
        elif settings.map_fusion and len(parents) == 1 and (fused := out.fused_with(parents[0])) is not None:
            applied.append(
                f"- {parents[0]!r} and {node!r} fused into one stage: one call of overhead per element"
            )
            out = fused
        elif (
            settings.map_batch_vectorization
            and len(parents) == 1
            and (swapped := out.swapped_with(parents[0])) is not None
        ):
            applied.append(f"- {parents[0]!r} moved after {node!r}: one call per batch (declared batch_safe)")
            out = swapped
        elif settings.map_vectorization and len(parents) == 1:
            vectorized = out.vectorized_with(parents[0])
            if isinstance(vectorized, str):
                staying.append(vectorized)
            elif vectorized is not None:
                applied.append(
                    getattr(vectorized, "rewrite_note", None)
                    or f"- {parents[0]!r} and {node!r} may run vectorised: batch, then one traced call of the "
                    "function per batch (see vectorised maps)"
                )
                out = vectorized
        rewritten[id(node)] = out
        return out

    for node in post_order(root):  # iterative: a pipeline may be 10,000 stages deep
        visit(node)
    optimised = rewritten[id(root)]
    if (
        settings.inject_prefetch
        and prefetch is not None
        and optimised.op != "prefetch"
        and _has_parallel_stage(optimised)
    ):
        optimised = prefetch(optimised)
        applied.append(
            "- prefetch(AUTOTUNE) added at the end: the pipeline's parallel stages overlap the training step"
        )
    result = cache[key] = Plan(root, optimised, applied, staying)
    return result


def explain(root: Node, options: Options, prefetch: Callable[[Node], Node] | None = None) -> str:
    """Logical plan, optimised plan and the rewrites between them (``prefetch`` as in :func:`optimise`)."""
    plan = optimise(root, options, prefetch)

    lines = tree_lines
    text = ["logical plan (input first):", *("  " + line for line in lines(plan.logical))]
    text += ["optimised plan (input first):", *("  " + line for line in lines(plan.optimised))]
    text += ["rewrites:", *(plan.applied or ["- none"])]
    vectorized = [line for node in plan.optimised.walk() if (line := node.explain_line()) is not None]
    vectorized += plan.staying
    if vectorized:
        text += ["vectorised maps:", *vectorized]
    executors = executor_lines(plan.optimised, session_of(root))
    if executors:
        text += ["executors:", *executors]
    return "\n".join(text)


def executor_lines(root: Node, session: Session) -> list[str]:
    """Where each parallel map runs and why: given by ``executor=``, or measured at the pipeline's
    first iteration and kept in its ``session`` for every later one (see :mod:`headrace.runtime.choose`)."""
    out = []
    vectorised = {id(m) for n in root.walk() if (m := n.vectorises()) is not None}
    for node in root.walk():
        if not node.chooses_executor or getattr(node, "num_parallel_calls", None) is None:
            continue
        if id(node) in vectorised:
            out.append(
                f"- {node!r}: vectorised (one traced call per batch; with num_parallel_calls >= 4, "
                "several batches at once, each in a thread: see vectorised maps)"
            )
            continue
        given = getattr(node, "executor", None)
        if given is not None:
            out.append(f"- {node!r}: {_PLURAL[given]} (executor={given!r} was given)")
            continue
        choice = session.choice(node)
        if choice is None:
            out.append(
                f"- {node!r}: threads or processes, chosen by measuring map_func at the first iteration "
                "(pass executor= to force one)"
            )
        else:
            out.append(f"- {node!r}: {_PLURAL[choice.kind]}, chosen at the first iteration: {choice.reason}")
    return out
