import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def values(ds) -> list[int]:
    return [int(x) for x in ds]


def test_repeat_epochs():
    assert values(D.from_tensor_slices([1, 2, 3]).repeat(3)) == [1, 2, 3] * 3
    assert values(D.range(2).repeat(1)) == [0, 1]
    assert values(D.range(2).repeat(0)) == []
    assert values(D.range(2).repeat().take(5)) == [0, 1, 0, 1, 0]
    assert values(D.range(2).repeat(-1).take(3)) == [0, 1, 0]
    assert values(D.range(2).repeat(2).repeat(2)) == [0, 1] * 4


def test_repeat_epoch_boundaries_with_chunks():
    ds = D.range(5).repeat(3)
    assert [b.tolist() for b in ds.batch(4)] == [[0, 1, 2, 3], [4, 0, 1, 2], [3, 4, 0, 1], [2, 3, 4]]
    it = iter(ds).root
    assert [int(x) for x in it.next_chunk(10)] == [0, 1, 2, 3, 4]  # a chunk never spans epochs
    assert [int(x) for x in it.next_chunk(10)] == [0, 1, 2, 3, 4]


def test_repeat_of_an_empty_input_never_loops():
    assert values(D.range(0).repeat()) == []
    assert values(D.range(5).filter(lambda x: x > 10).repeat()) == []
    assert values(D.range(0).repeat(3)) == []
    # An epoch that comes out empty later ends the repeat too.
    epochs = iter([[1, 2], []])

    def gen():
        yield from next(epochs)

    assert values(D.from_generator(gen, output_signature=hr.TensorSpec((), "int64")).repeat()) == [1, 2]


def test_repeat_reshuffles_each_epoch():
    out = values(D.range(20).shuffle(20, seed=4).repeat(2))
    assert out[:20] != out[20:] and sorted(out[:20]) == sorted(out[20:])


U = lambda: D.range(3).filter(lambda x: True)  # noqa: E731
I = lambda: D.range(3).repeat()  # noqa: E731, E741
E = lambda: D.range(0)  # noqa: E731
F = lambda: D.range(5)  # noqa: E731


@pytest.mark.parametrize(
    "make, count, expected",
    [
        (U, 0, 0),
        (U, 2, -2),
        (U, None, -1),  # as tf.data, though an unknown input may be empty (then repeat() ends, as in tf)
        (I, 0, 0),
        (I, 2, -1),
        (I, None, -1),
        (E, 0, 0),
        (E, 2, 0),
        (E, None, 0),
        (F, 0, 0),
        (F, 2, 10),
        (F, None, -1),
        (F, -1, -1),
    ],
)
def test_repeat_cardinality(make, count, expected):
    assert make().repeat(count).cardinality() == expected


def test_repeat_negative_count_means_forever_as_in_tf():
    assert values(D.range(2).repeat(-3).take(5)) == [0, 1, 0, 1, 0]
    assert D.range(2).repeat(-3).cardinality() == hr.INFINITE_CARDINALITY


@pytest.mark.parametrize("count", [1.5, "2", True])
def test_repeat_invalid_count(count):
    with pytest.raises(hr.InvalidArgumentError, match="^count="):
        D.range(3).repeat(count)


def test_repeat_checkpoints():
    assert len(check_checkpoints(lambda: D.range(4).repeat(3))) == 12
    assert len(check_checkpoints(lambda: D.range(3).repeat(2).repeat(2))) == 12
    assert len(check_checkpoints(lambda: D.range(5).repeat(), max_elements=23)) == 23
    check_checkpoints(lambda: D.range(9).shuffle(9, seed=3).repeat(3).batch(4))


def test_repeat_keeps_the_element_spec():
    ds = D.zip(D.range(2), D.from_tensor_slices([b"a", b"b"])).repeat(2)
    assert ds.element_spec == (hr.TensorSpec((), "int64"), hr.TensorSpec((), "string"))
