from collections import namedtuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints
from tests.helpers.elements import to_python
from tests.helpers.random_access import check_random_access

D = hr.Dataset


def ints(element):
    if isinstance(element, tuple):
        return tuple(ints(e) for e in element)
    if isinstance(element, dict):
        return {k: ints(v) for k, v in element.items()}
    return element.tolist() if isinstance(element, np.ndarray) else element.item()


def fails_on(bad):
    def f(x):
        if x == bad:
            raise ValueError(f"bad {x}")
        return x

    return f


def test_zip_positional_pairs_end_with_the_shortest():
    assert [ints(e) for e in D.zip(D.range(1, 4), D.range(4, 7))] == [(1, 4), (2, 5), (3, 6)]
    assert [ints(e) for e in D.zip(D.range(1, 4), D.range(13, 15))] == [(1, 13), (2, 14)]
    batched = D.zip(D.range(1, 4), D.range(4, 7), D.range(7, 13).batch(2))
    assert [ints(e) for e in batched] == [(1, 4, [7, 8]), (2, 5, [9, 10]), (3, 6, [11, 12])]


def test_zip_structures_as_tf_data():
    assert [ints(e) for e in D.zip((D.range(2), D.range(2, 4)))] == [(0, 2), (1, 3)]
    assert [ints(e) for e in D.zip(datasets=(D.range(2), D.range(2, 4)))] == [(0, 2), (1, 3)]
    # A single dataset is not wrapped in a 1-tuple; a 1-tuple is.
    assert [ints(e) for e in D.zip(D.range(2))] == [0, 1]
    assert [ints(e) for e in D.zip((D.range(2),))] == [(0,), (1,)]
    nested = D.zip({"a": D.range(2), "b": (D.range(5, 7), {"c": D.range(9, 12)})})
    assert [ints(e) for e in nested] == [
        {"a": 0, "b": (5, {"c": 9})},
        {"a": 1, "b": (6, {"c": 10})},
    ]
    Pair = namedtuple("Pair", "x y")
    out = list(D.zip(Pair(D.range(2), D.range(3))))
    assert isinstance(out[0], Pair) and ints(out[1]) == (1, 1)


def test_zip_element_spec_is_static():
    spec = D.zip((D.range(2), (D.range(2), D.from_tensor_slices([1.0, 2.0])))).element_spec
    assert spec == (
        hr.TensorSpec((), "int64"),
        (hr.TensorSpec((), "int64"), hr.TensorSpec((), "float32")),
    )
    assert D.zip({"k": D.from_tensor_slices(np.zeros((3, 2), np.uint8))}).element_spec == {
        "k": hr.TensorSpec((2,), "uint8")
    }


@pytest.mark.parametrize(
    "inputs, expected",
    [
        (lambda: (D.range(3), D.range(5)), 3),
        (lambda: (D.range(3).repeat(), D.range(5)), 5),
        (lambda: (D.range(3).repeat(), D.range(3).repeat()), hr.INFINITE_CARDINALITY),
        (lambda: (D.range(3).filter(lambda x: True), D.range(5)), hr.UNKNOWN_CARDINALITY),
        (lambda: (D.range(3).filter(lambda x: True), D.range(3).repeat()), hr.UNKNOWN_CARDINALITY),
        (lambda: (D.range(3).filter(lambda x: True), D.range(0)), 0),  # exact where tf.data says -2
        (lambda: (D.range(5), D.range(0)), 0),
    ],
)
def test_zip_cardinality(inputs, expected):
    ds = D.zip(*inputs())
    assert ds.cardinality() == expected
    if expected >= 0:
        assert len(list(ds)) == expected


def test_zip_invalid_arguments():
    with pytest.raises(hr.InvalidArgumentError, match="use a tuple"):
        D.zip([D.range(2), D.range(3)])
    with pytest.raises(hr.InvalidArgumentError, match=r"datasets\[1\]"):
        D.zip(D.range(2), 5)
    with pytest.raises(hr.InvalidArgumentError, match=r"datasets\['b'\]"):
        D.zip({"a": D.range(2), "b": "x"})
    with pytest.raises(hr.InvalidArgumentError, match="zip needs datasets"):
        D.zip()
    with pytest.raises(hr.InvalidArgumentError, match="not both"):
        D.zip(D.range(2), datasets=(D.range(2),))
    with pytest.raises(hr.InvalidArgumentError, match="at least one dataset"):
        D.zip(())


