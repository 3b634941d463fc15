"""The timing template: exclusive stage time, first-call costs, and the call log.

Stage time is read from a fake clock (tests/helpers/clock.py): a "slow" function advances it by a
known amount instead of sleeping, so each check is exact, whatever the machine's load. No test here
bounds wall-clock time.
"""

import pytest

import headrace as hr
from headrace.core import counters
from headrace.core.counters import busy_seconds, exclusive_ns
from headrace.core.node import Node, NodeIterator
from headrace.core.process import PROCESS

from ..helpers.clock import FakeClock, install_fake_clock

clock = FakeClock()  # replaced for each test by the fixture below


@pytest.fixture(autouse=True)
def fake_clock(monkeypatch):
    global clock
    clock = install_fake_clock(monkeypatch)
    return clock


def slow(x):
    clock.advance(0.002)
    return x


def run(ds, step_seconds=0.0):
    it = iter(ds)
    for _ in it:
        clock.advance(step_seconds)  # the training step: the consumer's own time, outside next()
    return it


def test_stage_times_are_exclusive_of_upstream_work():
    it = run(hr.Dataset.range(60).map(slow).shuffle(10))
    stats = it.stats()
    shuffle, map_ = stats.stage("shuffle"), stats.stage("map")
    assert map_.seconds_per_element == pytest.approx(0.002)  # the time is booked to the map ...
    assert map_.busy_seconds + map_.one_time_seconds == pytest.approx(60 * 0.002)
    assert shuffle.busy_seconds == shuffle.one_time_seconds == 0  # ... not again to the shuffle above it
    # In a serial pipeline every stage works in the consumer's wait: here the map's time is all of it.
    assert sum(s.utilisation for s in stats.stages) == pytest.approx(1.0)
    assert stats.consumer_wait_seconds == pytest.approx(60 * 0.002)


def test_stage_times_add_up_to_the_consumer_wait():
    it = run(hr.Dataset.range(40).map(slow).map(slow, name="again").batch(4), step_seconds=0.001)
    stats = it.stats()
    booked = sum(s.busy_seconds + s.one_time_seconds for s in stats.stages)
    assert stats.consumer_wait_seconds == pytest.approx(2 * 40 * 0.002)  # the steps are not in it
    assert booked == pytest.approx(stats.consumer_wait_seconds)


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
        clock.advance(0.001)
        self.left -= 1
        self.produced += 1
        return [self.left]


def test_nested_calls_of_one_stage_are_not_counted_twice():
    it = _Counting().iterator(None)
    assert list(it) == [4, 3, 2, 1, 0]
    assert (
        it.probe.inclusive_ns == 5_000_000 and exclusive_ns(it) == it.probe.inclusive_ns
    )  # 5 calls of 1 ms, once each
    assert it.probe.first_call_produced == 1 and it.probe.first_call_ns == 1_000_000


def test_first_call_costs_are_one_time_not_per_element():
    calls = []

    def compile_once(x):
        clock.advance(0.2 if not calls else 0.001)  # a JIT compile on first use, then 1 ms a call
        calls.append(x)
        return x

    stats = run(hr.Dataset.range(50).map(compile_once)).stats()
    stage = stats.stage("map")
    assert stage.one_time_seconds == pytest.approx(0.2 - 0.001)  # the first call's excess over a steady one
    assert stage.seconds_per_element == pytest.approx(0.001)
    assert "One-time costs" in stats.report() and "first call of map" in stats.report()


def test_busy_seconds_prefers_worker_time_and_subtracts_blocking():
    assert busy_seconds({"busy_seconds": 2.0, "exclusive_seconds": 9.0}) == 2.0
    assert busy_seconds({"exclusive_seconds": 1.5}) == 1.5
    prefetch = {"executor": "thread", "inclusive_seconds": 3.0, "consumer_wait_seconds": 2.5}
    assert busy_seconds(prefetch) == pytest.approx(0.5)
    assert busy_seconds({"executor": "thread", "inclusive_seconds": 1.0, "output_wait_seconds": 2.0}) == 0.0


def test_prefetch_is_not_blamed_for_waiting_on_its_producer():
    stats = run(hr.Dataset.range(40).map(slow).prefetch(2)).stats()
    assert stats.stage("map").busy_seconds == pytest.approx(40 * 0.002)
    # The consumer's calls into prefetch were spent waiting for its thread: not the prefetch's work.
    # (Its thread may run the map between the consumer's clock reads, outside the wait, now and then.)
    assert stats.stage("prefetch").utilisation < 0.2
    assert stats.bottleneck.startswith("map(slow")
    assert "on the thread of prefetch(2)" in stats.report()


def test_call_log_is_off_unless_recording():
    assert PROCESS.recorder is None
    run(hr.Dataset.range(10))
    with hr.profile.record_calls(max_calls=3) as log:
        run(hr.Dataset.range(10).batch(2))
    assert PROCESS.recorder is None and len(log) == 3  # bounded: the newest calls are kept
    with pytest.raises(ValueError, match="max_calls"):
        with hr.profile.record_calls(max_calls=0):
            pass


