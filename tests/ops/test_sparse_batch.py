import numpy as np
import pytest

import headrace as hr
from headrace.io import SparseTensor
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def test_sparse_batch_as_tf_gives_it():
    # tf.data's documented example: elements of 1..3 sevens... as rows of a [batch, 3] SparseTensor
    ds = D.range(1, 4).map(lambda n: np.full(n, 7)).sparse_batch(2, row_shape=[3])
    first, second = list(ds)
    assert first.indices.tolist() == [[0, 0], [1, 0], [1, 1]] and first.values.tolist() == [7, 7, 7]
    assert first.shape == (2, 3) and second.to_dense().tolist() == [[7, 7, 7]]
    assert ds.cardinality() == 2
    grown = next(iter(D.range(1, 3).map(lambda n: np.ones((n, 2))).sparse_batch(2, row_shape=[-1, 2])))
    assert grown.shape == (2, 2, 2)


def test_sparse_batch_errors():
    with pytest.raises(hr.StructureError, match="larger than row_shape"):
        list(D.range(1, 5).map(lambda n: np.ones(n)).sparse_batch(4, row_shape=[2]))
    with pytest.raises(hr.StructureError, match="rank"):
        list(D.range(3).sparse_batch(2, row_shape=[2]))
    with pytest.raises(hr.InvalidArgumentError, match="row_shape"):
        D.range(3).sparse_batch(2, row_shape=["a"])


def test_sparse_tensor_type():
    s = SparseTensor.from_dense(np.array([[0, 2], [3, 0]]))
    assert s == SparseTensor([[0, 1], [1, 0]], [2, 3], [2, 2])
    assert s.to_dense(-1).tolist() == [[-1, 2], [3, -1]]
    with pytest.raises(hr.InvalidArgumentError, match="outside"):
        SparseTensor([[5, 0]], [1], [2, 2])
    with pytest.raises(hr.InvalidArgumentError, match="indices"):
        SparseTensor([[0, 0]], [1, 2], [2, 2])


def test_sparse_batch_checkpoints():
    check_checkpoints(
        lambda: (
            D.range(1, 10).map(lambda n: np.arange(n)).sparse_batch(2, row_shape=[-1]).map(lambda s: s.values)
        )
    )
