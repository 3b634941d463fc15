"""Advice that depends on measured element sizes (``bytes_*_per_element``, ``buffer_bytes``)."""

import numpy as np
import pytest

import headrace as hr
from headrace.profile import advice


def test_a_map_that_grows_elements_before_a_big_shuffle_is_named(monkeypatch):
    monkeypatch.setattr(advice, "LARGE_BUFFER_BYTES", 2**20)  # 1 MiB instead of 256 MiB: a small test
    ds = hr.Dataset.range(3000).map(lambda x: np.zeros(1000), name="grow").shuffle(500, seed=1)
    it = iter(ds)
    for _ in range(1000):
        next(it)
    text = "\n".join(it.stats().diagnosis.advice)
    assert "map(grow) makes elements 1000.0x larger before it" in text
    assert "move that map after the shuffle" in text


def test_no_size_advice_for_a_small_buffer():
    it = iter(hr.Dataset.range(3000).map(lambda x: np.zeros(1000)).shuffle(50, seed=1))
    for _ in it:
        pass
    assert not any("larger before it" in line for line in it.stats().diagnosis.advice)


@pytest.mark.parametrize("vectorised", [True, False])
def test_a_batch_that_runs_a_map_vectorised_is_advised_about_the_map_not_stacking(vectorised):
    # The report's advice for the README pipeline said "Stacking in batch(256) is the slowest part"
    # when the batch stage's time was the vectorised map's traced call.
    options = hr.Options()
    options.experimental_optimization.map_vectorization = vectorised
    ds = hr.Dataset.range(64).map(lambda x: hr.cast(x, hr.float32) * 2.0).batch(8).with_options(options)
    with iter(ds) as it:
        list(it)
        stats = it.stats()
    batch = next(s for s in stats.stages if s.op == "batch")
    said = " ".join(advice._stage_advice(stats, batch))
    if vectorised:
        assert batch.vectorised_map.startswith("map(<lambda>")
        assert "runs vectorised inside batch(8" in said and ".parallelize(N)" in said
        assert "Stacking" not in said
    else:
        assert batch.vectorised_map == ""
        assert "Stacking in batch(8" in said
