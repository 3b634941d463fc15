"""``map``: serial semantics, errors, checkpoints, and the same results on threads and processes."""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback

import cloudpickle
import numpy as np
import pytest

import headrace as hr
from headrace import AUTOTUNE, InvalidArgumentError, Options
from headrace.runtime.defaults import available_cpus
from headrace.runtime.threads import MAX_CHUNK
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process
from tests.helpers.elements import assert_elements_equal, to_python

pytestmark = pytest.mark.timeout(60)
# Process workers get this module's functions by value instead of importing it (and pytest) each.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

PARALLEL = [
    pytest.param({"num_parallel_calls": 2, "executor": "thread"}, id="thread"),
    pytest.param({"num_parallel_calls": 2, "executor": "process"}, id="process"),
]
ANY = [pytest.param({}, id="serial"), *PARALLEL]


def jittery(x):
    """x * 3 after a delay that varies by element, so parallel calls finish out of order."""
    time.sleep(int(x) * 7919 % 5 / 2000)
    return x * 3


def values(ds) -> list:
    return [to_python(e) for e in ds]


# --- the serial path (tf.data semantics) ------------------------------------------------------------
@pytest.mark.parametrize("kwargs", ANY)
def test_map_applies_the_function_in_order(kwargs):
    ds = hr.Dataset.range(20).map(jittery, **kwargs)
    assert [int(x) for x in ds] == [3 * i for i in range(20)]
    assert ds.cardinality() == 20


@pytest.mark.parametrize("kwargs", ANY)
def test_tuples_are_unpacked_and_dicts_passed_whole(kwargs):
    pairs = hr.Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 10))
    assert [int(x) for x in pairs.map(lambda a, b: a + b, **kwargs)] == [0, 11, 22, 33]
    records = hr.Dataset.from_tensor_slices({"x": np.arange(3), "y": np.ones(3)})
    assert [float(x) for x in records.map(lambda d: d["x"] + d["y"], **kwargs)] == [1.0, 2.0, 3.0]
    # A function returning a tuple feeds the next map's positional arguments.
    chained = hr.Dataset.range(3).map(lambda x: (x, -x), **kwargs).map(lambda a, b: a - b)
    assert [int(x) for x in chained] == [0, 2, 4]


def test_outputs_keep_their_structure_and_dtypes():
    ds = hr.Dataset.range(3).map(lambda x: {"a": np.float32(x), "b": (np.full(2, x), b"k")})
    out = list(ds)
    assert out[1]["a"].dtype == np.float32 and out[2]["b"][0].tolist() == [2, 2] and out[0]["b"][1] == b"k"


class Boom(ValueError):
    pass


def fail_on_3(x):
    if x == 3:
        raise Boom(f"bad element {int(x)}")
    return x * 3


@pytest.mark.parametrize("kwargs", ANY)
def test_user_errors_keep_their_type_and_name_stage_and_position(kwargs):
    it = iter(hr.Dataset.range(6).map(fail_on_3, **kwargs))
    assert [int(next(it)) for _ in range(3)] == [0, 3, 6]
    with pytest.raises(Boom, match="bad element 3") as info:
        next(it)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "stage map(fail_on_3 at test_map.py" in notes and "on input element 3" in notes
    text = "".join(traceback.format_exception(info.value))
    assert "raise Boom(" in text  # the traceback shows where the user's code raised
    # The error costs only the failing element: iteration goes on.
    assert [int(x) for x in it] == [12, 15]


def test_error_inside_a_chunk_loses_nothing_else_and_computes_nothing_twice():
    calls: list[int] = []

    def counted(x):
        calls.append(int(x))
        return fail_on_3(x)

    it = iter(hr.Dataset.range(10).map(counted).batch(5))
    with pytest.raises(Boom):
        next(it)
    state = json.loads(json.dumps(it.get_state()))
    rest = [b.tolist() for b in it]
    assert rest == [[0, 3, 6, 12, 15], [18, 21, 24, 27]]
    assert sorted(calls) == list(range(10))  # each element computed exactly once
    # The outputs before the failure went to batch first (its owed rows), the error came next,
    # and the input after it waits in map's pending: all in the checkpoint, with positions.
    assert len(state["state"]["owed"]) == 3
    pending = state["state"]["parent"]["pending"]
    assert [(p[0], p[1]) for p in pending] == [(4, False)]
    fresh = iter(hr.Dataset.range(10).map(counted).batch(5))
    fresh.set_state(state)
    assert [b.tolist() for b in fresh] == rest


