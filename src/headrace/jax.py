"""JAX: batches on devices ahead of the step, one process or many.

:func:`prefetch_to_device` iterates a headrace Dataset (or any iterable of numpy batches) and puts
each batch on devices ``size`` batches before it is needed (``jax.device_put`` is asynchronous, so
the copy overlaps the step). With a ``sharding``, each batch becomes one global ``jax.Array`` built
by ``jax.make_array_from_process_local_data``: in a multi-process job every process passes its own
share (a ``distribute()`` stage takes ``jax.process_index()`` of ``jax.process_count()``; one is
added at the end of a pipeline that has none) and the arrays span all processes' devices. See docs/jax.md.

>>> import headrace as hr, headrace.jax
>>> [b.tolist() for b in headrace.jax.prefetch_to_device(hr.Dataset.range(4).batch(2), size=2)]
[[0, 1], [2, 3]]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import jax
import numpy as np

from .core.errors import InvalidArgumentError
from .core.structure import map_structure
from .dataset import Dataset
from .lookahead import ReadAhead
from .ops.distribute import Layout, has_distribute, job_layout

__all__ = ["DeviceIterator", "current_layout", "prefetch_to_device"]


def current_layout() -> Layout:
    """This process's place in a multi-process JAX job (``jax.process_index()`` of ``process_count()``)."""
    return Layout(jax.process_count(), jax.process_index())


class DeviceIterator:
    """Batches on devices, read ``size`` ahead; ``get_state``/``set_state`` as a headrace Iterator's,
    describing the batches handed out (not those read ahead). Returned by :func:`prefetch_to_device`."""

    def __init__(self, data: Dataset | Iterable, size: int, sharding: Any):
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise InvalidArgumentError(f"size={size!r} is not allowed: an int >= 1 (batches in flight)")
        if sharding is not None and not isinstance(sharding, jax.sharding.Sharding):
            raise InvalidArgumentError(
                f"sharding={sharding!r} is not allowed: None (the default device) or a jax.sharding.Sharding"
            )
        self.sharding = sharding
        if isinstance(data, Dataset):
            if not has_distribute(data.node):
                data = data.distribute()  # each process its own share (one process: all of it)
            with job_layout(current_layout()):
                self._source: Any = iter(data)
            self._ahead: ReadAhead | None = ReadAhead(self._source, size, self._put)
            self._iterator: Any = self._ahead
        else:
            self._source, self._ahead = None, None
            self._iterator = _plain_read_ahead(iter(data), size, self._put)

    def _put_leaf(self, leaf: Any) -> Any:
        array = np.asarray(leaf)
        if array.dtype == object:
            return leaf  # strings stay on the host
        if self.sharding is None:
            return jax.device_put(array)
        return jax.make_array_from_process_local_data(self.sharding, array)

    def _put(self, batch: Any) -> Any:
        return map_structure(self._put_leaf, batch)

    def __iter__(self) -> DeviceIterator:
        return self

    def __next__(self) -> Any:
        return next(self._iterator)

    def get_state(self) -> dict:
        if self._ahead is None:
            raise TypeError("get_state needs a headrace Dataset as the input of prefetch_to_device")
        return self._ahead.get_state()

    def set_state(self, state: dict) -> None:
        """Restore before the first batch is taken (batches already read ahead are dropped)."""
        if self._ahead is None:
            raise TypeError("set_state needs a headrace Dataset as the input of prefetch_to_device")
        self._source.set_state(state)
        self._ahead = ReadAhead(self._source, self._ahead.depth, self._put)
        self._iterator = self._ahead


def _plain_read_ahead(iterator, size: int, put):
    queue: list = []
    for batch in iterator:
        queue.append(put(batch))
        if len(queue) > size:
            yield queue.pop(0)
    yield from queue


def prefetch_to_device(data: Dataset | Iterable, size: int = 2, sharding: Any = None) -> DeviceIterator:
    """Iterate ``data`` with each batch put on devices ``size`` batches ahead of use.

    ``sharding`` (a ``jax.sharding.Sharding``) makes each leaf a global array from this process's
    rows (``jax.make_array_from_process_local_data``, which infers the global shape from every
    process having as many rows: ``distribute`` makes it so). String leaves stay numpy.

    >>> import headrace as hr
    >>> mesh = jax.sharding.Mesh(jax.devices(), ("data",))
    >>> rows = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data"))
    >>> batch = next(prefetch_to_device(hr.Dataset.range(8).batch(len(jax.devices())), sharding=rows))
    >>> batch.sharding == rows, batch.shape == (len(jax.devices()),)
    (True, True)
    """
    return DeviceIterator(data, size, sharding)
