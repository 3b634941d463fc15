from collections import namedtuple

import numpy as np
import pytest

import headrace as hr
from headrace import TensorSpec
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process

D = hr.Dataset


def scalar_int():
    return TensorSpec((), "int64")


def from_list(items, signature):
    return D.from_generator(lambda: iter(items), output_signature=signature)


def test_generator_elements_follow_the_signature():
    def gen():
        yield 1, b"a", [1.0, 2.0]
        yield 2, "b", np.array([3.0, 4.0])

    signature = (scalar_int(), TensorSpec((), "string"), TensorSpec((2,), "float32"))
    out = list(D.from_generator(gen, output_signature=signature))
    assert [(type(a), a.item(), s, v.dtype, v.tolist()) for a, s, v in out] == [
        (np.int64, 1, b"a", np.float32, [1.0, 2.0]),
        (np.int64, 2, b"b", np.float32, [3.0, 4.0]),
    ]


def test_generator_converts_dtypes_like_tf_data():
    # np.asarray(value, dtype): floats yielded for int64 are truncated, ints become bools.
    assert [x.item() for x in from_list([1.7, np.float64(2.5)], scalar_int())] == [1, 2]
    assert [x.item() for x in from_list([True, 1, 0], TensorSpec((), "bool"))] == [True, True, False]
    strings = list(from_list(["abc", b"x", np.array(["a", "bb"]), [b"c"]], TensorSpec(None, "string")))
    assert strings[:2] == [b"abc", b"x"]
    assert strings[2].dtype == object and strings[2].tolist() == [b"a", b"bb"]
    assert strings[3].tolist() == [b"c"]
    assert type(strings[3][0]) is bytes


def test_generator_structures_dicts_namedtuples():
    Point = namedtuple("Point", "x y")
    signature = {"p": Point(scalar_int(), scalar_int()), "label": TensorSpec((None,), "int32")}
    ds = from_list([{"p": (1, 2), "label": [1, 2, 3]}, {"label": [], "p": Point(3, 4)}], signature)
    out = list(ds)
    assert isinstance(out[0]["p"], Point) and out[1]["p"].x == 3
    assert out[0]["label"].dtype == np.int32 and out[1]["label"].shape == (0,)
    assert ds.element_spec == signature


def test_generator_structure_errors_name_the_element_and_the_mismatch():
    signature = (scalar_int(), scalar_int())
    with pytest.raises(hr.StructureError, match=r"element 1 is \(leaf, leaf, leaf\) but output_signature is"):
        list(from_list([(1, 2), (1, 2, 3)], signature))
    # A list is one component, as in tf.data: it is not a tuple.
    with pytest.raises(hr.StructureError, match="element 0 is list"):
        list(from_list([[1, 2]], signature))
    with pytest.raises(hr.StructureError, match=r"element 0\[1\] has shape \(3,\) but output_signature\[1\]"):
        list(from_list([(1, [1, 2, 3])], (scalar_int(), TensorSpec((2,), "int64"))))
    with pytest.raises(hr.StructureError, match=r"element 2 is 'zz', which cannot be converted"):
        list(from_list([1, 2, "zz"], scalar_int()))
    with pytest.raises(hr.StructureError, match=r"element 0\['b'\]"):
        list(from_list([{"a": 1, "b": 5}], {"a": scalar_int(), "b": TensorSpec((), "string")}))
    with pytest.raises(hr.StructureError, match="element 0 is"):
        list(from_list([{"a": 1}], {"a": scalar_int(), "b": scalar_int()}))


def test_generator_error_keeps_the_elements_before_it():
    ds = from_list([1, 2, "x", 4], scalar_int())
    it = iter(ds.batch(4))
    with pytest.raises(hr.StructureError, match="element 2"):
        next(it)
    assert next(it).tolist() == [1, 2, 4]


def test_generator_user_exception_gets_a_stage_note():
    def gen():
        yield 1
        raise RuntimeError("disk gone")

    it = iter(D.from_generator(gen, output_signature=scalar_int()))
    assert next(it) == 1
    with pytest.raises(RuntimeError, match="disk gone") as info:
        next(it)
    assert any(
        "from_generator(gen at test_generator.py" in n and "element 1" in n for n in info.value.__notes__
    )


