"""The typed messages between the parent and its worker processes (runtime/messages.py)."""

import pickle

import numpy as np
import pytest

from headrace.runtime import messages as m
from headrace.runtime.shm import SegmentWriter, cleanup, dump, segment_prefix

SAMPLES = [
    m.MapJob(b"fn", (["/a"], "/"), "p-w0-"),
    m.PipelineJob(b"pipe", None, 3, (["/a"], "/"), "p-w1-"),
    m.End(),
    m.Tasks([(0, None, 1), (1, (5, 6), {"x": 2})]),
    m.Done([(0, True, 12, b"P..."), (1, False, 3, b"err")], (10, 20)),
    m.Pull(2, 16, 0.005),
    m.Reset(4),
    m.SetState(5, {"position": 3}),
    m.Chunk(2, [(True, b"P...")], {"position": 4}, False, (1, 2)),
    m.InitFailed((None, "builtins.ValueError", "bad", "trace")),
    m.BadMessage((b"x", "builtins.TypeError", "bad", "trace")),
]


@pytest.mark.parametrize("message", SAMPLES, ids=lambda message: type(message).__name__)
def test_every_message_comes_back_as_its_own_type(message):
    back = m.unpack(m.pack(message))
    assert type(back) is type(message) and back == message


def test_every_message_class_has_one_tag():
    assert len(m.KINDS) == len(m.TAGS) == len(SAMPLES)
    assert {type(message) for message in SAMPLES} == set(m.TAGS)


@pytest.mark.parametrize("message", SAMPLES, ids=lambda message: type(message).__name__)
def test_the_wire_holds_a_plain_tuple_no_class_reference(message):
    # As cheap as the hand-written tuples it replaced: the same bytes, nothing to look up on load.
    plain = (m.TAGS[type(message)], *message)
    assert m.pack(message) == dump(plain, None)
    assert b"messages" not in m.pack(message)


def test_an_unknown_tag_is_a_stray_not_an_error():
    assert m.unpack(dump(("from_a_newer_version", 1), None)) is None
    assert m.unpack(dump("not a tuple", None)) is None


def test_a_message_with_the_wrong_fields_fails_to_decode():
    with pytest.raises(TypeError):
        m.unpack(dump(("pull", 1), None))


def test_large_arrays_in_tasks_go_through_shared_memory():
    prefix = segment_prefix(0, "test-messages")
    try:
        array = np.arange(100_000, dtype=np.float64)
        data = m.pack(m.Tasks([(0, None, array)]), SegmentWriter(prefix))
        assert data[:1] == b"S" and len(data) < 200
        back = m.unpack(data)
        assert isinstance(back, m.Tasks) and np.array_equal(back.items[0][2], array)
    finally:
        cleanup(prefix)


def test_messages_pickle_small():
    # A tag costs a few bytes, as the string tags did.
    assert len(m.pack(m.Pull(1, 2, 0.5))) == len(dump(("pull", 1, 2, 0.5), None))
    assert pickle.loads(m.pack(m.End())[1:]) == ("end",)
