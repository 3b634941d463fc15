"""ragged_batch and sparse_batch share their gathering: errors lose one element or one unbuildable
batch, never hang, and checkpoints keep the rows gathered so far."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import StructureError
from tests.helpers.checkpoint import check_checkpoints


def _rows(*shapes):
    arrays = [np.full(shape, i, np.float64) for i, shape in enumerate(shapes)]
    spec = hr.TensorSpec((None,) * len(shapes[0]), hr.float64)
    return hr.Dataset.from_generator(lambda: iter(arrays), output_signature=spec)


@pytest.mark.parametrize(
    "make",
    [
        lambda ds: ds.ragged_batch(2),
        lambda ds: ds.sparse_batch(2, [1, 3]),
    ],
    ids=["ragged_batch", "sparse_batch"],
)
def test_an_unbuildable_batch_raises_once_then_iteration_goes_on(make):
    ds = make(_rows((1, 3), (1, 4), (1, 3), (1, 3)))  # rows 0..1 cannot share a batch
    it = iter(ds)
    with pytest.raises(StructureError, match="element"):
        next(it)
    assert len(list(it)) == 1  # rows 2..3 still make their batch
    assert sum(1 for _ in ds.ignore_errors()) == 1  # and ignore_errors ends (it used to spin)


def test_rows_survive_an_upstream_error_and_checkpoints():
    def fail_on_two(x):
        if int(x) == 2:
            raise ValueError("bad element")
        return np.arange(int(x) % 3 + 1)

    ds = hr.Dataset.range(7).map(fail_on_two).ragged_batch(3)
    it = iter(ds)
    with pytest.raises(ValueError, match="bad element"):
        next(it)
    batches = list(it)  # rows 0, 1 were kept: only element 2 is lost
    assert [b.row_lengths().tolist() for b in batches] == [[1, 2, 1], [2, 3, 1]]  # 0, 1, 3 | 4, 5, 6
    check_checkpoints(lambda: hr.Dataset.range(11).map(lambda x: np.arange(int(x) % 4)).ragged_batch(3))
    check_checkpoints(lambda: hr.Dataset.range(9).map(lambda x: np.ones((1, 2))).sparse_batch(2, [1, 2]))
