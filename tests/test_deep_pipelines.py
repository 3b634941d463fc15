"""Pipelines of 10,000 stages: nothing walks them recursively (rewrites, cardinality, element_spec,
fingerprints, describe/explain, iterator construction, iteration, get_state/set_state and close)."""

import json
import sys

import pytest

import headrace as hr
from headrace.core.errors import CheckpointError
from headrace.core.fingerprint import fingerprint, pipeline_key

DEPTH = 10_000


@pytest.fixture(autouse=True)
def _default_recursion_limit():
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default: what a user's script runs with
    yield
    sys.setrecursionlimit(saved)


def chained_maps():
    ds = hr.Dataset.range(5)
    for _ in range(DEPTH):
        ds = ds.map(lambda x: x + 1)
    return ds


def chained_concatenates():
    ds = hr.Dataset.range(3)
    for _ in range(DEPTH):
        ds = ds.concatenate(hr.Dataset.range(1))
    return ds


def check_walks(ds, cardinality):
    assert ds.cardinality() == cardinality
    assert str(ds.element_spec) == "TensorSpec(shape=(), dtype=int64)"
    assert len(ds.describe().splitlines()) >= DEPTH
    assert "[depth 10000]" in ds.explain()  # deep levels are numbered, not indented 10,000 times
    assert len(pipeline_key(ds.node)) == len(fingerprint(ds.node)) > 0
    assert ds.node.signature().count("<-[") == DEPTH


def test_ten_thousand_chained_maps():
    ds = chained_maps()
    check_walks(ds, 5)
    with iter(ds) as it:  # the maps fuse into one stage that calls its functions in a loop
        assert [int(x) for x in it] == [DEPTH + i for i in range(5)]
        assert it.get_state()["produced"] == 5
    assert "... 9995 more" in ds.explain()  # the fused stage's name stays short


def test_ten_thousand_chained_maps_and_filters():
    # Issue 22: a filter between maps ended map fusion, so element_spec and next() recursed once per
    # stage; a long run of maps and filters is one stage now (ops/map_and_filter.py).
    ds = hr.Dataset.range(20)
    for i in range(DEPTH):
        ds = ds.map(lambda x: x + 4) if i % 2 == 0 else ds.filter(lambda x: x % 4 != 1)
    assert ds.cardinality() == hr.UNKNOWN_CARDINALITY
    assert str(ds.element_spec) == "TensorSpec(shape=(), dtype=int64)"
    assert "[depth 10000]" in ds.explain() and "map_and_filter(" in ds.explain()
    expected = [x + 2 * DEPTH for x in range(20) if x % 4 != 1]
    with iter(ds) as it:
        head = [int(next(it)) for _ in range(5)]
        saved = json.dumps(it.get_state())
        assert head + [int(x) for x in it] == expected
    with iter(ds) as it:
        it.set_state(json.loads(saved))
        assert [int(x) for x in it] == expected[5:]


def test_ten_thousand_chained_concatenates_build_and_close():
    ds = chained_concatenates()
    check_walks(ds, 3 + DEPTH)
    it = iter(ds)  # the chain is one stage over its 10,001 inputs
    stages = it.stages()
    assert len(stages) == DEPTH + 2
    it.close()
    assert all(stage.closed for stage in stages)


def test_ten_thousand_chained_concatenates_iterate_and_checkpoint():
    # Issue 22: 600 chained concatenates raised RecursionError when iterated (one nested call per
    # concatenate per element), and get_state nested as deep as the chain.
    ds = hr.Dataset.range(3)
    for i in range(DEPTH):
        ds = ds.concatenate(hr.Dataset.from_tensors(i))
    expected = [0, 1, 2, *range(DEPTH)]
    with iter(ds) as it:
        head = [int(next(it)) for _ in range(DEPTH // 2)]
        saved = json.dumps(it.get_state())  # flat: JSON with the default recursion limit
        rest = [int(x) for x in it]
    assert head + rest == expected
    with iter(ds) as it:
        it.set_state(json.loads(saved))
        assert [int(x) for x in it] == rest
    assert ds.skip(DEPTH).take(3).as_numpy_iterator().__next__() == DEPTH - 3  # seek_forward over inputs


def test_a_chain_of_concatenates_reads_checkpoints_of_the_nested_format():
    ds = hr.Dataset.range(2).concatenate(hr.Dataset.range(10, 12)).concatenate(hr.Dataset.range(20, 22))
    with iter(ds) as it:
        assert [int(next(it)) for _ in range(3)] == [0, 1, 10]
        state = it.get_state()
    flat = state["state"]
    assert flat["current"] == 1 and len(flat["inputs"]) == 3
    first, second, third = flat["inputs"]
    # What the same position looked like when each concatenate was its own stage:
    nested = {
        "first": {"first": first, "second": second, "in_second": True},
        "second": third,
        "in_second": False,
    }
    with iter(ds) as it:
        it.set_state({**state, "state": nested})
        assert [int(x) for x in it] == [11, 20, 21]
    with iter(ds) as it, pytest.raises(CheckpointError, match="current"):
        it.set_state({**state, "state": {**flat, "current": 3}})


def test_concatenates_of_concatenates_read_in_order():
    left = hr.Dataset.range(2).concatenate(hr.Dataset.range(2, 4))
    right = hr.Dataset.range(4, 6).concatenate(hr.Dataset.range(6, 8).concatenate(hr.Dataset.range(8, 9)))
    ds = left.concatenate(right)
    assert [int(x) for x in ds] == list(range(9))
    assert [int(x) for x in ds.skip(3)] == list(range(3, 9))
    with iter(ds) as it:
        assert len(it.stages()) == 6  # one concatenate stage over five inputs


def test_a_deep_zip_of_deep_inputs_builds():
    left, right = chained_maps(), chained_concatenates()
    ds = hr.Dataset.zip((left, right))
    assert ds.cardinality() == 5
    with iter(ds) as it:
        assert len(it.stages()) > DEPTH
