"""``Dataset.sparse_batch``: batch elements of different shapes into ``SparseTensor``s."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.args import integer, integers, is_int
from ..core.errors import InvalidArgumentError, StructureError, check
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Context, Fields, Node
from ..core.spec import to_array
from ..io.codec.sparse import SparseTensor
from .support.row_batches import RowBatchIterator


class SparseBatchNode(Node):
    """``sparse_batch(batch_size, row_shape)``: each element (one array of rank ``len(row_shape)``)
    becomes row ``b`` of a ``SparseTensor`` of dense shape ``[batch, *row_shape]`` holding every
    entry of the element (zeros included), as tf.data's ``sparse_batch``. A ``row_shape`` size of -1
    means the batch's largest size. An element larger than ``row_shape`` raises StructureError."""

    op = "sparse_batch"
    fields = Fields("batch_size", "row_shape")

    def __init__(self, parent: Node, batch_size: int, row_shape: Any, name: str | None = None):
        batch_size = integer(batch_size)
        check(
            is_int(batch_size, low=1),
            "batch_size",
            batch_size,
            "a positive int",
        )
        shape = integers(row_shape)
        if is_int(shape):
            shape = [shape]
        if hasattr(row_shape, "as_list"):
            shape = [-1 if d is None else d for d in row_shape.as_list()]
        if not isinstance(shape, (list, tuple)) or not all(is_int(d, low=-1) for d in shape):
            raise InvalidArgumentError(
                f"row_shape={row_shape!r} is not allowed: a list of sizes (ints >= 0, -1 for any)"
            )
        super().__init__(parent)
        self.batch_size = batch_size
        self.row_shape = tuple(shape)
        self.name = name

    def describe_args(self) -> str:
        return f"{self.batch_size}, row_shape={list(self.row_shape)}"

    def compute_element_spec(self) -> Any:
        raise TypeError(f"{self!r}: SparseTensor elements have no TensorSpec here")

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        if n < 0:
            return n if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY
        return -(-n // self.batch_size)

    def iterator(self, ctx: Context) -> SparseBatchIterator:
        return SparseBatchIterator(self, self.parents[0].iterator(ctx))


class SparseBatchIterator(RowBatchIterator[SparseBatchNode]):
    def combine(self, rows: list, first: int) -> SparseTensor:
        node = self.node
        arrays = [to_array(row) for row in rows]
        rank = len(node.row_shape)
        for offset, array in enumerate(arrays):
            if array.ndim != rank:
                raise StructureError(
                    f"{self.name}: element {first + offset} has rank {array.ndim} but row_shape "
                    f"{list(node.row_shape)} has rank {rank}"
                )
        shape = [
            max((a.shape[d] for a in arrays), default=0) if size == -1 else size
            for d, size in enumerate(node.row_shape)
        ]
        for offset, array in enumerate(arrays):
            if any(a > s for a, s in zip(array.shape, shape)):
                raise StructureError(
                    f"{self.name}: element {first + offset} has shape {array.shape}, larger than row_shape "
                    f"{list(node.row_shape)}; raise row_shape or use -1"
                )
        indices = [
            np.column_stack([np.full(array.size, b), np.argwhere(np.ones(array.shape, bool))])
            if array.size
            else np.empty((0, rank + 1), np.int64)
            for b, array in enumerate(arrays)
        ]
        values = np.concatenate([a.reshape(-1) for a in arrays]) if arrays else np.empty(0)
        return SparseTensor(np.concatenate(indices), values, [len(arrays), *shape])
