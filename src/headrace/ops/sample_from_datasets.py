"""``Dataset.sample_from_datasets``: take each element from a randomly chosen dataset."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.args import boolean, integer, is_seed
from ..core.errors import InvalidArgumentError, check
from ..core.node import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Context,
    Fields,
    Node,
    NodeIterator,
    derived,
    fresh_seed,
    known_specs,
    resolve_seed,
)
from ..core.spec import common_spec
from ..core.state import Bool, Children, Field, Int, Owed, Seed, StateFields
from .support.choosing import ChoosingIterator
from .support.state_fields import Bools, per_dataset

_BLOCK = 256  # uniforms drawn per numpy call


def check_weights(weights: Any, num_datasets: int) -> list[float]:
    """``weights`` as a list of floats, one per dataset; raises naming what is wrong.

    >>> check_weights([1, 3], 2)
    [1.0, 3.0]
    """
    try:
        values = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"weights={weights!r} is not allowed: a list of {num_datasets} non-negative numbers, or a dataset"
        ) from None
    if values.shape != (num_datasets,):
        raise InvalidArgumentError(
            f"weights has shape {values.shape} but there are {num_datasets} datasets: give one weight each"
        )
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise InvalidArgumentError(
            f"weights={values.tolist()} is not allowed: weights must be finite and >= 0"
        )
    return values.tolist()


def _names(count: int) -> list[str]:
    return [f"datasets[{i}]" for i in range(count)]


class SampleFromDatasetsNode(Node):
    """``sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
    rerandomize_each_iteration=None)``.

    Each output element comes from ``datasets[i]`` with probability ``weights[i] / sum(weights)``
    (uniform without weights). ``weights`` may also be a dataset of weight vectors, one per draw.
    Drawing an exhausted dataset ends the output when ``stop_on_empty_dataset``, else the draw is
    repeated (as in tf.data), so the others keep their relative weights; the output ends when every
    dataset with a positive weight is exhausted.

    Draws come from a seeded PCG64 stream that can jump ahead, so a state is only positions and a
    draw count. Without ``rerandomize_each_iteration`` every epoch and every ``iter()`` repeat the
    same choices (tf.data's default); with it each gets new ones, reproducibly when seeded.
    """

    op = "sample_from_datasets"
    fields = Fields(
        "weights_dataset",
        "num_datasets",
        "seed",
        "stop_on_empty_dataset",
        "rerandomize_each_iteration",
        "weights",
        resources=("fallback_seed",),
    )
    reorders = True

    def __init__(
        self,
        datasets: list[Node],
        weights: list[float] | Node | None = None,
        seed: int | None = None,
        stop_on_empty_dataset: bool = False,
        rerandomize_each_iteration: bool | None = None,
        name: str | None = None,
    ):
        seed, stop_on_empty_dataset = integer(seed), boolean(stop_on_empty_dataset)
        if not datasets:
            raise InvalidArgumentError("datasets=[] is not allowed: pass a non-empty list of datasets")
        check(
            is_seed(seed),
            "seed",
            seed,
            "None or an int in [0, 2**63)",
        )
        check(
            isinstance(stop_on_empty_dataset, bool),
            "stop_on_empty_dataset",
            stop_on_empty_dataset,
            "True or False",
        )
        check(
            rerandomize_each_iteration is None or isinstance(rerandomize_each_iteration, bool),
            "rerandomize_each_iteration",
            rerandomize_each_iteration,
            "None, True or False",
        )
        self.weights_dataset = isinstance(weights, Node)
        if isinstance(weights, Node):
            super().__init__(*datasets, weights)
            self.weights: list[float] | None = None
        else:
            super().__init__(*datasets)
            self.weights = [1.0] * len(datasets) if weights is None else check_weights(weights, len(datasets))
        self.num_datasets = len(datasets)
        self.seed = seed
        self.stop_on_empty_dataset = stop_on_empty_dataset
        self.rerandomize_each_iteration = bool(rerandomize_each_iteration)
        self.fallback_seed = fresh_seed()
        self.name = name
        specs = known_specs(datasets)
        if specs is not None:
            derived(self)["element_spec"] = common_spec(specs, _names(len(specs)), self.op)

    @property
    def datasets(self) -> tuple[Node, ...]:
        return self.parents[: self.num_datasets]

    def describe_args(self) -> str:
        weights = "a dataset" if self.weights is None else [round(w, 6) for w in self.weights]
        return (
            f"{self.num_datasets} datasets, weights={weights}, seed={self.seed}, "
            f"stop_on_empty_dataset={self.stop_on_empty_dataset}"
        )

    def compute_element_spec(self) -> Any:
        return common_spec([d.element_spec for d in self.datasets], _names(self.num_datasets), self.op)

    def cardinality(self) -> int:
        counts = [d.cardinality() for d in self.datasets]
        if self.weights is None:  # a weights dataset
            draws = self.parents[-1].cardinality()
            if draws == 0:
                return 0
            # Every weight vector gives one element while no dataset can run out.
            return draws if all(n == INFINITE_CARDINALITY for n in counts) else UNKNOWN_CARDINALITY
        counts = [n for n, w in zip(counts, self.weights) if w > 0]
        if not counts:
            return 0
        if all(n == INFINITE_CARDINALITY for n in counts):
            return INFINITE_CARDINALITY
        if self.stop_on_empty_dataset:
            return UNKNOWN_CARDINALITY
        if INFINITE_CARDINALITY in counts:
            return INFINITE_CARDINALITY
        if UNKNOWN_CARDINALITY in counts:
            return UNKNOWN_CARDINALITY
        return sum(counts)  # every element of every dataset comes out once

    def iterator(self, ctx: Context) -> SampleFromDatasetsIterator:
        iteration = ctx.iteration_of(self) if self.rerandomize_each_iteration else 0
        weights = self.parents[-1].iterator(ctx) if self.weights_dataset else None
        return SampleFromDatasetsIterator(
            self,
            [d.iterator(ctx) for d in self.datasets],
            weights,
            resolve_seed(self.seed, ctx, self, self.fallback_seed),
            iteration,
        )


class _Weights(Field):
    """The weights dataset's state: null when weights are fixed (a saved one is then ignored)."""

    child = True

    def save(self, stage: Any) -> dict | None:
        return None if stage.weights is None else stage.weights.get_state()

    def load(self, fields: StateFields, stage: Any, values: dict) -> dict | None:
        return fields.dict(self.name, optional=stage.weights is None)

    def restore(self, stage: Any, value: Any) -> None:
        if stage.weights is not None:  # then value is a dict (load)
            stage.weights.set_state(value)


class _Choices(Field):
    """Choices drawn with the weights dataset and not yet served: dataset indices, or text for a bad
    weights vector (none with fixed weights: their draws are redrawn from ``draws``)."""

    def save(self, stage: Any) -> list:
        return [] if stage.weights is None else stage.choices[stage.next :]

    def load(self, fields: StateFields, stage: Any, values: dict) -> list:
        high = len(stage.datasets) - 1
        return [
            c if isinstance(c, str) else fields.check_int(c, f"{self.name}[{i}]", high=high)
            for i, c in enumerate(fields.list(self.name))
        ]

    def restore(self, stage: Any, value: Any) -> None:
        stage.choices, stage.next = value, 0


class _Draws(Int):
    """Uniforms used this epoch: one per choice served or skipped with fixed weights (``used``), one
    per vector drawn with a weights dataset (``draws``)."""

    def save(self, stage: Any) -> int:
        return stage.used if stage.weights is None else stage.draws


class SampleFromDatasetsIterator(ChoosingIterator[SampleFromDatasetsNode]):
    state_fields = (
        Children("datasets"),
        _Weights("weights"),
        Bools("exhausted", length=per_dataset),
        Bool("done"),
        Seed("seed"),
        Int("iteration"),
        Int("epoch"),
        _Draws("draws", high=2**64 - 1),
        _Choices("choices"),
        Owed(),
    )

    def __init__(
        self,
        node: SampleFromDatasetsNode,
        datasets: list[NodeIterator],
        weights: NodeIterator | None,
        seed: int,
        iteration: int,
    ):
        inputs = [*datasets, weights] if weights is not None else datasets
        super().__init__(node, *inputs)
        self.datasets = datasets
        self.stop = node.stop_on_empty_dataset
        self.weights = weights
        self.seed = seed
        self.iteration = iteration
        if node.weights is not None:
            total = math.fsum(node.weights)
            cumulative = np.cumsum(node.weights) / (total if total > 0 else 1.0)
            self._cumulative = cumulative
            self._last = max(i for i, w in enumerate(node.weights) if w > 0) if total > 0 else 0
        self._start(0)

    def _start(self, epoch: int) -> None:
        self.epoch = epoch
        exhausted = [False] * len(self.datasets)
        if self.node.weights is not None:
            for i, w in enumerate(self.node.weights):
                if w <= 0:
                    exhausted[i] = True  # never drawn, so it never needs to run out
        self.start_choosing(exhausted)
        self._seek(0)

    def _seek(self, draws: int) -> None:
        bits = np.random.PCG64(np.random.SeedSequence([self.seed, self.iteration, self.epoch]))
        if draws:
            bits.advance(draws)  # one uint64 per uniform double: the stream resumes exactly
        self._rng = np.random.Generator(bits)
        self.draws = draws  # uniforms drawn so far this epoch
        if self.weights is None:  # the choices pending are the rest of a block: drawn again from here
            self.used = draws
            self.choices, self.next = [], 0

    def refill(self, n: int) -> list:
        if self.weights is not None:
            return self._draw_from_weights(self.weights, n)
        uniforms = self._rng.random(_BLOCK)  # a block at a time: the draws ahead are redrawn on restore
        self.draws += _BLOCK
        choices = np.searchsorted(self._cumulative, uniforms, side="right")
        return np.minimum(choices, self._last).tolist()

    def _draw_from_weights(self, weights: NodeIterator, n: int) -> list:
        """Pull up to ``n`` weight vectors from ``weights`` and draw one choice with each. A bad vector
        becomes a message, raised when its turn comes (the vectors after it keep their draws)."""
        vectors = weights.next_chunk(n)
        first = self.draws
        uniforms = self._rng.random(len(vectors)).tolist()
        self.draws += len(vectors)
        size = self.node.num_datasets
        choices: list = []
        for k, (vector, u) in enumerate(zip(vectors, uniforms)):
            try:
                values = np.asarray(vector, dtype=np.float64)
            except (TypeError, ValueError):
                values = np.full(1, np.nan)
            positive = values > 0
            if (
                values.shape != (size,)
                or not np.all(np.isfinite(values))
                or np.any(values < 0)
                or not positive.any()
            ):
                choices.append(
                    f"{self.name}: element {first + k} of the weights dataset is {vector!r}; each must be "
                    f"{size} finite non-negative weights with a positive sum"
                )
                continue
            choice = int(np.searchsorted(np.cumsum(values) / values.sum(), u, side="right"))
            choices.append(min(choice, int(np.flatnonzero(positive)[-1])))
        return choices

    def bad_choice(self, choice: Any, index: int) -> Exception:
        return InvalidArgumentError(choice)  # the message made when the bad vector was drawn

    def reset(self) -> None:
        for it in self.inputs:
            it.reset()
        self._start(self.epoch + 1 if self.node.rerandomize_each_iteration else self.epoch)

    def restored(self) -> None:
        self._seek(self.draws)  # the random stream, at the restored seed, epoch and draw
