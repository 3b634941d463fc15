"""Checkpoint validation: every restored value is checked, a bad one raises CheckpointError naming the
stage and the field (issue 11's tampered-checkpoint defects, one test each, then the fuzz over ops)."""

import json
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import headrace as hr
from headrace.core.state import StateFields
from headrace.io.records.tfrecord import encode_record
from tests.helpers.checkpoint import check_tampered_states, tampered_states


def saved(ds, after: int) -> dict:
    it = iter(ds)
    for _ in range(after):
        if next(it, None) is None:
            break
    return json.loads(json.dumps(it.get_state()))


def test_a_negative_global_shuffle_position_is_refused_at_once():
    ds = hr.Dataset.range(20).global_shuffle(seed=3)
    state = saved(ds, 5)
    state["state"]["position"] = -3
    # It used to spin; refused before any replay now (a spin would be stopped by the pytest timeout).
    with pytest.raises(
        hr.CheckpointError, match=r"global_shuffle.*'position' is -3, expected an int in \[0, 20\]"
    ):
        iter(ds).set_state(state)


def test_a_range_index_of_minus_50_is_refused():
    state = saved(hr.Dataset.range(5), 1)
    state["state"]["index"] = -50
    with pytest.raises(hr.CheckpointError, match=r"range\(0, 5, 1\): checkpoint field 'index' is -50"):
        iter(hr.Dataset.range(5)).set_state(state)


def test_next_file_past_the_end_is_refused_not_dropping_files(tmp_path):
    paths = []
    for k in range(3):
        path = tmp_path / f"f{k}.tfrecord"
        path.write_bytes(b"".join(encode_record(b"%d:%d" % (k, i)) for i in range(4)))
        paths.append(str(path))
    ds = hr.TFRecordDataset(paths)
    state = saved(ds, 2)
    state["state"]["next_file"] = 7
    with pytest.raises(hr.CheckpointError, match=r"'next_file' is 7, expected an int in \[0, 3\]"):
        iter(ds).set_state(state)


def test_a_tfrecord_offset_past_the_file_end_means_another_file(tmp_path):
    path = tmp_path / "f.tfrecord"
    path.write_bytes(b"".join(encode_record(b"r%d" % i) for i in range(4)))
    ds = hr.TFRecordDataset([str(path)])
    state = saved(ds, 1)
    state["state"]["slots"][0]["offset"] = 10**6
    with pytest.raises(hr.CheckpointError, match=r"'slots\[0\].offset' is 1000000"):
        iter(ds).set_state(state)


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("draws", -1, "'draws' is -1"),
        ("seed", "x", "'seed' is 'x', expected an int"),
        ("exhausted", 1, "'exhausted' is 1, expected true or false"),
        ("buffer", [{"a": "!!", "dt": "<i8", "s": [], "g": True}], r"'buffer\[0\]': malformed element"),
    ],
)
def test_shuffle_fields_are_checked(field, value, match):
    ds = hr.Dataset.range(10).filter(lambda x: True).shuffle(4, seed=1)  # a buffer of elements
    state = saved(ds, 2)
    state["state"][field] = value
    with pytest.raises(hr.CheckpointError, match=match):
        iter(ds).set_state(state)


def test_a_buffer_larger_than_the_stage_allows_is_refused():
    ds = hr.Dataset.range(10).filter(lambda x: True).shuffle(4, seed=1)
    state = saved(ds, 2)
    state["state"]["buffer"] = state["state"]["buffer"] * 3
    with pytest.raises(hr.CheckpointError, match="at most 4 items"):
        iter(ds).set_state(state)


