"""``Dataset.distribute``: one replica's share of every epoch, equal for all replicas, resumable elastically.

The epoch is cut into blocks of ``num_replicas`` consecutive elements; replica ``rank`` takes element
``rank`` of every block. Every replica reads (or seeks) past whole blocks, so after ``k`` elements all
replicas' inputs stand at the same place, ``position``, and a state saved by any one of them describes
the whole job: restored with another ``num_replicas`` it cuts the rest of the epoch into new blocks from
``position`` on, so nothing is seen twice or lost (elastic resume).

A last, partial block of ``k < num_replicas`` elements is handled by ``remainder``:

- ``"repeat"``: replicas past the end take element ``rank % k`` of that block again (every element is
  seen; ``k`` to ``num_replicas - 1`` elements twice), as ``torch.utils.data.DistributedSampler``.
- ``"pad"``: the same elements, with every array zeroed (``b""`` for strings), for evaluation with a mask.
- ``"drop"``: the block is dropped for every replica (at most ``num_replicas - 1`` elements an epoch).

``num_replicas=None`` takes the job's layout when iterated: the one a framework adapter sets with
:func:`job_layout` (``headrace.torch`` sets ranks and DataLoader workers), else torchrun's ``WORLD_SIZE``
and ``RANK`` environment variables, else one replica. A layout's workers split their replica's share
exactly (worker ``w`` of ``W`` takes share elements ``w, w + W, ...``), with no filler: workers of one
rank may differ by one element, which a DataLoader merges in order.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.args import integer, is_int
from ..core.errors import CheckpointError, InvalidArgumentError, check
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Context, Fields, Node, NodeIterator
from ..core.state import Bool, Child, Field, Int, StateFields
from ..core.structure import map_structure

REMAINDERS = ("repeat", "pad", "drop")
_READ_AT_MOST = 4096  # input elements read per parent call when a stage cannot seek


def _zeros_like(leaf: Any) -> Any:
    if isinstance(leaf, (bytes, str)):
        return type(leaf)()
    array = np.asarray(leaf)
    if array.dtype == object:  # batched strings
        filler = np.empty(array.shape, dtype=object)
        filler.fill(b"")
        return filler
    zeros = np.zeros_like(array)
    return zeros if isinstance(leaf, np.ndarray) else zeros[()]


def unseeded_random_stages(node: Node) -> list[Node]:
    """Stages above ``node`` that draw their own seed when given none: each process draws another."""
    return [
        stage
        for stage in node.walk()
        if getattr(stage, "fallback_seed", None) is not None and getattr(stage, "seed", 0) is None
    ]


@dataclass(frozen=True)
class Layout:
    """Where this process stands in the job: replica ``rank`` of ``num_replicas``, worker ``worker`` of
    the ``num_workers`` that split that replica's share (DataLoader workers)."""

    num_replicas: int = 1
    rank: int = 0
    num_workers: int = 1
    worker: int = 0


_LAYOUT: ContextVar[Layout | None] = ContextVar("headrace_job_layout", default=None)


@contextlib.contextmanager
def job_layout(layout: Layout) -> Iterator[Layout]:
    """Iterators built inside take ``layout`` for ``distribute()`` stages (adapters use this)."""
    token = _LAYOUT.set(layout)
    try:
        yield layout
    finally:
        _LAYOUT.reset(token)


def current_layout() -> Layout:
    """The layout set by :func:`job_layout`, else torchrun's environment, else a single replica.

    >>> current_layout() if "WORLD_SIZE" not in os.environ else Layout()
    Layout(num_replicas=1, rank=0, num_workers=1, worker=0)
    """
    layout = _LAYOUT.get()
    if layout is not None:
        return layout
    try:
        return Layout(int(os.environ.get("WORLD_SIZE", 1)), int(os.environ.get("RANK", 0)))
    except ValueError:
        raise InvalidArgumentError(
            f"distribute(): WORLD_SIZE={os.environ.get('WORLD_SIZE')!r} and RANK={os.environ.get('RANK')!r} "
            "must be integers; fix the environment or pass num_replicas and rank"
        ) from None


