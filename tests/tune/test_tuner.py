import time

import numpy as np
import pytest

import headrace as hr


def numpy_work(x):
    time.sleep(0.001)  # waits like a storage read: releases the GIL and uses no CPU
    return float(np.sqrt(np.float64(x)))


def cheap(x):
    return x


def pipeline(options=None):
    ds = (
        hr.Dataset.range(400)
        .map(numpy_work, num_parallel_calls=hr.AUTOTUNE, executor="thread", name="heavy")
        .map(cheap, num_parallel_calls=hr.AUTOTUNE, executor="thread", name="cheap")
        .prefetch(hr.AUTOTUNE)
    )
    return ds.with_options(options) if options is not None else ds


def run(ds, step=0.0):
    it = iter(ds)
    for _ in it:
        if step:
            time.sleep(step)
    return it


def test_the_tuner_runs_inside_the_iterator_and_explains_every_knob(monkeypatch):
    # Which values it picks depends on measured times, so that is checked on fake stages below; here:
    # rounds happen, every tunable knob gets a value within its range and a reason in the report.
    monkeypatch.setattr("headrace.tune.tuner.INTERVAL_SECONDS", 0.0)
    monkeypatch.setattr("headrace.tune.tuner.FIRST_INTERVALS", (0.0,))
    it = run(pipeline())
    stats = it.stats()
    config = stats.tuned_config()
    assert sorted(config) == ["map(cheap)", "map(heavy)", "prefetch(AUTOTUNE)"]
    knobs = {stage.name: stage.tunable_knobs() for stage in it.tuner.stages}
    for name in ("map(cheap)", "map(heavy)"):
        value, maximum = knobs[name]["parallelism"]
        assert config[name] == {"parallelism": value} and 1 <= value <= maximum
    assert set(config["prefetch(AUTOTUNE)"]) == {"buffer_size"}
    assert it.tuner.rounds >= 1
    report = stats.report()
    assert "Autotuned" in report
    for name in config:
        assert f"{name}: parallelism=" in report or f"{name}: buffer_size=" in report
        assert stats.stage(name).tuned


def test_the_tuner_gives_the_cheap_stage_one_worker_and_the_expensive_one_more():
    heavy = FakeStage("map(heavy)", parallelism=1, maximum=16)  # 3 ms of waiting per element
    cheap = FakeStage("map(cheap)", parallelism=4, maximum=16, seconds=5e-6, cpu_seconds=5e-6)
    tuner = hr.tune.tuner.Tuner([heavy, cheap], hr.Options())
    heavy.produced = cheap.produced = 100
    # 100 elements in 0.2 s, half of it waiting: the consumer's own pace is 1 ms per element.
    tuner.step(100, wait_seconds=0.1, elapsed=0.2)
    assert cheap.value == 1 and heavy.value == 2  # grows at most 2x a round
    explanation = tuner.explanation()
    assert "one worker sustains" in explanation["map(cheap)"]
    assert "2 workers for the target" in explanation["map(heavy)"]


def test_a_frozen_configuration_is_applied_and_never_changed(monkeypatch):
    monkeypatch.setattr("headrace.tune.tuner.FIRST_INTERVALS", (0.01,))
    options = hr.Options()
    options.autotune.tuned_config = {
        "map(heavy)": {"parallelism": 1},
        "prefetch(AUTOTUNE)": {"buffer_size": 5},
    }
    it = iter(pipeline(options))
    for _ in it:
        pass
    assert it.tuner.rounds == 0
    config = it.stats().tuned_config()
    assert config["map(heavy)"] == {"parallelism": 1} and config["prefetch(AUTOTUNE)"] == {"buffer_size": 5}
    assert "frozen" in it.stats().stage("map(heavy)").tuned


def test_disabled_autotune_keeps_defaults():
    options = hr.Options()
    options.autotune.enabled = False
    it = run(pipeline(options))
    assert it.tuner.rounds == 0 and not it.tuner.active


def test_explicit_values_are_not_tunable():
    it = iter(hr.Dataset.range(10).map(cheap, num_parallel_calls=2).prefetch(3))
    assert it.tuner.stages == []
    assert [int(x) for x in it] == list(range(10))


# --- hill climbing: grow while the rate rises -----------------------------------------------------
class FakeStage:
    """A parallel stage whose calls take 3 ms of waiting each (``seconds``, of which ``cpu_seconds`` on
    the CPU); the tuner sees only its counters."""

    def __init__(self, name="map(read)", parallelism=8, maximum=128, seconds=0.003, cpu_seconds=0.00002):
        self.name, self.value, self.maximum, self.produced = name, parallelism, maximum, 0
        self.seconds, self.cpu_seconds = seconds, cpu_seconds

    def tunable_knobs(self):
        return {"parallelism": (self.value, self.maximum)}

    def set_knob(self, name, value):
        self.value = int(value)

    def counters(self):
        return {
            "produced": self.produced,
            "busy_seconds": self.seconds * self.produced,
            "cpu_seconds": self.cpu_seconds * self.produced,
            "executor": "thread",
        }


