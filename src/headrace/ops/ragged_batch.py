"""``Dataset.ragged_batch``: batch elements whose shapes differ, into ``Ragged`` components."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.args import boolean, integer, is_int
from ..core.errors import StructureError, check
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Context, Fields, Node
from ..core.spec import to_array
from ..core.structure import flatten, pack_as
from ..io.codec.ragged import Ragged
from .support.batching import leaf_paths, stack
from .support.row_batches import RowBatchIterator


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
    fields = Fields("batch_size", "drop_remainder")

    def __init__(self, parent: Node, batch_size: int, drop_remainder: bool = False, name: str | None = None):
        batch_size, drop_remainder = integer(batch_size), boolean(drop_remainder)
        check(
            is_int(batch_size, low=1),
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


class RaggedBatchIterator(RowBatchIterator[RaggedBatchNode]):
    @property
    def drop_remainder(self) -> bool:
        return self.node.drop_remainder

    def combine(self, rows: list, first: int) -> Any:
        columns = list(zip(*(flatten(row) for row in rows)))
        paths = leaf_paths(rows[0])
        leaves = [ragged_stack(list(column), path, first) for column, path in zip(columns, paths)]
        return pack_as(rows[0], leaves) if isinstance(rows[0], (tuple, dict)) else leaves[0]
