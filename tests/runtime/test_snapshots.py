"""The snapshot budget: cheap input states are snapshotted after every pull, costly ones rarely."""

from __future__ import annotations

import time

from headrace.runtime.snapshots import SnapshotPolicy
from tests.helpers.clock import FakeClock


def test_cheap_states_are_taken_every_time(monkeypatch):
    # On the stage clock (faked: a busy machine cannot stretch it): 200 us between pulls earns the
    # budget of a state that costs 1 us to take.
    clock = FakeClock()
    monkeypatch.setattr("headrace.runtime.snapshots.perf_ns", clock)
    policy = SnapshotPolicy()

    def cheap(i: int) -> dict:
        clock.advance(1e-6)
        return {"index": i}

    taken = 0
    for index in range(50):
        clock.advance(200e-6)
        taken += policy.take(lambda i=index: cheap(i)) is not None
    assert taken == 50


def test_costly_states_are_taken_within_the_budget():
    policy = SnapshotPolicy(share=0.05)

    def slow_state():
        time.sleep(0.005)
        return {}

    for _ in range(40):
        time.sleep(0.001)
        policy.take(slow_state)
    # 40 pulls 1 ms apart earn about 2 ms of snapshots: the first (free) and a few more, not 40.
    assert 1 <= policy.taken <= 10 and policy.skipped >= 30


def test_a_failing_state_turns_snapshots_off():
    policy = SnapshotPolicy()

    def broken():
        raise NotImplementedError("no state")

    assert policy.take(broken) is None
    assert not policy.enabled and policy.take(lambda: {"x": 1}) is None


def test_a_ledger_cuts_at_the_first_snapshot_after_what_was_handed_out():
    from headrace.core.state import ERROR, INPUT, OUTPUT, decode_element
    from headrace.runtime.snapshots import Ledger

    ledger = Ledger()
    ledger.entries.update({0: (OUTPUT, 10), 1: (ERROR, (ValueError(), 1)), 2: (INPUT, 2), 3: (OUTPUT, 13)})
    ledger.keep(2, {"at": 2})
    ledger.keep(4, {"at": 4})
    assert ledger.cut() == (2, {"at": 2}) and ledger.elements(2) == [10]
    del ledger.entries[3]  # handed out of order: 0 to 2 are still owed, the snapshot at 2 is stale
    ledger.high = 4
    assert ledger.cut() == (4, {"at": 4}) and len(ledger.snapshots) == 1
    rows = ledger.rows(4)  # the serial map's owed rows: the failed element as its input, again
    assert [(p, out, int(decode_element(v))) for p, out, v in rows] == [
        (0, True, 10),
        (1, False, 1),
        (2, False, 2),
    ]
    ledger.high = 5  # past every snapshot: the stage asks its parent, and owes everything
    assert ledger.cut() is None and ledger.elements() == [10]
    ledger.restart(7)
    assert (ledger.entries, ledger.cut(), ledger.high) == ({}, None, 7)
