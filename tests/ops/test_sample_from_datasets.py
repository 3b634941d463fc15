from collections import Counter

import numpy as np
import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def values(ds) -> list[int]:
    return [int(x) for x in ds]


def two(seed=3, **kwargs):
    return D.sample_from_datasets([D.range(3), D.range(100, 104)], seed=seed, **kwargs)


def test_sample_outputs_every_element_once_in_each_inputs_order():
    out = values(two())
    assert sorted(out) == [0, 1, 2, 100, 101, 102, 103]
    assert [x for x in out if x < 100] == [0, 1, 2]
    assert [x for x in out if x >= 100] == [100, 101, 102, 103]


def test_sample_seed_sequence_is_pinned():
    # Golden output: a seed's choices must not change silently between versions.
    assert values(D.sample_from_datasets([D.range(5), D.range(100, 105)], seed=42)) == [
        100,
        0,
        101,
        102,
        1,
        103,
        104,
        2,
        3,
        4,
    ]


def test_sample_stop_on_empty_dataset():
    full = values(two(seed=5))
    stopped = values(two(seed=5, stop_on_empty_dataset=True))
    # The same draws, cut at the first draw of an exhausted dataset.
    assert stopped == full[: len(stopped)]
    assert len(stopped) < len(full)
    assert all(x in stopped for x in [0, 1, 2]) or all(x in stopped for x in [100, 101, 102, 103])


def test_sample_weights_set_the_proportions():
    ds = D.sample_from_datasets([D.range(3).repeat(), D.range(100, 103).repeat()], weights=[0.8, 0.2], seed=1)
    counts = Counter(x >= 100 for x in values(ds.take(10_000)))
    assert abs(counts[False] / 10_000 - 0.8) < 0.02


def test_sample_is_uniform_without_weights():
    ds = D.sample_from_datasets([D.from_tensor_slices([i]).repeat() for i in range(4)], seed=2)
    counts = Counter(values(ds.take(8000)))
    chi2 = sum((counts[i] - 2000) ** 2 / 2000 for i in range(4))
    assert chi2 < 16.3  # p = 0.001 for 3 degrees of freedom


def test_sample_after_one_input_ends_the_others_keep_their_relative_weights():
    ds = D.sample_from_datasets(
        [D.range(10), D.range(100, 103).repeat(), D.range(200, 203).repeat()], weights=[5, 1, 3], seed=4
    )
    tail = values(ds.take(20_000))[200:]
    counts = Counter(x // 100 for x in tail)
    assert counts[0] == 0 and abs(counts[2] / (counts[1] + counts[2]) - 0.75) < 0.02


def test_sample_zero_weights_and_single_dataset_as_tf_data():
    a, b = D.range(3), D.range(100, 104)
    only_b = D.sample_from_datasets([a, b], weights=[0.0, 1.0])
    assert only_b.node is b.node  # tf.data returns the one dataset left as it is
    assert values(only_b) == [100, 101, 102, 103] and only_b.cardinality() == 4
    assert D.sample_from_datasets([a]).node is a.node
    none = D.sample_from_datasets([a, b], weights=[0, 0])
    assert values(none) == [] and none.cardinality() == 0
    three = D.sample_from_datasets([a, b, D.range(7, 9)], weights=[1, 0, 1], seed=0)
    assert sorted(values(three)) == [0, 1, 2, 7, 8] and three.cardinality() == 5


def test_sample_rerandomize_each_iteration():
    ds = two(seed=5)
    assert values(ds) == values(ds)
    epochs = values(ds.repeat(2))
    assert epochs[:7] == epochs[7:]  # tf.data's default: the same choices every epoch
    unseeded = two(seed=None)
    assert values(unseeded) == values(unseeded)

    ds = D.sample_from_datasets([D.range(20), D.range(100, 120)], seed=5, rerandomize_each_iteration=True)
    first, second = values(ds), values(ds)
    assert first != second and sorted(first) == sorted(second)
    again = D.sample_from_datasets([D.range(20), D.range(100, 120)], seed=5, rerandomize_each_iteration=True)
    assert values(again) == first
    epochs = values(ds.repeat(2))
    assert epochs[:40] != epochs[40:]


def test_sample_options_seed_makes_it_reproducible():
    def build():
        options = hr.Options()
        options.seed = 9
        return D.sample_from_datasets([D.range(30), D.range(100, 130)]).with_options(options)

    assert values(build()) == values(build())


def test_sample_weights_dataset():
    weights = D.from_tensor_slices(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], np.float32))
    assert values(D.sample_from_datasets([D.range(3), D.range(100, 104)], weights=weights, seed=3)) == [
        0,
        100,
        1,
    ]
    bad = D.from_tensor_slices(np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 0.0]]))
    it = iter(D.sample_from_datasets([D.range(3), D.range(100, 104)], weights=bad, seed=3))
    assert int(next(it)) == 0
    with pytest.raises(hr.InvalidArgumentError, match="element 1 of the weights dataset"):
        next(it)
    assert int(next(it)) == 1
    infinite = D.sample_from_datasets([D.range(3).repeat(), D.range(3).repeat()], weights=weights.repeat(2))
    assert infinite.cardinality() == 6


