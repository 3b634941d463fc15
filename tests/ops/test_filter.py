import numpy as np
import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints


def ints(ds) -> list[int]:
    return [int(x) for x in ds]


def test_keeps_elements_where_predicate_holds_with_numpy_and_python_bools():
    assert ints(hr.Dataset.range(10).filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    assert ints(hr.Dataset.range(10).filter(lambda x: bool(x > 7))) == [8, 9]
    assert ints(hr.Dataset.range(4).filter(lambda x: np.array(x < 2))) == [0, 1]


def test_tuple_elements_are_unpacked_and_chunked_path_agrees():
    ds = hr.Dataset.from_tensor_slices((np.arange(20), np.arange(20) * 10)).filter(lambda a, b: b % 30 == 0)
    assert [(int(a), int(b)) for a, b in ds] == [
        (0, 0),
        (3, 30),
        (6, 60),
        (9, 90),
        (12, 120),
        (15, 150),
        (18, 180),
    ]
    batched = ds.batch(4)
    assert [a.tolist() for a, _ in batched] == [[0, 3, 6, 9], [12, 15, 18]]


def test_non_bool_predicate_result_is_a_clear_error():
    with pytest.raises(hr.InvalidArgumentError, match="scalar bool.*input element 0"):
        list(hr.Dataset.range(3).filter(lambda x: np.array([True, False])))
    with pytest.raises(hr.InvalidArgumentError, match="scalar bool"):
        list(hr.Dataset.range(3).filter(lambda x: 1))


def test_predicate_error_names_stage_and_position_and_loses_nothing_else():
    def flaky(x):
        if x == 5:
            raise KeyError("bad")
        return x % 2 == 1

    for build in (
        lambda: hr.Dataset.range(10).filter(flaky),
        lambda: hr.Dataset.range(10).filter(flaky).batch(100),
    ):
        it = iter(build())
        got = []
        with pytest.raises(KeyError) as info:
            for x in it:
                got.append(x)
        assert any("filter(flaky at" in n and "input element 5" in n for n in info.value.__notes__)
        rest = list(it)
        flat = [int(v) for e in got + rest for v in np.atleast_1d(e)]
        assert flat == [1, 3, 7, 9]


def test_not_callable_is_rejected_at_construction():
    with pytest.raises(hr.InvalidArgumentError, match="predicate"):
        hr.Dataset.range(3).filter(3)


def test_spec_and_name():
    ds = hr.Dataset.range(3).filter(lambda x: x > 0)
    assert ds.element_spec == hr.TensorSpec((), "int64")
    assert "filter(<lambda> at test_filter.py:" in repr(ds.node)
    assert ds.cardinality() == hr.UNKNOWN_CARDINALITY


def test_checkpoints():
    check_checkpoints(lambda: hr.Dataset.range(30).filter(lambda x: x % 4 != 1).repeat(2))
    check_checkpoints(lambda: hr.Dataset.range(30).filter(lambda x: x % 4 != 1).batch(4))


def test_an_invalid_result_inside_a_chunk_calls_no_predicate_twice():
    calls = []

    def odd_or_bad(x):
        calls.append(int(x))
        return 1 if x == 4 else x % 2 == 1

    it = iter(hr.Dataset.range(10).filter(odd_or_bad).batch(100))
    with pytest.raises(hr.InvalidArgumentError, match="input element 4"):
        next(it)
    assert [int(v) for b in it for v in b] == [1, 3, 5, 7, 9]
    assert sorted(calls) == list(range(10))


def test_a_predicate_raising_stop_iteration_inside_a_chunk_is_an_error_not_the_end():
    def stops_at_4(x):
        if x == 4:
            raise StopIteration
        return True

    for ds in (hr.Dataset.range(8).filter(stops_at_4).batch(100), hr.Dataset.range(8).filter(stops_at_4)):
        with pytest.raises(Exception, match="StopIteration on input element 4"):
            list(ds)
