"""Advice that depends on measured element sizes (``bytes_*_per_element``, ``buffer_bytes``)."""

import numpy as np

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
