"""``Dataset.unbatch``: split each element along its first dimension into many elements."""

from __future__ import annotations

from typing import Any

from ..core.errors import InvalidArgumentError, StructureError
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Context, Node, NodeIterator
from ..core.state import encode_element
from ..core.structure import map_structure
from .support.batching import LayoutCheck, check_batched, slice_rows, split


class UnbatchNode(Node):
    """``unbatch()``: the rows of each batched element, in order (each component split on axis 0)."""

    op = "unbatch"

    def __init__(self, parent: Node, name: str | None = None):
        super().__init__(parent)
        self.name = name

    def compute_element_spec(self) -> Any:
        def unbatched(spec: Any) -> Any:
            if spec.shape is not None and not spec.shape:
                raise InvalidArgumentError(
                    f"unbatch needs elements with a leading dimension, got a scalar component {spec}"
                )
            return spec.without_leading()

        return map_structure(unbatched, self.parents[0].element_spec)

    def cardinality(self) -> int:
        # Rows per batch are only known once batches are seen (tf.data says unknown too unless its
        # static shapes fix the batch size).
        n = self.parents[0].cardinality()
        return n if n in (0, INFINITE_CARDINALITY) else UNKNOWN_CARDINALITY

    def iterator(self, ctx: Context) -> UnbatchIterator:
        return UnbatchIterator(self, self.parents[0].iterator(ctx))


class UnbatchIterator(NodeIterator[UnbatchNode]):
    state_keys = ("parent", "position", "rest")

    def __init__(self, node: UnbatchNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.position = 0  # batches taken from the parent so far
        self.batch: Any = None  # the batch being split, and the rows of it not yet returned
        self.rows: list = []
        self.offset = 0
        self.layout = LayoutCheck(self.name)

    def _next_batch(self) -> None:
        while self.offset >= len(self.rows):
            batch = next(self.parent)
            self.position += 1
            check_batched(batch, self.name, self.position - 1)
            self.layout(batch, self.position - 1)
            self.batch, self.rows, self.offset = batch, split(batch), 0

    def next_chunk(self, n: int) -> list:
        if self.offset >= len(self.rows):
            self._next_batch()
        stop = min(self.offset + n, len(self.rows))
        out = self.rows[self.offset : stop]
        self.offset = stop
        self.produced += len(out)
        return out

    def __next__(self) -> Any:
        if self.offset >= len(self.rows):
            self._next_batch()
        row = self.rows[self.offset]
        self.offset += 1
        self.produced += 1
        return row

    def reset(self) -> None:
        self.parent.reset()
        self.position = 0
        self.batch, self.rows, self.offset = None, [], 0

    def get_state(self) -> dict:
        rest = None
        if self.offset < len(self.rows):
            # The unreturned rows as one batched element: one encoded array per component.
            rest = encode_element(slice_rows(self.batch, self.offset, len(self.rows)))
        return {"parent": self.parent.get_state(), "position": self.position, "rest": rest}

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        position = fields.int("position")
        rest = fields.element("rest", optional=True)
        rows = []
        if rest is not None:
            try:
                check_batched(rest, self.name, position - 1)
            except StructureError as exc:
                raise fields.fail("rest", "a value that is not a batch", f"a batch ({exc})") from None
            rows = split(rest)
        self.parent.set_state(fields.dict("parent"))
        self.position = position
        self.batch, self.rows, self.offset = rest, rows, 0
