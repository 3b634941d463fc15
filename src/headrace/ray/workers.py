"""The Ray actor that runs one share of a pipeline for :meth:`headrace.Dataset.run_on`.

The actor computes only when asked (one chunk per call), so it holds nothing beyond its iterator's
own buffers: the trainer's bounded number of outstanding calls is the backpressure. Every reply
carries the iterator's state after the chunk, which is what makes a restart exact.
"""

from __future__ import annotations

from typing import Any

from ..core.node import Context, Node
from ..core.options import Options


class PipelineWorker:
    """One share's iterator, started at ``state`` (None: fresh) after skipping ``skip`` elements."""

    def __init__(self, share: Node, options: Options | None, state: dict | None, skip: int):
        self.iterator = share.iterator(Context(options))
        # Applied by the first call, not here: an error in a constructor kills the actor, which the
        # trainer would take for a dead node; raised by a call, it reaches the trainer as itself.
        self.start: tuple[dict | None, int] | None = (state, skip)

    def _started(self) -> None:
        if self.start is None:
            return
        (state, skip), self.start = self.start, None
        if state is not None:
            self.iterator.set_state(state)
        while skip > 0:
            try:
                skip -= len(self.iterator.next_chunk(skip))
            except StopIteration:
                break

    def next_chunk(self, n: int) -> tuple[list, dict, bool]:
        """Up to ``n`` elements, the state after them, and whether the share is exhausted."""
        self._started()
        try:
            elements = self.iterator.next_chunk(n)
        except StopIteration:
            return [], self.iterator.get_state(), True
        return elements, self.iterator.get_state(), False

    def reset(self) -> dict:
        """Start the next epoch; returns the state at its start."""
        self._started()
        self.iterator.reset()
        return self.iterator.get_state()

    def where(self) -> str:
        import ray  # noqa: PLC0415

        context = ray.get_runtime_context()
        return f"node {context.get_node_id()[:8]}"

    def close(self) -> None:
        self.iterator.close()


def worker_class(ray: Any, cpus: float) -> Any:
    """The actor class: no Ray-side restarts (the trainer restarts a share from its last state, which
    Ray's own restart would not know), spread over the nodes."""
    return ray.remote(PipelineWorker).options(num_cpus=cpus, max_restarts=0, scheduling_strategy="SPREAD")


def died_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Ray errors that mean the worker or its node is gone (its share is re-run), not a user error."""
    names = (
        "RayActorError",
        "ActorUnavailableError",
        "ObjectLostError",
        "WorkerCrashedError",
        "NodeDiedError",
    )
    return tuple(getattr(ray.exceptions, name) for name in names if hasattr(ray.exceptions, name))
