"""Shared checks for the conformance suite: tf.data's ``assertDatasetProduces`` and ``verify_fn``.

Each test module here translates one TensorFlow kernel-test file; test names keep TF's method names
(``testFiniteRepeat`` -> ``test_finite_repeat``) so a case can be traced back to its original.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.helpers.checkpoint import check_checkpoints


def assert_same(actual: Any, expected: Any, where: str = "element") -> None:
    """Equal structure and values; arrays compared with numpy (tf's ``assertAllEqual``)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: {actual!r} is not a dict"
        assert sorted(actual) == sorted(expected), f"{where}: keys {sorted(actual)} != {sorted(expected)}"
        for key in expected:
            assert_same(actual[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, tuple):
        assert isinstance(actual, tuple), f"{where}: {actual!r} is not a tuple"
        assert len(actual) == len(expected), f"{where}: {len(actual)} components, expected {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{where}[{i}]")
    elif expected is None:
        assert actual is None, f"{where}: {actual!r} is not None"
    else:
        a, e = np.asarray(actual), np.asarray(expected)
        if e.dtype.kind in "fc" or a.dtype.kind in "fc":
            assert a.shape == e.shape, f"{where}: shape {a.shape} != {e.shape}"
            np.testing.assert_allclose(a, e, err_msg=where)
        else:
            assert a.shape == e.shape, f"{where}: shape {a.shape} != {e.shape}"
            assert a.tolist() == e.tolist(), f"{where}: {a.tolist()} != {e.tolist()}"


def produces(ds, expected: list, *, items_equal: bool = False) -> list:
    """The dataset yields ``expected`` then ends, and stays ended (tf's OutOfRangeError twice)."""
    it = iter(ds)
    got = []
    for _ in range(len(expected)):
        got.append(next(it))
    with pytest.raises(StopIteration):
        next(it)
    with pytest.raises(StopIteration):
        next(it)
    if items_equal:
        key = lambda e: repr(_plain(e))  # noqa: E731
        got_sorted, expected_sorted = sorted(got, key=key), sorted(expected, key=key)
        for i, (a, e) in enumerate(zip(got_sorted, expected_sorted)):
            assert_same(a, e, f"element {i} (sorted)")
    else:
        for i, (a, e) in enumerate(zip(got, expected)):
            assert_same(a, e, f"element {i}")
    return got


def _plain(element: Any) -> Any:
    if isinstance(element, tuple):
        return tuple(_plain(e) for e in element)
    if isinstance(element, dict):
        return {k: _plain(v) for k, v in sorted(element.items())}
    return np.asarray(element).tolist()


def plain(ds) -> list:
    """All elements as plain Python values (lists, ints, floats, bytes)."""
    return [_plain(e) for e in ds]


def verify_checkpoints(make_dataset: Callable, num_outputs: int, *, max_elements: int | None = None) -> None:
    """tf's ``verify_fn``: the checkpoint scenarios, and the expected number of outputs."""
    limit = max_elements if max_elements is not None else num_outputs + 5
    got = check_checkpoints(make_dataset, max_elements=limit)
    assert len(got) == min(num_outputs, limit)
