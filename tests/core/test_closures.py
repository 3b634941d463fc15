"""Closure values are captured when a transformation is created, as tf.data's tracing does."""

import functools
import pickle
import warnings

import cloudpickle
import numpy as np
import pytest

import headrace as hr
from headrace.core.closures import CapturedValueChanged, freeze

D = hr.Dataset


def test_loop_lambdas_keep_their_own_value():
    # The case: tf.data gives {0: 250, 1: 250, 2: 250}; late binding gave {2: 750}.
    datasets = [D.range(250) for _ in range(3)]
    labelled = []
    for i, ds in enumerate(datasets):
        labelled.append(ds.map(lambda x: (x, i)))  # noqa: B023 (late binding is the point)
    combined = labelled[0].concatenate(labelled[1]).concatenate(labelled[2])
    counts: dict = {}
    for _, label in combined:
        counts[int(label)] = counts.get(int(label), 0) + 1
    assert counts == {0: 250, 1: 250, 2: 250}


@pytest.mark.parametrize(
    "make",
    [
        lambda n: D.range(5).filter(lambda x: x < n),
        lambda n: D.range(5).take_while(lambda x: x < n),
        lambda n: D.range(1).flat_map(lambda x: D.range(n)),
        lambda n: D.range(1).interleave(lambda x: D.range(n), cycle_length=1),
        lambda n: D.range(5).scan(0, lambda s, x: (s, x)).take(n),
        lambda n: D.range(n).map(lambda x: x, num_parallel_calls=2),
    ],
)
def test_every_op_with_a_function_freezes(make):
    made = []
    for n in (2, 3):
        made.append(make(n))
    assert [len(list(ds)) for ds in made] == [2, 3]


def test_group_by_window_and_bucket_freeze():
    made = []
    for size in (2, 3):
        made.append(
            D.range(6).group_by_window(
                lambda x: x % 1,
                lambda k, w: w.batch(size),  # noqa: B023 (late binding is the point)
                window_size_func=lambda k: size,  # noqa: B023
            )
        )
    assert [[len(b) for b in ds] for ds in made] == [[2, 2, 2], [3, 3]]


def test_rebound_cells_stay_shared():
    calls = 0

    def count(x):
        nonlocal calls
        calls += 1
        return x

    assert len(list(D.range(4).map(count))) == 4
    assert calls == 4


def test_mutation_of_the_captured_object_is_seen_and_warned():
    table = np.array([10, 20, 30])
    ds = D.range(3).map(lambda i: table[i])
    table[0] = 99
    with pytest.warns(CapturedValueChanged, match="'table'"):
        out = [int(x) for x in ds]
    assert out == [99, 20, 30]  # the object is shared, not copied
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(ds)  # warned once only


def test_functions_that_update_their_captures_do_not_warn():
    seen: list = []
    ds = D.range(3).map(lambda x: seen.append(int(x)) or x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(ds)
        list(ds)
    assert seen == [0, 1, 2, 0, 1, 2]


def test_freeze_keeps_names_defaults_partials_and_pickles():
    offset = 1

    def add(x, y=2, *, z=3):
        """Doc."""
        return x + y + z + offset

    frozen = freeze(add)
    offset = 100  # noqa: F841 (rebinding after freezing is the point)
    assert frozen(0) == 6 and frozen.__name__ == "add" and frozen.__doc__ == "Doc."
    assert freeze(frozen) is frozen
    part = freeze(functools.partial(add, y=0))
    assert part(0) == 103  # frozen when partial() was frozen, after the rebinding
    assert cloudpickle.loads(cloudpickle.dumps(frozen))(0) == 6
    assert freeze(len) is len and freeze(pickle.dumps) is pickle.dumps


def main_namespace(source: str) -> dict:
    """Run ``source`` as if it were the main script (module ``__main__``)."""
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    exec(source, namespace)  # noqa: S102 (test code)
    return namespace


def test_globals_of_the_main_script_are_frozen():
    ns = main_namespace("A = 1\ndef f(x):\n    return [x + A for _ in range(1)][0]\n")
    frozen = freeze(ns["f"])
    ns["A"] = 100
    assert frozen(0) == 1 and ns["f"](0) == 100  # the comprehension's read of A is frozen too
    assert frozen.__globals__ is not ns and frozen.__globals__["__name__"] == "__main__"
    assert cloudpickle.loads(cloudpickle.dumps(frozen))(0) == 1
    assert freeze(len) is len


def test_globals_stay_live_where_freezing_would_change_the_program():
    ns = main_namespace(
        "n = 0\n"
        "def count(x):\n    global n\n    n += 1\n    return x\n"  # assigns a global
        "def later(x):\n    return helper(x)\n"  # reads a name defined after the pipeline
        "def plain(x):\n    return len(x)\n"  # reads builtins only
    )
    for name in ("count", "later", "plain"):
        assert freeze(ns[name]) is ns[name]
    freeze(ns["count"])(1)
    assert ns["n"] == 1
    ns["helper"] = lambda x: x + 1
    assert freeze(ns["later"])(1) == 2


def test_globals_of_imported_modules_are_read_live():
    def uses_module_global(x):
        return x + pytest.__name__.count("p")  # `pytest` is a global of this (imported) module

    assert freeze(uses_module_global) is uses_module_global


def test_a_changed_global_container_warns():
    ns = main_namespace("LABELS = {'cat': 0}\nlabel = lambda name: LABELS[name.decode()]\n")
    ds = D.from_tensor_slices([b"cat"]).map(ns["label"])
    ns["LABELS"]["cat"] = 7
    with pytest.warns(CapturedValueChanged, match="'LABELS'"):
        assert [int(x) for x in ds] == [7]  # the dict is shared, not copied