def test_generator_args_are_numpy_values():
    seen = []

    def gen(n, label, array):
        seen.append((type(n), type(label), type(array)))
        yield from range(int(n))

    ds = D.from_generator(gen, args=(3, "s", [1, 2]), output_signature=scalar_int())
    assert [x.item() for x in ds] == [0, 1, 2]
    assert seen == [(np.int64, bytes, np.ndarray)]


def test_generator_output_types_and_shapes():
    ds = D.from_generator(lambda: iter([[1, 2]]), output_types="int32")
    assert ds.element_spec == TensorSpec(None, "int32")
    assert [x.tolist() for x in ds] == [[1, 2]]
    ds = D.from_generator(lambda: iter([]), output_types=(np.int32, np.float32), output_shapes=((2,), None))
    assert ds.element_spec == (TensorSpec((2,), "int32"), TensorSpec(None, "float32"))
    ds = D.from_generator(lambda: iter([]), output_types={"a": "int64"}, output_shapes={"a": [None, 3]})
    assert ds.element_spec == {"a": TensorSpec((None, 3), "int64")}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "needs output_signature"),
        ({"output_shapes": (2,)}, "output_shapes needs output_types"),
        ({"output_signature": scalar_int(), "output_types": "int64"}, "cannot be used together"),
        ({"output_signature": (scalar_int(), "int64")}, r"output_signature\[1\]='int64' is not a TensorSpec"),
        ({"output_types": ("int64", "int64"), "output_shapes": ((),)}, "does not match output_types"),
        ({"output_types": "int64", "output_shapes": 3}, "is not a shape"),
        ({"output_types": "no-such-type"}, "dtype="),
        ({"output_signature": scalar_int(), "args": 3}, "args=3"),
    ],
)
def test_generator_invalid_arguments(kwargs, match):
    with pytest.raises(hr.InvalidArgumentError, match=match):
        D.from_generator(lambda: iter([]), **kwargs)


def test_generator_must_be_callable():
    with pytest.raises(hr.InvalidArgumentError, match="generator=.*not callable"):
        D.from_generator(iter([1, 2]), output_signature=scalar_int())


def test_generator_is_called_once_per_epoch_and_cardinality_unknown():
    calls = []

    def gen():
        calls.append(1)
        yield from range(3)

    ds = D.from_generator(gen, output_signature=scalar_int())
    assert ds.cardinality() == hr.UNKNOWN_CARDINALITY
    assert calls == []  # the spec is static: building and asking for it never calls the generator
    assert ds.element_spec == scalar_int()
    assert [x.item() for x in ds.repeat(3)] == [0, 1, 2] * 3
    assert len(calls) == 3


def test_generator_is_closed_on_reset_and_close():
    closed = []

    def gen():
        try:
            yield from range(100)
        finally:
            closed.append(True)

    ds = D.from_generator(gen, output_signature=scalar_int())
    assert [x.item() for x in ds.take(2).repeat(2)] == [0, 1, 0, 1]
    assert len(closed) >= 1
    it = iter(ds)
    next(it)
    it.close()
    assert len(closed) >= 2


def test_generator_restore_replays_and_checks_the_replay():
    items = [0, 1, 2, 3, 4]

    def gen():
        yield from items

    ds = D.from_generator(gen, output_signature=scalar_int())
    it = iter(ds)
    next(it), next(it), next(it)
    state = it.get_state()
    assert state["state"] == {"yielded": 3, "exhausted": False, "owed": []}
    fresh = iter(ds)
    fresh.set_state(state)
    assert [x.item() for x in fresh] == [3, 4]
    items[:] = [0, 1]  # the generator changed: the replay cannot reach element 3
    fresh = iter(ds)
    fresh.set_state(state)
    with pytest.raises(hr.CheckpointError, match="yielded only 2 elements.*had taken 3"):
        next(fresh)


def gen_records(n):
    for i in range(int(n)):
        yield {"id": i, "text": f"row {i}".encode(), "vec": np.full(2, i, np.float32)}


def make():
    signature = {"id": scalar_int(), "text": TensorSpec((), "string"), "vec": TensorSpec((2,), "float32")}
    return D.from_generator(gen_records, args=(7,), output_signature=signature)


def test_generator_checkpoints():
    assert len(check_checkpoints(make)) == 7
    assert len(check_checkpoints(lambda: make().repeat(2))) == 14
    check_checkpoints(lambda: make().batch(3).repeat(2))
    check_fresh_process("tests.sources.test_generator:make", after=4)