class _Stage:
    produced = 0

    def __init__(self):
        self.probe = counters.Probe()
        self.probe.first_call_ns = 1


def test_a_call_keeps_the_slices_it_handed_on_and_only_those_of_its_own_call():
    log = counters.CallLog(maxlen=100)
    stage, other = _Stage(), _Stage()
    first = log.add_chunk(1, 7, 7, 10, 20, 4)
    second = log.add_chunk(1, 7, 7, 20, 30, 4)
    assert second > first and log[-1][6] == second and log[-1][7] == ()
    log.deliver(id(stage), first)  # made before the call below started: by an untimed call
    clock.advance(0.001)
    start = clock()
    log.deliver(id(stage), second)
    log.deliver(id(other), first)
    log.add_call(stage, start, clock())
    call = log[-1]
    assert call[5] == counters.CALL and call[7] == (second,)
    assert call[6] == stage.probe.last_slice > second  # numbered, and the stage knows its last call's number
    log.add_call(stage, start, clock())
    assert log[-1][7] == ()  # taken once: the next call of the stage handed nothing on
    log.add_call(other, 0, clock())
    assert log[-1][7] == (first,)  # hand-offs are kept per stage
    assert len({entry[6] for entry in log}) == len(log)  # every slice has its own number


def test_nothing_is_logged_or_kept_for_the_trace_while_not_recording(monkeypatch):
    monkeypatch.setattr("headrace.ops.interleave_parallel.TRY_INLINE", False)  # a reader per slot
    assert PROCESS.recorder is None
    ds = (
        hr.Dataset.range(3)
        # inputs long enough that every slot is still open after the first elements
        .interleave(lambda i: hr.Dataset.range(1000).map(slow), cycle_length=3, num_parallel_calls=3)
        .map(slow, 2, executor="thread")
        .prefetch(2)
    )
    it = iter(ds)
    for _ in range(6):
        next(it)
    prefetch = it.root
    parallel_map = prefetch.inputs[0]
    interleave = parallel_map.inputs[0]
    assert all(origin is None for *_, origin in prefetch.producer.items.values())
    assert parallel_map.executor.firsts == {} and parallel_map.ledger.marks == {}
    slots = [slot[2].producer for slot in interleave.slots if slot is not None]
    assert slots and all(origin is None for producer in slots for *_, origin in producer.items.values())
    assert PROCESS.recorder is None
    it.close()


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


def _slow_true(*_):
    clock.advance(0.002)
    return True


def _slow_dataset(x):
    clock.advance(0.002)
    return hr.Dataset.from_tensors(x)


def _slow_generator():
    for i in range(20):
        clock.advance(0.002)
        yield i


# Stages that timed their user function by hand before the timing template: their time is still
# theirs (exclusive of upstream), from the template alone. (stage name prefix, pipeline, slow calls)
FORMERLY_SELF_TIMED = {
    "filter": ("filter", lambda: hr.Dataset.range(20).filter(_slow_true), 20),
    "take_while": ("take_while", lambda: hr.Dataset.range(20).take_while(_slow_true), 20),
    "scan": ("scan", lambda: hr.Dataset.range(20).scan(0, lambda s, x: (s, _slow_true(x) and x)), 20),
    "flat_map": ("flat_map", lambda: hr.Dataset.range(20).flat_map(_slow_dataset), 20),
    "interleave": ("interleave", lambda: hr.Dataset.range(20).interleave(_slow_dataset, cycle_length=2), 20),
    "map in chunks": ("map", lambda: hr.Dataset.range(20).map(slow).batch(5), 20),
    "from_generator": (
        "from_generator",
        lambda: hr.Dataset.from_generator(_slow_generator, output_signature=hr.TensorSpec((), "int64")),
        20,
    ),
    "group_by_window": (
        "group_by_window",
        lambda: hr.Dataset.range(20).group_by_window(
            lambda x: _slow_true(x) and x % 2, lambda key, window: window.batch(5), window_size=5
        ),
        20,
    ),
}


@pytest.mark.parametrize("case", sorted(FORMERLY_SELF_TIMED))
def test_the_template_books_a_stage_its_own_time(case):
    prefix, make, calls = FORMERLY_SELF_TIMED[case]
    stats = run(make()).stats()
    stage = stats.stage(prefix)
    assert stage.busy_seconds + stage.one_time_seconds == pytest.approx(calls * 0.002)
    others = sum(s.busy_seconds + s.one_time_seconds for s in stats.stages if s is not stage)
    assert others == 0  # ... and none to the stages around it


