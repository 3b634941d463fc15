"""tensorflow/python/data/kernel_tests/zip_test.py, translated."""

import collections

import numpy as np

import headrace as hr

from .support import produces, verify_checkpoints

D = hr.Dataset
COMPONENTS = [
    np.tile(np.array([[1], [2], [3], [4]]), 20),
    np.tile(np.array([[12], [13], [14], [15]]), 22),
    np.array([37.0, 38.0, 39.0, 40.0]),
]


def _zip(components):
    return D.zip(tuple(D.from_tensor_slices(c) for c in components))


def test_zip_equal():
    produces(_zip(COMPONENTS), [tuple(c[i] for c in COMPONENTS) for i in range(4)])


def test_zip_unequal():
    components = [[1, 2, 3, 4], [1, 2, 3, 4, 5], [1.0, 2.0]]
    produces(_zip(components), [tuple(np.asarray(c)[i] for c in components) for i in range(2)])


def test_nested():
    a, b, c = (D.from_tensor_slices(x) for x in COMPONENTS)
    ds = D.zip((a, (b, c)))
    spec = ds.element_spec
    assert (tuple(spec[0].shape), tuple(spec[1][0].shape), tuple(spec[1][1].shape)) == ((20,), (22,), ())
    produces(ds, [(COMPONENTS[0][i], (COMPONENTS[1][i], COMPONENTS[2][i])) for i in range(4)])


def test_named_tuple():
    Foo = collections.namedtuple("Foo", ["x", "y"])
    ds = D.zip(Foo(x=D.range(3), y=D.range(3, 6)))
    out = list(ds)
    assert all(type(e) is Foo for e in out)
    assert [(int(e.x), int(e.y)) for e in out] == [(0, 3), (1, 4), (2, 5)]


def test_checkpoint():
    def make(arr):
        a, b, c = (D.from_tensor_slices(x) for x in (*COMPONENTS[:2], np.array(arr)))
        return D.zip((a, (b, c)))

    verify_checkpoints(lambda: make([37.0, 38.0, 39.0, 40.0]), 4)
    verify_checkpoints(lambda: make([1.0, 2.0]), 2)
