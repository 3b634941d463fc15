"""``Dataset.unbatch``: split each element along its first dimension into many elements."""

from __future__ import annotations

from typing import Any

from ..core.errors import InvalidArgumentError
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Context, Node, NodeIterator
from ..core.state import Child, Int, encode_element
from ..core.structure import map_structure
from .support.batching import Batch, LayoutCheck, check_batched, slice_rows, split
from .support.expanding import ExpandingIterator


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


class _Rest(Batch):
    """The rows not yet returned, saved as one batch (one encoded array per component)."""

    def save(self, stage: Any) -> Any:
        if stage.offset >= len(stage.rows):
            return None
        return encode_element(slice_rows(stage.batch, stage.offset, len(stage.rows)))

    def restore(self, stage: Any, value: Any) -> None:
        stage.batch, stage.rows, stage.offset = value, [] if value is None else split(value), 0


class UnbatchIterator(ExpandingIterator[UnbatchNode]):
    state_fields = (Child("parent"), Int("position"), _Rest("rest"))

    def __init__(self, node: UnbatchNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.position = 0  # batches taken from the parent so far
        self.batch: Any = None  # the batch being split, and the rows of it not yet returned
        self.rows: list = []
        self.offset = 0
        self.layout = LayoutCheck(self.name)

    def open_next(self) -> None:
        batch = next(self.parent)
        self.position += 1
        check_batched(batch, self.name, self.position - 1)
        self.layout(batch, self.position - 1)
        self.batch, self.rows, self.offset = batch, split(batch), 0

    def take(self, n: int) -> list:
        offset = self.offset
        out = self.rows[offset : offset + n]
        self.offset = offset + len(out)
        return out

    def __next__(self) -> Any:  # the fast path of the common case, without a list per row
        offset = self.offset
        if offset < len(self.rows):
            self.offset = offset + 1
            self.produced += 1
            return self.rows[offset]
        return self.next_chunk(1)[0]

    def reset(self) -> None:
        self.parent.reset()
        self.position = 0
        self.batch, self.rows, self.offset = None, [], 0
