"""``prefetch``: same elements, bounded buffer, errors in order, exact checkpoints, clean stop."""

from __future__ import annotations

import gc
import json
import sys
import threading
import time

import cloudpickle
import numpy as np
import pytest

import headrace as hr
from headrace import AUTOTUNE, InvalidArgumentError
from headrace.runtime.defaults import AUTOTUNE_PREFETCH_BUFFER
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process
from tests.helpers.clock import install_fake_clock

pytestmark = pytest.mark.timeout(60)
# Process workers get this module's functions by value instead of importing it (and pytest) each.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def producer_threads() -> list[threading.Thread]:
    gc.collect()  # iterators kept alive by earlier tests' tracebacks
    return [t for t in threading.enumerate() if t.name.startswith("headrace") and "producer" in t.name]


def wait_for(condition, seconds: float = 30.0) -> None:
    """Wait until ``condition()`` holds; ``seconds`` is a hang guard, not a speed bound."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached (hang guard)"
        time.sleep(0.01)


@pytest.mark.parametrize("size", [1, 3, AUTOTUNE, 0])
def test_prefetch_yields_the_same_elements(size):
    ds = hr.Dataset.range(25).map(lambda x: x * 2).prefetch(size)
    assert [int(x) for x in ds] == list(range(0, 50, 2))
    assert ds.cardinality() == 25
    assert ds.element_spec == hr.Dataset.range(1).element_spec


def test_buffer_is_bounded_however_slow_the_consumer():
    pulled = []
    ds = hr.Dataset.range(1000).map(lambda x: pulled.append(int(x)) or x).prefetch(4)
    it = iter(ds)
    next(it)
    wait_for(lambda: it.root.counters()["buffered"] == 4)
    time.sleep(0.1)  # the thread would run far ahead if it were not bounded
    # 1 handed out, 4 buffered, at most 1 more pulled and waiting for room.
    assert len(pulled) <= 6
    assert it.root.counters()["buffered"] == 4
    it.close()


def test_upstream_errors_arrive_in_order_and_iteration_goes_on():
    def fail_on_2(x):
        if x == 2:
            raise KeyError("two")
        return int(x)

    it = iter(hr.Dataset.range(5).map(fail_on_2).prefetch(3))
    assert [next(it), next(it)] == [0, 1]
    with pytest.raises(KeyError, match="two") as info:
        next(it)
    assert any("on input element 2" in note for note in info.value.__notes__)
    assert list(it) == [3, 4]


def test_chunks_stop_before_an_error():
    def fail_on_2(x):
        if x == 2:
            raise KeyError("two")
        return int(x)

    it = iter(hr.Dataset.range(5).map(fail_on_2).prefetch(5).batch(5))
    time.sleep(0.05)
    with pytest.raises(KeyError):
        next(it)
    assert [b.tolist() for b in it] == [[0, 1, 3, 4]]


def make_prefetched():
    return hr.Dataset.range(17).map(lambda x: np.full(2, x)).prefetch(3).batch(2)


@pytest.mark.parametrize(
    "make",
    [
        make_prefetched,
        lambda: hr.Dataset.range(9).prefetch(2).repeat(2),
        lambda: hr.Dataset.range(9).repeat(2).prefetch(1),
        lambda: hr.Dataset.range(30).shuffle(10, seed=3).prefetch(4),
        lambda: (
            hr.Dataset.range(20).map(lambda x: x + 1, num_parallel_calls=2, executor="thread").prefetch(2)
        ),
    ],
    ids=["map-batch", "in-repeat", "after-repeat", "shuffle", "parallel-map"],
)
def test_checkpoints_are_exact(make):
    check_checkpoints(make)


def test_checkpoints_restore_in_a_fresh_process():
    check_fresh_process("tests.ops.test_prefetch:make_prefetched", after=3)


def test_state_holds_buffered_elements_when_snapshots_are_unaffordable():
    ds = hr.Dataset.range(10).prefetch(3)
    it = iter(ds)
    it.root.producer.ledger.policy.share = 0.0  # no budget: no snapshot after the first
    assert [int(next(it)) for _ in range(2)] == [0, 1]
    wait_for(lambda: it.root.counters()["buffered"] == 3)
    state = json.loads(json.dumps(it.get_state()))
    inner = state["state"]
    assert len(inner["buffer"]) >= 1  # owed elements travel in the checkpoint
    fresh = iter(ds)
    fresh.set_state(state)
    assert [int(x) for x in fresh] == list(range(2, 10))
    it.close()


def test_invalid_buffer_sizes_are_named():
    for bad in (-2, 1.5, True, "4"):
        with pytest.raises(InvalidArgumentError, match="buffer_size"):
            hr.Dataset.range(3).prefetch(bad)


def test_autotune_and_zero_are_documented_defaults():
    with iter(hr.Dataset.range(3).prefetch(AUTOTUNE)) as it:
        assert it.root.counters()["buffer_capacity"] == AUTOTUNE_PREFETCH_BUFFER
    with iter(hr.Dataset.range(3).prefetch(0)) as it:
        assert it.root.node.op == "range"  # no stage, no thread
    assert "prefetch(AUTOTUNE)" in hr.Dataset.range(3).prefetch(AUTOTUNE).describe()


def test_counters_tell_starvation_from_saturation(monkeypatch):
    # Times come from a fake clock that only the slow side advances: the other side's wait is then
    # exactly zero, whatever the machine's load.
    clock = install_fake_clock(monkeypatch)

    def slow(x):
        time.sleep(0.01)  # the producer really is behind the consumer, so the consumer waits
        clock.advance(0.01)
        return x

    with iter(hr.Dataset.range(6).map(slow).prefetch(2)) as it:
        list(it)
        c = it.root.counters()
        assert c["consumer_wait_seconds"] > 0 and c["producer_blocked_seconds"] == 0
        assert c["produced"] == 6 and c["input_wait_seconds"] == pytest.approx(0.06)
    with iter(hr.Dataset.range(6).prefetch(2)) as it:
        producer = it.root.producer
        for _ in it:  # the training step starts once the producer has filled the buffer again
            wait_for(lambda: producer.occupancy() == 2 or producer.ended)
            clock.advance(0.01)
        c = it.root.counters()
        assert c["producer_blocked_seconds"] > 0 and c["consumer_wait_seconds"] == 0
        assert c["mean_buffered"] > 1


def test_break_close_and_garbage_collection_stop_the_thread():
    ds = hr.Dataset.range(10**6).prefetch(2)
    for _ in ds:
        break
    wait_for(lambda: not producer_threads())
    it = iter(ds)
    next(it)
    it.close()
    wait_for(lambda: not producer_threads())
    it = iter(ds)
    next(it)
    del it
    gc.collect()
    wait_for(lambda: not producer_threads())


def test_element_spec_starts_no_thread():
    ds = hr.Dataset.range(3).map(lambda x: np.zeros(int(x) + 2)).prefetch(2)
    assert ds.element_spec.shape == (2,)
    assert not producer_threads()
