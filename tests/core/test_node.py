"""The iterator base class: typed by its node, timed by the template, knobs off by default."""

import pickle

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import CheckpointError, InvalidArgumentError
from headrace.core.fingerprint import fingerprint, pipeline_key
from headrace.core.node import Context, Fields, Node, NodeIterator, Role, height
from headrace.core.state import StateFields
from headrace.sources.range import RangeNode


class CountNode(Node):
    op = "count"
    fields = Fields("stop")

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
    assert (
        it.probe.inclusive_ns > 0 and it.probe.first_call_ns > 0
    )  # __next__ was wrapped by the timing template
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


class _Refuses(NodeIterator):
    """A stage with a hand-written pair whose set_state refuses every state."""

    def set_state(self, state):
        raise CheckpointError("refused")


def test_a_refused_state_keeps_what_the_stage_owed():
    # The owed elements and the held error belong to the position the stage is at; a checkpoint that
    # is refused moves nothing, so they must still be there (they were dropped before the check).
    it = hr.Dataset.range(10).map(_fails_on_three).node.iterator(Context())
    assert [int(x) for x in it.next_chunk(5)] == [0, 1, 2]  # the error at 3 is held, 4 owed
    owed = list(it.owed)
    with pytest.raises(CheckpointError):
        it.set_state({"nonsense": 1})
    assert list(it.owed) == owed
    with pytest.raises(ValueError, match="three"):
        it.next_chunk(5)
    rest = []
    with pytest.raises(StopIteration):
        while True:
            rest += [int(x) for x in it.next_chunk(5)]
    assert rest == [4, 5, 6, 7, 8, 9]
    hand_written = _Refuses(RangeNode(0, 3, 1))
    hand_written.owed.extend(owed)
    with pytest.raises(CheckpointError):
        hand_written.set_state({})
    assert list(hand_written.owed) == owed


# --- chunks keep an error's place in element order ------------------------------------------------
def _fails_on_5_and_11(x):
    if int(x) in (5, 11):
        raise ValueError(f"bad {int(x)}")
    return x


_SOURCES = {
    "map": lambda: hr.Dataset.range(20).map(_fails_on_5_and_11),
    "parallel map": lambda: hr.Dataset.range(20).map(
        _fails_on_5_and_11, num_parallel_calls=2, executor="thread"
    ),
}
_OPS = {
    "map": lambda s: s.map(lambda x: x + 1),
    "filter": lambda s: s.filter(lambda x: x % 2 == 0),
    "take": lambda s: s.take(15),
    "skip": lambda s: s.skip(3),
    "take_while": lambda s: s.take_while(lambda x: x < 17),
    "enumerate": lambda s: s.enumerate(),
    "shard": lambda s: s.shard(2, 0),
    "repeat": lambda s: s.repeat(2),
    "concatenate": lambda s: s.concatenate(hr.Dataset.range(3)),
    "zip": lambda s: hr.Dataset.zip(s, hr.Dataset.range(100)),
    "scan": lambda s: s.scan(np.int64(0), lambda c, x: (c + x, c)),
    "window + flat_map": lambda s: s.window(3).flat_map(lambda w: w),
    "flat_map": lambda s: s.flat_map(lambda x: hr.Dataset.from_tensors(x).repeat(2)),
    "interleave": lambda s: s.interleave(lambda x: hr.Dataset.from_tensors(x), cycle_length=2),
    "unique": lambda s: s.unique(),
    "prefetch": lambda s: s.prefetch(2),
    "batch + unbatch": lambda s: s.batch(3).unbatch(),
    "shuffle": lambda s: s.shuffle(1, seed=1),
    "cache": lambda s: s.cache(),
    "ignore_errors": lambda s: s.ignore_errors(),
    "parallel map": lambda s: s.map(lambda x: x + 1, num_parallel_calls=2, executor="thread"),
    "rebatch": lambda s: s.batch(4).rebatch(2),
    "sample_from_datasets": lambda s: hr.Dataset.sample_from_datasets([s], seed=1),
    "sample_from_datasets, weighted": lambda s: hr.Dataset.sample_from_datasets(
        [s, hr.Dataset.range(100, 130)], weights=[0.5, 0.5], seed=3
    ),
    "choose_from_datasets": lambda s: hr.Dataset.choose_from_datasets(
        [s], hr.Dataset.range(100).map(lambda x: np.int64(0))
    ),
}


def _events(pull) -> list:
    """What a consumer sees: ('v', value) per element and ('e', message) per error, to the end."""
    out: list = []
    for _ in range(300):
        try:
            out.extend(("v", np.asarray(x).tolist()) for x in pull())
        except StopIteration:
            return out
        except ValueError as exc:
            out.append(("e", str(exc).split("\n")[0]))
    raise AssertionError("did not end")


def _bad(x):
    if int(x) in (5, 11):
        raise ValueError(f"bad {int(x)}")
    return False


def _generator():
    for i in range(20):
        if i in (5, 11):
            raise ValueError(f"bad {i}")
        yield i


