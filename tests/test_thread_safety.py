"""One iterator shared by threads: each element goes to exactly one caller (as in tf.data), states
taken from another thread are exact, and a closed iterator ends the same way whatever the executor."""

import collections
import sys
import threading
import time

import pytest

import headrace as hr

N = 400
HANG_GUARD_S = 120  # a hang, not a speed limit: the threads finish in well under a second


def plus_one(x):
    return x + 1


def slow_plus_one(x):
    # Long enough that the GIL switches threads inside the pipeline's next().
    sum(range(200))
    return x + 1


def block(x):
    return hr.Dataset.range(x * 100, x * 100 + 100)


PIPELINES = {
    "serial": lambda: hr.Dataset.range(N).map(slow_plus_one),
    "thread map": lambda: hr.Dataset.range(N).map(slow_plus_one, num_parallel_calls=3, executor="thread"),
    "process map": lambda: hr.Dataset.range(N).map(plus_one, num_parallel_calls=2, executor="process"),
    "parallelize": lambda: hr.Dataset.range(N).map(slow_plus_one).parallelize(2),
    "prefetch": lambda: hr.Dataset.range(N).map(slow_plus_one).prefetch(4),
    "parallel interleave": lambda: (
        hr.Dataset.range(4).interleave(block, cycle_length=4, num_parallel_calls=4).map(plus_one)
    ),
}


def expected(kind):
    return (
        collections.Counter(range(1, N + 1))
        if kind != "parallel interleave"
        else collections.Counter(x + 1 for x in range(400))
    )


@pytest.fixture(autouse=True)
def _switch_often():
    # Switch threads every few bytecodes, so a race shows in a few hundred elements.
    saved = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(saved)


def run_threads(targets):
    threads = [threading.Thread(target=t, daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_GUARD_S)
    assert not any(t.is_alive() for t in threads), "a thread sharing the iterator hung"


@pytest.mark.parametrize("kind", list(PIPELINES))
def test_threads_sharing_an_iterator_get_each_element_exactly_once(kind):
    it = iter(PIPELINES[kind]())
    got: list[list[int]] = [[] for _ in range(4)]
    errors = []
    start = threading.Barrier(4)

    def consume(out):
        start.wait()
        try:
            for x in it:
                out.append(int(x))
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    try:
        run_threads([lambda out=out: consume(out) for out in got])
    finally:
        it.close()
    assert not errors
    delivered = collections.Counter(x for out in got for x in out)
    assert delivered == expected(kind)  # nothing lost, nothing twice
    assert it.produced == sum(delivered.values())


@pytest.mark.parametrize("kind", ["serial", "thread map", "prefetch", "parallelize"])
def test_get_state_from_another_thread_is_exact(kind):
    ds = PIPELINES[kind]()
    it = iter(ds)
    states = []
    done = threading.Event()
    consumed = []

    start = threading.Barrier(2)

    def consume():
        start.wait()
        try:
            for x in it:
                consumed.append(int(x))
                time.sleep(0.0002)  # the states then fall at many positions
        finally:
            done.set()

    def checkpoint():
        start.wait()
        while not done.is_set():
            states.append(it.get_state())
            time.sleep(0.002)

    try:
        run_threads([consume, checkpoint])
    finally:
        it.close()
    assert consumed == list(range(1, N + 1))
    positions = {state["produced"] for state in states}
    assert len(positions) > 1  # taken while the consumer ran
    for state in states[:: max(1, len(states) // 5)]:
        fresh = iter(ds)
        fresh.set_state(state)
        rest = [int(x) for x in fresh]
        assert rest == consumed[state["produced"] :], f"state at {state['produced']} is not exact"


@pytest.mark.parametrize("kind", list(PIPELINES))
def test_a_closed_iterator_ends_whatever_the_executor(kind):
    it = iter(PIPELINES[kind]())
    next(it)
    it.close()
    with pytest.raises(StopIteration):
        next(it)
    assert list(it) == []
    it.close()  # idempotent
    with pytest.raises(hr.CheckpointError, match="closed iterator"):
        it.get_state()


def test_close_from_another_thread_wakes_a_waiting_consumer():
    release = threading.Event()

    def slow(x):
        release.wait(HANG_GUARD_S)
        return x

    it = iter(hr.Dataset.range(3).map(slow, num_parallel_calls=1, executor="thread").prefetch(1))
    ended = []

    def consume():
        try:
            for _ in it:
                pass
        except BaseException as exc:  # noqa: BLE001 (the waiting call may end with the close's error)
            ended.append(exc)
        ended.append("done")

    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    it.close()  # does not wait for the consumer's next() to return
    release.set()
    consumer.join(HANG_GUARD_S)
    assert not consumer.is_alive() and ended[-1] == "done"
    with pytest.raises(StopIteration):
        next(it)
