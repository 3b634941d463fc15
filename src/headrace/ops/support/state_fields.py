"""Declared-state fields (``core.state.Field``) shared by more than one op: kept with the ops, since
``core/`` has the general ones."""

from __future__ import annotations

from typing import Any

from ...core.state import Bound, Field, StateFields


class Bools(Field):
    """A list of bools, of exactly ``length`` items when given (e.g. one per input dataset)."""

    def __init__(self, name: str, attr: str | None = None, *, length: Bound = None):
        super().__init__(name, attr)
        self.length = length

    def save(self, stage: Any) -> list:
        return list(getattr(stage, self.attr))

    def load(self, fields: StateFields, stage: Any, values: dict) -> list[bool]:
        length = self.length(stage, values) if callable(self.length) else self.length
        items = fields.list(self.name, length=length)
        return [fields.check_bool(item, f"{self.name}[{i}]") for i, item in enumerate(items)]


def per_dataset(stage: Any, values: dict) -> int:
    """A length bound: one item per input dataset (``stage.datasets``)."""
    return len(stage.datasets)
