"""PyTorch: feed a training loop, DataLoader workers and DDP ranks from a headrace Dataset.

Two ways in, both sharded by ``Dataset.distribute`` (each rank gets the same number of batches, so DDP
never waits on a rank that ran out; workers split their rank's share exactly):

- :func:`to_torch` returns a :class:`Loader`, used in place of a DataLoader: headrace's own threads and
  processes do the parallel work, batches come out as tensors (pinned, and copied to a CUDA device on
  a side stream ahead of use when ``device`` is one). Its ``state_dict()`` is exact.
- :class:`IterableDataset` goes inside ``torch.utils.data.DataLoader(ds, batch_size=None,
  num_workers=k)`` or torchdata's ``StatefulDataLoader``, whose ``state_dict()`` it supports.

Where the pipeline has no ``distribute()`` stage, one is added at its end; put ``distribute()`` (no
arguments: the layout comes from here) before expensive maps yourself, so that each rank and worker
computes only its own elements. See docs/torch.md.

>>> import headrace as hr, headrace.torch
>>> loader = headrace.torch.to_torch(hr.Dataset.range(6).batch(3))
>>> [batch.tolist() for batch in loader], len(loader)
([[0, 1, 2], [3, 4, 5]], 2)
"""

from __future__ import annotations

import mmap
import sys
import warnings
from typing import Any

import numpy as np
import torch
import torch.utils.data

from .core.errors import CheckpointError, InvalidArgumentError
from .core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .core.run import Seeds
from .core.structure import map_structure
from .dataset import Dataset
from .iterator import Iterator
from .lookahead import ReadAhead
from .ops.distribute import REMAINDERS, Layout, has_distribute, job_layout

__all__ = ["IterableDataset", "Loader", "current_layout", "to_tensors", "to_torch"]


def current_layout(split_workers: bool = True) -> Layout:
    """This process's place in the job: the DDP rank and world size (``torch.distributed`` when
    initialised, else torchrun's ``RANK``/``WORLD_SIZE``), and the DataLoader worker it runs in."""
    from .ops.distribute import current_layout as environment_layout  # noqa: PLC0415 (same name)

    if torch.distributed.is_available() and torch.distributed.is_initialized():
        layout = Layout(torch.distributed.get_world_size(), torch.distributed.get_rank())
    else:
        layout = environment_layout()
        layout = Layout(layout.num_replicas, layout.rank)
    info = torch.utils.data.get_worker_info()
    if split_workers and info is not None:
        return Layout(layout.num_replicas, layout.rank, info.num_workers, info.id)
    return layout


def _tensor(leaf: Any) -> Any:
    if type(leaf) is np.ndarray:
        if leaf.dtype.kind in "OSU":
            return leaf  # strings stay numpy: torch has no string tensors
        flags = leaf.flags
        if flags.writeable and flags.c_contiguous:
            return torch.from_numpy(leaf)
        return torch.from_numpy(np.array(leaf, order="C"))  # tensors are writable: never alias ours
    if isinstance(leaf, np.ndarray):
        return _tensor(np.asarray(leaf))
    if isinstance(leaf, np.generic) and leaf.dtype.kind in "biufc":
        return torch.from_numpy(np.array(leaf))
    return leaf


def to_tensors(element: Any) -> Any:
    """``element`` with every numeric numpy array as a CPU tensor (zero-copy where the array is writable
    and contiguous, else a copy); strings stay as they are.

    >>> to_tensors({"x": np.arange(3), "name": b"a"})
    {'x': tensor([0, 1, 2]), 'name': b'a'}
    """
    # Plain arrays, tuples and dicts directly: this runs once per batch, map_structure costs ~3 us more.
    kind = type(element)
    if kind is np.ndarray:
        return _tensor(element)
    if kind is tuple:
        return tuple(to_tensors(item) for item in element)
    if kind is dict:
        return {key: to_tensors(value) for key, value in element.items()}
    return map_structure(_tensor, element)


def _with_layout(dataset: Dataset, remainder: str) -> Dataset:
    if not isinstance(dataset, Dataset):
        raise InvalidArgumentError(f"expected a headrace Dataset, got {type(dataset).__name__}")
    if remainder not in REMAINDERS:
        raise InvalidArgumentError(f"remainder={remainder!r} is not allowed: one of {list(REMAINDERS)}")
    if has_distribute(dataset.node):
        return dataset
    return dataset.distribute(remainder=remainder)


