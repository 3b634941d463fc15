"""runtime/calls.py: calling map functions, and the per-element generator of ``map(seed=)``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from headrace.runtime.calls import apply, element_rng

keys = st.tuples(
    st.integers(0, 2**63 - 1), st.integers(0, 2**32), st.integers(0, 2**32), st.integers(0, 2**63 - 1)
)


def draws(key, n=4):
    return element_rng(*key).integers(0, 2**63, size=n).tolist()


@settings(max_examples=200, deadline=None)
@given(keys)
def test_the_generator_depends_only_on_its_key(key):
    assert draws(key) == draws(key)


@settings(max_examples=200, deadline=None)
@given(keys, st.sampled_from([0, 1, 2, 3]))
def test_changing_any_part_of_the_key_changes_the_stream(key, part):
    other = list(key)
    other[part] += 1
    assert draws(key) != draws(tuple(other))


def test_neighbouring_elements_never_share_numbers():
    # Counter-based: a long draw of element 0 must not run into element 1's stream.
    first = set(element_rng(1, 0, 0, 0).integers(0, 2**63, size=10_000).tolist())
    second = set(element_rng(1, 0, 0, 1).integers(0, 2**63, size=10_000).tolist())
    assert not first & second


def test_first_draws_of_many_elements_look_uniform():
    values = np.array([element_rng(3, 0, 0, p).random() for p in range(4000)])
    counts, _ = np.histogram(values, bins=10, range=(0, 1))
    assert counts.min() > 320 and counts.max() < 480  # ~400 each; a broken key would pile up


def test_apply_unpacks_tuples_and_passes_rng():
    assert apply(lambda a, b: a + b, (2, 3), None) == 5
    out = apply(lambda a, b, rng: (a, b, rng.integers(100)), (1, 2), (5, 0, 0, 7))
    assert out == (1, 2, element_rng(5, 0, 0, 7).integers(100))
    assert apply(lambda x, rng: x + rng.integers(1), 4, (5, 0, 0, 7)) == 4


def test_seeded_map_is_the_same_for_any_parallelism():
    def noisy(x, rng):
        return float(x) + rng.random()

    serial = [float(v) for v in hr.Dataset.range(50).map(noisy, seed=11)]
    for calls in (2, 4):
        threaded = hr.Dataset.range(50).map(noisy, num_parallel_calls=calls, executor="thread", seed=11)
        assert [float(v) for v in threaded] == serial
    again = [float(v) for v in hr.Dataset.range(50).map(noisy, seed=11)]
    assert again == serial
