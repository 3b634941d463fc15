"""Exact checkpoints for a stage that pulls ahead of what it hands out: the :class:`Ledger`.

A parallel stage (the parallel map, prefetch's producer, ``parallelize``'s workers, the parallel
interleave's slot readers) pulls inputs ahead of what it has handed out, yet its checkpoint must be
the state after the last element handed out. Its :class:`Ledger` keeps what was pulled and not handed
out, by position, and ``parent.get_state()`` snapshots taken right after pulls: a checkpoint is the
first snapshot at or after what was handed out plus the entries still owed before it (none, or the
rest of a chunk). Snapshots are cheap for most inputs (an index, an offset), but not all (a shuffle
buffer is encoded whole), so they are taken on a budget (:class:`SnapshotPolicy`): at most
:data:`SHARE` of the wall time between pulls. Without one, the checkpoint is the input's current
state plus every entry owed - exact either way, only larger.

>>> ledger = Ledger()
>>> for position in range(3):  # pulls 0, 1, 2; a snapshot after each, as the budget allows
...     ledger.entries[position] = (OUTPUT, position * 10)
...     ledger.keep(position + 1, ledger.policy.take(lambda: {"index": position + 1}))
>>> del ledger.entries[0]; ledger.high = 1  # element 0 handed out
>>> ledger.cut(), ledger.elements(1)  # the state after it, nothing owed before it
((1, {'index': 1}), [])
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from ..core.errors import attempt
from ..core.node import perf_ns
from ..core.process import PROCESS
from ..core.state import OUTPUT, owed_rows

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


class Ledger:
    """What a stage pulled and has not handed out, and where its parent was after some pulls.

    ``entries``: position -> ``(kind, value, ...)``, ascending, the kinds of ``NodeIterator.owed``:
    OUTPUT (a value), INPUT (an input not computed yet), ERROR (the parallel map's ``(exception,
    input)``, else the exception; never saved), or the stage's own (never saved). The stage pops an
    entry when it hands it out and raises ``high`` past it (out of order, the unordered map leaves
    entries below ``high``: still owed). ``snapshots``: ``(position, parent state after the pulls
    before it)``, ascending; those below ``high`` can no longer start a checkpoint and are dropped.
    Positions count the stage's own pulls (elements, or a worker's items); the stage keeps that
    count. ``marks``: while calls are recorded (``record_calls``), the position that starts a chunk a
    worker computed -> that chunk's slice number, reported when the entry is handed out
    (:meth:`handed_out`: the trace's arrow from the chunk lands on the call that handed it out,
    whatever order chunks finished in). The owner's lock, if any, guards the ledger.
    """

    def __init__(self) -> None:
        self.entries: dict[int, tuple] = {}
        self.snapshots: deque[tuple[int, dict]] = deque()
        self.high = 0  # one past the largest position handed out
        self.policy = SnapshotPolicy()
        self.marks: dict[int, int] = {}

    def handed_out(self, position: int, key: int) -> None:
        """Report handing out ``position`` if a recorded chunk starts there (``CallLog.deliver`` for
        the stage ``key``). Callers check ``marks`` first: empty unless recording."""
        number = self.marks.pop(position, None)
        log = PROCESS.recorder
        if number is not None and log is not None:
            log.deliver(key, number)

    def keep(self, at: int, state: dict | None) -> None:
        """Keep ``state``, the parent's after the pulls before ``at`` (one the budget allowed, a
        worker's, a restored one); None: the budget allowed none."""
        if state is not None:
            snapshots, high = self.snapshots, self.high
            while snapshots and snapshots[0][0] < high:  # here, not per element handed out: bounded
                snapshots.popleft()
            snapshots.append((at, state))

    def cut(self) -> tuple[int, dict] | None:
        """``(position, parent state)`` for a checkpoint now: the first snapshot at or after ``high``."""
        snapshots = self.snapshots
        while snapshots and snapshots[0][0] < self.high:
            snapshots.popleft()
        return snapshots[0] if snapshots else None

    def elements(self, before: int | None = None) -> list:
        """The values still owed before ``before`` (all without it): a restore serves them first."""
        return [e[1] for p, e in self.entries.items() if e[0] == OUTPUT and (before is None or p < before)]

    def rows(self, before: int) -> list[list]:
        """The entries owed before ``before`` as ``[position, is_output, element]`` rows, encoded (an
        error as its input, to compute again): the serial map's ``owed`` format."""
        return owed_rows((p, e[0], e[1]) for p, e in self.entries.items() if p < before)

    def restart(self, high: int = 0) -> None:
        """Forget everything pulled (a reset, or a restore, which then keeps the restored state)."""
        self.entries.clear()
        self.snapshots.clear()
        self.marks.clear()
        self.high = high
