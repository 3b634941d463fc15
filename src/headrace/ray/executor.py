"""A ``concurrent.futures``-style executor whose calls run as Ray tasks (``headrace convert --ray``)."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

from ..core.errors import attempt
from .cluster import connect


class RayExecutor:
    """``submit(fn, *args)`` runs ``fn`` as a Ray task somewhere in the cluster; the futures it returns
    work with ``concurrent.futures.as_completed``. Output paths must be visible to every node.

    >>> with RayExecutor() as pool:  # doctest: +SKIP
    ...     pool.submit(pow, 2, 10).result()
    1024
    """

    def __init__(self, address: str | None = None, cpus_per_task: float = 1.0):
        self.ray = connect(address)
        self._remote: dict[Callable, Any] = {}
        self._refs: list[Any] = []
        self.cpus_per_task = cpus_per_task

    def submit(self, fn: Callable, *args: Any) -> concurrent.futures.Future:
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self.ray.remote(fn).options(
                num_cpus=self.cpus_per_task, max_retries=3
            )
        ref = remote.remote(*args)
        self._refs.append(ref)
        return ref.future()

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        if cancel_futures:
            for ref in self._refs:
                attempt(self.ray.cancel, ref)  # raises when finished already
        if wait:
            # Cancelled or failed tasks raise here; they have stopped, which is all that matters now.
            for ref in self._refs:
                attempt(self.ray.get, ref)
        self._refs.clear()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
