"""tensorflow/python/data/kernel_tests/batch_test.py, translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError, StructureError

from .support import plain, produces, verify_checkpoints

D = hr.Dataset
COMPONENTS = (
    np.arange(7),
    np.array([[1, 2, 3]]) * np.arange(7)[:, np.newaxis],
    np.array(37.0) * np.arange(7),
)


@pytest.mark.parametrize("count", [0, 28])
@pytest.mark.parametrize("batch_size", [14, 15])
@pytest.mark.parametrize("drop_remainder", [True, False])
@pytest.mark.parametrize("num_parallel_calls", [None, 1, 2, 4])
def test_basic(count, batch_size, drop_remainder, num_parallel_calls):
    ds = (
        D.from_tensor_slices(COMPONENTS)
        .map(lambda x, y, z: (x * x, y * y, z * z))
        .repeat(count)
        .batch(batch_size, drop_remainder, num_parallel_calls)
    )
    dim0 = batch_size if drop_remainder else None
    assert [tuple(s.shape) for s in ds.element_spec] == [(dim0, *c.shape[1:]) for c in COMPONENTS]
    flat = [tuple(c[i % 7] ** 2 for c in COMPONENTS) for i in range(count * 7)]
    sizes = [batch_size] * (len(flat) // batch_size)
    if not drop_remainder and len(flat) % batch_size:
        sizes.append(len(flat) % batch_size)
    expected, start = [], 0
    for size in sizes:
        rows = flat[start : start + size]
        expected.append(tuple(np.stack([r[k] for r in rows]) for k in range(3)))
        start += size
    produces(ds, expected)


def test_invalid_batch_size():
    with pytest.raises(InvalidArgumentError):
        D.range(10).batch(0)


@pytest.mark.xfail(
    reason="datasets as elements of a batch: numpy reads a Dataset (it has __len__/__iter__) as a "
    "sequence; ops/support/batching.py needs an object-array path for them",
    strict=True,
)
def test_dataset():
    # Datasets as elements: batched into a vector of datasets, then unbatched and flattened.
    ds = D.range(10).map(lambda i: D.from_tensors(i)).batch(5).map(lambda x: x)
    ds = ds.unbatch().flat_map(lambda x: x)
    assert plain(ds) == list(range(10))


def test_shape_error():
    def generator():
        yield [1.0, 2.0, 3.0]
        yield [4.0, 5.0, 6.0]
        yield [7.0, 8.0, 9.0, 10.0]

    ds = D.from_generator(generator, hr.float32, output_shapes=[None]).batch(3)
    # tf: InvalidArgumentError; headrace: StructureError naming both shapes (docs/porting.md).
    with pytest.raises(StructureError, match=r"element 2 has shape \(4,\) but element 0 has \(3,\)"):
        list(ds)


def test_none_component():
    ds = D.range(10).map(lambda x: (x, None)).batch(10).map(lambda x, y: x)
    produces(ds, [np.arange(10)])


@pytest.mark.parametrize("local", [None, True, False])
@pytest.mark.parametrize("global_", [True, False])
def test_determinism_configuration(local, global_):
    import time

    expect_determinism = local or (local is None and global_)

    def slow_first(x):
        if x == 0:
            time.sleep(0.05)
        return x

    ds = D.from_tensor_slices(list(range(100)))
    ds = ds.map(slow_first, num_parallel_calls=2, deterministic=local)
    ds = ds.batch(6, num_parallel_calls=2, deterministic=local).unbatch()
    options = hr.Options()
    options.deterministic = global_
    out = plain(ds.with_options(options))
    assert sorted(out) == list(range(100))
    if expect_determinism:
        assert out == list(range(100))


@pytest.mark.parametrize("num_parallel_calls", [None, 1])
def test_name(num_parallel_calls):
    ds = D.range(5).batch(5, num_parallel_calls=num_parallel_calls, name="batch")
    produces(ds, [np.arange(5)])


def test_checkpoint():
    n = 8
    components = (np.arange(n), np.array([[1, 2, 3]]) * np.arange(n)[:, np.newaxis], 15.0 * np.arange(n))
    verify_checkpoints(lambda: D.from_tensor_slices(components).batch(2), 4)


@pytest.mark.parametrize("count", [0, 10, 20, 30, 40, 50])
@pytest.mark.parametrize("batch_size", [1, 3, 5, 7, 10, 20])
@pytest.mark.parametrize("drop_remainder", [True, False])
def test_random_access_basic(count, batch_size, drop_remainder):
    # random_access.at(ds, i) is read here as skip(i) then one element; skip on batch seeks.
    ds = D.from_tensor_slices(list(range(count))).batch(batch_size, drop_remainder=drop_remainder)
    full = count // batch_size
    for i in range(full):
        assert plain(ds.skip(i).take(1)) == [list(range(i * batch_size, (i + 1) * batch_size))]
    has_remainder = not drop_remainder and count % batch_size
    n = full + (1 if has_remainder else 0)
    if has_remainder:
        assert plain(ds.skip(full).take(1)) == [list(range(full * batch_size, count))]
    assert plain(ds.skip(n)) == []
    assert ds.cardinality() == n
