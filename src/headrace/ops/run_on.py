"""``Dataset.run_on``: the pipeline above this point runs on Ray actors; elements stream back.

The facade splits the pipeline into ``num_workers`` shares (each source sharded right after it, so
share ``j`` reads source elements ``j, j + N, ...`` and the shares partition every epoch). Worker
``j`` runs share ``j`` as a Ray actor. The trainer keeps at most ``prefetch`` calls of ``chunk_size``
elements outstanding per worker (backpressure: memory is bounded on both sides) and tracks, per
share, the worker state at the start of the chunk in hand and how many of its elements were served.
That pair is the checkpoint, and it is what a replacement actor starts from when a worker or its
node dies, so a lost share is re-run from where it stood, with nothing lost or served twice.

``deterministic=True`` serves the shares round-robin, element by element: the order does not depend
on timing (and, for a pipeline of one source and 1:1 maps, equals the local order).
``deterministic=False`` serves whichever share's chunk is ready first.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..core.counters import StageCounters
from ..core.errors import CheckpointError, add_note, check
from ..core.node import Context, Fields, Node, NodeIterator
from ..core.state import Field, Int, StateFields

MAX_RESTARTS = 3  # per share and epoch: a share that kills its worker again and again is a bug, not bad luck


class RunOnNode(Node):
    """Elements of ``shares`` (the parent split ``num_workers`` ways) computed on Ray actors."""

    op = "run_on"
    fields = Fields(
        "shares", "address", "chunk_size", "prefetch", "cpus_per_worker", settings=("deterministic",)
    )

    def __init__(
        self,
        parent: Node,
        shares: tuple[Node, ...],
        address: str | None,
        deterministic: bool = True,
        chunk_size: int = 64,
        prefetch: int = 2,
        cpus_per_worker: float = 1.0,
        name: str | None = None,
    ):
        check(address is None or isinstance(address, str), "address", address, "None or 'HOST:PORT' / 'auto'")
        check(len(shares) > 0, "num_workers", len(shares), "a positive int")
        check(isinstance(chunk_size, int) and chunk_size > 0, "chunk_size", chunk_size, "a positive int")
        check(isinstance(prefetch, int) and prefetch > 0, "prefetch", prefetch, "a positive int")
        check(cpus_per_worker >= 0, "cpus_per_worker", cpus_per_worker, "a number of CPUs >= 0")
        super().__init__(parent)
        self.shares = tuple(shares)
        self.address = address
        self.deterministic = bool(deterministic)
        self.chunk_size = chunk_size
        self.prefetch = prefetch
        self.cpus_per_worker = cpus_per_worker
        self.name = name

    def describe_args(self) -> str:
        where = "local ray" if self.address is None else repr(self.address)
        return f"{where}, num_workers={len(self.shares)}" + (
            "" if self.deterministic else ", deterministic=False"
        )

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def cardinality(self) -> int:
        return self.parents[0].cardinality()  # the shares partition the parent's elements

    def iterator(self, ctx: Context) -> RunOnIterator:
        return RunOnIterator(self, ctx)


class _Lane:
    """The trainer's view of one share: its actor, calls in flight, and the chunk in hand."""

    def __init__(self, state: dict | None = None, skip: int = 0, done: bool = False):
        self.actor: Any = None
        self.pending: deque = deque()
        self.state, self.skip = state, skip  # the worker state at the start of the chunk in hand ...
        self.resume = (state, skip)  # ... and where a new actor starts: just after that chunk
        self.chunk: list = []
        self.consumed = 0
        self.done = done
        self.restarts = 0

    def saved(self) -> dict:
        return {"state": self.state, "skip": self.skip + self.consumed, "done": self.done}


class _Shares(Field):
    """Each share's worker state at its chunk in hand, the elements of it served, and whether it
    ended; restoring stops the actors running (new ones start from the restored shares)."""

    def save(self, stage: Any) -> list:
        return [lane.saved() for lane in stage.lanes]

    def load(self, fields: StateFields, stage: Any, values: dict) -> list[_Lane]:
        lanes = []
        for j, saved in enumerate(fields.list(self.name, length=len(stage.lanes))):
            if not (
                isinstance(saved, dict)
                and set(saved) == {"state", "skip", "done"}
                and (saved["state"] is None or isinstance(saved["state"], dict))
                and isinstance(saved["skip"], int)
                and saved["skip"] >= 0
                and isinstance(saved["done"], bool)
            ):
                raise CheckpointError(
                    f"{stage.name}: {self.name}[{j}] of the saved state is not a share's state: {saved!r}"
                )
            lanes.append(_Lane(saved["state"], saved["skip"], saved["done"]))
        return lanes

    def restore(self, stage: Any, value: Any) -> None:
        for lane in stage.lanes:
            if lane.actor is not None:
                stage._stop(lane)
        stage.lanes = value