def test_an_edited_element_is_refused_with_its_field():
    ds = hr.Dataset.range(10).map(lambda x: x if x != 2 else 1 // 0).batch(4)
    it = iter(ds)
    with pytest.raises(ZeroDivisionError):
        next(it)  # two elements gathered, not yet a batch
    state = json.loads(json.dumps(it.get_state()))
    element = state["state"]["parent"]["pending"][0][2]  # map keeps what it computed before the error
    element["dt"] = "|O"  # an object array would unpickle nothing, but is refused
    with pytest.raises(hr.CheckpointError, match=r"map.*'pending\[0\]\[2\]'.*never decoded"):
        iter(ds).set_state(state)


def test_iterator_level_fields_are_checked():
    ds = hr.Dataset.range(5)
    state = saved(ds, 1)
    with pytest.raises(hr.CheckpointError, match="'produced' is -1"):
        iter(ds).set_state({**state, "produced": -1})
    with pytest.raises(hr.CheckpointError, match="version 'x'"):
        iter(ds).set_state({**state, "headrace_state_version": "x"})
    with pytest.raises(hr.CheckpointError, match="different pipeline"):
        iter(ds).set_state({**state, "identity": "0" * 64})


def test_nothing_is_restored_when_a_field_is_bad():
    it = iter(hr.Dataset.range(10).map(lambda x: x + 1))
    state = saved(hr.Dataset.range(10).map(lambda x: x + 1), 4)
    state["state"]["epoch"] = -1
    with pytest.raises(hr.CheckpointError):
        it.set_state(state)
    assert [int(x) for x in it] == list(range(1, 11))  # the stages kept their fresh state


def test_state_fields_name_stage_field_and_range():
    fields = StateFields({"n": 5, "rows": [[1, 2]], "sub": {"a": 1}}, "stage(x)", ("n",))
    assert fields.int("n", high=5) == 5
    with pytest.raises(
        hr.CheckpointError, match=r"stage\(x\): checkpoint field 'n' is 5, expected an int in \[0, 4\]"
    ):
        fields.int("n", high=4)
    with pytest.raises(hr.CheckpointError, match=r"'rows\[0\]'.*a list of 3 items"):
        fields.rows("rows", 3)
    nested = fields.record(fields.state["sub"], "sub", ("a",))
    with pytest.raises(hr.CheckpointError, match=r"'sub.a' is 1, expected true or false"):
        nested.bool("a")
    with pytest.raises(
        hr.CheckpointError, match=r"state field 'sub' for stage\(x\) must be a dict with keys \['b'\]"
    ):
        fields.record(fields.state["sub"], "sub", ("b",))
    with pytest.raises(hr.CheckpointError, match="must be a dict with keys"):
        StateFields([1], "stage(x)", ("n",))


# --- the class: every op, every field -------------------------------------------------------------
def test_tampered_states_cover_every_field():
    state = {"a": 1, "b": [True, {"c": None}]}
    cases = tampered_states(state, budget=1000)
    described = " ".join(description for description, _ in cases)
    for path in ("['a']", "['b']", "['b'][0]", "['b'][1]", "['b'][1]['c']"):
        assert f"state{path} = " in described
    assert len(tampered_states(state, budget=5)) == 5


PIPELINES = {
    "range.map.batch": lambda: hr.Dataset.range(30).map(lambda x: (x, {"sq": x * x})).batch(4),
    "shuffle.repeat": lambda: hr.Dataset.range(12).shuffle(5, seed=4).repeat(2),
    "global_shuffle.take": lambda: hr.Dataset.range(40).global_shuffle(seed=2).take(25),
    "interleave": lambda: hr.Dataset.range(1, 6).interleave(
        lambda x: hr.Dataset.range(x).map(lambda y: y * 10), cycle_length=2, block_length=2
    ),
    "filter.unbatch.rebatch": lambda: (
        hr.Dataset.range(40).filter(lambda x: x % 3 != 0).batch(5).unbatch().batch(2).rebatch(3)
    ),
    "zip.enumerate.skip": lambda: (
        hr.Dataset.zip((hr.Dataset.range(20), hr.Dataset.range(20).skip(2))).enumerate().skip(3)
    ),
    "generator.padded_batch": lambda: hr.Dataset.from_generator(
        lambda: (np.arange(i % 4) for i in range(14)), output_signature=hr.TensorSpec((None,), "int64")
    ).padded_batch(3),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(PIPELINES)),
    after=st.integers(0, 12),
    pick=st.integers(0, 10**6),
)
def test_any_tampered_field_of_any_pipeline_is_refused_or_harmless(name, after, pick):
    """Fuzz: one random field of a random pipeline's state, wrong. Never a spin, never a bare
    TypeError/IndexError: CheckpointError, or a restore that reads to the end."""
    make = PIPELINES[name]
    state = saved(make(), after)
    cases = tampered_states(state, budget=10**6)
    description, wrong = cases[pick % len(cases)]
    it = iter(make())
    try:
        it.set_state(wrong)
    except hr.CheckpointError:
        return
    except hr.HeadraceError:
        return
    deadline = time.perf_counter() + 10
    try:
        for _ in it:
            assert time.perf_counter() < deadline, f"{description}: still reading after 10 s"
    except hr.HeadraceError:
        pass
    except Exception as exc:
        notes = " ".join(getattr(exc, "__notes__", ()))
        assert "headrace: raised in stage" in notes, f"{description}: {type(exc).__name__}: {exc}"


def test_every_pipeline_above_passes_the_shared_sweep():
    for make in PIPELINES.values():
        assert check_tampered_states(make, after=3, budget=25) == 25
