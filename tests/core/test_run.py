"""Run-time memory lives in the run (one per iteration) and the pipeline's session, never in a node's
arguments: iterating a dataset leaves its nodes as they were built (core/run.py)."""

from __future__ import annotations

import pickle
import threading

import headrace as hr
from headrace.core.fingerprint import fingerprint, pipeline_key
from headrace.core.node import derived, session_of
from headrace.core.run import Run, Seeds


def _draw(x, rng):
    return rng.integers(2**62)


def _snapshot(node: hr.core.node.Node) -> list:
    """Every stage's attributes, by identity, its derived cache left out (specs, plans, the session)."""
    return [
        (id(n), {key: id(value) for key, value in vars(n).items() if key != "_derived"}, n.arguments())
        for n in node.walk()
    ]


def _orders(ds: hr.Dataset, runs: int) -> list[list[int]]:
    return [[int(x) for batch in ds for x in batch] for _ in range(runs)]


def test_iterating_leaves_every_node_as_it_was_built():
    ds = hr.Dataset.range(40).shuffle(40, seed=3).batch(8)
    before = _snapshot(ds.node)
    keys = (fingerprint(ds.node), pipeline_key(ds.node), pickle.dumps(ds.node))
    first, second = _orders(ds, 2)
    assert sorted(first) == sorted(second) == list(range(40)) and first != second  # reshuffled
    with ds._iterate(Seeds(ds.node, 7)) as it:  # as a DataLoader worker's copy iterates epoch 7
        assert sorted(int(x) for batch in it for x in batch) == list(range(40))
    assert _snapshot(ds.node) == before
    assert (fingerprint(ds.node), pipeline_key(ds.node), pickle.dumps(ds.node)) == keys


def test_a_copy_iterating_as_the_nth_iteration_matches_it_and_moves_no_counter():
    ds = hr.Dataset.range(40).shuffle(40, seed=3).batch(8)
    serial = _orders(ds, 4)  # iterations 0..3 in this process
    fresh = hr.Dataset.range(40).shuffle(40, seed=3).batch(8)  # as a worker's unpickled copy
    seeds = Seeds(fresh.node, 2)
    with fresh._iterate(seeds) as it:
        assert [int(x) for batch in it for x in batch] == serial[2]
    with fresh._iterate(seeds) as it:  # the same worker again: the numbers move on, as counters would
        assert [int(x) for batch in it for x in batch] == serial[3]
    # The copy's own counters never moved: a plain iteration of it is still the first.
    assert _orders(fresh, 1)[0] == serial[0]


def test_stages_outside_the_seeded_pipeline_draw_from_their_own_counters():
    inner = hr.Dataset.range(5).shuffle(5, seed=1)
    outer = hr.Dataset.range(3).shuffle(3, seed=2)
    seeds = Seeds(outer.node, 4)
    run = Run(seeds=seeds)
    assert run.iteration_of(outer.node) == 4
    assert run.iteration_of(inner.node) == 0  # not under outer: its own counter
    assert Run().iteration_of(inner.node) == 1
    assert Run(probe=True).iteration_of(outer.node) == 0  # probing draws nothing
    assert Run().iteration_of(outer.node) == 0


def test_concurrent_iterations_draw_distinct_numbers_and_share_no_run():
    ds = hr.Dataset.range(200).shuffle(200, seed=9)
    iterators: list = []
    lock = threading.Lock()

    def start() -> None:
        it = iter(ds)
        with lock:
            iterators.append(it)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    orders = {tuple(int(x) for x in it) for it in iterators}
    assert len(orders) == 4  # four iterations, four seeds: no two drew the same number
    serial = {tuple(order) for order in _orders(hr.Dataset.range(200).shuffle(200, seed=9).batch(200), 4)}
    assert orders == serial  # the same four orders as four iterations one after another
    runs = {id(it.run) for it in iterators}
    assert len(runs) == 4 and {id(it.run.session) for it in iterators} == {id(session_of(ds.node))}


def test_the_session_is_a_derived_value_of_the_pipeline_not_an_argument():
    ds = hr.Dataset.range(3).map(abs, num_parallel_calls=2)
    session = session_of(ds.node)
    assert derived(ds.node)["session"] is session and session_of(ds.node) is session
    assert "session" not in ds.node.arguments()
    clone = pickle.loads(pickle.dumps(ds.node))
    assert session_of(clone) is not session  # a copy elsewhere starts with its own memory


def test_seeded_maps_on_workers_draw_what_the_same_iteration_draws_serially():
    # Seeded maps in parallel and in a parallelize worker (which passes Seeds for the parent's
    # iteration) give each iteration the streams a serial iteration gets.
    def build(**kwargs) -> hr.Dataset:
        return hr.Dataset.range(30).map(_draw, seed=4, **kwargs).batch(10)

    serial = _orders(build(), 3)
    assert len({tuple(order) for order in serial}) == 3
    assert _orders(build(num_parallel_calls=2), 3) == serial
    fresh = build()
    seeds = Seeds(fresh.node, 1)
    with fresh._iterate(seeds) as it:
        assert [int(x) for batch in it for x in batch] == serial[1]
