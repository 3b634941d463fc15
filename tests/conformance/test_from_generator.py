"""tensorflow/python/data/kernel_tests/from_generator_test.py, translated."""

import threading

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import HeadraceError

from .support import assert_same, plain, produces

D = hr.Dataset


def _check(generator, num_repeats):
    expected = [np.asarray(e, dtype=np.int64) for e in generator()] * num_repeats
    ds = D.from_generator(generator, output_types=hr.int64).repeat(num_repeats).prefetch(5)
    for _ in range(2):  # tf's num_test_iterations=2: a second iterator starts the generator again
        produces(ds, expected)


def _gen_fn():
    for i in range(1, 100):
        yield [i] * i


@pytest.mark.parametrize("num_repeats", [1, 5])
@pytest.mark.parametrize(
    "generator",
    [
        _gen_fn,
        lambda: [[i] * i for i in range(1, 100)],
        lambda: np.arange(100, dtype=np.int64),
        lambda: ([i] * i for i in range(1, 100)),
    ],
    ids=["fn", "list", "ndarray", "generator_expression"],
)
def test_from_generator(generator, num_repeats):
    _check(generator, num_repeats)


def test_from_multiple_concurrent_generators():
    def generator():
        for i in range(1, 10):
            yield [i] * i, [i, i**2, i**3]

    inputs = list(generator())

    def inner(_):
        ds = D.from_generator(generator, output_types=(hr.int64, hr.int64), output_shapes=([None], [3]))
        return ds.repeat(5).prefetch(5)

    ds = D.range(100).interleave(inner, cycle_length=10, block_length=len(inputs))
    expected = [(np.array(a), np.array(b)) for _ in range(500) for a, b in inputs]
    produces(ds, expected)


@pytest.mark.parametrize("dtype", [hr.int8, hr.int32, hr.int64])
def test_from_generator_implicit_conversion(dtype):
    def generator():
        yield [1]
        yield [2]
        yield [3]

    out = list(D.from_generator(generator, output_types=dtype, output_shapes=[1]))
    assert [v.dtype for v in out] == [np.dtype(dtype)] * 3
    assert [v.tolist() for v in out] == [[1], [2], [3]]


def test_from_generator_string():
    def generator():
        yield "foo"
        yield b"bar"
        yield "baz"

    produces(D.from_generator(generator, output_types=hr.string, output_shapes=[]), [b"foo", b"bar", b"baz"])


def _errors_then_continue(ds, before, after):
    it = iter(ds)
    for value in before:
        assert_same(next(it), value)
    with pytest.raises(HeadraceError):
        next(it)
    for value in after:
        assert_same(next(it), value)
    with pytest.raises(StopIteration):
        next(it)
    return it


def test_from_generator_type_error():
    def generator():
        yield np.array([1, 2, 3], dtype=np.int64)
        yield np.array([4, 5, 6], dtype=np.int64)
        yield "ERROR"
        yield np.array([7, 8, 9], dtype=np.int64)

    ds = D.from_generator(generator, output_types=hr.int64, output_shapes=[3])
    _errors_then_continue(ds, [np.array([1, 2, 3]), np.array([4, 5, 6])], [np.array([7, 8, 9])])


def test_from_generator_shape_error():
    def generator():
        yield np.array([1, 2, 3], dtype=np.int64)
        yield np.array([4, 5, 6], dtype=np.int64)
        yield np.array([7, 8, 9, 10], dtype=np.int64)
        yield np.array([11, 12, 13], dtype=np.int64)

    ds = D.from_generator(generator, output_types=hr.int64, output_shapes=[3])
    _errors_then_continue(ds, [np.array([1, 2, 3]), np.array([4, 5, 6])], [np.array([11, 12, 13])])


def test_from_generator_structure_error():
    def generator():
        yield 1, 2
        yield 3, 4
        yield 5
        yield 6, 7, 8
        yield 9, 10

    ds = D.from_generator(generator, output_types=(hr.int64, hr.int64))
    it = iter(ds)
    assert plain([next(it), next(it)]) == [(1, 2), (3, 4)]
    for _ in range(2):
        with pytest.raises(HeadraceError, match="output_signature"):
            next(it)
    assert plain([next(it)]) == [(9, 10)]
    with pytest.raises(StopIteration):
        next(it)


def test_from_generator_heterogeneous():
    def generator():
        yield 1
        yield [2, 3]

    produces(D.from_generator(generator, output_types=hr.int64), [np.int64(1), np.array([2, 3])])


def test_from_generator_stop_short():
    def generator():
        yield 0
        yield 1
        yield 2

    it = iter(D.from_generator(generator, output_types=hr.int64))
    assert [int(next(it)), int(next(it))] == [0, 1]
    it.close()


@pytest.mark.xfail(
    reason="take(2) ends the sequence without closing its input, so the generator is released only "
    "when the iterator is closed or collected (tf drops its input iterator at the end); see "
    "test_from_generator_released_on_close",
    strict=True,
)
def test_from_generator_destructor_called():
    deleted = threading.Event()

    class GeneratorWrapper:
        def __iter__(self):
            return self

        def __next__(self):
            return 42

        def __del__(self):
            deleted.set()

    it = iter(D.from_generator(GeneratorWrapper, output_types=hr.int64).take(2))
    assert [int(next(it)), int(next(it))] == [42, 42]
    with pytest.raises(StopIteration):
        next(it)
    import gc

    gc.collect()
    assert deleted.is_set()


def test_from_generator_with_args():
    def flat_map_fn(elem):
        def generator_with_arg(n):
            for _ in range(n):
                yield np.array(n, dtype=np.int64)

        return D.from_generator(generator_with_arg, output_types=hr.int64, output_shapes=(), args=(elem,))

    assert plain(D.range(5).flat_map(flat_map_fn)) == [1, 2, 2, 3, 3, 3, 4, 4, 4, 4]


def test_from_generator_with_two_args():
    def flat_map_fn(elem, message):
        def generator_with_arg(n, msg):
            for i in range(n):
                yield i, msg

        return D.from_generator(
            generator_with_arg,
            output_types=(hr.int64, hr.string),
            output_shapes=((), ()),
            args=(elem, message),
        )

    ds = D.zip((D.range(5), D.from_tensors("Hi!").repeat(None))).flat_map(flat_map_fn)
    assert plain(ds) == [(i, b"Hi!") for n in range(5) for i in range(n)]


def test_from_generator_released_on_close():
    deleted = threading.Event()

    class GeneratorWrapper:
        def __iter__(self):
            return self

        def __next__(self):
            return 42

        def __del__(self):
            deleted.set()

    it = iter(D.from_generator(GeneratorWrapper, output_types=hr.int64).take(2))
    assert plain([next(it), next(it)]) == [42, 42]
    it.close()
    import gc

    gc.collect()
    assert deleted.is_set()
