"""A long run of serial maps and filters runs as one stage (ops/map_and_filter.py)."""

import pickle

import numpy as np
import pytest

import headrace as hr
from headrace.ops.map_and_filter import DEEP_RUN, MapAndFilterNode
from headrace.runtime.pickling import dumps
from tests.helpers.checkpoint import check_checkpoints


def unfused(ds):
    options = hr.Options()
    options.experimental_optimization.map_fusion = False
    return ds.with_options(options)


def alternating(stages, source=None, divisor=7):
    """map(+7), filter(x % divisor != 0), map(+7), ... over range(200): the multiples of 7 drop."""
    ds = hr.Dataset.range(200) if source is None else source
    for i in range(stages):
        ds = ds.map(lambda x: x + 7) if i % 2 == 0 else ds.filter(lambda x: x % divisor != 0)
    return ds


def expected(stages, divisor=7):
    out = []
    for x in range(200):
        for i in range(stages):
            if i % 2 == 0:
                x += 7
            elif x % divisor == 0:
                break
        else:
            out.append(x)
    return out


def stage_ops(ds):
    with iter(ds) as it:
        return [stage.node.op for stage in reversed(it.stages())]  # input first


def test_a_long_run_fuses_into_one_stage_and_yields_what_the_unfused_stages_yield():
    stages = DEEP_RUN + 11
    ds = alternating(stages)
    assert [int(x) for x in ds] == expected(stages) == [int(x) for x in unfused(ds)]
    assert stage_ops(ds) == ["range", "map_and_filter"]
    assert stage_ops(unfused(ds)).count("filter") == stages // 2
    assert ds.cardinality() == hr.UNKNOWN_CARDINALITY


def test_a_short_run_keeps_each_filter_its_own_stage():
    ds = alternating(9)
    assert [int(x) for x in ds] == expected(9)
    assert stage_ops(ds) == [
        "range",
        "map",
        "filter",
        "map",
        "filter",
        "map",
        "filter",
        "map",
        "filter",
        "map",
    ]


def test_parallel_and_seeded_maps_end_a_run():
    ds = alternating(DEEP_RUN - 2).map(lambda x: x, num_parallel_calls=2)
    ds = alternating(DEEP_RUN - 2, source=ds)
    ops = stage_ops(ds)
    assert "map_and_filter" not in ops and ops.count("filter") == DEEP_RUN - 2
    assert [int(x) for x in ds] == [int(x) for x in unfused(ds)]


def test_the_fused_stage_converts_results_and_unpacks_tuples_as_each_stage_would():
    ds = hr.Dataset.range(6).map(lambda x: [x, "s"])  # a list is a tuple, str is bytes
    for _ in range(DEEP_RUN):
        ds = ds.filter(lambda x, s: x % 2 == 0).map(lambda x, s: (x + 2, s + b"!"))
    out = [(int(x), bytes(s)) for x, s in ds]
    assert stage_ops(ds)[-1] == "map_and_filter"
    assert (
        out
        == [(x + 2 * DEEP_RUN, b"s" + b"!" * DEEP_RUN) for x in range(6) if x % 2 == 0]
        == [(int(x), bytes(s)) for x, s in unfused(ds)]
    )


def test_an_error_names_the_stage_and_input_element_and_loses_nothing_else():
    failing = 7 * (DEEP_RUN // 2) + 41  # what input element 41 becomes

    def fails_on_41(x):
        if x == failing:
            raise ValueError("bad element")
        return x

    ds = alternating(DEEP_RUN, divisor=1000).map(fails_on_41).batch(8)
    it = iter(ds.unbatch().ignore_errors(log_warning=False))
    values = [int(x) for x in it]
    survivors = [x for x in expected(DEEP_RUN, divisor=1000)]
    assert values == [x for x in survivors if x != failing]
    with pytest.raises(ValueError, match="bad element") as info:
        list(alternating(DEEP_RUN, divisor=1000).map(fails_on_41))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "map_and_filter(map(" in notes and "on input element 41" in notes


def test_a_predicate_returning_a_non_bool_is_a_clear_error():
    ds = alternating(DEEP_RUN).filter(lambda x: np.array([True]))  # input element 0 is dropped before
    with pytest.raises(hr.InvalidArgumentError, match=r"map_and_filter\(.*scalar bool.*input element 1"):
        list(ds)


def test_stop_iteration_from_a_step_is_an_error_not_the_end():
    def stops(x):
        raise StopIteration

    with pytest.raises(RuntimeError, match="StopIteration"):
        list(alternating(DEEP_RUN).map(stops))


def test_checkpoints():
    check_checkpoints(lambda: alternating(DEEP_RUN + 1), max_elements=60, stride=7)


def test_element_spec_of_a_run_is_probed_as_one_stage():
    ds = alternating(DEEP_RUN + 1).map(lambda x: {"x": x, "y": np.float32(x)})
    assert set(ds.element_spec) == {"x", "y"}
    assert ds.element_spec["y"].dtype == np.float32


def test_the_fused_stage_pickles_with_its_steps():
    ds = alternating(DEEP_RUN + 1)
    with iter(ds) as it:
        node = it.stages()[0].node
    assert isinstance(node, MapAndFilterNode) and len(node.steps) == DEEP_RUN + 1
    copy = pickle.loads(dumps(node))  # as process workers receive it (lambdas by value)
    assert len(copy.steps) == DEEP_RUN + 1 and repr(copy) == repr(node)
