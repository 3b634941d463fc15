"""The timing template: exclusive stage time, first-call costs, and the call log."""

import time

import pytest

import headrace as hr
from headrace.core import counters
from headrace.core.counters import busy_seconds, exclusive_ns
from headrace.core.node import Node, NodeIterator


def slow(x):
    time.sleep(0.002)
    return x


def run(ds, step_seconds=0.0):
    it = iter(ds)
    for _ in it:
        if step_seconds:
            time.sleep(step_seconds)
    return it


def test_stage_times_are_exclusive_of_upstream_work():
    it = run(hr.Dataset.range(60).map(slow).shuffle(10))
    stats = it.stats()
    shuffle, map_ = stats.stage("shuffle"), stats.stage("map")
    assert map_.seconds_per_element > 0.0015  # the sleep is booked to the map ...
    assert shuffle.seconds_per_element < 0.0005  # ... not again to the shuffle reading from it
    # In a serial pipeline every stage works in the consumer's wait, so shares cannot pass 100%.
    assert sum(s.utilisation for s in stats.stages) <= 1.02
    assert (
        sum(s.busy_seconds + s.one_time_seconds for s in stats.stages) <= stats.consumer_wait_seconds * 1.02
    )


def test_stage_times_add_up_to_the_consumer_wait():
    it = run(hr.Dataset.range(40).map(slow).map(slow, name="again").batch(4))
    stats = it.stats()
    booked = sum(s.busy_seconds + s.one_time_seconds for s in stats.stages)
    assert 0.8 * stats.consumer_wait_seconds <= booked <= 1.02 * stats.consumer_wait_seconds


class _Counting(Node):
    op = "counting"

    def iterator(self, ctx):
        return _CountingIterator(self)


class _CountingIterator(NodeIterator):
    def __init__(self, node):
        super().__init__(node)
        self.left = 5

    def __next__(self):
        return self.next_chunk(1)[0]  # nested call of the same stage: timed once

    def next_chunk(self, n):
        if not self.left:
            raise StopIteration
        time.sleep(0.001)
        self.left -= 1
        self.produced += 1
        return [self.left]


def test_nested_calls_of_one_stage_are_not_counted_twice():
    it = _Counting().iterator(None)
    start = time.perf_counter_ns()
    assert list(it) == [4, 3, 2, 1, 0]
    wall = time.perf_counter_ns() - start
    assert 0.005e9 < it.inclusive_ns <= wall and exclusive_ns(it) == it.inclusive_ns
    assert it.first_call_produced == 1 and 0 < it.first_call_ns < it.inclusive_ns


def test_first_call_costs_are_one_time_not_per_element():
    calls = []

    def compile_once(x):
        if not calls:
            time.sleep(0.2)  # a JIT compile on first use
        calls.append(x)
        return x

    stats = run(hr.Dataset.range(50).map(compile_once)).stats()
    stage = stats.stage("map")
    assert 0.15 < stage.one_time_seconds < 0.5
    assert stage.seconds_per_element < 0.002
    assert "One-time costs" in stats.report() and "first call of map" in stats.report()


def test_busy_seconds_prefers_worker_time_and_subtracts_blocking():
    assert busy_seconds({"busy_seconds": 2.0, "exclusive_seconds": 9.0}) == 2.0
    assert busy_seconds({"exclusive_seconds": 1.5}) == 1.5
    prefetch = {"executor": "thread", "inclusive_seconds": 3.0, "consumer_wait_seconds": 2.5}
    assert busy_seconds(prefetch) == pytest.approx(0.5)
    assert busy_seconds({"executor": "thread", "inclusive_seconds": 1.0, "output_wait_seconds": 2.0}) == 0.0


def test_prefetch_is_not_blamed_for_waiting_on_its_producer():
    stats = run(hr.Dataset.range(40).map(slow).prefetch(2)).stats()
    assert stats.stage("prefetch").utilisation < 0.2
    assert stats.bottleneck.startswith("map(slow")
    assert "on the thread of prefetch(2)" in stats.report()


def test_call_log_is_off_unless_recording():
    assert counters.call_log is None
    run(hr.Dataset.range(10))
    with hr.profile.record_calls(max_calls=3) as log:
        run(hr.Dataset.range(10).batch(2))
    assert counters.call_log is None and len(log) == 3  # bounded: the newest calls are kept
    with pytest.raises(ValueError, match="max_calls"):
        with hr.profile.record_calls(max_calls=0):
            pass


def test_shuffle_reports_the_bytes_its_buffer_holds():
    import numpy as np

    from headrace.core.counters import buffer_nbytes, element_nbytes

    assert element_nbytes((np.zeros(10, np.float32), b"abc", 1)) == 40 + 3 + 8
    assert buffer_nbytes([]) == 0.0 and buffer_nbytes([np.zeros(4)] * 100) == 100 * 32
    ds = hr.Dataset.range(500).map(lambda x: np.zeros(1000, np.float64)).shuffle(100)
    it = iter(ds)
    next(it)
    stage = it.stats().stage("shuffle")
    assert stage.buffered == 100 and stage.buffer_capacity == 100
    assert stage.buffer_bytes == 100 * 8000
    it.close()
