"""The iterator base class: typed by its node, timed by the template, knobs off by default."""

import pytest

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