def _rank_length(dataset: Dataset, layout: Layout) -> int:
    with job_layout(Layout(layout.num_replicas, layout.rank)):
        n = dataset.cardinality()
    if n == INFINITE_CARDINALITY:
        raise TypeError("the dataset is infinite (cardinality -1): it has no len()")
    if n == UNKNOWN_CARDINALITY:
        raise TypeError("the dataset's length is unknown (cardinality -2): it has no len()")
    return n


class _State:
    """Shared state logic of the two adapters: an epoch number and a pending headrace state."""

    def __init__(self) -> None:
        self.epoch: int | None = None
        self.pending: dict | None = None

    def load(self, state: dict, where: str) -> None:
        if not isinstance(state, dict) or "iterator" not in state or "epoch" not in state:
            raise CheckpointError(
                f"{where}.load_state_dict: expected the dict its state_dict() returned, got "
                f"{sorted(state) if isinstance(state, dict) else type(state).__name__}"
            )
        self.epoch = None if state["epoch"] is None else int(state["epoch"])
        self.pending = state["iterator"]


class _WorkerIterator:
    """What IterableDataset.__iter__ returns: tensors out, and the protocol of torchdata's Stateful."""

    def __init__(self, iterator: Iterator, epoch: int | None):
        self.iterator = iterator
        self.epoch = epoch

    def __iter__(self) -> _WorkerIterator:
        return self

    def __next__(self) -> Any:
        return to_tensors(next(self.iterator))

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "iterator": self.iterator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        if state.get("iterator") is not None:
            self.iterator.set_state(state["iterator"])


# Stages that hand on their input's elements whole (a batch stays a batch), and stages that batch.
_KEEP_ELEMENTS = {
    "AssertCardinalityNode", "CacheNode", "DistributeNode", "FilterNode", "GlobalShuffleNode",
    "IgnoreErrorsNode", "MapNode", "OptionsNode", "ParallelizeNode", "PrefetchNode", "RepeatNode",
    "RunOnNode", "ShardNode", "ShuffleNode", "SkipNode", "TakeNode", "TakeWhileNode",
}  # fmt: skip
_BATCHING = {
    "BatchNode", "BucketBySequenceLengthNode", "PaddedBatchNode", "RaggedBatchNode", "RebatchNode",
    "SparseBatchNode",
}  # fmt: skip


class _SharedFlag:
    """A flag that forked DataLoader workers share with the process that made it (an anonymous shared
    mapping), so a warning one epoch's worker gave is not repeated by the next epoch's fresh workers.
    A pickled copy (spawned workers) starts unset."""

    def __init__(self) -> None:
        self._map = mmap.mmap(-1, 1)

    def __reduce__(self) -> tuple:
        return (_SharedFlag, ())

    def first(self) -> bool:
        """True the first time it is asked (in any process sharing it), then False."""
        if self._map[0]:
            return False
        self._map[0] = 1
        return True


def _yields_batches(dataset: Dataset) -> bool:
    """The pipeline's last element-changing stage is a batching one (``batch().map(f)`` included)."""
    node = dataset.node
    while type(node).__name__ in _KEEP_ELEMENTS and len(node.parents) == 1:
        node = node.parents[0]
    return type(node).__name__ in _BATCHING


def _dataloader_collates() -> bool:
    """Whether the DataLoader calling ``iter()`` on us collates elements into batches (its
    ``batch_size`` is not None). Its fetcher, a frame or two up, says so in ``auto_collation``."""
    frame: Any = sys._getframe(2)
    for _ in range(4):
        if frame is None:
            return False
        owner = frame.f_locals.get("self")
        if owner is not None and hasattr(owner, "auto_collation") and hasattr(owner, "collate_fn"):
            return bool(owner.auto_collation)
        frame = frame.f_back
    return False