def rounds(tuner, stage, rates, start=(0, 0.0)):
    """Feed the tuner one round per rate (elements/s over 0.1 s, the consumer always waiting)."""
    produced, elapsed = start
    values = []
    for rate in rates:
        produced += int(rate * 0.1)
        elapsed += 0.1
        stage.produced = produced
        tuner.step(produced, wait_seconds=elapsed * 0.99, elapsed=elapsed)
        values.append(stage.value)
    return values


def test_a_stage_grows_while_the_rate_rises():
    stage = FakeStage()
    tuner = hr.tune.tuner.Tuner([stage], hr.Options())
    assert rounds(tuner, stage, [2000, 4000, 8000, 16000]) == [16, 32, 64, 128]


def test_growth_that_does_not_raise_the_rate_is_undone_and_retried_later():
    stage = FakeStage()
    tuner = hr.tune.tuner.Tuner([stage], hr.Options())
    # 8 -> 16 doubled the rate; 16 -> 32 did not: back to 16, which holds until the retry.
    values = rounds(tuner, stage, [2000, 4000, 4000, 4000, 4000])
    assert values[:3] == [16, 32, 16] and values[3:] == [16, 16]
    explanation = tuner.explanation()["map(read)"]
    assert "32 workers gave 4,000 elements/s, 16 gave 4,000" in explanation and "kept 16" in explanation
    retry = hr.tune.tuner.RETRY_ROUNDS
    values = rounds(tuner, stage, [4000] * retry, start=(stage.produced, 0.5))
    assert max(values) == 32  # tried again once the ceiling expired


# --- other tunable stages ---------------------------------------------------------------------------
def slow_file(i):
    return hr.Dataset.range(int(i) * 100, int(i) * 100 + 20).map(lambda x: time.sleep(0.0005) or x)


def test_parallel_interleave_is_tuned_and_keeps_the_serial_order(monkeypatch):
    monkeypatch.setattr("headrace.tune.tuner.FIRST_INTERVALS", (0.01,))
    monkeypatch.setattr("headrace.tune.tuner.INTERVAL_SECONDS", 0.01)
    files = hr.Dataset.range(8)
    serial = [int(x) for x in files.interleave(slow_file, cycle_length=4)]
    ds = files.interleave(slow_file, cycle_length=4, num_parallel_calls=hr.AUTOTUNE, name="read")
    with iter(ds) as it:
        assert [int(x) for x in it] == serial
        stage = it.root
        assert stage.tunable_knobs()["parallelism"][1] == 4
        assert "interleave(read, cycle_length=4, block_length=1)" in it.tuner.config()
        counters = stage.counters()
        assert counters["busy_seconds"] > counters["cpu_seconds"] > 0  # reads that mostly wait
    stage.set_knob("parallelism", 1)
    assert stage.gate.permits == 1 and stage.tunable_knobs()["parallelism"] == (1, 4)


def test_a_given_interleave_parallelism_is_not_tuned():
    ds = hr.Dataset.range(4).interleave(slow_file, cycle_length=4, num_parallel_calls=2)
    with iter(ds) as it:
        assert it.root.tunable_knobs() == {} and it.tuner.stages == []
        assert len(list(it)) == 80


def test_a_flat_rate_while_the_consumer_barely_waits_is_not_held_against_growth():
    stage = FakeStage()
    tuner = hr.tune.tuner.Tuner([stage], hr.Options())
    stage.produced = 200
    tuner.step(200, wait_seconds=0.099, elapsed=0.1)  # input-bound: the stage grows
    assert stage.value == 16
    stage.produced = 400
    tuner.step(400, wait_seconds=0.104, elapsed=0.2)  # same rate, but the consumer set the pace
    assert "did not raise the rate" not in tuner.explanation()["map(read)"]
    assert tuner._ceilings == {}


def _parallel_map_pipeline(line: int, options):
    # The same map defined `line` lines into its file: its stage name says "at <tuned>:<line>". On
    # threads as told (measured, so cheap a call would run inline, with no parallelism to tune).
    namespace: dict = {}
    exec(compile("\n" * (line - 1) + "def work(x):\n    return x\n", "<tuned>", "exec"), namespace)
    ds = hr.Dataset.range(50).map(namespace["work"], num_parallel_calls=hr.AUTOTUNE, executor="thread")
    return ds.with_options(options)


def test_a_frozen_configuration_survives_an_edit_that_moves_the_function():
    options = hr.Options()
    options.autotune.tuned_config = {"map(work at <tuned>:3)": {"parallelism": 3}}
    it = iter(_parallel_map_pipeline(40, options))  # now at line 40: the same stage
    assert it.root.name != "map(work at <tuned>:3)"
    list(it)
    assert it.stats().tuned_config()[it.root.name] == {"parallelism": 3}


def test_a_frozen_configuration_for_a_missing_stage_warns_and_names_the_stages():
    options = hr.Options()
    options.autotune.tuned_config = {"map(other at x.py:1)": {"parallelism": 3}}
    with pytest.warns(RuntimeWarning, match=r"does not have: \['map\(other at x.py:1\)'\]") as record:
        it = iter(_parallel_map_pipeline(5, options))
    assert record[0].filename == __file__
    list(it)
