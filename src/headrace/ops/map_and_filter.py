"""A long run of serial ``map`` and ``filter`` stages run as one stage (the optimiser's
``map_and_filter_fusion``, tf.data's rewrite of that name).

Each stage of a pipeline pulls from the one below it, so a chain of 10,000 ``map``/``filter`` stages
nests 10,000 calls per element: Python's stack allows about 300 such stages. A run of at least
:data:`DEEP_RUN` consecutive serial maps and filters therefore becomes one stage that calls each
step in a loop. Shorter runs keep each filter its own stage (the rewrite would gain little there,
and a map directly before a ``batch`` stays free to run vectorised). Maps alone fuse at any length
(``MapNode.fused_with``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core.naming import fused_name
from ..core.node import (
    STEP,
    UNKNOWN_CARDINALITY,
    Context,
    Fields,
    Node,
    NodeIterator,
    note_stage,
    predicate_bool,
)
from ..core.results import CONVERTED, tf_result
from .support.elementwise import ElementwiseIterator, owed_inputs
from .support.shared_list import SharedList

#: Consecutive serial map/filter stages from which a run fuses into one stage: the stepping-stone
#: distance (``core.node.STEP``), so no walk of the pipeline nests deeper than one step of stages.
DEEP_RUN = STEP


def fused_run(node: Node, parent: Node) -> Node | None:
    """``node`` (a serial map or filter) and the run of serial maps and filters ending at ``parent``
    as one :class:`MapAndFilterNode`, when the run is long enough (:data:`DEEP_RUN`) or already
    fused; else None. Asked by ``MapNode.fused_with`` and ``FilterNode.fused_with``."""
    step = node.fusable_step()
    if step is None:
        return None
    if isinstance(parent, MapAndFilterNode):
        return parent.then(step)
    run: list[Node] = []
    below = parent
    while (len(run) < DEEP_RUN - 1 and len(below.parents) == 1) and below.fusable_step() is not None:
        run.append(below)
        below = below.parents[0]
    if len(run) < DEEP_RUN - 1 or not any(n.fusable_step()[0] for n in run):  # type: ignore[index]
        return None  # too short, or maps only (those fuse among themselves)
    # The whole run below ``parent`` joins, not only the first DEEP_RUN stages of it.
    while len(below.parents) == 1 and below.fusable_step() is not None:
        run.append(below)
        below = below.parents[0]
    steps = [n.fusable_step() for n in reversed(run)]
    return MapAndFilterNode(below, SharedList([*steps, step]))


def probe_run(node: Node) -> Node | None:
    """The run of serial maps and filters ending at ``node`` as one stage, for probing the element
    spec without recursing once per stage; None when ``node``'s parent is not part of a run."""
    run = [node]
    while len(run[-1].parents) == 1 and run[-1].parents[0].fusable_step() is not None:
        run.append(run[-1].parents[0])
    if len(run) == 1:
        return None
    return MapAndFilterNode(run[-1].parents[0], SharedList([n.fusable_step() for n in reversed(run)]))


class MapAndFilterNode(Node):
    """Serial maps and filters run as one stage: ``steps`` holds ``(is_filter, function, label)`` in
    order. Built only by the optimiser (and for probing element specs); see the module doc."""

    op = "map_and_filter"
    fields = Fields("steps")
    calls_user_function = True

    def __init__(self, parent: Node, steps: SharedList, name: str | None = None):
        super().__init__(parent)
        self.steps = steps
        self.name = name

    def then(self, step: tuple[bool, Callable, str]) -> MapAndFilterNode:
        """This run followed by one more step, over the same input."""
        return MapAndFilterNode(self.parents[0], self.steps.plus([step]))

    def describe_args(self) -> str:
        if self.name is not None:
            return self.name
        steps, n = self.steps, len(self.steps)
        if n <= 6:
            return fused_name([label for _, _, label in steps.items])
        # the names fused_name keeps, without a pass over 10,000 steps per stage the optimiser names
        return fused_name([*(steps[i][2] for i in range(3)), f"... {n - 5} more", steps[-2][2], steps[-1][2]])

    def cardinality(self) -> int:
        if any(is_filter for is_filter, _, _ in self.steps.items):
            return UNKNOWN_CARDINALITY
        return self.parents[0].cardinality()

    def iterator(self, ctx: Context) -> NodeIterator:
        return MapAndFilterIterator(self, self.parents[0].iterator(ctx))


class MapAndFilterIterator(ElementwiseIterator[MapAndFilterNode]):
    def __init__(self, node: MapAndFilterNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.steps = tuple((is_filter, fn) for is_filter, fn, _ in node.steps.items)

    def compute(self, inputs: list, first: int) -> list:
        out: list = []
        steps = self.steps
        for offset, element in enumerate(inputs):
            value = element
            try:
                for is_filter, fn in steps:
                    result = fn(*value) if type(value) is tuple else fn(value)
                    if not is_filter:
                        # as the unfused map would have yielded it (a list is a tuple, str is bytes)
                        value = tf_result(result) if type(result) in CONVERTED else result
                        continue
                    kind = type(result)
                    keep = result if kind is bool or kind is np.bool_ else None
                    if keep is None:
                        keep = predicate_bool(result, self.name, first + offset)
                    if not keep:
                        break
                else:
                    out.append(value)
            except Exception as exc:
                # The element that failed is the error; the inputs after it are owed, not lost.
                note_stage(exc, self.name, first + offset)
                return self.hold(out, exc, first + offset, element, owed_inputs(inputs, first, offset + 1))
        return out
