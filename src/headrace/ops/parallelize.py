"""``Dataset.parallelize``: run the whole pipeline above in worker processes, one share each."""

from __future__ import annotations

from typing import Any

from ..core.args import is_int
from ..core.errors import check
from ..core.node import Context, Fields, Node, NodeIterator


def shard_sources(node: Node, num_shards: int, index: int, shard: Any) -> Node:
    """A copy of the pipeline ``node`` whose every source keeps only its ``index``-th of
    ``num_shards`` shares (``shard(source, num_shards, index)``: every N-th element, which for a
    list of files is every N-th file)."""
    if not node.parents:
        return shard(node, num_shards, index)
    return node.with_parents(*(shard_sources(p, num_shards, index, shard) for p in node.parents))


class ParallelizeNode(Node):
    """``parallelize(num_workers)``: ``num_workers`` copies of the pipeline above, each in its own
    worker process reading every ``num_workers``-th element of each source; their outputs are
    merged round-robin, so the order is fixed, and equal to the serial order when each stage above
    maps one element to one element. See ``docs/parallel.md``.
    """

    op = "parallelize"
    fields = Fields("num_workers", "shard")

    def __init__(self, parent: Node, num_workers: int, shard: Any, name: str | None = None):
        check(
            is_int(num_workers, low=1),
            "num_workers",
            num_workers,
            "a positive int",
        )
        super().__init__(parent)
        self.num_workers = num_workers
        self.shard = shard  # the shard op's node class (ops do not import each other)
        self.name = name

    def describe_args(self) -> str:
        return self.name or str(self.num_workers)

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def cardinality(self) -> int:
        return self.parents[0].cardinality()

    def worker_pipeline(self, index: int) -> Node:
        """What worker ``index`` runs."""
        return shard_sources(self.parents[0], self.num_workers, index, self.shard)

    def iterator(self, ctx: Context) -> NodeIterator:
        if ctx.probe:  # looking at the first element needs no workers
            return self.parents[0].iterator(ctx)
        from .parallelize_workers import ParallelizeIterator, serial_fallback  # noqa: PLC0415

        fallback = serial_fallback(self, ctx)
        if fallback is not None:
            return fallback
        return ParallelizeIterator(self, ctx, ctx.iteration_of(self))
