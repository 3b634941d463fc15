"""tensorflow/python/data/kernel_tests/window_test.py, translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError, StructureError

from .support import plain, produces

D = hr.Dataset
COMPONENTS = (
    np.arange(7),
    np.array([[1, 2, 3]]) * np.arange(7)[:, np.newaxis],
    np.array(37.0) * np.arange(7),
)

CASES = [
    (20, size, shift, stride, drop)
    for size in (10, 14, 17)
    for shift in (7, 14)
    for stride in (1, 2, 6)
    for drop in (True, False)
] + [(count, 10, 4, 1, drop) for count in (0, 1) for drop in (True, False)]


@pytest.mark.parametrize(("count", "size", "shift", "stride", "drop_remainder"), CASES)
def test_window_dataset(count, size, shift, stride, drop_remainder):
    ds = D.from_tensor_slices(COMPONENTS).map(lambda x, y, z: (x * x, y * y, z * z)).repeat(count)
    ds = ds.window(size=size, shift=shift, stride=stride, drop_remainder=drop_remainder)
    ds = ds.flat_map(lambda x, y, z: D.zip((x.batch(size), y.batch(size), z.batch(size))))
    total = count * 7
    starts = range(0, total, shift)
    expected = []
    for start in starts:
        positions = list(range(start, min(start + (size - 1) * stride + 1, total), stride))
        if drop_remainder and len(positions) < size:
            continue
        expected.append(tuple(np.stack([c[p % 7] ** 2 for p in positions]) for c in COMPONENTS))
    produces(ds, expected)


@pytest.mark.parametrize(("size", "shift", "stride"), [(0, 3, 1), (3, 0, 1), (3, 3, 0)])
def test_window_dataset_invalid(size, shift, stride):
    with pytest.raises(InvalidArgumentError):
        D.range(10).map(lambda x: x).repeat(20).window(size=size, shift=shift, stride=stride)


def test_window_different_nested_structures():
    windows = list(D.from_tensor_slices(([1, 2], [3, 4])).window(2))
    assert [tuple(plain(part) for part in w) for w in windows] == [([1, 2], [3, 4])]
    windows = list(D.from_tensor_slices({"a": [1, 2]}).window(2))
    assert [plain(w["a"]) for w in windows] == [[1, 2]]


def test_window_shape_error():
    def generator():
        yield [1.0, 2.0, 3.0]
        yield [4.0, 5.0, 6.0]
        yield [7.0, 8.0, 9.0, 10.0]

    ds = D.from_generator(generator, hr.float32, output_shapes=[None]).window(size=3, shift=1)
    ds = ds.flat_map(lambda x: x.batch(batch_size=3))
    with pytest.raises(StructureError, match=r"element 2 has shape \(4,\) but element 0 has \(3,\)"):
        list(ds)


def test_window_input_errors_propagate():
    # tf's testWindowIgnoreErrors relies on its window kernel skipping failed inputs (untranslated, see
    # UNTRANSLATED.md); headrace raises the input's error, and ignore_errors() drops it explicitly.
    values = np.float32([1.0, np.nan, 2.0, np.nan, 3.0])

    def check_numerics(x):
        if np.isnan(x):
            raise ValueError("NaN")
        return x

    ds = D.from_tensor_slices(values).map(check_numerics)
    with pytest.raises(ValueError, match="NaN"):
        list(ds.window(size=2, shift=2, stride=2, drop_remainder=True).flat_map(lambda x: x.batch(2)))
    ds = (
        ds.ignore_errors()
        .window(size=2, shift=2, stride=2, drop_remainder=True)
        .flat_map(lambda x: x.batch(2))
    )
    assert plain(ds) == [[1.0, 3.0]]


def test_nested_output():
    ds = D.range(100)
    for i, (x, y) in enumerate(D.zip((ds, ds)).window(10)):
        assert plain(x) == plain(y) == list(range(i * 10, (i + 1) * 10))


def test_drop_remainder_output():
    ds = D.range(100).window(30, drop_remainder=True).flat_map(lambda x: x.batch(30)).batch(4)
    produces(ds, [np.array([[y + 30 * x for y in range(30)] for x in range(3)])])


def test_window_name():
    produces(D.from_tensors(42).window(1, name="window").flat_map(lambda x: x), [42])


def test_window_interleave():
    # tf's checkpoint case: windows interleaved in parallel. The order is checked here; checkpoints of
    # a pipeline holding windows are a documented gap (docs/porting.md).
    ds = D.range(42).window(6).interleave(lambda x: x, cycle_length=2, num_parallel_calls=2)
    expected = []
    for pair in range(0, 7, 2):
        a = list(range(pair * 6, pair * 6 + 6))
        b = list(range((pair + 1) * 6, (pair + 1) * 6 + 6)) if pair + 1 < 7 else []
        for k in range(6):
            expected.append(a[k])
            if b:
                expected.append(b[k])
    assert plain(ds) == expected