def test_sample_cardinality():
    inf = D.range(3).repeat()
    unknown = D.range(3).filter(lambda x: True)
    assert D.sample_from_datasets([D.range(3), D.range(4)]).cardinality() == 7  # tf.data: -2
    assert D.sample_from_datasets([D.range(3), inf]).cardinality() == hr.INFINITE_CARDINALITY
    assert (
        D.sample_from_datasets([inf, inf], stop_on_empty_dataset=True).cardinality()
        == hr.INFINITE_CARDINALITY
    )
    assert D.sample_from_datasets([D.range(3), inf], stop_on_empty_dataset=True).cardinality() == -2
    assert D.sample_from_datasets([D.range(3), unknown]).cardinality() == hr.UNKNOWN_CARDINALITY
    weights = D.from_tensor_slices([[1.0, 1.0]])
    assert D.sample_from_datasets([D.range(3), D.range(3)], weights=weights).cardinality() == -2
    assert D.sample_from_datasets([D.range(3), D.range(3)], weights=weights.take(0)).cardinality() == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"weights": [0.5]}, "weights has shape"),
        ({"weights": [1.0, -1.0]}, "weights="),
        ({"weights": [1.0, float("nan")]}, "weights="),
        ({"weights": "ab"}, "weights"),
        ({"seed": -1}, "seed="),
        ({"seed": 1.5}, "seed="),
        ({"stop_on_empty_dataset": None}, "stop_on_empty_dataset="),
        ({"rerandomize_each_iteration": 1}, "rerandomize_each_iteration="),
    ],
)
def test_sample_invalid_arguments(kwargs, match):
    with pytest.raises(hr.InvalidArgumentError, match=match):
        D.sample_from_datasets([D.range(3), D.range(4)], **kwargs)


def test_sample_invalid_datasets():
    with pytest.raises(hr.InvalidArgumentError, match=r"datasets=\[\]"):
        D.sample_from_datasets([])
    with pytest.raises(hr.InvalidArgumentError, match=r"datasets\[1\] has elements"):
        D.sample_from_datasets([D.range(3), D.from_tensor_slices([1.0])])


def test_sample_chunks_give_the_same_sequence_as_single_steps():
    ds = D.sample_from_datasets(
        [D.range(50), D.range(100, 150), D.range(200, 230)], weights=[1, 2, 3], seed=8
    )
    single = values(ds)
    for size in (1, 7, 64, 300):
        assert [x for b in ds.batch(size) for x in b.tolist()] == single


def test_sample_input_error_loses_only_its_element():
    def f(x):
        if x == 103:
            raise OSError("unreadable")
        return x

    def make():
        return D.sample_from_datasets([D.range(10), D.range(100, 110).map(f)], seed=1)

    expected = [
        x for x in values(D.sample_from_datasets([D.range(10), D.range(100, 110)], seed=1)) if x != 103
    ]
    it = iter(make().batch(4))
    got = []
    while True:
        try:
            got.extend(next(it).tolist())
        except OSError:
            state = it.get_state()
            fresh = iter(make().batch(4))
            fresh.set_state(state)
            rest = [x for b in fresh for x in b.tolist()]
            continue
        except StopIteration:
            break
    assert got == expected
    assert got[-len(rest) :] == rest


def make():
    return D.sample_from_datasets(
        [D.range(6), D.from_tensor_slices(np.arange(100, 105)), D.range(50, 52)], weights=[1, 2, 1], seed=11
    )


def test_sample_checkpoints():
    assert len(check_checkpoints(make)) == 13
    assert len(check_checkpoints(lambda: make().repeat(2))) == 26
    check_checkpoints(
        lambda: (
            D.sample_from_datasets(
                [D.range(20).shuffle(5, seed=1), D.range(100, 120)], seed=2, rerandomize_each_iteration=True
            )
            .batch(3)
            .repeat(2)
        )
    )
    weights = D.from_tensor_slices(np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]] * 4))
    check_checkpoints(lambda: D.sample_from_datasets([D.range(5), D.range(10, 15)], weights=weights, seed=4))


def test_a_restored_state_with_every_input_ended_ends_instead_of_spinning():
    # Found by the tampered-state checks: exhausted inputs with done=False drew choices forever.
    ds = hr.Dataset.sample_from_datasets([hr.Dataset.range(3), hr.Dataset.range(3)], seed=1)
    it = iter(ds)
    list(it)
    state = it.get_state()
    state["state"]["done"] = False
    fresh = iter(ds)
    fresh.set_state(state)
    assert list(fresh) == []


def test_sample_saved_state_format_is_pinned():
    # Checkpoints saved before must still restore: a change to the saved keys or values shows here.
    weights = D.from_tensor_slices(np.array([[0.5, 0.5]] * 8 + [[1.0, 0.0]] * 30, np.float32))
    ds = D.sample_from_datasets([D.range(10), D.range(100, 110)], weights=weights, seed=7)
    it = iter(ds)
    assert [int(next(it)) for _ in range(2)] == [100, 101]
    assert it.get_state()["state"] == {
        "datasets": [{"index": 0}, {"index": 2}],
        "weights": {"index": 2},
        "exhausted": [False, False],
        "done": False,
        "seed": 7,
        "iteration": 0,
        "epoch": 0,
        "draws": 2,
        "choices": [],
        "owed": [],
    }
    fixed = iter(D.sample_from_datasets([D.range(10), D.range(100, 110)], seed=7))
    next(fixed)
    assert fixed.get_state()["state"]["weights"] is None


def test_sample_fixed_weights_state_counts_the_draws_used():
    # With fixed weights the choices are drawn a block at a time; a state saves the draws used (served,
    # or skipped at an exhausted dataset), not the block, and a restore draws the rest of it again.
    ds = D.sample_from_datasets([D.range(3), D.range(100, 130)], seed=3)
    it = iter(ds.batch(10))
    first = [next(it).tolist() for _ in range(2)]
    state = it.get_state()
    assert state["state"]["parent"]["draws"] == 36  # 20 served, 16 drew the exhausted datasets[0]
    assert state["state"]["parent"]["choices"] == []
    rest = [b.tolist() for b in it]
    fresh = iter(ds.batch(10))
    fresh.set_state(state)
    assert [b.tolist() for b in fresh] == rest
    assert sorted(x for b in first + rest for x in b) == [*range(3), *range(100, 130)]