class DistributeNode(Node):
    """``distribute(num_replicas=None, rank=None, remainder="repeat")``: see the module docstring."""

    op = "distribute"
    #: a checkpoint restores into any rank of a job of any size (see core.fingerprint.pipeline_key)
    fields = Fields("remainder", settings=("num_replicas", "rank"))

    def __init__(
        self,
        parent: Node,
        num_replicas: int | None = None,
        rank: int | None = None,
        remainder: str = "repeat",
        name: str | None = None,
    ):
        num_replicas, rank = integer(num_replicas), integer(rank)
        check(
            (num_replicas is None) == (rank is None),
            "rank",
            rank,
            "given together with num_replicas (or both None: the job's layout)",
        )
        if num_replicas is not None:
            check(
                is_int(num_replicas, low=1),
                "num_replicas",
                num_replicas,
                "an int >= 1 (the number of ranks), or None for the job's layout",
            )
            check(
                is_int(rank, low=0, high=num_replicas),
                "rank",
                rank,
                f"an int from 0 to num_replicas - 1 = {num_replicas - 1}",
            )
        check(remainder in REMAINDERS, "remainder", remainder, " or ".join(repr(r) for r in REMAINDERS))
        super().__init__(parent)
        self.num_replicas = num_replicas
        self.rank = rank
        self.remainder = remainder
        self.name = name

    def describe_args(self) -> str:
        where = "layout" if self.num_replicas is None else f"{self.num_replicas}, {self.rank}"
        return f"{where}, remainder={self.remainder!r}"

    def signature(self) -> str:
        # Without num_replicas and rank: a checkpoint saved by any rank of any job size restores here.
        return f"distribute(remainder={self.remainder!r})<-[{self.parents[0].signature()}]"

    def layout(self) -> Layout:
        """The layout this stage uses if iterated now."""
        job = current_layout()
        if self.num_replicas is None:
            return job
        return Layout(self.num_replicas, self.rank, job.num_workers, job.worker)

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def cardinality(self) -> int:
        n = self.parents[0].cardinality()
        if n in (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY):
            return n
        layout = self.layout()
        share = per_replica_count(n, layout.num_replicas, self.remainder)
        return len(range(layout.worker, share, layout.num_workers))

    def iterator(self, ctx: Context) -> DistributeIterator:
        layout = self.layout()
        if not 0 <= layout.rank < layout.num_replicas or not 0 <= layout.worker < layout.num_workers:
            raise InvalidArgumentError(f"{self!r}: {layout} puts this process outside the job")
        if layout.num_replicas * layout.num_workers > 1 and ctx.options.seed is None and not ctx.probe:
            unseeded = unseeded_random_stages(self.parents[0])
            if unseeded:
                raise InvalidArgumentError(
                    f"{self!r}: {unseeded[0]!r} has no seed, so every rank would draw its own order and "
                    "ranks would see the same elements; give it seed=... (reshuffling each epoch still "
                    "happens) or set Options.seed"
                )
        return DistributeIterator(self, self.parents[0].iterator(ctx), layout)


def has_distribute(node: Node) -> bool:
    """Whether ``node`` or a stage above it is a ``distribute`` stage (adapters add one when not)."""
    return any(isinstance(stage, DistributeNode) for stage in node.walk())


def per_replica_count(total: int, num_replicas: int, remainder: str) -> int:
    """Elements each replica gets from ``total``: ``total // n``, or rounded up unless dropping.

    >>> per_replica_count(10, 4, "repeat"), per_replica_count(10, 4, "drop")
    (3, 2)
    """
    full, partial = divmod(max(total, 0), num_replicas)
    return full + (1 if partial and remainder != "drop" else 0)


class _Workers(Field):
    """``[num_workers, worker]`` of the saving iterator: checked against this one's, never restored."""

    def save(self, stage: Any) -> list:
        return [stage.layout.num_workers, stage.layout.worker]

    def load(self, fields: StateFields, stage: Any, values: dict) -> None:
        workers = fields.list(self.name, length=2)
        saved_workers = fields.check_int(workers[0], f"{self.name}[0]", low=1)
        saved_worker = fields.check_int(workers[1], f"{self.name}[1]", high=saved_workers - 1)
        mine = (stage.layout.num_workers, stage.layout.worker)
        if (saved_workers, saved_worker) != mine and max(saved_workers, mine[0]) > 1:
            raise CheckpointError(
                f"{stage.name}: the state was saved by worker {saved_worker} of {saved_workers} and cannot "
                f"restore worker {mine[1]} of {mine[0]}: keep the number of DataLoader workers when resuming "
                "(the number of ranks may change)"
            )

    def restore(self, stage: Any, value: Any) -> None:
        pass