class RunOnIterator(NodeIterator[RunOnNode]):
    state_fields = (_Shares("shares"), Int("turn", high=lambda stage, values: len(stage.lanes) - 1))

    def __init__(self, node: RunOnNode, ctx: Context):
        super().__init__(node)
        self.ctx = ctx
        self.ray: Any = None
        self.lanes = [_Lane() for _ in node.shares]
        self.turn = 0  # the share that serves next, when deterministic

    # --- actors -----------------------------------------------------------------------------------
    def _connect(self) -> None:
        from ..ray.cluster import connect  # noqa: PLC0415 (Ray is an optional extra)
        from ..ray.workers import died_errors, worker_class  # noqa: PLC0415

        self.ray = connect(self.node.address)
        self._worker = worker_class(self.ray, self.node.cpus_per_worker)
        self._died = died_errors(self.ray)

    def _start(self, j: int) -> None:
        lane = self.lanes[j]
        state, skip = lane.resume
        lane.actor = self._worker.remote(self.node.shares[j], self.ctx.options, state, skip)
        lane.pending.clear()

    def _top_up(self, lane: _Lane) -> None:
        while len(lane.pending) < self.node.prefetch:
            lane.pending.append(lane.actor.next_chunk.remote(self.node.chunk_size))

    def _stop(self, lane: _Lane) -> None:
        if lane.actor is not None:
            self.ray.kill(lane.actor, no_restart=True)
            lane.actor = None
        lane.pending.clear()

    def _receive(self, j: int, ref: Any) -> None:
        """Take the reply ``ref`` of share ``j`` as its chunk in hand; restart the share if it died."""
        lane = self.lanes[j]
        try:
            elements, state_after, exhausted = self.ray.get(ref)
        except self._died as exc:
            lane.restarts += 1
            if lane.restarts > MAX_RESTARTS:
                raise RuntimeError(
                    f"{self.name}: the worker of share {j} died {lane.restarts} times this epoch (last: "
                    f"{type(exc).__name__}); check the workers' memory and the nodes' health (`ray status`)"
                ) from exc
            self._stop(lane)
            self._start(j)  # from lane.resume: just after the chunk in hand
            return
        except self.ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            error = cause if isinstance(cause, BaseException) else exc
            add_note(  # BaseException.add_note is Python 3.11+; this works on 3.10 too
                error, f"headrace: raised on the Ray worker of share {j} of {len(self.lanes)} in {self.name}"
            )
            raise error from None
        lane.state, lane.skip = lane.resume
        lane.chunk, lane.consumed = elements, 0
        lane.resume = (state_after, 0)
        if exhausted:
            lane.done = True
            self._stop(lane)

    def _fill(self, j: int) -> bool:
        """Make share ``j`` hold an unserved element; False when it is exhausted."""
        lane = self.lanes[j]
        while lane.consumed >= len(lane.chunk):
            if lane.done:
                return False
            if lane.actor is None:
                self._start(j)
            self._top_up(lane)
            self._receive(j, lane.pending.popleft())
        return True

    # --- protocol ---------------------------------------------------------------------------------
    def __next__(self) -> Any:
        if self.ray is None:
            self._connect()
        lanes = self.lanes
        if self.node.deterministic:
            for _ in range(len(lanes)):
                j = self.turn
                self.turn = (self.turn + 1) % len(lanes)
                if self._fill(j):
                    return self._serve(lanes[j])
            raise StopIteration
        for lane in lanes:  # the chunk in hand first, then whatever is ready
            if not lane.done and lane.consumed < len(lane.chunk):
                return self._serve(lane)
        while True:
            live = [j for j, lane in enumerate(lanes) if not lane.done]
            if not live:
                raise StopIteration
            for j in live:
                if lanes[j].actor is None:
                    self._start(j)
                self._top_up(lanes[j])
            heads = {lanes[j].pending[0]: j for j in live}
            ready, _ = self.ray.wait(list(heads), num_returns=1)
            j = heads[ready[0]]
            lanes[j].pending.popleft()
            self._receive(j, ready[0])
            if lanes[j].consumed < len(lanes[j].chunk):
                return self._serve(lanes[j])

    def _serve(self, lane: _Lane) -> Any:
        element = lane.chunk[lane.consumed]
        lane.chunk[lane.consumed] = None  # served: do not hold it
        lane.consumed += 1
        self.produced += 1
        return element

    def reset(self) -> None:
        if self.ray is None:
            self._connect()
        refs = []
        for j, lane in enumerate(self.lanes):
            if lane.actor is None:  # exhausted: a fresh actor at the end of the epoch resets like the old one
                self._start(j)
            refs.append(
                lane.actor.reset.remote()
            )  # runs after the calls in flight, whose replies are dropped
        for j, (lane, ref) in enumerate(zip(self.lanes, refs)):
            try:
                state = self.ray.get(ref)
            except self._died:  # died since its last reply: a new one from there resets the same way
                self._stop(lane)
                self._start(j)
                state = self.ray.get(lane.actor.reset.remote())
            lane.pending.clear()
            lane.state, lane.skip, lane.resume = state, 0, (state, 0)
            lane.chunk, lane.consumed, lane.done, lane.restarts = [], 0, False, 0
        self.turn = 0

    def counters(self) -> StageCounters:
        return {
            **super().counters(),
            "workers": len(self.lanes),
            "restarts": sum(lane.restarts for lane in self.lanes),
        }

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.ray is not None and self.ray.is_initialized():
            for lane in self.lanes:
                self._stop(lane)
