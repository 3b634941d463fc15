"""Calling a map function on one element, with the per-element random generator of ``map(seed=)``.

The generator for an element depends only on (seed, iteration, epoch, position), never on which
worker or thread computes it, so a seeded map gives the same output for any parallelism and
executor, a new stream for every epoch, and distinct streams for distinct elements.

It is counter-based: numpy's Philox keyed by ``(seed, iteration)`` with its 256-bit counter starting
at ``(0, 0, position, epoch)``. Draws advance the two low words, so the streams of distinct
(position, epoch) never meet, and distinct keys are independent streams by Philox's design. No
SeedSequence is hashed per element, so building one costs a few microseconds (about 3 us of CPU,
against 11 us for a SeedSequence and PCG64).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.random.bit_generator import ISeedSequence

from ..core.element_random import ELEMENT_RNG


class _Key(ISeedSequence):
    """Hands Philox its two key words as they are (a SeedSequence would hash them, slowly)."""

    __slots__ = ("words",)

    def __init__(self, words: tuple[int, int]):
        self.words = words

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        return np.array(self.words, dtype=np.uint64)


def element_rng(seed: int, iteration: int, epoch: int, position: int) -> np.random.Generator:
    """The generator ``map(f, seed=seed)`` passes to ``f`` for the element at ``position``.

    ``iteration`` counts ``iter()`` calls on the dataset, ``epoch`` the ``repeat`` epochs of one
    iterator.

    >>> a = element_rng(7, 0, 0, 3).integers(1000)
    >>> b = element_rng(7, 0, 0, 3).integers(1000)
    >>> bool(a == b), bool(element_rng(7, 0, 1, 3).integers(1 << 62) != element_rng(7, 0, 0, 3).integers(1 << 62))
    (True, True)
    """
    # numpy's stubs allow only a SeedSequence; Philox takes any ISeedSequence (it asks generate_state)
    key = _Key((seed, iteration))
    return np.random.Generator(np.random.Philox(key, counter=(0, 0, position, epoch)))  # type: ignore[arg-type]


def apply(fn: Callable, element: Any, rng_key: tuple[int, int, int, int] | None) -> Any:
    """``fn(element)`` with tuples unpacked (as ``core.node.call``), plus ``rng=`` when seeded; the
    generator is also the element's stream for ``headrace.random.*`` called inside ``fn``."""
    if rng_key is None:
        if type(element) is tuple:
            return fn(*element)
        return fn(element)
    rng = element_rng(*rng_key)
    token = ELEMENT_RNG.set(rng)
    try:
        if type(element) is tuple:
            return fn(*element, rng=rng)
        return fn(element, rng=rng)
    finally:
        ELEMENT_RNG.reset(token)
