"""tensorflow/python/data/kernel_tests/unbatch_test.py and unique_test.py, translated."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError, StructureError

from .support import plain, produces, verify_checkpoints

D = hr.Dataset


def test_unbatch_with_unknown_rank_input():
    assert plain(D.from_tensors([0, 1, 2, 3]).unbatch()) == [0, 1, 2, 3]


def test_unbatch_scalar_dataset():
    data = D.from_tensor_slices(tuple(np.arange(10, dtype=np.int32) for _ in range(3))).batch(2)
    assert [s.dtype for s in data.element_spec] == [np.int32] * 3
    data = data.unbatch()
    assert [s.dtype for s in data.element_spec] == [np.int32] * 3
    produces(data, [(np.int32(i),) * 3 for i in range(10)])


def test_unbatch_nested_dataset():
    ds = D.from_tensors([D.range(10) for _ in range(10)]).unbatch().flat_map(lambda x: x)
    assert plain(ds) == list(range(10)) * 10


def test_unbatch_dataset_with_strings():
    r = np.arange(10, dtype=np.int32)
    data = D.from_tensor_slices((r, r, r)).map(lambda x, y, z: (x, str(int(y)).encode(), z)).batch(2)
    assert data.element_spec[1].dtype == hr.string
    data = data.unbatch()
    assert [s.dtype for s in data.element_spec] == [np.int32, hr.string, np.int32]
    produces(data, [(i, str(i).encode(), i) for i in range(10)])


@pytest.mark.xfail(
    reason="unbatch does not split hr.io.SparseTensor components yet (only arrays and hr.io.Ragged)",
    strict=True,
)
def test_unbatch_dataset_with_sparse_tensor():
    st = hr.io.SparseTensor(
        indices=np.array([[i, i] for i in range(10)]), values=np.arange(10), dense_shape=np.array([10, 10])
    )
    out = list(D.from_tensors(st).unbatch().batch(5).unbatch())
    assert len(out) == 10
    for i, row in enumerate(out):
        assert row.to_dense().tolist() == np.eye(10, dtype=np.int64)[i].__mul__(i).tolist()


def test_unbatch_dataset_with_ragged_tensor():
    rt = hr.io.Ragged.from_row_lengths(np.arange(10).reshape(10, 1), np.ones(10, dtype=np.int64))
    out = list(D.from_tensors(rt).unbatch().batch(5).batch(2).unbatch())
    assert [np.asarray(r.to_list() if hasattr(r, "to_list") else r).tolist() for r in out] == [
        [[[i]] for i in range(5)],
        [[[i]] for i in range(5, 10)],
    ]


def test_unbatch_single_element_tuple_dataset():
    r = np.arange(10, dtype=np.int32)
    data = D.from_tensor_slices(((r,), (r,), (r,))).batch(2).unbatch()
    produces(data, [((np.int32(i),),) * 3 for i in range(10)])


def test_unbatch_multi_element_tuple_dataset():
    hi = np.array([b"hi"] * 10, dtype=object)
    data = D.from_tensor_slices(tuple((np.arange(10 * i, 10 * i + 10, dtype=np.int32), hi) for i in range(3)))
    data = data.batch(2).unbatch()
    assert [tuple(s.dtype for s in part) for part in data.element_spec] == [(np.int32, hr.string)] * 3
    produces(data, [((i, b"hi"), (10 + i, b"hi"), (20 + i, b"hi")) for i in range(10)])


def test_unbatch_empty():
    data = D.from_tensors(
        (np.zeros([0], np.float32), np.zeros([0, 4], np.float32), np.zeros([0, 4, 0], np.float32))
    ).unbatch()
    produces(data, [])


def test_unbatch_static_shape_mismatch():
    data = D.from_tensors((np.arange(7), np.arange(8), np.arange(9)))
    # tf refuses at unbatch() from the static shapes; headrace when the element is split.
    with pytest.raises(StructureError, match=r"unbatch\(\): input element 0 has different leading sizes"):
        list(data.unbatch())


def test_unbatch_dynamic_shape_mismatch():
    def gen():
        yield np.arange(7, dtype=np.int32), np.arange(8, dtype=np.int32)

    with pytest.raises(
        StructureError, match=r"input element 0 has different leading sizes \(\[0\] \(7,\), \[1\] \(8,\)\)"
    ):
        list(D.from_generator(gen, output_types=(hr.int32, hr.int32)).unbatch())

    def gen_scalar():
        yield np.arange(7, dtype=np.int32), np.int32(7)

    with pytest.raises(StructureError, match=r"input element 0 is a scalar \(\[0\] \(7,\), \[1\] \(\)\)"):
        list(D.from_generator(gen_scalar, output_types=(hr.int32, hr.int32)).unbatch())


def test_unbatch_dataset_with_uint_dtypes():
    components = (
        np.tile(np.array([[0], [1], [2], [3]], dtype=np.uint8), 2),
        np.tile(np.array([[1], [2], [3], [256]], dtype=np.uint16), 2),
        np.tile(np.array([[2], [3], [4], [65536]], dtype=np.uint32), 2),
        np.tile(np.array([[3], [4], [5], [4294967296]], dtype=np.uint64), 2),
    )
    data = D.from_tensor_slices(components).batch(2)
    dtypes = [np.uint8, np.uint16, np.uint32, np.uint64]
    assert [s.dtype for s in data.element_spec] == dtypes
    data = data.unbatch()
    assert [s.dtype for s in data.element_spec] == dtypes
    produces(data, [tuple(c[i] for c in components) for i in range(4)])


@pytest.mark.xfail(
    reason="unbatch of a None component is not supported yet (docs/porting.md, differences)", strict=True
)
def test_unbatch_none_component():
    ds = D.from_tensors((list(range(10)), None)).unbatch().map(lambda x, y: x)
    assert plain(ds) == list(range(10))


def test_unbatch_name():
    produces(D.from_tensors([42]).unbatch(name="unbatch"), [42])


def test_unbatch_checkpoint():
    n = 8
    components = (np.arange(n), np.array([[1, 2, 3]]) * np.arange(n)[:, np.newaxis], 15.0 * np.arange(n))
    verify_checkpoints(lambda: D.from_tensor_slices(components).batch(2).unbatch(), n)


def test_unbatch_random_access():
    # tf reads unbatch(batch(drop_remainder=True)) by index; headrace's unbatch has no random access,
    # so global_shuffle after it is refused with advice (docs/porting.md, differences).
    ds = D.range(10).batch(4, drop_remainder=True).unbatch()
    assert plain(ds) == list(range(8))
    with pytest.raises(InvalidArgumentError, match="unbatch\\(\\) cannot"):
        list(ds.global_shuffle(seed=1))


UNIQUE_INT_CASES = [
    ([], []),
    ([1], [1]),
    ([1, 1, 1, 1, 1, 1, 1], [1]),
    ([1, 1, 1, 1, 0], [1, 0]),
    ([1, 2, 3, 4], [1, 2, 3, 4]),
    ([1, 2, 4, 3, 2, 1, 2, 3, 4], [1, 2, 4, 3]),
    ([[1], [1, 1], [1, 1, 1]], [[1], [1, 1], [1, 1, 1]]),
    ([[1, 1], [1, 1], [2, 2], [3, 3], [1, 1]], [[1, 1], [2, 2], [3, 3]]),
]


@pytest.mark.parametrize("dtype", [hr.int32, hr.int64])
@pytest.mark.parametrize(("values", "expected"), UNIQUE_INT_CASES)
def test_unique_simple_int(dtype, values, expected):
    ds = D.from_generator(lambda: iter(values), dtype).unique()
    assert plain(ds) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([], []),
        (["hello"], ["hello"]),
        (["hello"] * 3, ["hello"]),
        (["hello", "world"], ["hello", "world"]),
        (["foo", "bar", "baz", "baz", "bar", "foo"], ["foo", "bar", "baz"]),
    ],
)
def test_unique_simple_string(values, expected):
    ds = D.from_generator(lambda: iter(values), hr.string).unique()
    assert plain(ds) == [e.encode() for e in expected]


@pytest.mark.parametrize("dtype", [hr.bool, hr.double, hr.complex64, hr.float32, hr.float64])
def test_unique_unsupported_types(dtype):
    # tf raises TypeError from the static dtype at unique(); headrace checks the first element.
    ds = D.from_generator(lambda: iter([1, 0]), dtype).unique()
    with pytest.raises(InvalidArgumentError, match="unique needs elements of one integer or string tensor"):
        list(ds)


def test_unique_name():
    produces(D.from_tensors(42).unique(name="unique"), [42])


def test_unique_checkpoint():
    verify_checkpoints(lambda: D.range(200).map(lambda x: x % 100).unique(), 100)