def _check_collation(dataset: Dataset, warned: _SharedFlag) -> None:
    """Warn once when a DataLoader would batch the pipeline's batches again: ``DataLoader(ds)`` has
    ``batch_size=1``, which stacks each batch into a batch of one, adding a leading dimension."""
    info = torch.utils.data.get_worker_info()
    if info is not None and info.id != 0:
        return  # one worker speaks for all
    if not (_yields_batches(dataset) and _dataloader_collates()) or not warned.first():
        return
    level, frame = 3, sys._getframe(2)  # stacklevel 3 is the frame 2 above this one
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] in (
        "torch",
        "torchdata",
    ):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    warnings.warn(
        "headrace.torch.IterableDataset: the DataLoader batches elements (its batch_size, 1 by default), "
        "but this pipeline's elements are batches already: each batch gets an extra leading dimension "
        "(batches of batches). Pass batch_size=None to the DataLoader",
        UserWarning,
        stacklevel=level,
    )


class IterableDataset(torch.utils.data.IterableDataset):
    """A headrace Dataset for ``DataLoader(ds, batch_size=None, num_workers=k)``: rank ``r`` of ``R``
    (DDP) and worker ``w`` of ``k`` read their own elements only, nothing twice, nothing lost.

    Batch in headrace and pass ``batch_size=None``: the DataLoader's default (``batch_size=1``) would
    stack each batch into a batch of one (a warning says so). As with ``DistributedSampler``, call
    ``set_epoch(epoch)`` before each epoch (or use ``persistent_workers=True``) so that workers, which
    start from the main process's copy, reshuffle each epoch. ``state_dict``/``load_state_dict`` follow
    torchdata's ``Stateful`` protocol, so ``StatefulDataLoader`` checkpoints it (per worker).

    >>> import headrace as hr
    >>> ds = IterableDataset(hr.Dataset.range(5).batch(2))
    >>> [b.tolist() for b in torch.utils.data.DataLoader(ds, batch_size=None)]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset: Dataset, *, remainder: str = "repeat"):
        super().__init__()
        self.dataset = _with_layout(dataset, remainder)
        self._state = _State()
        self._applied_epoch: int | None = None
        # Random stages draw each iteration's seed from their node's counter. A DataLoader worker
        # starts from a copy of the main process's nodes every epoch, whose counters never moved:
        # its iterations count from the epoch instead, as the epoch-th iteration in one process would.
        self._seeds: Seeds | None = None
        self._warned = _SharedFlag()  # the DataLoader batch_size warning

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next iteration is, for its shuffles (as ``DistributedSampler.set_epoch``)."""
        self._state.epoch = int(epoch)

    def __iter__(self) -> _WorkerIterator:
        _check_collation(self.dataset, self._warned)
        layout = current_layout()
        epoch = self._state.epoch
        in_worker = torch.utils.data.get_worker_info() is not None
        # A persistent worker iterates again with the epoch it was started with: its numbers have
        # moved on since, so only a new epoch number starts them again.
        if epoch is not None and in_worker and epoch != self._applied_epoch:
            self._seeds = Seeds(self.dataset.node, epoch)
            self._applied_epoch = epoch
        with job_layout(layout):
            iterator = self.dataset._iterate(self._seeds)
        if self._state.pending is not None:
            iterator.set_state(self._state.pending)
            self._state.pending = None
        return _WorkerIterator(iterator, epoch)

    def __len__(self) -> int:
        """Batches this rank gets in an epoch, over all its workers (what ``len(DataLoader)`` shows)."""
        return _rank_length(self.dataset, current_layout(split_workers=False))

    def state_dict(self) -> dict:
        return {"epoch": self._state.epoch, "iterator": self._state.pending}

    def load_state_dict(self, state: dict) -> None:
        self._state.load(state, "IterableDataset")


