"""``Dataset.rebatch``: change the batch size of an already batched dataset."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError, StructureError
from ..core.node import UNKNOWN_CARDINALITY, Context, Fields, Node, NodeIterator
from ..core.spec import TensorSpec
from ..core.state import Bool, Child, Int, encode_element
from ..core.structure import flatten, map_structure
from .support.batching import Batch, LayoutCheck, check_batched, concat_rows, slice_rows


def _batch_sizes(batch_size: Any) -> tuple[int, ...]:
    if isinstance(batch_size, (int, np.integer)) and not isinstance(batch_size, bool):
        if batch_size <= 0:
            raise InvalidArgumentError(f"batch_size={batch_size!r} is not allowed: use a positive int")
        return (int(batch_size),)
    if isinstance(batch_size, np.ndarray):
        batch_size = batch_size.tolist()
    if isinstance(batch_size, (list, tuple)) and batch_size:
        sizes = []
        for size in batch_size:
            if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
                break
            sizes.append(int(size))
        else:
            if any(sizes):
                return tuple(sizes)
    raise InvalidArgumentError(
        f"batch_size={batch_size!r} is not allowed: use a positive int, or a non-empty list of ints >= 0 "
        "(not all zero) to cycle through"
    )


class RebatchNode(Node):
    """``rebatch(batch_size, drop_remainder=False)``: the same as ``unbatch().batch(batch_size)``
    with one copy instead of two (none when an output batch lies inside one input batch).

    A list ``batch_size`` is cycled through, one entry per output batch; entries may be 0 (an empty
    batch, taken without reading input). ``drop_remainder`` drops a last batch smaller than its entry.
    """

    op = "rebatch"
    fields = Fields("batch_sizes", "scalar", "drop_remainder")

    def __init__(self, parent: Node, batch_size: Any, drop_remainder: bool = False, name: str | None = None):
        sizes = _batch_sizes(batch_size)
        if not isinstance(drop_remainder, bool):
            raise InvalidArgumentError(f"drop_remainder={drop_remainder!r} is not allowed: True or False")
        super().__init__(parent)
        self.batch_sizes = sizes
        self.scalar = isinstance(batch_size, (int, np.integer))
        self.drop_remainder = drop_remainder
        self.name = name

    def describe_args(self) -> str:
        sizes = self.batch_sizes[0] if self.scalar else list(self.batch_sizes)
        return f"{sizes}, drop_remainder={self.drop_remainder}"

    def compute_element_spec(self) -> Any:
        sizes = set(self.batch_sizes)
        size = sizes.pop() if len(sizes) == 1 else None

        def rebatched(spec: TensorSpec) -> TensorSpec:
            if spec.shape is not None and not spec.shape:
                raise InvalidArgumentError(
                    f"rebatch needs batched elements, got a scalar component {spec}; use batch first"
                )
            if spec.shape is None:
                return spec
            leading = spec.shape[0]
            known = size is not None and (
                self.drop_remainder or (leading is not None and leading % size == 0)
            )
            return TensorSpec((size if known else None, *spec.shape[1:]), spec.dtype)

        return map_structure(rebatched, self.parents[0].element_spec)

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        return 0 if n == 0 else UNKNOWN_CARDINALITY

    def iterator(self, ctx: Context) -> RebatchIterator:
        return RebatchIterator(self, self.parents[0].iterator(ctx))


class _Rest(Batch):
    """The rows not yet returned, saved as one batch."""

    def save(self, stage: Any) -> Any:
        pieces = stage.pieces
        if not pieces:
            return None
        return encode_element(pieces[0] if len(pieces) == 1 else concat_rows(pieces))

    def restore(self, stage: Any, value: Any) -> None:
        rows = 0 if value is None else int(np.shape(flatten(value)[0])[0])
        stage.pieces, stage.rows = ([value], rows) if rows else ([], 0)


class RebatchIterator(NodeIterator[RebatchNode]):
    state_fields = (
        Child("parent"),
        Int("position"),
        Int("cycle_index", high=lambda it, values: len(it.node.batch_sizes) - 1),
        Bool("end_of_input"),
        Bool("done"),
        _Rest("rest"),
        Batch("template", empty=True),
    )

    def __init__(self, node: RebatchNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.position = 0  # input batches taken so far
        self.cycle_index = 0
        self.end_of_input = False
        self.done = False
        self.pieces: list = []  # unreturned rows, as slices of input batches
        self.rows = 0
        self.template: Any = None  # a 0-row slice, for empty output batches
        self.layout = LayoutCheck(self.name)

    def _pull(self) -> None:
        try:
            batch = next(self.parent)
        except StopIteration:
            self.end_of_input = True
            return
        self.position += 1
        rows = check_batched(batch, self.name, self.position - 1, ": use batch before rebatch")
        self.layout(batch, self.position - 1)
        if self.template is None:
            self.template = slice_rows(batch, 0, 0)
        if rows:
            self.pieces.append(batch)
            self.rows += rows

    def _take(self, count: int) -> Any:
        taken, need = [], count
        while need:
            piece = self.pieces[0]
            rows = int(np.shape(flatten(piece)[0])[0])
            if rows <= need:
                taken.append(self.pieces.pop(0))
                need -= rows
            else:
                taken.append(slice_rows(piece, 0, need))
                self.pieces[0] = slice_rows(piece, need, rows)
                need = 0
        self.rows -= count
        if len(taken) == 1:
            return taken[0]
        try:
            return concat_rows(taken)
        except ValueError as exc:
            shapes = sorted({str([np.shape(leaf) for leaf in flatten(t)]) for t in taken})
            raise StructureError(
                f"{self.name}: input batches do not share component shapes beyond the batch dimension "
                f"({', '.join(shapes)}); pad them first (padded_batch)"
            ) from exc

    def __next__(self) -> Any:
        if self.done or (self.end_of_input and not self.rows):
            # tf.data stops once the input has ended and its rows are out, even before a 0 entry.
            self.done = True
            raise StopIteration
        sizes = self.node.batch_sizes
        want = sizes[self.cycle_index]
        if want == 0:
            if self.template is None and not self.end_of_input:
                self._pull()  # an empty batch still needs the components' shapes and dtypes
            if self.template is None:
                self.done = True
                raise StopIteration
            out = self.template
        else:
            while self.rows < want and not self.end_of_input:
                self._pull()
            if self.rows == 0 or (self.rows < want and self.node.drop_remainder):
                self.done = True
                self.pieces, self.rows = [], 0
                raise StopIteration
            out = self._take(min(want, self.rows))
        self.cycle_index = (self.cycle_index + 1) % len(sizes)
        self.produced += 1
        return out

    def reset(self) -> None:
        self.parent.reset()
        self.position = 0
        self.cycle_index = 0
        self.end_of_input = False
        self.done = False
        self.pieces, self.rows = [], 0