def test_errors_after_restore_of_pending_inputs_name_their_position():
    it = iter(hr.Dataset.range(8).map(fail_on_3).batch(8))
    with pytest.raises(Boom):
        next(it)
    # Serial state restored into a parallel map: pending outputs first, then the inputs.
    state = it.get_state()
    parallel = iter(hr.Dataset.range(8).map(fail_on_3, num_parallel_calls=2, executor="thread").batch(8))
    parallel.set_state(state)
    assert [b.tolist() for b in parallel] == [[0, 3, 6, 12, 15, 18, 21]]


# --- checkpoints --------------------------------------------------------------------------------
def make_serial():
    return hr.Dataset.range(23).map(lambda x: x * 2).batch(3)


def make_seeded():
    return hr.Dataset.range(12).map(lambda x, rng: x + rng.integers(1000), seed=11).repeat(2)


def make_parallel_process():
    return hr.Dataset.range(15).map(jittery, num_parallel_calls=2, executor="process").batch(2)


@pytest.mark.parametrize(
    "make",
    [
        make_serial,
        make_seeded,
        lambda: hr.Dataset.range(21).map(jittery, num_parallel_calls=3, executor="thread"),
        lambda: hr.Dataset.range(21).map(jittery, num_parallel_calls=2, executor="thread").batch(4),
        lambda: hr.Dataset.range(9).map(jittery, num_parallel_calls=2, executor="thread").repeat(2),
        lambda: hr.Dataset.range(30).shuffle(7, seed=1).map(jittery, num_parallel_calls=2).batch(5),
        make_parallel_process,
    ],
    ids=["serial", "seeded", "thread", "thread-batch", "thread-repeat", "shuffle-auto", "process"],
)
def test_checkpoints_are_exact(make):
    check_checkpoints(make, stride=2)


def test_checkpoints_restore_in_a_fresh_process():
    check_fresh_process("tests.ops.test_map:make_seeded", after=5)
    check_fresh_process("tests.ops.test_map:make_parallel_process", after=3)


def test_parallel_state_is_small_and_moves_between_serial_threads_and_processes():
    build = lambda **kw: hr.Dataset.range(40).map(jittery, **kw)  # noqa: E731
    it = iter(build(num_parallel_calls=3, executor="thread"))
    head = [int(next(it)) for _ in range(10)]
    state = json.loads(json.dumps(it.get_state()))
    # Deterministic with a cheap parent: the snapshot taken after the chunk holding the last element
    # handed on, plus the rest of that chunk still owed (inputs pulled in chunks: parallel_map.py).
    cut, owed = state["state"]["position"], [entry[0] for entry in state["state"]["pending"]]
    assert owed == list(range(10, cut)) and len(owed) <= MAX_CHUNK
    for kwargs in ({}, {"num_parallel_calls": 2, "executor": "process"}):
        other = iter(build(**kwargs))
        other.set_state(state)
        assert head + [int(x) for x in other] == [3 * i for i in range(40)]
    serial = iter(build())
    [next(serial) for _ in range(10)]
    if not owed:  # at a chunk's end it is the serial map's state itself
        assert serial.get_state() == state


def test_unordered_checkpoints_owe_only_the_undelivered():
    gate = threading.Event()

    def waits_on_0(x):
        if x == 0:
            gate.wait(5)
        return x

    it = iter(hr.Dataset.range(12).map(waits_on_0, 2, False, name="ident", executor="thread"))
    first = [int(next(it)) for _ in range(3)]
    assert 0 not in first
    state = json.loads(json.dumps(it.get_state()))
    gate.set()
    owed = {p[0] for p in state["state"]["pending"]}
    assert 0 in owed and not owed & set(first)
    # The same function (the gate is open now): a checkpoint only restores into the same code.
    fresh = iter(hr.Dataset.range(12).map(waits_on_0, 2, name="ident", executor="thread"))
    fresh.set_state(state)
    assert sorted(first + [int(x) for x in fresh]) == list(range(12))
    it.close()


