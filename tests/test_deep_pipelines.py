"""Pipelines of 10,000 stages: nothing walks them recursively (rewrites, cardinality, element_spec,
fingerprints, describe/explain, iterator construction and close)."""

import sys

import pytest

import headrace as hr
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


def test_ten_thousand_chained_concatenates_build_and_close():
    ds = chained_concatenates()
    check_walks(ds, 3 + DEPTH)
    it = iter(ds)  # building 20,001 stage iterators recurses one step (core.node.STEP) at a time
    stages = it.stages()
    assert len(stages) == 2 * DEPTH + 1
    it.close()
    assert all(stage.closed for stage in stages)


def test_concatenates_shallower_than_the_recursion_limit_iterate():
    # Pulling an element goes through every nested concatenate (one Python call each): a chain
    # iterates with the default recursion limit up to a few hundred stages (see docs/reliability.md).
    ds = hr.Dataset.range(3)
    for i in range(150):
        ds = ds.concatenate(hr.Dataset.from_tensors(i))
    assert [int(x) for x in ds] == [0, 1, 2, *range(150)]


def test_a_deep_zip_of_deep_inputs_builds():
    left, right = chained_maps(), chained_concatenates()
    ds = hr.Dataset.zip((left, right))
    assert ds.cardinality() == 5
    with iter(ds) as it:
        assert len(it.stages()) > DEPTH
