import numpy as np
import pytest

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints

D = hr.Dataset


def test_ragged_batch_rows_and_scalars():
    ds = D.range(1, 6).map(lambda n: {"ids": np.arange(n), "n": n}).ragged_batch(2)
    batches = list(ds)
    assert [b["ids"].to_list() for b in batches] == [
        [[0], [0, 1]],
        [[0, 1, 2], [0, 1, 2, 3]],
        [[0, 1, 2, 3, 4]],
    ]
    assert [b["n"].tolist() for b in batches] == [[1, 2], [3, 4], [5]]
    assert isinstance(batches[0]["ids"], hr.io.Ragged)
    assert ds.cardinality() == 3
    assert len(list(D.range(1, 6).map(lambda n: np.arange(n)).ragged_batch(2, drop_remainder=True))) == 2


def test_ragged_batch_inner_dimensions_must_agree():
    ds = D.range(1, 3).map(lambda n: np.zeros((n, n))).ragged_batch(2)
    with pytest.raises(hr.StructureError, match="only the first dimension may differ"):
        list(ds)
    with pytest.raises(hr.InvalidArgumentError, match="batch_size"):
        D.range(3).ragged_batch(0)


def test_ragged_batch_checkpoints():
    def make():
        return D.range(1, 12).map(lambda n: np.arange(n)).ragged_batch(3).map(lambda r: r.row_lengths())

    check_checkpoints(make)
