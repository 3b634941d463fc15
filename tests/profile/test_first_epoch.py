"""The report is right on the first epoch: the executor probe's calls count as the map's work."""

import numpy as np

import headrace as hr


def _decode(batch, rng):
    # GIL-releasing numpy work of a few milliseconds per batch, like decoding a batch of images.
    data = np.frombuffer(np.asarray(batch, dtype=np.int64).tobytes() * 2000, dtype=np.uint8)
    return np.sort(data)[:4], batch


def test_a_short_first_epoch_names_the_map_as_the_bottleneck():
    # The README's shape: 8 batches an epoch, an AUTOTUNE map that measures its executor first.
    ds = hr.Dataset.range(2_000).shuffle(500, seed=1).batch(256).map(_decode, hr.AUTOTUNE, seed=1).prefetch(2)
    it = iter(ds)
    assert sum(1 for _ in it) == 8
    stats = it.stats()
    assert stats.bottleneck is not None and stats.bottleneck.startswith("map(_decode"), stats.report()
    mapped = next(s for s in stats.to_dict()["stages"] if s["op"] == "map")
    assert mapped["busy_seconds"] > 0  # the probe computed the first elements: their time counts


def test_a_trace_without_recorded_calls_says_how_to_get_them(tmp_path):
    import json
    import warnings

    it = iter(hr.Dataset.range(100).map(lambda x: x + 1).batch(10))
    list(it)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = it.stats().save_trace(str(tmp_path / "t.json"))
    assert any("record_calls" in str(w.message) for w in caught)
    names = [e.get("name", "") for e in json.load(open(path))["traceEvents"]]
    assert any("hr.profile.record_calls()" in name for name in names)
    with hr.profile.record_calls():
        it = iter(hr.Dataset.range(100).map(lambda x: x + 1).batch(10))
        list(it)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        it.stats().save_trace(str(tmp_path / "u.json"))
    assert not any("record_calls" in str(w.message) for w in caught)


def test_combined_stats_add_the_runs_up():
    ds = hr.Dataset.range(100).map(lambda x: x + 1, name="inc").batch(10)
    parts = []
    for _ in range(3):
        it = iter(ds)
        list(it)
        parts.append(it.stats())
    whole = hr.profile.Stats.combine(parts)
    assert (whole.produced, whole.epochs) == (30, 3)
    assert whole.elapsed_seconds == sum(p.elapsed_seconds for p in parts)
    assert whole.consumer_wait_seconds == sum(p.consumer_wait_seconds for p in parts)
    assert whole.first_element_seconds == parts[0].first_element_seconds  # startup: the first run's
    inc = whole.stage("map(inc)")
    assert inc.produced == 300
    assert inc.busy_seconds == sum(p.stage("map(inc)").busy_seconds for p in parts)
    times = [s.seconds for s in whole.timeline.samples]
    made = [s.produced for s in whole.timeline.samples]
    assert times == sorted(times) and made == sorted(made) and made[-1] <= 30
    assert max(times) <= whole.elapsed_seconds
    assert "over 3 runs" in whole.report()
    for part, delay in zip(parts, (0.5, 0.25, 0.25)):  # each run's thread workers' wait for a core
        part.stage("map(inc)").run_delay_seconds = delay
    assert hr.profile.Stats.combine(parts).stage("map(inc)").run_delay_seconds == 1.0


def test_a_parallel_maps_first_call_is_a_one_time_cost():
    from headrace.profile.stats import _first_task_excess

    # 8 calls, 0.1 s each, the first 3.1 s (a compile): 3 s one-time, 0.8 s of steady work.
    counters = {"produced": 8, "first_task_seconds": 3.1}
    assert abs(_first_task_excess(counters, 3.1 + 7 * 0.1) - 3.0) < 1e-9
    assert _first_task_excess({"produced": 8, "first_task_seconds": 0.0}, 1.0) == 0.0  # no probe
    assert _first_task_excess({"produced": 1, "first_task_seconds": 3.1}, 3.1) == 0.0  # nothing later


def test_the_probes_first_call_is_reported_as_one_time():
    ds = hr.Dataset.range(2_000).shuffle(500, seed=1).batch(256).map(_decode, hr.AUTOTUNE, seed=1)
    it = iter(ds)
    list(it)
    counters = it.root.counters()
    if counters.get("first_task_seconds"):  # the probe ran (more than one CPU)
        stage = it.stats().stage("map(_decode")
        assert stage.one_time_seconds == _first_excess_of(counters)
        assert stage.busy_seconds + stage.one_time_seconds > 0


def _first_excess_of(counters):
    from headrace.core.counters import busy_seconds
    from headrace.profile.stats import _first_task_excess

    return _first_task_excess(counters, busy_seconds(counters))
