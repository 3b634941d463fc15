import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def values(ds) -> list[int]:
    return [int(x) for x in ds]


def sources(n: int) -> dict:
    """The same elements through each reading path: seekable, read-and-drop, unknown length."""
    return {
        "seek": D.range(n),
        "read": D.range(n).map(lambda x: x),
        "unknown": D.range(n).filter(lambda x: x >= 0),
    }


def check_partition(n: int, replicas: int, remainder: str, make) -> list[list[int]]:
    ranks = [values(make().distribute(replicas, rank, remainder)) for rank in range(replicas)]
    counts = {len(r) for r in ranks}
    assert len(counts) == 1, f"ranks got different counts: {[len(r) for r in ranks]}"
    seen = Counter(x for r in ranks for x in r)
    full, partial = divmod(n, replicas)
    if remainder == "drop":
        assert counts == {full}
        assert sorted(seen) == list(range(full * replicas)) and set(seen.values()) <= {1}
    else:
        assert counts == {full + (1 if partial else 0)}
        if remainder == "repeat":
            assert sorted(seen) == list(range(n))
            assert sum(seen.values()) - n == (replicas - partial if partial else 0)
        else:  # pad: fillers are zeros, every real element once
            fillers = replicas - partial if partial else 0
            assert sum(seen.values()) == n + fillers
            assert seen[0] == 1 + fillers or n == 0
    return ranks


@pytest.mark.parametrize("n", [0, 1, 5, 8, 11])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("remainder", ["repeat", "pad", "drop"])
@pytest.mark.parametrize("path", ["seek", "read", "unknown"])
def test_every_rank_gets_the_same_count_and_the_ranks_cover_the_epoch(n, replicas, remainder, path):
    ranks = check_partition(n, replicas, remainder, lambda: sources(n)[path])
    if remainder != "pad":
        assert [r[: n // replicas] for r in ranks] == [
            list(range(rank, (n // replicas) * replicas, replicas)) for rank in range(replicas)
        ]


@given(
    n=st.integers(0, 60),
    replicas=st.integers(1, 9),
    remainder=st.sampled_from(["repeat", "pad", "drop"]),
    path=st.sampled_from(["seek", "read", "unknown"]),
)
@settings(max_examples=60, deadline=None)
def test_partition_property(n, replicas, remainder, path):
    check_partition(n, replicas, remainder, lambda: sources(n)[path])
    expected = D.range(n).distribute(replicas, 0, remainder)
    assert expected.cardinality() == len(values(expected))


def test_cardinality_matches_elements_and_passes_unknown_and_infinite():
    assert [D.range(10).distribute(4, r).cardinality() for r in range(4)] == [3, 3, 3, 3]
    assert D.range(10).distribute(4, 3, "drop").cardinality() == 2
    assert D.range(10).filter(lambda x: True).distribute(2, 0).cardinality() == hr.UNKNOWN_CARDINALITY
    infinite = D.range(3).repeat().distribute(2, 1)
    assert infinite.cardinality() == hr.INFINITE_CARDINALITY
    assert values(infinite.take(4)) == [1, 0, 2, 1]


def test_pad_zeroes_every_leaf_of_the_filler_and_keeps_its_structure():
    ds = D.from_tensor_slices((np.arange(1, 4, dtype=np.float32), [b"a", b"b", b"c"]))
    out = list(ds.map(lambda x, s: {"x": x, "s": s, "v": np.ones(2)}).distribute(2, 1, "pad"))
    assert len(out) == 2
    assert out[0]["x"] == 2 and out[0]["s"] == b"b"
    filler = out[1]
    assert filler["x"] == 0 and filler["x"].dtype == np.float32
    assert filler["s"] == b"" and filler["v"].tolist() == [0.0, 0.0]
    batched = list(ds.batch(1).distribute(2, 1, "pad"))  # batches [a] [b] [c]: rank 1 gets [b], filler
    assert batched[0][1].tolist() == [b"b"]
    assert batched[1][1].tolist() == [b""] and batched[1][0].tolist() == [0.0]


def test_shuffles_agree_across_ranks_in_every_epoch():
    def rank_pipeline(rank):
        return D.range(20).global_shuffle(seed=5).distribute(4, rank).repeat(3)

    ranks = [values(rank_pipeline(rank)) for rank in range(4)]
    for epoch in range(3):
        share = [r[epoch * 5 : (epoch + 1) * 5] for r in ranks]
        assert sorted(sum(share, [])) == list(range(20)), f"epoch {epoch}"
    assert ranks[0][:5] != ranks[0][5:10]  # reshuffled each epoch

    def buffered(rank):
        return D.range(12).shuffle(12, seed=1).distribute(3, rank)

    assert sorted(sum((values(buffered(r)) for r in range(3)), [])) == list(range(12))


def test_unseeded_shuffle_above_is_refused_with_the_fix():
    with pytest.raises(hr.InvalidArgumentError, match=r"shuffle.*no seed.*seed="):
        iter(D.range(10).shuffle(10).distribute(2, 0))
    options = hr.Options()
    options.seed = 4
    assert len(values(D.range(10).shuffle(10).distribute(2, 0).with_options(options))) == 5
    assert len(values(D.range(10).shuffle(10).distribute(1, 0))) == 10  # one rank: nothing to agree on


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0, 0), "num_replicas"),
        ((2, 2), "rank"),
        ((2, -1), "rank"),
        ((2.0, 0), "num_replicas"),
        ((2, 0, "wrap"), "remainder"),
    ],
)
def test_invalid_arguments_are_refused_when_built(args, match):
    with pytest.raises(hr.InvalidArgumentError, match=match):
        D.range(4).distribute(*args)


