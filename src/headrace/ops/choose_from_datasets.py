"""``Dataset.choose_from_datasets``: take each element from the dataset a choice dataset names."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError, check
from ..core.node import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Context,
    Fields,
    Node,
    NodeIterator,
    derived,
    known_specs,
)
from ..core.spec import TensorSpec, common_spec
from ..core.state import Bool, Child, Children, Field, Int, Owed, StateFields
from .support.choosing import ChoosingIterator
from .support.state_fields import Bools, per_dataset


def _names(count: int) -> list[str]:
    return [f"datasets[{i}]" for i in range(count)]


class ChooseFromDatasetsNode(Node):
    """``choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True)``.

    Each element of ``choice_dataset`` (a scalar integer ``c``) yields the next element of
    ``datasets[c]``. Choosing an exhausted dataset ends the output when ``stop_on_empty_dataset``,
    else that choice is skipped; the output also ends when ``choice_dataset`` does, or when every
    dataset is exhausted.
    """

    op = "choose_from_datasets"
    fields = Fields("num_datasets", "stop_on_empty_dataset")

    def __init__(
        self,
        datasets: list[Node],
        choice_dataset: Node,
        stop_on_empty_dataset: bool = True,
        name: str | None = None,
    ):
        if not datasets:
            raise InvalidArgumentError("datasets=[] is not allowed: pass a non-empty list of datasets")
        check(
            isinstance(stop_on_empty_dataset, bool),
            "stop_on_empty_dataset",
            stop_on_empty_dataset,
            "True or False",
        )
        super().__init__(choice_dataset, *datasets)
        self.num_datasets = len(datasets)
        self.stop_on_empty_dataset = stop_on_empty_dataset
        self.name = name
        known = known_specs((choice_dataset,))
        choice_spec = None if known is None else known[0]  # unknown: the values are checked instead
        if choice_spec is not None and not (
            isinstance(choice_spec, TensorSpec)
            and choice_spec.dtype.kind in "iu"
            and choice_spec.shape in (None, ())
        ):
            raise InvalidArgumentError(
                f"choice_dataset has elements {choice_spec!r}: it must yield scalar integers (int64 in "
                "tf.data), each the index of the dataset to take the next element from"
            )
        specs = known_specs(datasets)
        if specs is not None:
            derived(self)["element_spec"] = common_spec(specs, _names(len(specs)), self.op)

    @property
    def choice(self) -> Node:
        return self.parents[0]

    @property
    def datasets(self) -> tuple[Node, ...]:
        return self.parents[1:]

    def describe_args(self) -> str:
        return f"{self.num_datasets} datasets, stop_on_empty_dataset={self.stop_on_empty_dataset}"

    def compute_element_spec(self) -> Any:
        return common_spec([d.element_spec for d in self.datasets], _names(self.num_datasets), self.op)

    def cardinality(self) -> int:
        choices = self.choice.cardinality()
        counts = [d.cardinality() for d in self.datasets]
        if choices == 0:
            return 0
        if all(n == INFINITE_CARDINALITY for n in counts):
            return choices  # no dataset ever runs out: one element per choice
        if (
            choices == INFINITE_CARDINALITY
            and not self.stop_on_empty_dataset
            and INFINITE_CARDINALITY in counts
        ):
            return INFINITE_CARDINALITY  # an infinite dataset never leaves, and choices never end
        return UNKNOWN_CARDINALITY

    def iterator(self, ctx: Context) -> ChooseFromDatasetsIterator:
        return ChooseFromDatasetsIterator(
            self, self.choice.iterator(ctx), [d.iterator(ctx) for d in self.datasets]
        )


def _as_choice(value: Any) -> int | str:
    """A choice as an int, or as text describing why it is not one (kept JSON-serialisable)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        return int(value)
    return f"{type(value).__name__} {value!r}"[:80]


class _Choices(Field):
    """Choices pulled and not yet served: checked when served, as fresh ones are (none once done)."""

    def save(self, stage: Any) -> list:
        return [] if stage.done else stage.choices[stage.next :]

    def load(self, fields: StateFields, stage: Any, values: dict) -> list:
        return fields.list(self.name)

    def restore(self, stage: Any, value: Any) -> None:
        stage.choices, stage.next = value, 0


class _Owed(Owed):
    """Owed rows at any position: ``position`` counts choices, not the rows' positions."""

    def load(self, fields: StateFields, stage: Any, values: dict) -> list:
        return super().load(fields, stage, {})


class ChooseFromDatasetsIterator(ChoosingIterator[ChooseFromDatasetsNode]):
    state_fields = (
        Child("choice"),
        Children("datasets"),
        Bools("exhausted", length=per_dataset),
        Bool("done"),
        Int("position", "used"),  # choices used so far, for error messages
        _Choices("choices"),
        _Owed(),
    )

    def __init__(self, node: ChooseFromDatasetsNode, choice: NodeIterator, datasets: list[NodeIterator]):
        super().__init__(node, choice, *datasets)
        self.choice = choice
        self.datasets = datasets
        self.stop = node.stop_on_empty_dataset
        self.start_choosing([False] * len(datasets))

    def refill(self, n: int) -> list:
        return [_as_choice(c) for c in self.choice.next_chunk(n)]

    def bad_choice(self, choice: Any, index: int) -> Exception:
        return InvalidArgumentError(
            f"{self.name}: choice_dataset element {index} is {choice}, but the choices "
            f"must be ints from 0 to {len(self.datasets) - 1} (one per dataset)"
        )

    def reset(self) -> None:
        self.choice.reset()
        for it in self.datasets:
            it.reset()
        self.start_choosing([False] * len(self.datasets))
