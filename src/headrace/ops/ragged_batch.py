"""``Dataset.ragged_batch``: batch elements whose shapes differ, into ``Ragged`` components."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.args import boolean, integer
from ..core.errors import StructureError, check
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Context, Node, NodeIterator
from ..core.spec import to_array
from ..core.state import encode_element
from ..core.structure import flatten, pack_as
from ..io.ragged import Ragged
from .support.batching import leaf_paths, stack


def ragged_stack(rows: list, path: str, first_index: int) -> Any:
    """One component of a ragged batch: scalars stacked, arrays of rank >= 1 as a ``Ragged`` whose
    rows are the elements (their first dimension may differ; the others must agree)."""
    arrays = [to_array(row) for row in rows]
    if arrays[0].ndim == 0:
        return stack(rows, first_index)
    inner = {a.shape[1:] for a in arrays}
    ranks = {a.ndim for a in arrays}
    if len(ranks) != 1 or len(inner) != 1:
        raise StructureError(
            f"ragged_batch: elements {first_index}..{first_index + len(rows) - 1}{path} have shapes "
            f"{sorted({a.shape for a in arrays})}; only the first dimension may differ (ragged rank 1)"
        )
    dtypes = {a.dtype for a in arrays}
    if len(dtypes) != 1:
        raise StructureError(f"ragged_batch: elements{path} mix dtypes {sorted(map(str, dtypes))}")
    values = np.concatenate(arrays)
    return Ragged.from_row_lengths(values, [len(a) for a in arrays])


class RaggedBatchNode(Node):
    """``ragged_batch(batch_size, drop_remainder=False)``: like ``batch``, but components of rank >= 1
    become ``hr.io.Ragged`` (rows = the elements, ragged in their first dimension); scalars are
    stacked. tf.data decides per component from its static shape; headrace has no static shapes, so
    every component of rank >= 1 is ragged."""

    op = "ragged_batch"

    def __init__(self, parent: Node, batch_size: int, drop_remainder: bool = False, name: str | None = None):
        batch_size, drop_remainder = integer(batch_size), boolean(drop_remainder)
        check(
            isinstance(batch_size, int) and not isinstance(batch_size, bool) and batch_size > 0,
            "batch_size",
            batch_size,
            "a positive int",
        )
        check(isinstance(drop_remainder, bool), "drop_remainder", drop_remainder, "True or False")
        super().__init__(parent)
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self.name = name

    def describe_args(self) -> str:
        return f"{self.batch_size}, drop_remainder={self.drop_remainder}"

    def compute_element_spec(self) -> Any:
        raise TypeError(f"{self!r}: Ragged components have no TensorSpec here")

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        if n < 0:
            return n if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def iterator(self, ctx: Context) -> RaggedBatchIterator:
        return RaggedBatchIterator(self, self.parents[0].iterator(ctx))


class RaggedBatchIterator(NodeIterator[RaggedBatchNode]):
    state_keys = ("parent", "rows", "position", "ended")

    def __init__(self, node: RaggedBatchNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.rows: list = []  # elements of the batch being gathered (kept across a parent's error)
        self.position = 0  # elements taken from the parent
        self.ended = False

    def __next__(self):
        node = self.node
        while not self.ended and len(self.rows) < node.batch_size:
            try:
                chunk = self.parent.next_chunk(node.batch_size - len(self.rows))
            except StopIteration:
                self.ended = True
                break
            self.rows.extend(chunk)
            self.position += len(chunk)
        rows = self.rows
        if not rows or (node.drop_remainder and len(rows) < node.batch_size):
            raise StopIteration
        first = self.position - len(rows)
        columns = list(zip(*(flatten(row) for row in rows)))
        paths = leaf_paths(rows[0])
        leaves = [ragged_stack(list(column), path, first) for column, path in zip(columns, paths)]
        self.rows = []
        out = pack_as(rows[0], leaves) if isinstance(rows[0], (tuple, dict)) else leaves[0]
        self.produced += 1
        return out

    def reset(self) -> None:
        self.parent.reset()
        self.rows, self.position, self.ended = [], 0, False

    def get_state(self) -> dict:
        return {
            "parent": self.parent.get_state(),
            "rows": [encode_element(e) for e in self.rows],
            "position": self.position,
            "ended": self.ended,
        }

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        position, ended = fields.int("position"), fields.bool("ended")
        rows = fields.elements("rows", max_length=self.node.batch_size - 1)
        self.parent.set_state(fields.dict("parent"))
        self.rows, self.position, self.ended = rows, position, ended