# --- order --------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", PARALLEL)
@pytest.mark.parametrize("workers", [1, 3])
def test_deterministic_order_equals_serial_for_any_parallelism(kwargs, workers):
    kwargs = {**kwargs, "num_parallel_calls": workers}
    ds = hr.Dataset.range(40).map(jittery, **kwargs)
    assert [int(x) for x in ds] == [3 * i for i in range(40)]


@pytest.mark.parametrize("kwargs", PARALLEL)
def test_nondeterministic_yields_every_element_once(kwargs):
    ds = hr.Dataset.range(40).map(jittery, deterministic=False, **kwargs)
    assert sorted(int(x) for x in ds) == [3 * i for i in range(40)]


def test_nondeterministic_yields_what_is_ready_first():
    gate = threading.Event()

    def slow_first(x):
        if x == 0:
            assert gate.wait(10), "element 0 was never released"
        return int(x)

    it = iter(
        hr.Dataset.range(6).map(slow_first, num_parallel_calls=2, deterministic=False, executor="thread")
    )
    assert next(it) == 1  # element 0 is blocked, 1 is ready: it comes first
    gate.set()
    assert sorted([1, *it]) == list(range(6))


def test_options_deterministic_is_the_default_and_the_argument_wins():
    options = Options()
    options.deterministic = False
    ds = hr.Dataset.range(4).map(jittery, num_parallel_calls=2, executor="thread")
    with iter(ds.with_options(options)) as it:
        assert it.root.deterministic is False
    with iter(hr.Dataset.range(4).map(jittery, 2, True, executor="thread").with_options(options)) as it:
        assert it.root.deterministic is True
    with iter(ds) as it:
        assert it.root.deterministic is True


def test_autotune_uses_the_cpus_this_process_may_run_on():
    with iter(hr.Dataset.range(4).map(jittery, num_parallel_calls=AUTOTUNE, executor="thread")) as it:
        assert [int(x) for x in it] == [0, 3, 6, 9]
        assert it.root.counters()["parallelism"] == available_cpus()


# --- seeds ----------------------------------------------------------------------------------------
def noisy(x, rng):
    return int(x) * 1000 + int(rng.integers(1000)), float(rng.random())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_parallel_calls": 1, "executor": "thread"},
        {"num_parallel_calls": 3, "executor": "thread"},
        {"num_parallel_calls": 2, "executor": "process"},
        {"num_parallel_calls": 2, "executor": "thread", "deterministic": False},
    ],
)
def test_seeded_outputs_are_the_same_for_any_parallelism_and_executor(kwargs):
    serial = values(hr.Dataset.range(30).map(noisy, seed=5).repeat(2))
    parallel = values(hr.Dataset.range(30).map(noisy, seed=5, **kwargs).repeat(2))
    if kwargs.get("deterministic") is False:
        serial, parallel = sorted(serial), sorted(parallel)
    assert parallel == serial


def test_seeded_streams_differ_between_epochs_iterations_and_elements():
    ds = hr.Dataset.range(200).map(lambda x, rng: rng.integers(2**62), seed=1)
    epochs = [int(x) for x in ds.repeat(2)]
    first, second = epochs[:200], epochs[200:]
    assert first != second  # a new epoch (repeat) draws anew
    assert len(set(first)) == 200  # no two elements share a stream
    assert [int(x) for x in ds] != [int(x) for x in ds]  # each iter() is a new epoch too
    again = hr.Dataset.range(200).map(lambda x, rng: rng.integers(2**62), seed=1)
    assert [int(x) for x in again] == first  # a fresh dataset with the same seed repeats
    other = hr.Dataset.range(200).map(lambda x, rng: rng.integers(2**62), seed=2)
    assert [int(x) for x in other] != first


def test_seed_is_part_of_the_stage_name():
    assert "seed=4" in hr.Dataset.range(1).map(noisy, seed=4).describe()