def test_no_stage_times_itself():
    # One mechanism for stage time: the template. Iterators keep no clock of their own.
    import ast
    from pathlib import Path

    src = Path(hr.__file__).parent
    offenders = [
        f"{path.relative_to(src)}:{node.lineno}"
        for path in sorted(src.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "self_ns"
    ]
    assert offenders == []
    it = iter(hr.Dataset.range(3).map(slow))
    list(it)
    assert "self_seconds" not in it.root.counters() and not hasattr(it.root, "self_ns")


# --- sampled timing: cheap calls are timed one in about sample_one_in + 1 --------------------------


def test_cheap_calls_run_untimed_between_samples_and_estimates_stay_close():
    calls = 4000

    def work(x):
        clock.advance(20e-6)
        return x

    it = iter(hr.Dataset.range(calls).map(work).filter(lambda x: True))
    modes = []
    for _ in it:
        modes.append(it.root.probe.timing)  # held up between calls: the next call is untimed
    untimed = modes.count(True)
    assert untimed > calls // 2  # most calls ran untimed ...
    assert modes.count(False) > calls // (2 * hr.Options().profiling.sample_one_in)  # ... between timed ones
    stage = it.stats().stage("map")
    # Each timed call counts for the untimed gap before it, so the estimate stands for every call but
    # those of the last gap, which no timed call followed (at most 2 * sample_one_in - 1 calls).
    estimate = stage.busy_seconds + stage.one_time_seconds
    missed = round(calls - estimate / 20e-6)
    assert 0 <= missed < 2 * hr.Options().profiling.sample_one_in, missed


def test_sample_one_in_zero_times_every_call():
    options = hr.Options()
    options.profiling.sample_one_in = 0
    it = iter(hr.Dataset.range(500).map(lambda x: x).with_options(options))
    assert not any(it.root.probe.timing for _ in it)
    assert it.root.probe.weight == 1
    with pytest.raises(hr.InvalidArgumentError, match="sample_one_in"):
        options.profiling.sample_one_in = -1


def test_slow_calls_and_recordings_are_always_timed():
    it = iter(hr.Dataset.range(40).map(slow))  # 2 ms per call: timing is a negligible share
    assert not any(it.root.probe.timing for _ in it)
    with hr.profile.record_calls():
        it = iter(hr.Dataset.range(300).map(lambda x: x))
        assert not any(it.root.probe.timing for _ in it)
    assert len([s for s in it.stats().slices if s[0] == 0]) >= 300  # every call is a slice


def test_stages_behind_a_thread_of_their_own_stay_timed():
    def step(x):
        clock.advance(1e-6)
        return x

    it = iter(hr.Dataset.range(2000).map(step, name="under").prefetch(2).map(lambda x: x, name="over"))
    under = next(s for s in it.stages() if s.name == "map(under)")
    assert under not in counters.sampled_stages(it.root)
    over_untimed = [it.root.probe.timing for _ in it]  # the consumer's own stages are sampled ...
    assert True in over_untimed and False in over_untimed
    # ... the one behind prefetch's thread had every call timed, each once: its time is exact.
    assert under.probe.inclusive_ns == 2000 * 1000 and under.probe.weight == 1


def test_untimed_calls_still_count_elements_and_keep_the_first_call():
    it = iter(hr.Dataset.range(5000).map(lambda x: x, name="m"))
    assert sum(1 for _ in it) == 5000
    stage = it.stats().stage("map")
    assert stage.produced == 5000 and stage.one_time_seconds >= 0
    assert it.root.probe.first_call_ns > 0


def test_element_sizes_are_measured_now_and_then():
    import numpy as np

    it = iter(hr.Dataset.range(400).map(lambda x: np.zeros(100, np.float32)).batch(4).prefetch(8))
    for _ in it:
        clock.advance(0.005)  # the consumer samples sizes once per timeline interval
    stages = {s.op: s for s in it.stats().stages}
    assert stages["map"].bytes_in_per_element == 8 and stages["map"].bytes_out_per_element == 400
    assert stages["batch"].bytes_in_per_element == 400 and stages["batch"].bytes_out_per_element == 1600
    assert stages["prefetch"].buffer_bytes is not None and stages["prefetch"].buffer_bytes % 1600 == 0


def test_a_stage_that_starts_late_counts_its_first_call_once():
    # concatenate's second input is first called long after warm-up, inside a sampled call: its
    # 20 ms first call is a one-time cost, not multiplied by the gap the sampled call stands for.
    def opened_slowly():
        clock.advance(0.02)
        yield from range(3)

    late = hr.Dataset.from_generator(opened_slowly, output_signature=hr.TensorSpec((), hr.int64))
    it = iter(hr.Dataset.range(3000).concatenate(late))
    assert sum(1 for _ in it) == 3003
    stage = next(s for s in it.stats().stages if s.op == "from_generator")
    assert stage.busy_seconds + stage.one_time_seconds == pytest.approx(0.02)


def test_all_the_profiler_keeps_on_a_stage_is_its_probe():
    # One object per stage (core.counters.Probe): a new profiler field goes there, not onto stages.
    it = iter(hr.Dataset.range(50).map(lambda x: x).batch(8))
    list(it)
    stage = it.root
    assert isinstance(stage.probe, counters.Probe) and stage.probe.first_call_ns > 0  # it was timed
    for name in counters.Probe.__slots__:
        assert not hasattr(type(stage), name) and name not in vars(stage), name
    assert stage.probe is not stage.inputs[0].probe