def test_zip_chunks_match_single_steps_and_read_no_further_than_tf():
    ds = D.zip(D.range(10), D.range(100, 107).map(lambda x: x * 2))
    expected = [ints(e) for e in ds]
    assert [tuple(r) for b in ds.batch(4) for r in zip(*(c.tolist() for c in b))] == expected
    it = iter(ds).root
    assert len(it.next_chunk(5)) == 5
    assert [ints(e) for e in it.next_chunk(5)] == expected[5:7]
    with pytest.raises(StopIteration):
        it.next_chunk(5)
    with pytest.raises(StopIteration):
        it.next_chunk(1)


def test_zip_error_loses_only_the_failing_row():
    ds = D.zip(D.range(6), D.range(10, 16).map(fails_on(12)))
    it = iter(ds.batch(6))
    with pytest.raises(ValueError, match="bad 12") as info:
        next(it)
    assert any("map" in note for note in getattr(info.value, "__notes__", []))
    # Row 2 is gone from both inputs (as in tf.data); every other row keeps its pair.
    (a, b) = next(it)
    assert a.tolist() == [0, 1, 3, 4, 5] and b.tolist() == [10, 11, 13, 14, 15]


def test_zip_error_state_round_trips():
    def make():
        return D.zip(D.range(6), D.range(10, 16).map(fails_on(12)))

    it = iter(make().batch(4))
    with pytest.raises(ValueError):
        next(it)
    state = it.get_state()
    fresh = iter(make().batch(4))
    fresh.set_state(state)
    assert [to_python(b) for b in fresh] == [to_python(b) for b in it]


def test_zip_state_keys_and_the_kept_pulled_field():
    it = iter(D.zip(D.range(6), D.range(10, 16).map(lambda x: x)))
    next(it)
    state = it.get_state()
    assert sorted(state["state"]) == ["exhausted", "inputs", "pulled"]
    assert state["state"]["exhausted"] is False and state["state"]["pulled"] == [[], []]
    state["state"]["pulled"] = [[], [{"p": 11}]]  # an older zip's elements pulled before an error
    with pytest.raises(hr.CheckpointError, match="holds elements zip had pulled before an error"):
        iter(D.zip(D.range(6), D.range(10, 16).map(lambda x: x))).set_state(state)


def test_zip_random_access_and_seeking():
    check_random_access(D.zip(D.range(10), D.range(100, 107)))
    check_random_access(D.zip((D.range(5), {"a": D.from_tensor_slices([b"x", b"y", b"z"])})))
    assert D.zip(D.range(3), D.range(3).map(lambda x: x)).node.random_access_length() is None
    # Seeking falls back to reading for inputs that cannot seek.
    assert [ints(e) for e in D.zip(D.range(10), D.range(10, 20).map(lambda x: x)).skip(7)] == [
        (7, 17),
        (8, 18),
        (9, 19),
    ]
    assert [ints(e) for e in D.zip(D.range(10).map(lambda x: x), D.range(10, 20)).skip(8)] == [
        (8, 18),
        (9, 19),
    ]
    assert [ints(e) for e in D.zip(D.range(10), D.range(10, 13).map(lambda x: x)).skip(5)] == []


def make():
    return D.zip((D.range(7), {"s": D.from_tensor_slices([b"a", b"b", b"c", b"d", b"e", b"f"])}))


def test_zip_checkpoints():
    assert len(check_checkpoints(make)) == 6
    assert len(check_checkpoints(lambda: make().repeat(2))) == 12
    check_checkpoints(lambda: D.zip(D.range(40).shuffle(10, seed=3), D.range(50)).batch(3).repeat(2))


