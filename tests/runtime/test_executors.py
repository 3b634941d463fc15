"""Every executor of the parallel map conforms to runtime/executors.py's ``Executor`` protocol, and
behaves the same behind it: results by task, errors as results, then a clean shutdown."""

from __future__ import annotations

import inspect
import sys

import cloudpickle
import pytest

from headrace.runtime.executors import Executor
from headrace.runtime.inline import InlineExecutor
from headrace.runtime.processes import ProcessExecutor
from headrace.runtime.threads import ThreadExecutor

from .conftest import wait_until

pytestmark = pytest.mark.timeout(120)
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def twice_or_fail(x):
    if x == 3:
        raise ValueError("three")
    return x * 2


MAKERS = {
    "inline": lambda: InlineExecutor(twice_or_fail),
    "thread": lambda: ThreadExecutor(twice_or_fail, 2, "map[test]"),
    "process": lambda: ProcessExecutor(twice_or_fail, 2, "map[test]"),
}
MEMBERS = [name for name in dir(Executor) if not name.startswith("_")] + list(Executor.__annotations__)


@pytest.mark.parametrize("kind", MAKERS)
def test_each_executor_conforms(kind):
    executor = MAKERS[kind]()
    try:
        assert isinstance(executor, Executor)
        assert executor.kind == kind
        for name in MEMBERS:
            assert hasattr(executor, name), name
            declared = getattr(Executor, name, None)
            if callable(declared):  # the same parameters as the protocol's method
                mine = list(inspect.signature(getattr(executor, name)).parameters)
                theirs = list(inspect.signature(declared).parameters)[1:]
                assert mine == theirs, (name, mine, theirs)
        assert isinstance(executor.chunk_size, int) and executor.chunk_size >= 1
        assert isinstance(executor.counters(), dict)
    finally:
        executor.shutdown()
    assert executor.closed


@pytest.mark.parametrize("kind", MAKERS)
def test_each_executor_computes_every_task_and_keeps_errors_as_results(kind):
    executor = MAKERS[kind]()
    try:
        for task in range(6):
            executor.submit(task, task, None)
        executor.flush()
        executor.resize(1)
        results: dict = {}

        def collected() -> bool:
            results.update((task, (ok, value)) for task, ok, value in executor.wait(0.1))
            return len(results) == 6

        wait_until(collected)
        assert {task: value for task, (ok, value) in results.items() if ok} == {0: 0, 1: 2, 2: 4, 4: 8, 5: 10}
        ok, error = results[3]
        assert not ok and isinstance(error, ValueError) and str(error) == "three"
        assert executor.busy_seconds() >= 0 and executor.cpu_seconds() >= 0
        assert all(isinstance(pid, int) for pid in executor.pids())
    finally:
        executor.shutdown()
