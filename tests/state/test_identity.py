"""Pipeline identity: what a checkpoint is keyed by (no line numbers; captured values count), and
run-time derived values kept off the nodes."""

import collections
import json
import pickle

import numpy as np
import pytest

import headrace as hr
from headrace.core.fingerprint import fingerprint, pipeline_key
from headrace.core.node import derived

SOURCE = """
def scaled(x):
    return x * SCALE
"""


def function_from(source: str, filename: str, scale: int):
    namespace = {"SCALE": scale}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["scaled"]


def saved(ds, after: int) -> dict:
    it = iter(ds)
    for _ in range(after):
        next(it)
    return json.loads(json.dumps(it.get_state()))


def test_a_function_moved_down_one_line_keeps_old_checkpoints():
    before = function_from(SOURCE, "prep.py", 2)
    after = function_from("\n# a comment added above\n" + SOURCE, "prep_moved.py", 2)
    assert before.__code__.co_firstlineno != after.__code__.co_firstlineno
    state = saved(hr.Dataset.range(10).map(before), 4)
    it = iter(hr.Dataset.range(10).map(after))
    it.set_state(state)
    assert [int(x) for x in it] == [2 * i for i in range(4, 10)]


def test_a_changed_captured_value_is_refused():
    state = saved(hr.Dataset.range(10).map(function_from(SOURCE, "prep.py", 2)), 4)
    with pytest.raises(hr.CheckpointError, match="a value it captures"):
        iter(hr.Dataset.range(10).map(function_from(SOURCE, "prep.py", 3))).set_state(state)
    offset = 2
    state = saved(hr.Dataset.range(10).map(lambda x: x + offset), 4)
    offset = 5
    with pytest.raises(hr.CheckpointError, match="different pipeline"):
        iter(hr.Dataset.range(10).map(lambda x: x + offset)).set_state(state)


def test_changed_code_or_arguments_are_refused():
    state = saved(hr.Dataset.range(10).map(lambda x: x + 1), 2)
    with pytest.raises(hr.CheckpointError):
        iter(hr.Dataset.range(10).map(lambda x: x - 1)).set_state(state)
    state = saved(hr.Dataset.range(10).shuffle(4, seed=1), 2)
    with pytest.raises(hr.CheckpointError):
        iter(hr.Dataset.range(10).shuffle(4, seed=2)).set_state(state)
    table = np.arange(5)
    state = saved(hr.Dataset.from_tensor_slices(table), 2)
    with pytest.raises(hr.CheckpointError):
        iter(hr.Dataset.from_tensor_slices(table + 1)).set_state(state)


def test_execution_settings_and_a_growing_log_do_not_change_identity():
    log: list = []

    def logged(x):
        log.append(int(x))
        return x

    serial = hr.Dataset.range(10).map(logged)
    state = saved(serial, 3)
    threaded = hr.Dataset.range(10).map(logged, num_parallel_calls=2, executor="thread", name="logged")
    it = iter(threaded)
    it.set_state(state)  # the list the function appends to changed; its contents are not identity
    assert [int(x) for x in it] == list(range(3, 10))


def test_the_key_has_no_file_or_line_and_differs_from_the_cache_fingerprint(tmp_path):
    path = tmp_path / "f.tfrecord"
    path.write_bytes(b"")
    node = hr.TFRecordDataset([str(path)]).node
    key, cache_key = pipeline_key(node), fingerprint(node)
    path.write_bytes(b"x")  # the cache fingerprint sees file sizes; the checkpoint key does not
    fresh = hr.TFRecordDataset([str(path)]).node
    assert pipeline_key(fresh) == key and fingerprint(fresh) != cache_key


def test_cache_after_iterating_the_same_pipeline_has_no_recursion_error(tmp_path):
    ds = hr.Dataset.range(5).map(lambda x: x * 2)
    assert [int(x) for x in ds] == [0, 2, 4, 6, 8]  # the run leaves derived values (plans, specs)
    cached = ds.cache(str(tmp_path / "c"))
    assert [int(x) for x in cached] == [0, 2, 4, 6, 8]
    assert [int(x) for x in cached] == [0, 2, 4, 6, 8]


def test_derived_values_stay_off_the_arguments():
    ds = hr.Dataset.range(5).map(lambda x: x)
    key = pipeline_key(ds.node)
    list(ds)
    _ = ds.element_spec
    node = ds.node
    assert not {"_derived", "_seeds", "parents"} & set(node.arguments())
    assert "element_spec" in derived(node)
    assert pipeline_key(ds.node) == key
    clone = pickle.loads(pickle.dumps(hr.Dataset.range(5).node))
    assert "_derived" not in clone.__dict__
    assert "_derived" not in node.with_parents(*node.parents).__dict__


Point = collections.namedtuple("Point", "x y")


def test_namedtuples_come_back_as_namedtuples_after_a_checkpoint():
    ds = hr.Dataset.range(10).map(lambda i: Point(i, i * 2)).shuffle(4, seed=1).batch(3)
    state = saved(ds, 1)
    it = iter(ds)
    it.set_state(state)
    batch = next(it)
    assert type(batch) is Point and batch.x.shape == (3,)

    # Also while a batch is only partly gathered (the elements themselves are in the state).
    def build():
        return hr.Dataset.range(6).map(lambda i: Point(i, i) if i != 2 else 1 // 0).batch(4)

    it = iter(build())
    with pytest.raises(ZeroDivisionError):
        next(it)
    it2 = iter(build())
    it2.set_state(json.loads(json.dumps(it.get_state())))
    # The batch's elements owed so far (map+batch runs as one stage that decides at its first batch
    # whether to vectorise; the per-element batch under it holds them).
    batch = getattr(it2.root, "batch_iterator", it2.root)
    gathered = [value for _, _, value in batch.owed]
    assert gathered and all(type(e) is Point for e in gathered)


def test_version_1_checkpoints_are_still_read():
    ds = hr.Dataset.range(5)
    state = saved(ds, 2)
    old = {
        "headrace_state_version": 1,
        "pipeline": ds.node.signature(),
        "produced": 2,
        "state": state["state"],
    }
    it = iter(ds)
    it.set_state(old)
    assert [int(x) for x in it] == [2, 3, 4]
    with pytest.raises(hr.CheckpointError, match="different pipeline"):
        iter(hr.Dataset.range(6)).set_state(old)