def test_numpy_ints_are_accepted():
    assert values(D.range(6).distribute(np.int64(3), np.int32(2))) == [2, 5]


@pytest.mark.parametrize("remainder", ["repeat", "pad", "drop"])
def test_checkpoints(remainder):
    check_checkpoints(lambda: D.range(23).global_shuffle(seed=2).distribute(3, 1, remainder).repeat(2))
    check_checkpoints(lambda: D.range(13).map(lambda x: x * 2).distribute(4, 3, remainder).batch(2))
    check_checkpoints(lambda: D.range(13).filter(lambda x: x % 3 > 0).distribute(2, 0, remainder))


def _run_ranks(make, replicas: int, state: dict | None, steps: int | None) -> tuple[list[list[int]], dict]:
    """Each rank restores ``state`` and takes ``steps`` elements (all when None), as a synchronous job."""
    iterators = []
    for rank in range(replicas):
        it = iter(make(replicas, rank))
        if state is not None:
            it.set_state(json.loads(json.dumps(state)))
        iterators.append(it)
    taken = [[] for _ in range(replicas)]
    step = 0
    while steps is None or step < steps:
        batch = [next(it, None) for it in iterators]
        if all(b is None for b in batch):
            break
        assert all(b is not None for b in batch), "ranks ran out at different steps"
        for rank, element in enumerate(batch):
            taken[rank].extend(np.asarray(element).ravel().tolist())
        step += 1
    states = [it.get_state() for it in iterators]
    # Ranks may save different but equivalent states (a parallel map holds the inputs it took ahead
    # either as inputs of its own or as its input's earlier position, whichever its workers reached):
    # what must agree is the rest of the job each state resumes.
    rests = [_rest_of_job(make, s) for s in states]
    assert all(rest == rests[0] for rest in rests), "ranks disagree on where the job stands"
    return taken, states[0]


def _rest_of_job(make, state: dict) -> list[int]:
    it = iter(make(1, 0))
    it.set_state(json.loads(json.dumps(state)))
    return [x for element in it for x in np.asarray(element).ravel().tolist()]


@pytest.mark.parametrize("path", ["seek", "read", "unknown", "prefetched", "parallel"])
def test_elastic_resume_4_to_2_to_3_sees_each_element_once(path):
    def make(replicas, rank):
        if path == "prefetched":  # a background thread reads ahead of distribute
            source = D.range(40).prefetch(3)
        elif path == "parallel":
            source = D.range(40).map(lambda x: x, num_parallel_calls=2, executor="thread")
        else:
            source = sources(40)[path]
        return source.distribute(replicas, rank, "drop").batch(2)

    first, state = _run_ranks(make, 4, None, steps=2)  # 16 elements
    second, state = _run_ranks(make, 2, state, steps=3)  # 12 more
    third, state = _run_ranks(make, 3, state, steps=None)  # the 12 left: 2 batches of 2 each
    seen = [x for part in (first, second, third) for rank in part for x in rank]
    assert sorted(seen) == list(range(40))
    assert [len(r) for r in third] == [4, 4, 4]


def test_elastic_resume_with_global_shuffle_keeps_the_epoch_order():
    def make(replicas, rank):
        return D.range(30).global_shuffle(seed=9).distribute(replicas, rank, "repeat")

    order = values(D.range(30).global_shuffle(seed=9))
    first, state = _run_ranks(make, 4, None, steps=3)
    second, state = _run_ranks(make, 2, state, steps=4)
    third, _ = _run_ranks(make, 3, state, steps=None)
    seen = [x for part in (first, second, third) for r in part for x in r]
    assert sorted(set(seen)) == list(range(30))
    assert len(seen) == 32  # the last block held 1 element: 2 ranks repeat it
    # the job walks the shuffled order block by block, whatever its size
    assert [first[r][0] for r in range(4)] == order[:4]
    assert [second[r][0] for r in range(2)] == order[12:14]
    assert [third[r][0] for r in range(3)] == order[20:23]


