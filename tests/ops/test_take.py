import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def values(ds) -> list[int]:
    return [int(x) for x in ds]


def test_take_semantics():
    assert values(D.range(10).take(3)) == [0, 1, 2]
    assert values(D.range(2).take(5)) == [0, 1]
    assert values(D.range(4).take(0)) == []
    assert values(D.range(4).take(-1)) == [0, 1, 2, 3]
    assert values(D.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]


def test_take_restarts_each_epoch_and_reads_no_further():
    assert values(D.range(10).take(2).repeat(3)) == [0, 1] * 3
    seen = []
    it = iter(D.range(100).map(lambda x: seen.append(int(x)) or x).take(3).batch(10))
    assert next(it).tolist() == [0, 1, 2]
    assert seen == [0, 1, 2]


# Unknown (U), infinite (I), empty (E) and finite (F = 5) inputs; tf.data 2.21 gives the same numbers.
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
        (I, 0, 0),
        (I, 2, 2),
        (I, -1, -1),
        (E, 0, 0),
        (E, 2, 0),
        (E, -1, 0),
        (F, 0, 0),
        (F, 2, 2),
        (F, -1, 5),
        (F, 9, 5),
    ],
)
def test_take_cardinality(make, count, expected):
    assert make().take(count).cardinality() == expected


def test_take_negative_count_means_all_as_in_tf():
    # tf.data reads any negative count as -1 (its cardinality() then says -5, a TF quirk not kept)
    assert values(D.range(3).take(-5)) == [0, 1, 2] and D.range(3).take(-5).cardinality() == 3


@pytest.mark.parametrize("count", [1.5, None, True, "3"])
def test_take_invalid_count(count):
    with pytest.raises(hr.InvalidArgumentError, match="^count="):
        D.range(3).take(count)


def test_take_element_spec_and_seek():
    assert D.range(3).take(2).element_spec == hr.TensorSpec((), "int64")
    assert values(D.range(10).take(6).skip(4)) == [4, 5]
    assert values(D.range(10).take(6).skip(9)) == []


def test_take_checkpoints():
    assert len(check_checkpoints(lambda: D.range(20).take(7))) == 7
    assert len(check_checkpoints(lambda: D.range(20).take(7).repeat(2))) == 14
    check_checkpoints(lambda: D.range(50).shuffle(10, seed=1).take(13).batch(4).repeat(2))