#: stages whose own user function fails (the ops above pass an upstream error on)
_FAILING_STAGES = {
    "filter": lambda: hr.Dataset.range(20).filter(lambda x: _bad(x) or True),
    "take_while": lambda: hr.Dataset.range(20).take_while(lambda x: _bad(x) or True),
    "scan": lambda: hr.Dataset.range(20).scan(np.int64(0), lambda c, x: _bad(x) or (c + x, c)),
    "flat_map": lambda: hr.Dataset.range(20).flat_map(lambda x: _bad(x) or hr.Dataset.from_tensors(x)),
    "interleave": lambda: hr.Dataset.range(20).interleave(
        lambda x: _bad(x) or hr.Dataset.from_tensors(x), cycle_length=2
    ),
    "from_generator": lambda: hr.Dataset.from_generator(
        _generator, output_signature=hr.TensorSpec((), hr.int64)
    ),
    "group_by_window": lambda: (
        hr.Dataset.range(20).group_by_window(lambda x: _bad(x) or x % 2, lambda k, w: w.batch(2), 2).unbatch()
    ),
}


@pytest.mark.parametrize("stage", sorted(_FAILING_STAGES))
def test_a_stage_whose_function_fails_gives_its_error_in_place_in_chunks(stage):
    one = iter(_FAILING_STAGES[stage]())
    expected = _events(lambda: [next(one)])
    assert any(kind == "e" for kind, _ in expected)
    for k in (2, 3, 8, 64):
        it = iter(_FAILING_STAGES[stage]())
        assert _events(lambda it=it, k=k: it.root.next_chunk(k)) == expected, f"chunks of {k}"


@pytest.mark.parametrize("source", sorted(_SOURCES))
@pytest.mark.parametrize("op", sorted(_OPS))
def test_chunks_give_errors_at_their_place_in_element_order(source, op):
    # Every chunk path returns the elements before an error, then raises it at the next call, as
    # __next__ gives them: consumers that pull chunks (zip, batch, the iterator) can tell which
    # element failed, and nothing is lost or reordered.
    def make():
        return iter(_OPS[op](_SOURCES[source]()))

    one = make()
    expected = _events(lambda: [next(one)])
    assert any(kind == "e" for kind, _ in expected) or op == "ignore_errors"
    for k in (2, 3, 8, 64):
        it = make()
        assert _events(lambda it=it, k=k: it.root.next_chunk(k)) == expected, f"chunks of {k}"


# --- declared fields: what identity, pickling and keys read ---------------------------------------
class Tunable(Node):
    op = "tunable"
    fields = Fields("size", settings=("workers",), resources=("client",))

    def __init__(self, parent, size, workers=1, client=None):
        super().__init__(parent)
        self.size, self.workers, self.client, self.name = size, workers, client, None


def test_an_attribute_the_node_does_not_declare_fails_at_construction():
    class Sloppy(Node):
        op = "sloppy"
        fields = Fields("size")

        def __init__(self, size):
            super().__init__()
            self.size = size
            self.cache_hint = 3  # not declared: would change keys silently

    with pytest.raises(TypeError, match=r"Sloppy sets 'cache_hint'.*declaration does not list"):
        Sloppy(4)


def test_an_attribute_added_after_construction_fails_where_keys_are_made():
    node = CountNode(3)
    node.late = 1
    for read in (node.arguments, lambda: pickle.dumps(node), lambda: pipeline_key(node)):
        with pytest.raises(TypeError, match="'late'"):
            read()


def test_a_subclass_adds_to_its_bases_declaration_and_cannot_change_a_role():
    class Bigger(Tunable):
        fields = Fields("extra")

        def __init__(self, parent, size):
            super().__init__(parent, size)
            self.extra = 1

    assert Bigger.roles() == {**Tunable.roles(), "extra": Role.IDENTITY}
    assert Bigger(RangeNode(0, 3, 1), 2).arguments()["extra"] == 1
    with pytest.raises(TypeError, match="'size' is a identity of a base class"):

        class Confused(Tunable):
            fields = Fields(settings=("size",))


def test_roles_decide_the_keys():
    source = RangeNode(0, 5, 1)
    base = Tunable(source, 2)
    setting = Tunable(source, 2, workers=8)
    resource = Tunable(source, 2, client=object())
    identity = Tunable(source, 3)
    assert pipeline_key(setting) == pipeline_key(resource) == pipeline_key(base) != pipeline_key(identity)
    assert fingerprint(resource) == fingerprint(base) != fingerprint(setting)
    assert fingerprint(identity) != fingerprint(base)


def test_pickling_keeps_the_declared_fields_and_parents_only():
    node = Tunable(RangeNode(0, 5, 1), 2, workers=3)
    assert node.cardinality() is not None and height(node) == 1  # a derived value: stays here
    assert "_derived" in node.__dict__
    clone = pickle.loads(pickle.dumps(node))
    assert clone.arguments() == node.arguments() and len(clone.parents) == 1
    assert "_derived" not in clone.__dict__


def test_every_stage_of_a_pipeline_declares_its_fields():
    ds = (
        hr.Dataset.from_tensor_slices(np.arange(8))
        .shuffle(4, seed=1)
        .map(lambda x: x + 1, num_parallel_calls=2)
        .interleave(lambda x: hr.Dataset.range(x), cycle_length=2)
        .batch(2)
        .prefetch(1)
    )
    for node in ds.node.walk():
        node.check_fields()
        assert set(node.arguments()) <= set(type(node).roles())
