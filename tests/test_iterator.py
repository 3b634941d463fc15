import json

import pytest

import headrace as hr


def test_state_is_versioned_json_and_refuses_other_pipelines():
    it = iter(hr.Dataset.range(10).map(lambda x: x * 2))
    next(it)
    state = json.loads(json.dumps(it.get_state()))
    assert state["headrace_state_version"] == 2
    other = iter(hr.Dataset.range(10).map(lambda x: x * 3))
    with pytest.raises(hr.CheckpointError, match="different pipeline"):
        other.set_state(state)
    bumped = dict(state, headrace_state_version=99)
    with pytest.raises(hr.CheckpointError, match="version 99"):
        iter(hr.Dataset.range(10).map(lambda x: x * 2)).set_state(bumped)
    with pytest.raises(hr.CheckpointError, match="not a headrace iterator state"):
        other.set_state({"x": 1})


def test_each_iter_is_a_fresh_epoch_and_counters_report_stages():
    ds = hr.Dataset.range(5).map(lambda x: x + 1, name="plus_one").batch(2)
    assert [b.tolist() for b in ds] == [[1, 2], [3, 4], [5]]
    assert [b.tolist() for b in ds] == [[1, 2], [3, 4], [5]]
    with iter(ds) as it:
        list(it)
        counters = it.counters()
    names = [stage["name"] for stage in counters["stages"]]
    assert names == ["batch(2, drop_remainder=False)", "map(plus_one)", "range(0, 5, 1)"]
    assert counters["produced"] == 3 and counters["stages"][1]["produced"] == 5
    assert counters["consumer_wait_seconds"] >= 0


def test_len_and_cardinality():
    assert len(hr.Dataset.range(7).batch(2)) == 4
    with pytest.raises(TypeError, match="infinite"):
        len(hr.Dataset.range(2).repeat())
    with pytest.raises(TypeError, match="unknown"):
        len(hr.Dataset.range(2).filter(lambda x: True))


def test_describe_and_apply():
    ds = hr.Dataset.range(3).apply(lambda d: d.batch(2))
    assert ds.describe().splitlines() == ["  range(0, 3, 1)", "batch(2, drop_remainder=False)"]
    with pytest.raises(hr.InvalidArgumentError, match="must return a Dataset"):
        hr.Dataset.range(3).apply(lambda d: 3)
