"""``Dataset.rejection_resample``: drop elements at random so the classes follow a target distribution."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.args import integer, is_seed
from ..core.closures import freeze
from ..core.errors import InvalidArgumentError, check
from ..core.naming import describe
from ..core.node import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Context,
    Fields,
    Node,
    NodeIterator,
    call_noted,
    fresh_seed,
    resolve_seed,
)
from ..core.state import Child, Field, Int, StateFields


def _distribution(value: Any, argument: str) -> np.ndarray:
    try:
        dist = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        dist = None
    if dist is None or dist.ndim != 1 or dist.size == 0 or (dist < 0).any() or not dist.sum() > 0:
        raise InvalidArgumentError(
            f"{argument}={value!r} is not allowed: a non-empty list of class probabilities >= 0 (not all 0)"
        )
    return dist / dist.sum()


class RejectionResampleNode(Node):
    """``rejection_resample(class_func, target_dist, initial_dist=None, seed=None)``.

    Yields ``(class, element)`` pairs (class as int32, as tf.data) keeping an element of class ``c``
    with probability ``r[c] / max(r)``, where ``r = target_dist / initial_dist``; so the kept classes
    follow ``target_dist``. Without ``initial_dist`` it is estimated from the classes seen so far
    (counts start at 1 per class). Each element's draw comes from (seed, iteration, position), so
    checkpoints hold a position and the counts. tf.data also mixes in unfiltered elements to keep
    more data; the distribution is the same, the particular elements kept differ.
    """

    op = "rejection_resample"
    fields = Fields("class_func", "target", "initial", "seed", resources=("fallback_seed",))

    def __init__(
        self,
        parent: Node,
        class_func: Callable,
        target_dist: Any,
        initial_dist: Any = None,
        seed: int | None = None,
        name: str | None = None,
    ):
        if not callable(class_func):
            raise InvalidArgumentError(
                f"class_func={class_func!r} is not callable: pass a function returning a class id"
            )
        seed = integer(seed)
        check(
            is_seed(seed),
            "seed",
            seed,
            "None or an int in [0, 2**63)",
        )
        target = _distribution(target_dist, "target_dist")
        initial = None if initial_dist is None else _distribution(initial_dist, "initial_dist")
        if initial is not None and initial.shape != target.shape:
            raise InvalidArgumentError(
                f"initial_dist has {initial.size} classes but target_dist has {target.size}; give one "
                "probability per class in both"
            )
        if initial is not None and ((initial == 0) & (target > 0)).any():
            raise InvalidArgumentError(
                "initial_dist is 0 for a class that target_dist wants: it can never be drawn"
            )
        super().__init__(parent)
        self.class_func = freeze(class_func)
        self.target = target
        self.initial = initial
        self.seed = seed
        self.fallback_seed = fresh_seed()
        self.name = name

    def describe_args(self) -> str:
        return f"{self.name or describe(self.class_func)}, target_dist={self.target.round(6).tolist()}"

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        return n if n in (0, INFINITE_CARDINALITY) else UNKNOWN_CARDINALITY

    def iterator(self, ctx: Context) -> RejectionResampleIterator:
        seed = resolve_seed(self.seed, ctx, self, self.fallback_seed)
        return RejectionResampleIterator(self, self.parents[0].iterator(ctx), seed, ctx.iteration_of(self))


class Counts(Field):
    """Elements seen per class, each from 1 (counts start at 1) to ``position + 1``."""

    def save(self, stage: Any) -> list:
        return stage.counts.tolist()

    def load(self, fields: StateFields, stage: Any, values: dict) -> np.ndarray:
        high = values["position"] + 1
        counts = [
            fields.check_int(c, f"{self.name}[{i}]", low=1, high=high)
            for i, c in enumerate(fields.list(self.name, length=stage.counts.size))
        ]
        return np.asarray(counts, dtype=np.int64).reshape(stage.counts.shape)


class RejectionResampleIterator(NodeIterator[RejectionResampleNode]):
    state_fields = (Child("parent"), Int("position"), Counts("counts"), Int("iteration"))

    def __init__(self, node: RejectionResampleNode, parent: NodeIterator, seed: int, iteration: int):
        super().__init__(node, parent)
        self.parent = parent
        self.seed, self.iteration = seed, iteration
        self.position = 0
        self.counts = np.ones(node.target.size, dtype=np.int64)

    def _class(self, element: Any) -> int:
        label = integer(call_noted(self.node.class_func, element, self.name, self.position))
        if not isinstance(label, int) or isinstance(label, bool) or not 0 <= label < self.node.target.size:
            raise InvalidArgumentError(
                f"{self.name}: class_func returned {label!r} for input element {self.position}; it must return "
                f"a class id in [0, {self.node.target.size})"
            )
        return label

    def __next__(self) -> Any:
        node = self.node
        while True:
            element = next(self.parent)
            label = self._class(element)
            self.counts[label] += 1
            initial = node.initial if node.initial is not None else self.counts / self.counts.sum()
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(initial > 0, node.target / initial, 0.0)
            accept = ratio[label] / ratio.max()
            draw = np.random.default_rng([self.seed, self.iteration, self.position]).random()
            self.position += 1
            if draw < accept:
                self.produced += 1
                return np.int32(label), element

    def reset(self) -> None:
        self.parent.reset()
        self.position = 0
        self.iteration += 1
        self.counts = np.ones(self.node.target.size, dtype=np.int64)