class DistributeIterator(NodeIterator[DistributeNode]):
    """State: ``position``, the input position of the next block this iterator takes, and ``read``,
    how far its input stands. With one worker per replica both are the same on every replica (blocks
    are read or skipped whole), which is what makes a state restorable on another rank or job size."""

    state_fields = (
        Child("parent"),
        Int("position"),
        Int("read", high=lambda stage, values: values["position"]),  # the next block is at or past it
        _Workers("workers"),
        Bool("done"),
    )

    def __init__(self, node: DistributeNode, parent: NodeIterator, layout: Layout):
        super().__init__(node, parent)
        self.parent = parent
        self.layout = layout
        n = node.parents[0].cardinality()
        # With a known length the last block's size is known before it is read, so a replica can
        # seek past other replicas' elements; otherwise each block is read whole to learn its size.
        self.length = None if n == UNKNOWN_CARDINALITY else n
        # One replica, one worker: every element is this one's; pass chunks through (no per-element cost).
        self._alone = layout.num_replicas == 1 and layout.num_workers == 1
        self._start(0)

    def _start(self, origin: int) -> None:
        self.position = origin + self.layout.worker * self.layout.num_replicas
        self.read = origin
        self.done = False

    def _advance(self, n: int) -> int:
        """Move the input ``n`` elements on (seeking when it can); return how many it moved."""
        moved = 0
        while moved < n:
            skipped = self.parent.seek_forward(n - moved)
            if skipped is None:
                try:
                    skipped = len(self.parent.next_chunk(min(n - moved, _READ_AT_MOST)))
                except StopIteration:
                    break
            if skipped == 0:
                break
            moved += skipped
        self.read += moved
        return moved

    def _read_block(self) -> tuple[Any, bool] | None:
        """This replica's element of the block at ``position`` and whether it is a filler, or None."""
        replicas, rank = self.layout.num_replicas, self.layout.rank
        gap = self.position - self.read
        if self._advance(gap) < gap:
            return None
        if self.length is None:
            block: list = []
            while len(block) < replicas:
                try:
                    block.extend(self.parent.next_chunk(replicas - len(block)))
                except StopIteration:
                    break
            self.read += len(block)
            size = len(block)
            if size == 0 or (size < replicas and self.node.remainder == "drop"):
                return None
            return block[rank % size], rank >= size
        size = replicas if self.length == INFINITE_CARDINALITY else min(replicas, self.length - self.position)
        if size <= 0 or (size < replicas and self.node.remainder == "drop"):
            return None
        own = rank % size
        if self._advance(own) < own:
            return None
        try:
            element = next(self.parent)
        except StopIteration:
            return None  # shorter than its cardinality said: end here rather than fail
        self.read += 1
        self._advance(size - own - 1)
        return element, rank >= size

    def next_chunk(self, n: int) -> list:
        if not self._alone:
            return super().next_chunk(n)
        if self.done:
            raise StopIteration
        try:
            out = self.parent.next_chunk(n)
        except StopIteration:
            self.done = True
            raise
        self.read += len(out)
        self.position += len(out)
        self.produced += len(out)
        return out

    def __next__(self) -> Any:
        if self._alone:
            return self.next_chunk(1)[0]
        if self.done:
            raise StopIteration
        read = self._read_block()
        if read is None:
            # A last partial block read whole (unknown length) and dropped leaves the input past
            # ``position``: keep the state's invariant (position >= read), or its restore is refused.
            self.position = max(self.position, self.read)
            self.done = True
            raise StopIteration
        element, filler = read
        self.position += self.layout.num_workers * self.layout.num_replicas
        if filler and self.node.remainder == "pad":
            element = map_structure(_zeros_like, element)
        self.produced += 1
        return element

    def reset(self) -> None:
        self.parent.reset()
        self._start(0)