def test_a_failed_row_is_dropped_from_every_input_and_rows_stay_aligned():
    # zip(images.map(decode), labels).ignore_errors(): a bad image must take its label with it, or
    # every later image would carry the previous one's label.
    def decode(x):
        if int(x) in (3, 7):
            raise ValueError(f"bad image {int(x)}")
        return int(x) * 10

    images, labels = hr.Dataset.range(10).map(decode), hr.Dataset.range(10)
    rows = [(int(a), int(b)) for a, b in hr.Dataset.zip((images, labels)).ignore_errors()]
    assert rows == [(x * 10, x) for x in range(10) if x not in (3, 7)]
    batched = list(hr.Dataset.zip((labels, images)).ignore_errors().batch(4))  # chunked pulls too
    assert [[int(v) for v in b[0]] for b in batched] == [[0, 1, 2, 4], [5, 6, 8, 9]]
    assert all((b[1] == b[0] * 10).all() for b in batched)


def test_rows_before_a_failed_one_come_out_and_the_error_follows_once():
    def fail_on_five(x):
        if int(x) == 5:
            raise ValueError("five")
        return x

    it = iter(hr.Dataset.zip((hr.Dataset.range(8).map(fail_on_five), hr.Dataset.range(8))).batch(8))
    with pytest.raises(ValueError, match="five"):
        next(it)  # rows 0..4 were gathered; batch keeps them across the error
    (left, right) = next(it)
    assert left.tolist() == right.tolist() == [0, 1, 2, 3, 4, 6, 7]


def test_inputs_where_no_row_can_fail_are_pulled_in_chunks():
    fast = iter(hr.Dataset.zip((hr.Dataset.range(10), hr.Dataset.range(5).repeat(2).shuffle(4, seed=1))))
    one = iter(hr.Dataset.zip((hr.Dataset.range(10), hr.Dataset.range(10).map(lambda x: x))))
    two = hr.Dataset.range(10).map(lambda x: x)
    careful = iter(hr.Dataset.zip((two, hr.Dataset.range(3), two)))
    assert fast.root.chunked and one.root.chunked and not careful.root.chunked
    assert [int(a) for a, _ in fast] == list(range(10))
    check_checkpoints(
        lambda: hr.Dataset.zip((hr.Dataset.range(9), hr.Dataset.range(20).shuffle(5, seed=2))).batch(2)
    )


def test_no_stage_that_runs_user_code_or_reads_input_claims_it_never_raises():
    import headrace  # noqa: F401  (every op module is imported by the facade)
    from headrace.core.node import Node

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    wrong = [
        cls.__name__
        for cls in subclasses(Node)
        if cls.never_raises and (cls.calls_user_function or (cls.reads_input and cls.op != "list_files"))
    ]
    assert wrong == []


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 12), min_size=2, max_size=3),
    fallible_at=st.integers(0, 2),
    bad=st.sets(st.integers(0, 12), max_size=4),
    sizes=st.lists(st.integers(1, 7), min_size=1, max_size=4),
)
def test_chunked_rows_beside_one_fallible_input_match_rows_built_one_by_one(lengths, fallible_at, bad, sizes):
    # One input that can fail beside inputs that cannot: chunks must give the same rows and the
    # same errors at the same places as rows built one at a time (tf.data's order).
    fallible_at %= len(lengths)

    def make():
        inputs = [hr.Dataset.range(100 * i, 100 * i + n) for i, n in enumerate(lengths)]
        inputs[fallible_at] = hr.Dataset.range(lengths[fallible_at]).map(fails_on_any(bad))
        return iter(D.zip(tuple(inputs)))

    def events(pull):
        out = []
        for _ in range(100):
            try:
                out.extend(("row", ints(row)) for row in pull())
            except StopIteration:
                return out
            except ValueError as exc:
                out.append(("error", str(exc).split("\n")[0]))
        raise AssertionError("did not end")

    one = make()
    expected = events(lambda: [next(one)])
    it = make()
    assert it.root.chunked
    turns = iter(sizes * 100)
    assert events(lambda: it.root.next_chunk(next(turns))) == expected


def fails_on_any(bad):
    def f(x):
        if int(x) in bad:
            raise ValueError(f"bad {int(x)}")
        return x

    return f
