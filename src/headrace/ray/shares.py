"""Splitting a pipeline into the shares :meth:`headrace.Dataset.run_on` hands to its workers."""

from __future__ import annotations

from ..core.node import Node
from ..ops.shard import ShardNode


def split_at_sources(node: Node, num_shares: int, index: int) -> Node:
    """``node`` with every source replaced by ``source.shard(num_shares, index)``: the shares
    ``0..num_shares-1`` partition each source, so each element is computed by exactly one worker (and
    zipped sources stay aligned, since they are cut alike).

    >>> from headrace import Dataset
    >>> [[int(x) for x in Dataset(split_at_sources(Dataset.range(5).map(lambda x: x * 10).node, 2, j))]
    ...  for j in range(2)]
    [[0, 20, 40], [10, 30]]
    """
    rewritten: dict[int, Node] = {}

    def visit(current: Node) -> Node:
        if id(current) not in rewritten:
            if current.parents:
                rewritten[id(current)] = current.with_parents(*(visit(p) for p in current.parents))
            else:
                rewritten[id(current)] = ShardNode(current, num_shares, index)
        return rewritten[id(current)]

    return visit(node)