class Loader:
    """Iterate a headrace Dataset as a training loop iterates a DataLoader (see :func:`to_torch`).

    Each ``iter(loader)`` is one epoch of this rank's share, as tensors. ``len(loader)`` is the number
    of batches per epoch (when the dataset's cardinality is known). ``state_dict()`` is exact: a
    loader restored from it continues after the last batch this one yielded, in this or a new process
    (also with another number of ranks: see ``Dataset.distribute``).
    """

    def __init__(
        self,
        dataset: Dataset,
        device: Any = None,
        pin_memory: bool = True,
        prefetch: int = 2,
        remainder: str = "repeat",
    ):
        if not isinstance(prefetch, int) or isinstance(prefetch, bool) or prefetch < 0:
            raise InvalidArgumentError(
                f"prefetch={prefetch!r} is not allowed: an int >= 0 (batches on device)"
            )
        self.dataset = _with_layout(dataset, remainder)
        self.device = torch.device(device) if device is not None else None
        cuda = self.device is not None and self.device.type == "cuda"
        if cuda and not torch.cuda.is_available():
            raise InvalidArgumentError(f"device={device!r}: torch sees no CUDA device")
        # Pinning needs a CUDA device (pinned pages only help copies to one): elsewhere it is skipped.
        self.pin_memory = bool(pin_memory) and cuda
        self.prefetch = prefetch if cuda else 0
        self.layout = current_layout(split_workers=False)
        self._state = _State()
        self._iterator: Iterator | None = None
        self._ahead: ReadAhead | None = None  # batches copied ahead, when prefetching to a device
        self._epochs = 0

    def __len__(self) -> int:
        return _rank_length(self.dataset, self.layout)

    def set_epoch(self, epoch: int) -> None:
        """Accepted for DistributedSampler-style loops; epochs already reshuffle on their own."""
        self._state.epoch = int(epoch)

    def __iter__(self):
        if self._iterator is not None:
            self._iterator.close()  # an epoch left early: release its threads now, not at collection
        with job_layout(self.layout):
            iterator = iter(self.dataset)
        if self._state.pending is not None:
            iterator.set_state(self._state.pending)
            self._state.pending = None
        self._iterator = iterator
        self._ahead = None
        self._epochs += 1
        if self.device is None:
            return self._host_batches(iterator)
        if self.device.type != "cuda":
            return (map_structure(self._to_device, batch) for batch in self._host_batches(iterator))
        return self._cuda_batches(iterator)

    def _host_batches(self, iterator: Iterator):
        for batch in iterator:
            yield to_tensors(batch)

    def _to_device(self, leaf: Any) -> Any:
        return leaf.to(self.device) if isinstance(leaf, torch.Tensor) else leaf

    def _cuda_batches(self, iterator: Iterator):
        """Copy ``prefetch`` batches ahead on a side stream: the copy overlaps the model's compute."""
        stream = torch.cuda.Stream(self.device)
        current = torch.cuda.current_stream(self.device)

        def upload(batch: Any) -> Any:
            host = to_tensors(batch)
            if self.pin_memory:
                host = map_structure(lambda t: t.pin_memory() if isinstance(t, torch.Tensor) else t, host)
            with torch.cuda.stream(stream):
                return map_structure(
                    lambda t: t.to(self.device, non_blocking=True) if isinstance(t, torch.Tensor) else t, host
                )

        ahead = ReadAhead(iterator, max(self.prefetch, 1), upload)
        self._ahead = ahead
        for batch in ahead:
            current.wait_stream(stream)
            # The side stream's memory is now used on the compute stream: tell the allocator.
            map_structure(lambda t: t.record_stream(current) if isinstance(t, torch.Tensor) else None, batch)
            yield batch

    def state_dict(self) -> dict:
        """Where this loader stands: restore with ``load_state_dict`` before the next ``iter``."""
        if self._iterator is None:
            return {"epoch": self._state.epoch, "iterator": self._state.pending}
        state = self._ahead.get_state() if self._ahead is not None else self._iterator.get_state()
        return {"epoch": self._state.epoch, "iterator": state}

    def load_state_dict(self, state: dict) -> None:
        self._state.load(state, "Loader")
        self._iterator = None


def to_torch(
    dataset: Dataset,
    device: Any = None,
    pin_memory: bool = True,
    prefetch: int = 2,
    remainder: str = "repeat",
) -> Loader:
    """A :class:`Loader`: this rank's share of ``dataset`` as tensors, on ``device`` if given.

    On a CUDA ``device``, batches are pinned (``pin_memory``) and copied ``prefetch`` batches ahead on
    a side stream; elsewhere ``pin_memory`` and ``prefetch`` do nothing. ``remainder`` is given to the
    ``distribute()`` stage added when the dataset has none (see ``Dataset.distribute``).

    >>> import headrace as hr
    >>> [b.dtype for b in to_torch(hr.Dataset.range(4).batch(2), device="cpu")]
    [torch.int64, torch.int64]
    """
    return Loader(dataset, device, pin_memory, prefetch, remainder)
