"""The shared checkpoint test, run against every op (tf.data's five scenarios, plus a fresh process).

``make_dataset`` must build the same deterministic pipeline each call (fix every seed).

Ops often have two paths: over an input that can be read by index (``range``, ``from_tensor_slices``)
and over a streaming one (a generator, a file, a ``filter``). Most tests build their pipelines on
``range``, which left the streaming paths' checkpoints untested (a shuffle whose restore restarted its
random stream over a streaming input passed every shuffle test). So :func:`check_checkpoints` runs
every scenario twice: on the pipeline as given and on :func:`streaming_variant` of it, whose sources
are read through a ``filter`` that keeps everything, and checks both yield the same elements.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import headrace as hr
from headrace.core.errors import CheckpointError, HeadraceError
from headrace.core.node import Node
from headrace.core.state import decode_element, encode_element

from .elements import assert_elements_equal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _through_json(state: dict) -> dict:
    return json.loads(json.dumps(state))


def _take(it, n: int) -> list:
    out = []
    for _ in range(n):
        try:
            out.append(next(it))
        except StopIteration:
            break
    return out


def _keep_every_element(*_: Any) -> bool:
    return True


#: Ops that need their input read by index (they refuse a streaming one): left as they are.
_NEEDS_RANDOM_ACCESS = frozenset({"global_shuffle"})


def streaming_variant(ds: hr.Dataset) -> hr.Dataset | None:
    """``ds`` with every source that can be read by index read through ``filter(keep everything)``,
    which cannot be: each op above it then takes its streaming path (no random access, unknown
    cardinality) on the same elements. None when no source of ``ds`` can be read by index."""
    rewritten: dict[int, Node] = {}

    def visit(node: Node) -> Node:
        if id(node) not in rewritten:
            if node.op in _NEEDS_RANDOM_ACCESS:
                out = node
            elif not node.parents:
                streams = node.random_access_length() is None
                out = node if streams else hr.Dataset(node).filter(_keep_every_element, name="stream").node
            else:
                parents = [visit(parent) for parent in node.parents]
                same = all(a is b for a, b in zip(parents, node.parents))
                out = node if same else node.with_parents(*parents)
            rewritten[id(node)] = out
        return rewritten[id(node)]

    root = visit(ds.node)
    return None if root is ds.node else hr.Dataset(root)


def check_checkpoints(make_dataset: Callable, *, max_elements: int = 200, stride: int = 1) -> list:
    """Run all checkpoint scenarios over the pipeline as given and over its :func:`streaming_variant`
    (when it has a source that can be read by index); both must yield the same elements. Returns
    the uninterrupted run's elements.

    - restore at every step (``stride`` apart) into a fresh iterator: prefix + rest == uninterrupted;
    - after exhaustion the restored iterator is exhausted too;
    - several early breaks chained: save, restore, take a few, save again;
    - an unused iterator's state restores to the full run;
    - restoring tampered states fails cleanly (:func:`check_tampered_states`);
    - states are JSON round-tripped, so they must be JSON-serialisable.
    """
    expected = _check_scenarios(make_dataset, max_elements=max_elements, stride=stride)
    if streaming_variant(make_dataset()) is not None:

        def make_streaming() -> hr.Dataset:
            variant = streaming_variant(make_dataset())
            assert variant is not None
            return variant

        streamed = _check_scenarios(make_streaming, max_elements=max_elements, stride=stride)
        assert_elements_equal(streamed, expected)  # the same elements, whichever way the input is read
    return expected


def _check_scenarios(make_dataset: Callable, *, max_elements: int, stride: int) -> list:
    expected = _take(iter(make_dataset()), max_elements)
    total = len(expected)
    for k in range(0, total + 1, stride):
        it = iter(make_dataset())
        prefix = _take(it, k)
        state = _through_json(it.get_state())
        fresh = iter(make_dataset())
        fresh.set_state(state)
        rest = _take(fresh, max_elements - k)
        assert_elements_equal(prefix + rest, expected)
    if total < max_elements:  # the dataset ended: exhaustion must survive a restore
        it = iter(make_dataset())
        _take(it, total + 1)
        fresh = iter(make_dataset())
        fresh.set_state(_through_json(it.get_state()))
        assert _take(fresh, 1) == [], "restored an exhausted iterator but it yielded more"
    # Several early breaks, each continuing from the previous restore.
    got: list = []
    it = iter(make_dataset())
    step = max(1, total // 4)
    while len(got) < total:
        got.extend(_take(it, step))
        state = _through_json(it.get_state())
        it = iter(make_dataset())
        it.set_state(state)
    assert_elements_equal(got[:total], expected)
    check_tampered_states(make_dataset, after=total // 2, max_elements=max_elements)
    return expected


# --- tampered states -----------------------------------------------------------------------------------
#: What an edited or damaged checkpoint may hold instead of each kind of value.
_WRONG_INTS = (-3, -50, 1, 10**6, 2**62, 10**30, 1.5, True, "x", None, [], {})
_WRONG_OTHERS = (-3, 10**6, 1.5, "x", None, [], {}, [1], {"x": 1})


def _leaves(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """Every position in a JSON state (containers too: they can be replaced or emptied)."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))


