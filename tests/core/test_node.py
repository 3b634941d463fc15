"""The iterator base class: typed by its node, timed by the template, knobs off by default."""

import pytest

import headrace as hr
from headrace.core.errors import CheckpointError, InvalidArgumentError
from headrace.core.node import Context, Node, NodeIterator
from headrace.core.state import StateFields
from headrace.sources.range import RangeNode


class CountNode(Node):
    op = "count"

    def __init__(self, stop: int):
        super().__init__()
        self.stop = stop

    def iterator(self, ctx: Context) -> "CountIterator":
        return CountIterator(self)


class CountIterator(NodeIterator[CountNode]):
    """A subclass declared with its node type, as every op's iterator is."""

    state_keys = ("produced",)

    def __next__(self):
        if self.produced >= self.node.stop:
            raise StopIteration
        self.produced += 1
        return self.produced - 1

    def get_state(self) -> dict:
        return {"produced": self.produced}

    def set_state(self, state: dict) -> None:
        self.produced = self._check_state(state).int("produced", high=self.node.stop)


def test_a_generic_subclass_is_an_ordinary_timed_iterator():
    it = CountNode(4).iterator(Context())
    assert isinstance(it, NodeIterator) and it.node.stop == 4
    assert list(it) == [0, 1, 2, 3]
    assert it.inclusive_ns > 0 and it.first_call_ns > 0  # __next__ was wrapped by the timing template
    assert it.counters()["produced"] == 4 and it.counters()["op"] == "count"
    it.set_state({"produced": 1})
    assert next(it) == 1


def test_stages_have_no_tunable_knobs_by_default():
    it = RangeNode(3).iterator(Context())
    assert it.tunable_knobs() == {}
    with pytest.raises(InvalidArgumentError, match=r"range\(0, 3, 1\) has no tunable knob 'parallelism'"):
        it.set_knob("parallelism", 2)


def test_state_dict_field_is_optional_only_when_asked():
    fields = StateFields({"parent": None, "other": {"index": 1}}, "stage", ("parent", "other"))
    assert fields.dict("parent", optional=True) is None
    assert fields.dict("other") == {"index": 1}
    with pytest.raises(CheckpointError, match="checkpoint field 'parent' is None, expected a dict"):
        fields.dict("parent")


def _fails_on_three(x):
    if int(x) == 3:
        raise ValueError("three")
    return x


def test_the_default_next_chunk_loses_nothing_before_an_error():
    # scan has no next_chunk of its own; batch pulls chunks from it. The elements before the error
    # come out, the error follows once, then the rest.
    it = iter(hr.Dataset.range(10).map(_fails_on_three).scan(0, lambda s, x: (s, x)).batch(4))
    with pytest.raises(ValueError, match="three"):
        next(it)
    assert [b.tolist() for b in it] == [[0, 1, 2, 4], [5, 6, 7, 8], [9]]


def test_enumerate_gives_a_failed_element_its_index_as_tf_does():
    ds = hr.Dataset.range(6).map(_fails_on_three).enumerate().ignore_errors()
    assert [(int(i), int(v)) for i, v in ds] == [(0, 0), (1, 1), (2, 2), (4, 4), (5, 5)]
    batched = ds.batch(4)
    assert [b[0].tolist() for b in batched] == [[0, 1, 2, 4], [5]]


def test_an_error_held_back_does_not_leak_into_the_next_epoch():
    node = hr.Dataset.range(10).map(_fails_on_three).scan(0, lambda s, x: (s, x)).node
    it = node.iterator(Context())
    assert [int(x) for x in it.next_chunk(5)] == [0, 1, 2]  # the error at 3 is held back
    it.reset()  # a new epoch (repeat) starts clean instead of raising the last epoch's error
    assert [int(x) for x in it.next_chunk(2)] == [0, 1]
    assert [int(x) for x in it.next_chunk(5)] == [2]
    with pytest.raises(ValueError, match="three"):
        it.next_chunk(5)