# --- arguments and probing ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_parallel_calls": 0}, "num_parallel_calls=0"),
        ({"num_parallel_calls": 1.5}, "num_parallel_calls=1.5"),
        ({"deterministic": "yes"}, "deterministic='yes'"),
        ({"executor": "gpu"}, "executor='gpu'"),
        ({"seed": -1}, "seed=-1"),
        ({"seed": True}, "seed=True"),
    ],
)
def test_invalid_arguments_are_named(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        hr.Dataset.range(3).map(lambda x: x, **kwargs)


def test_not_callable_and_unpicklable_functions_fail_when_the_pipeline_is_built():
    with pytest.raises(InvalidArgumentError, match="not callable"):
        hr.Dataset.range(3).map(5)
    lock = threading.Lock()
    with pytest.raises(
        InvalidArgumentError, match="cannot be pickled for executor='process'.*executor='thread'"
    ):
        hr.Dataset.range(3).map(lambda x: (lock, x)[1], num_parallel_calls=2, executor="process")
    # Threads need no pickling.
    assert [int(x) for x in hr.Dataset.range(3).map(lambda x: (lock, x)[1], 2, executor="thread")] == [
        0,
        1,
        2,
    ]


def test_element_spec_starts_no_workers():
    before = set(threading.enumerate())
    ds = hr.Dataset.range(3).map(
        lambda x: np.zeros((2, int(x) + 1)), num_parallel_calls=2, executor="process"
    )
    assert ds.element_spec.shape == (2, 1)
    assert not [t for t in set(threading.enumerate()) - before if t.name.startswith("headrace")]


def test_executor_alone_runs_one_background_worker():
    with iter(hr.Dataset.range(5).map(jittery, executor="thread")) as it:
        assert [int(x) for x in it] == [0, 3, 6, 9, 12]
        assert it.root.counters()["parallelism"] == 1


def test_serial_map_chunks_match_single_steps():
    ds = hr.Dataset.range(50).map(lambda x: x * x)
    chunked = [x for batch in ds.batch(7) for x in batch]
    assert_elements_equal(chunked, list(ds))


def test_a_chunk_gives_the_outputs_before_an_error_then_the_error_as_next_does():
    # Element order is kept in chunks too: a consumer (zip, the iterator's read-ahead) can tell which
    # element failed. A state saved while the error is held keeps the failing input, so a restore
    # computes it again (and raises again) instead of skipping it.
    it = iter(hr.Dataset.range(8).map(fail_on_3)).root
    assert [int(x) for x in it.next_chunk(6)] == [0, 3, 6]
    state = json.loads(json.dumps(it.get_state()))
    with pytest.raises(Boom):
        it.next_chunk(6)
    assert [int(x) for x in it.next_chunk(6)] == [12, 15]  # the owed inputs, computed as one chunk
    fresh = iter(hr.Dataset.range(8).map(fail_on_3)).root
    fresh.set_state(state)
    with pytest.raises(Boom):
        fresh.next_chunk(6)
    assert [int(x) for c in iter(lambda: _chunk_or_none(fresh), None) for x in c] == [12, 15, 18, 21]


def _chunk_or_none(it):
    try:
        return it.next_chunk(6)
    except StopIteration:
        return None


def test_ctrl_c_inside_map_func_loses_nothing():
    # A KeyboardInterrupt raised inside map_func while a chunk runs: raised now; the outputs made before
    # it and the inputs after it (the interrupted one included) come next, each once, in order.
    interrupted = []

    def fn(x):
        if x == 7 and not interrupted:
            interrupted.append(x)
            raise KeyboardInterrupt
        return x * 10

    it = iter(hr.Dataset.range(20).map(fn).batch(4))
    got = []
    with pytest.raises(KeyboardInterrupt):
        while True:
            got.extend(next(it).tolist())
    got.extend(v for batch in it for v in batch.tolist())
    assert got == [x * 10 for x in range(20)] and interrupted == [7]
    # a state saved after the interrupt restores the same rest
    it = iter(hr.Dataset.range(20).map(fn).batch(4))
    interrupted.clear()
    assert next(it).tolist() == [0, 10, 20, 30]
    with pytest.raises(KeyboardInterrupt):
        next(it)
    state = it.get_state()
    rest = [v for batch in it for v in batch.tolist()]
    again = iter(hr.Dataset.range(20).map(fn).batch(4))
    again.set_state(state)
    assert [v for batch in again for v in batch.tolist()] == rest == [x * 10 for x in range(4, 20)]