def _replaced(state: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(state))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy


def tampered_states(state: dict, budget: int) -> list[tuple[str, dict]]:
    """Up to ``budget`` copies of ``state``, each with one value replaced by a wrong one, spread over
    every field (stage fields first; an encoded element's own fields get a few)."""
    cases = []
    for path, value in _leaves(state):
        if not path:
            continue
        if type(value) is int:
            wrong = [v for v in _WRONG_INTS if v != value] + [value + 1, -value - 1]
        elif type(value) is bool:
            wrong = [not value, 0, "x", None]
        elif isinstance(value, list) and value:
            wrong = [[], value + value[-1:], "x"]
        else:
            wrong = [v for v in _WRONG_OTHERS if v != value]
        for replacement in wrong:
            cases.append(
                (
                    f"state{''.join(f'[{k!r}]' for k in path)} = {replacement!r}",
                    _replaced(state, path, replacement),
                )
            )
    if len(cases) > budget:  # an even spread, so every field keeps some of its cases
        step = len(cases) / budget
        cases = [cases[int(i * step)] for i in range(budget)]
    return cases


def _user_error(exc: BaseException) -> bool:
    """A user function's exception on a (wrong but well-formed) restored element: not headrace's."""
    return any("headrace: raised in stage" in note for note in getattr(exc, "__notes__", ()))


def check_tampered_states(
    make_dataset: Callable,
    *,
    after: int,
    max_elements: int = 200,
    budget: int | None = None,
    seconds: float | None = None,
) -> int:
    """Restore states with one value replaced by a wrong one (negative, huge, wrong type, emptied or
    grown lists). Each must raise CheckpointError, or restore into an iterator that then yields or
    ends within ``seconds`` (10, or 60 where worker processes or Ray actors start) and raises
    nothing but headrace's own errors (never spins, crashes with TypeError/IndexError, or runs
    away). Returns how many tampered states were tried."""
    it = iter(make_dataset())
    _take(it, after)
    state = _through_json(it.get_state())
    it.close()
    processes = any(getattr(n, "executor", None) == "process" for n in it.node.walk())
    remote = any(n.op == "run_on" for n in it.node.walk())
    if budget is None:  # each case starts its own workers or actors: a sample, spread over the fields
        budget = 6 if processes or remote else 40
    if seconds is None:
        # Starting worker processes or Ray actors on a loaded 2-core CI box has taken over 10 s; a
        # spin still shows, it only takes longer to be called one.
        seconds = 60.0 if processes or remote else 10.0
    tried = 0
    for description, wrong in tampered_states(state, budget):
        fresh = iter(make_dataset())
        outcome: dict = {}

        def restore_and_read(fresh=fresh, wrong=wrong, outcome=outcome) -> None:
            try:
                fresh.set_state(wrong)
            except CheckpointError:
                outcome["result"] = "refused"
                return
            except HeadraceError:  # e.g. a sub-dataset rebuilt from a restored element refused it
                outcome["result"] = "detected while restoring"
                return
            except BaseException as exc:  # noqa: BLE001 (reported below with the case)
                if _user_error(exc):
                    outcome["result"] = "a user function refused the element"
                else:
                    outcome["error"] = exc
                return
            try:
                _take(fresh, max_elements)
                outcome["result"] = "read"
            except HeadraceError:
                outcome["result"] = "detected while reading"
            except BaseException as exc:  # noqa: BLE001
                if _user_error(exc):
                    outcome["result"] = "a user function refused the element"
                else:
                    outcome["error"] = exc

        worker = threading.Thread(target=restore_and_read, daemon=True)
        started = time.perf_counter()
        worker.start()
        worker.join(seconds)
        try:
            assert not worker.is_alive(), (
                f"restoring {description} did not finish in {seconds} s (spins?): {fresh.node!r}"
            )
            error = outcome.get("error")
            assert error is None, (
                f"restoring {description} raised {type(error).__name__}: {error} instead of CheckpointError "
                f"({fresh.node!r}, after {time.perf_counter() - started:.2f} s)"
            )
        finally:
            if not worker.is_alive():
                fresh.close()
        tried += 1
    return tried


def check_fresh_process(factory: str, *, after: int, max_elements: int = 200) -> None:
    """Save after ``after`` elements here, restore in a new Python process via ``module:function``."""
    module, function = factory.split(":")
    make_dataset = getattr(__import__(module, fromlist=[function]), function)
    expected = _take(iter(make_dataset()), max_elements)
    it = iter(make_dataset())
    prefix = _take(it, after)
    state = json.dumps(it.get_state())
    code = (
        "import json, sys\n"
        f"from {module} import {function} as make\n"
        "from headrace.core.state import encode_element\n"
        "it = iter(make()); it.set_state(json.loads(sys.stdin.read()))\n"
        "out = []\n"
        f"for _ in range({max_elements - after}):\n"
        "    try: out.append(encode_element(next(it)))\n"
        "    except StopIteration: break\n"
        "print(json.dumps(out))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        input=state,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    rest = [decode_element(e) for e in json.loads(result.stdout)]
    assert_elements_equal(prefix + rest, expected)
    _ = encode_element  # the child encodes with the same codec
