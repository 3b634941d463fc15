"""Warnings name the user's line (``user_stacklevel``), whatever headrace frames lie between."""

import warnings

import numpy as np
import pytest

import headrace as hr
from headrace.core.closures import CapturedValueChanged
from headrace.core.errors import user_stacklevel
from headrace.core.process import PROCESS
from headrace.ops import map_executor as parallel_map
from headrace.ops.cache import CacheWarning


def test_user_stacklevel_counts_to_the_first_frame_outside_headrace():
    # Called from a test function (not headrace), the caller's own frame is the user's: level 1.
    assert user_stacklevel() == 1


def test_a_changed_capture_warning_names_the_users_line():
    table = np.array([1, 2, 3])
    ds = hr.Dataset.range(3).map(lambda i: table[i])
    table[0] = 7
    with pytest.warns(CapturedValueChanged) as record:
        list(ds)
    assert record[0].filename == __file__


def test_a_cache_warning_names_the_users_line(tmp_path):
    path = str(tmp_path / "c")
    list(hr.Dataset.range(4).map(lambda x: x * 2).cache(path))
    with pytest.warns(CacheWarning) as record:
        list(hr.Dataset.range(4).map(lambda x: x * 3).cache(path))
    assert record[0].filename == __file__


def test_the_thread_fallback_warning_names_the_users_line(monkeypatch):
    # As inside a DataLoader worker: processes cannot start, the map falls back to threads, once.
    monkeypatch.setattr(parallel_map, "processes_unavailable", lambda: "this is a daemonic process")
    monkeypatch.setattr(parallel_map, "_warned_daemonic", [])
    monkeypatch.setattr(PROCESS, "inside_worker", False)
    ds = hr.Dataset.range(20).map(np.sqrt, num_parallel_calls=2, executor="process")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert len(list(ds)) == 20
    ours = [w for w in record if "daemonic" in str(w.message)]
    assert ours and ours[0].filename == __file__
