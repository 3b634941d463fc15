"""When a background stage may afford to snapshot its input's state.

A parallel stage pulls inputs ahead of what it has handed out, yet its checkpoint must be the state
after the last element handed out. It keeps ``parent.get_state()`` snapshots taken right after pulls:
then a checkpoint is a snapshot plus nothing (or a few inputs still in flight). Snapshots are cheap
for most inputs (an index, an offset), but not all (a shuffle buffer is encoded whole), so they are
taken on a budget: at most :data:`SHARE` of the wall time between pulls. When the budget does not
allow one, the checkpoint falls back to the input's current state plus the buffered elements,
encoded - exact either way, only larger.

>>> policy = SnapshotPolicy()
>>> policy.take(lambda: {"index": 3})
{'index': 3}
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.errors import attempt
from ..core.node import perf_ns

SHARE = 0.05
MAX_CREDIT_NS = 50_000_000


class SnapshotPolicy:
    def __init__(self, share: float = SHARE):
        self.share = share
        self.cost_ns = 0  # what the last snapshot cost
        self.credit_ns: float = 0
        self.last_ns = perf_ns()
        self.enabled = True
        self.taken = 0
        self.skipped = 0

    def take(self, get_state: Callable[[], dict]) -> dict | None:
        """``get_state()`` if the budget allows it now, else None."""
        if not self.enabled:
            return None
        now = perf_ns()
        self.credit_ns = min(self.credit_ns + self.share * (now - self.last_ns), MAX_CREDIT_NS)
        self.last_ns = now
        if self.credit_ns < self.cost_ns:
            self.skipped += 1
            return None
        saved, state = attempt(get_state)
        if not saved:  # no snapshots then; a checkpoint asks the input itself
            self.enabled = False
            return None
        end = perf_ns()
        self.cost_ns = end - now
        self.credit_ns -= self.cost_ns
        self.last_ns = end
        self.taken += 1
        return state
