import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def values(ds) -> list[int]:
    return [int(x) for x in ds]


def counting(n):
    return D.range(n).map(lambda x: x)  # no seek: skip reads and drops


def test_skip_semantics():
    for source in (D.range, counting):
        assert values(source(10).skip(7)) == [7, 8, 9]
        assert values(source(3).skip(5)) == []
        assert values(source(4).skip(0)) == [0, 1, 2, 3]
        assert values(source(4).skip(-1)) == []
        assert values(source(2000).skip(1500).take(2)) == [1500, 1501]


def test_skip_restarts_each_epoch():
    assert values(D.range(5).skip(3).repeat(2)) == [3, 4, 3, 4]
    assert values(counting(5).skip(3).repeat(2)) == [3, 4, 3, 4]
    assert values(D.range(3).repeat(2).skip(4)) == [1, 2]


def test_skip_seeks_without_computing_what_it_skips():
    calls = []
    ds = D.range(1000).take(900).skip(850)
    assert values(ds) == list(range(850, 900))
    ds = D.range(100).map(lambda x: calls.append(1) or x).skip(95)
    assert values(ds) == [95, 96, 97, 98, 99] and len(calls) == 100  # map has no seek: it reads


U = lambda: D.range(3).filter(lambda x: True)  # noqa: E731
I = lambda: D.range(3).repeat()  # noqa: E731, E741
E = lambda: D.range(0)  # noqa: E731
F = lambda: D.range(5)  # noqa: E731


@pytest.mark.parametrize(
    "make, count, expected",
    [
        (U, 0, -2),
        (U, 2, -2),
        (U, -1, -2),
        (I, 0, -1),
        (I, 2, -1),
        (I, -1, -1),  # skip(-1) of an infinite input never ends (tf.data: -1)
        (E, 0, 0),
        (E, 2, 0),
        (E, -1, 0),
        (F, 0, 5),
        (F, 2, 3),
        (F, -1, 0),
        (F, 9, 0),
    ],
)
def test_skip_cardinality(make, count, expected):
    assert make().skip(count).cardinality() == expected


def test_skip_negative_count_means_all_as_in_tf():
    # tf.data reads any negative count as -1
    assert values(D.range(3).skip(-5)) == [] and D.range(3).skip(-5).cardinality() == 0


@pytest.mark.parametrize("count", [1.5, None, False])
def test_skip_invalid_count(count):
    with pytest.raises(hr.InvalidArgumentError, match="^count="):
        D.range(3).skip(count)


def test_skip_error_while_skipping_keeps_the_count():
    def f(x):
        if x == 2:
            raise ValueError("two")
        return x

    def make():
        return D.range(10).map(f).skip(4)

    it = iter(make())
    with pytest.raises(ValueError, match="two"):
        next(it)
    state = it.get_state()
    # 0 and 1 were dropped before the error; the failed element takes no position (as in shard and
    # tf.data), so 3 and 4 complete the skip of 4.
    assert values(it) == [5, 6, 7, 8, 9]
    fresh = iter(make())
    fresh.set_state(state)
    assert values(fresh) == [5, 6, 7, 8, 9]


def test_skip_checkpoints():
    assert len(check_checkpoints(lambda: D.range(20).skip(13))) == 7
    assert len(check_checkpoints(lambda: counting(20).skip(13).repeat(2))) == 14
    check_checkpoints(lambda: D.range(50).shuffle(10, seed=1).skip(37).batch(4).repeat(2))


def test_skip_keeps_the_element_spec():
    ds = D.from_tensor_slices({"a": [[1.0, 2.0]]}).skip(1)
    assert ds.element_spec == {"a": hr.TensorSpec((2,), "float32")}
