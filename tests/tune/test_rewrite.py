import numpy as np
import pytest

import headrace as hr
from headrace.ops.map import FusedFunction
from headrace.ops.prefetch import PrefetchNode
from headrace.tune.rewrite import optimise
from tests.helpers.checkpoint import check_checkpoints


def plan_of(ds):
    return optimise(ds.node, ds.options(), lambda node: PrefetchNode(node, hr.AUTOTUNE))


def test_map_fusion_keeps_values_and_tuple_unpacking():
    ds = hr.Dataset.range(5).map(lambda x: (x, x * 10), name="pair").map(lambda a, b: a + b, name="add")
    assert [int(v) for v in ds] == [0, 11, 22, 33, 44]
    optimised = plan_of(ds).optimised
    assert repr(optimised) == "map(pair -> add)" and isinstance(optimised.map_func, FusedFunction)


def test_fusion_skips_parallel_and_seeded_maps():
    ds = hr.Dataset.range(4).map(lambda x: x, num_parallel_calls=2).map(lambda x: x)
    assert plan_of(ds).applied == []
    seeded = hr.Dataset.range(4).map(lambda x, rng: x, seed=1).map(lambda x: x)
    assert plan_of(seeded).applied == []


def test_options_turn_rewrites_off():
    options = hr.Options()
    options.experimental_optimization.map_fusion = False
    options.experimental_optimization.noop_elimination = False
    ds = hr.Dataset.range(3).map(lambda x: x).map(lambda x: x).take(-1).with_options(options)
    assert "rewrites:\n- none" in ds.explain()


def test_noops_are_removed():
    ds = hr.Dataset.range(10).skip(0).take(-1).repeat(1).shard(1, 0).prefetch(0)
    assert [int(x) for x in ds] == list(range(10))
    assert repr(plan_of(ds).optimised) == "range(0, 10, 1)"
    assert len(plan_of(ds).applied) == 5


def test_batch_safe_map_moves_after_batch_and_gives_the_same_batches():
    calls = []

    @hr.batch_safe
    def normalise(x):
        calls.append(np.shape(x))
        return (x - 2.0) / 4.0

    ds = hr.Dataset.range(10).map(normalise).batch(4)
    expected = [np.array([(v - 2.0) / 4.0 for v in range(i, min(i + 4, 10))]) for i in (0, 4, 8)]
    got = list(ds)
    assert all(np.allclose(a, b) for a, b in zip(got, expected))
    assert calls == [(4,), (4,), (2,)]  # one call per batch, not per element
    undeclared = hr.Dataset.range(10).map(lambda x: x).batch(4)
    assert not any("batch_safe" in line for line in plan_of(undeclared).applied)


def test_inject_prefetch_only_when_asked_and_parallel():
    options = hr.Options()
    options.experimental_optimization.inject_prefetch = True
    parallel = hr.Dataset.range(6).map(lambda x: x + 1, num_parallel_calls=2).with_options(options)
    assert repr(plan_of(parallel).optimised) == "prefetch(AUTOTUNE)"
    assert [int(x) for x in parallel] == [1, 2, 3, 4, 5, 6]
    serial = hr.Dataset.range(6).map(lambda x: x + 1).with_options(options)
    assert plan_of(serial).applied == []


def test_reshuffling_survives_the_cached_plan():
    ds = hr.Dataset.range(30).shuffle(30, seed=1).map(lambda x: x).map(lambda x: x)
    assert [int(x) for x in ds] != [int(x) for x in ds]


def test_fused_pipeline_checkpoints():
    check_checkpoints(
        lambda: hr.Dataset.range(20).map(lambda x: x + 1).map(lambda x: x * 2).take(-1).batch(3)
    )


def test_errors_in_a_fused_stage_name_it():
    def boom(x):
        if x == 3:
            raise ValueError("bad")
        return x

    with pytest.raises(ValueError) as info:
        list(hr.Dataset.range(5).map(lambda x: x, name="first").map(boom))
    assert any(
        "map(first -> boom at test_rewrite.py:" in n and "element 3" in n for n in info.value.__notes__
    )


def test_without_a_prefetch_builder_no_prefetch_is_injected():
    # The optimiser builds no op itself: the facade hands it the prefetch stage to add.
    options = hr.Options()
    options.experimental_optimization.inject_prefetch = True
    ds = hr.Dataset.range(6).map(lambda x: x + 1, num_parallel_calls=2).with_options(options)
    assert optimise(ds.node, ds.options()).optimised.op != "prefetch"
    assert plan_of(ds).optimised.op == "prefetch"


def test_a_new_op_can_declare_itself_a_noop():
    # Rewrites ask each stage (Node.is_noop / fused_with / swapped_with); no op list to extend.
    from headrace.core.node import Node

    class Passthrough(Node):
        op = "passthrough"

        def is_noop(self):
            return True

    node = Passthrough(hr.Dataset.range(3).node)
    plan = optimise(node, hr.Options())
    assert plan.optimised.op == "range" and plan.applied == ["- passthrough() removed: it changes nothing"]