def test_restored_state_is_the_same_from_any_rank():
    states = []
    for rank in range(3):
        it = iter(D.range(12).distribute(3, rank))
        next(it)
        states.append(it.get_state())
    assert states[0] == states[1] == states[2]


def test_repr_names_the_rank():
    assert "distribute(4, 1, remainder='drop')" in D.range(8).distribute(4, 1, "drop").describe()


def test_cache_fingerprints_tell_ranks_apart_but_checkpoints_do_not():
    from headrace.core.fingerprint import fingerprint, pipeline_key

    a, b = D.range(8).distribute(4, 0).node, D.range(8).distribute(2, 1).node
    assert pipeline_key(a) == pipeline_key(b)
    assert fingerprint(a) != fingerprint(b)  # a disk cache below distribute is never shared by ranks


@pytest.mark.parametrize("path", ["seek", "read", "unknown"])
@pytest.mark.parametrize("remainder", ["repeat", "drop"])
def test_workers_split_their_rank_share_exactly(path, remainder):
    from headrace.ops.distribute import Layout, job_layout

    n, replicas, workers = 23, 2, 3
    for rank in range(replicas):
        share = values(sources(n)[path].distribute(replicas, rank, remainder))
        parts = []
        for worker in range(workers):
            with job_layout(Layout(replicas, rank, workers, worker)):
                auto = sources(n)[path].distribute(remainder=remainder)
                parts.append(values(auto))
                assert auto.cardinality() in (len(parts[-1]), hr.UNKNOWN_CARDINALITY)
        merged = [parts[i % workers][i // workers] for i in range(len(share))]  # DataLoader's order
        assert merged == share and sum(map(len, parts)) == len(share)


def test_layout_comes_from_torchrun_environment(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "3")
    monkeypatch.setenv("RANK", "2")
    assert values(D.range(7).distribute()) == [2, 5, 6]  # 6: the last block repeated
    monkeypatch.setenv("RANK", "x")
    with pytest.raises(hr.InvalidArgumentError, match="RANK='x'"):
        iter(D.range(7).distribute())


def test_rank_and_num_replicas_go_together():
    with pytest.raises(hr.InvalidArgumentError, match="together"):
        D.range(4).distribute(2)


def test_worker_states_do_not_restore_into_another_worker_layout():
    from headrace.ops.distribute import Layout, job_layout

    with job_layout(Layout(1, 0, 2, 1)):
        it = iter(D.range(10).distribute())
        assert int(next(it)) == 1
        state = it.get_state()
        again = iter(D.range(10).distribute())
        again.set_state(state)
        assert values(again) == [3, 5, 7, 9]
    with job_layout(Layout(1, 0, 3, 1)), pytest.raises(hr.CheckpointError, match="DataLoader workers"):
        iter(D.range(10).distribute()).set_state(state)


@given(
    n=st.integers(0, 40),
    jobs=st.lists(st.tuples(st.integers(1, 5), st.integers(0, 4)), min_size=1, max_size=4),
    remainder=st.sampled_from(["repeat", "drop"]),
)
@settings(max_examples=40, deadline=None)
def test_any_sequence_of_job_sizes_sees_the_epoch_once(n, jobs, remainder):
    def make(replicas, rank):
        return D.range(n).distribute(replicas, rank, remainder)

    seen, state = [], None
    for index, (replicas, steps) in enumerate(jobs):
        last = index == len(jobs) - 1
        taken, state = _run_ranks(make, replicas, state, None if last else steps)
        # a synchronous job: step k's elements are the k-th of every rank
        for step in range(max(map(len, taken), default=0)):
            seen.extend(rank[step] for rank in taken)
    widest = max(replicas for replicas, _ in jobs)  # the job that met the epoch's end had at most this many
    counts = Counter(seen)
    if remainder == "drop":
        assert set(counts.values()) <= {1}
        missing = sorted(set(range(n)) - set(counts))
        assert len(missing) < widest and missing == list(range(n - len(missing), n))
    else:
        assert sorted(counts) == list(range(n))
        assert len(seen) - n < widest


def test_distribute_saved_state_format_is_pinned():
    # Checkpoints saved before must still restore: a change to the saved keys or values shows here.
    it = iter(D.range(11).filter(lambda x: True).distribute(4, 3, "pad"))
    for _ in range(3):
        next(it)
    state = it.get_state()["state"]
    assert state["parent"] == {"owed": [], "parent": {"index": 11}, "position": 11}
    del state["parent"]
    assert state == {"position": 12, "read": 11, "workers": [1, 0], "done": False}
