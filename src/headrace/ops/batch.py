"""``Dataset.batch``: stack consecutive elements into batches."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.args import boolean, integer, is_int
from ..core.errors import check
from ..core.node import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Access,
    Context,
    Fields,
    Node,
)
from ..core.structure import map_structure
from .support.batch_iterator import BatchingIterator
from .support.batching import stack


class BatchNode(Node):
    """``batch(batch_size, drop_remainder=False)``: the last batch is smaller unless dropped.

    ``num_parallel_calls`` and ``deterministic`` are accepted as in tf.data; stacking is a single
    numpy call per component, so the serial path is already vectorised.
    """

    op = "batch"
    fields = Fields("batch_size", "drop_remainder", settings=("num_parallel_calls", "deterministic"))

    def __init__(
        self,
        parent: Node,
        batch_size: int,
        drop_remainder: bool = False,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ):
        batch_size, num_parallel_calls = integer(batch_size), integer(num_parallel_calls)
        drop_remainder, deterministic = boolean(drop_remainder), boolean(deterministic)
        check(
            is_int(batch_size, low=1),
            "batch_size",
            batch_size,
            "a positive int",
        )
        check(isinstance(drop_remainder, bool), "drop_remainder", drop_remainder, "True or False")
        check(
            num_parallel_calls is None
            or num_parallel_calls == AUTOTUNE
            or (isinstance(num_parallel_calls, int) and num_parallel_calls > 0),
            "num_parallel_calls",
            num_parallel_calls,
            "None, a positive int, or AUTOTUNE",
        )
        super().__init__(parent)
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self.num_parallel_calls = num_parallel_calls
        self.deterministic = deterministic
        self.name = name

    def swapped_with(self, parent: Node) -> Node | None:
        # batch(n) of a batch-safe map equals the map of batch(n): one call per batch.
        if not parent.batch_safe():
            return None
        return parent.with_parents(self.with_parents(parent.parents[0]))

    def describe_args(self) -> str:
        return f"{self.batch_size}, drop_remainder={self.drop_remainder}"

    def compute_element_spec(self) -> Any:
        size = self.batch_size if self.drop_remainder else None
        return map_structure(lambda spec: spec.with_leading(size), self.parents[0].element_spec)

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        if n in (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY):
            return n
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def random_access_length(self) -> int | None:
        n = self.parents[0].random_access_length()
        if n is None:
            return None
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        n, size = self.parents[0].random_access_length(), self.batch_size
        out = []
        for index in np.asarray(indices).tolist():
            rows = np.arange(index * size, min((index + 1) * size, n), dtype=np.int64)
            out.append(stack(self.parents[0].elements_at(rows, access), first_index=index * size))
        return out

    def iterator(self, ctx: Context) -> BatchIterator:
        return BatchIterator(self, self.parents[0].iterator(ctx))


class BatchIterator(BatchingIterator):
    def combine(self, elements: list) -> Any:
        return stack(elements, first_index=self.produced * self.node.batch_size)
