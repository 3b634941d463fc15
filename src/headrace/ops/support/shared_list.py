"""An append-only sequence whose copies share storage: growing a chain one stage at a time (as the
optimiser rewrites a pipeline) costs linear time and memory, not quadratic. Used by fused maps
(``map.FusedFunction``) and fused map/filter runs (``map_and_filter``)."""

from __future__ import annotations

from typing import Any


class SharedList:
    """An append-only sequence that shares its storage with the one it grew from, so growing a run
    one stage at a time (as the optimiser rewrites a chain) costs linear time and memory, not
    quadratic; picklable as the tuple of its items (fingerprints see the items only)."""

    __slots__ = ("_items", "_n", "_shared")

    def __init__(self, items: tuple | list = ()):
        self._set(list(items))

    def _set(self, shared: list) -> None:
        self._shared, self._n = shared, len(shared)
        self._items: tuple | None = None

    def plus(self, more: tuple | list) -> SharedList:
        """This sequence followed by ``more`` (a new object; this one is unchanged)."""
        shared = self._shared if len(self._shared) == self._n else self._shared[: self._n]
        shared.extend(more)
        grown = object.__new__(SharedList)
        grown._set(shared)
        return grown

    @property
    def items(self) -> tuple:
        if self._items is None:
            self._items = tuple(self._shared[: self._n])
        return self._items

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: int) -> Any:
        if not -self._n <= index < self._n:
            raise IndexError(index)
        return self._shared[index % self._n]

    def __getstate__(self) -> dict:
        return {"items": self.items}

    def __setstate__(self, state: dict) -> None:
        self._set(list(state["items"]))

    def __repr__(self) -> str:
        return f"SharedList({self._n} items)"
