import numpy as np
import pytest

from headrace.core.errors import InvalidArgumentError
from headrace.io import Ragged


def test_views_of_a_one_level_ragged():
    r = Ragged.from_rows([[1, 2], [], [3, 4, 5]], "int64")
    assert r.shape == (3, None) and r.dtype == np.int64 and r.ragged_rank == 1 and len(r) == 3
    assert [row.tolist() for row in r] == [[1, 2], [], [3, 4, 5]] and r[-1].tolist() == [3, 4, 5]
    assert r.to_dense().tolist() == [[1, 2, 0], [0, 0, 0], [3, 4, 5]]
    assert r.to_dense(9, shape=(2, 2)).tolist() == [[1, 2], [9, 9]]
    indices, values, shape = r.to_sparse()
    assert indices.tolist() == [[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]] and shape.tolist() == [3, 3]
    assert r == Ragged(np.array([1, 2, 3, 4, 5]), [0, 2, 2, 5]) and r != Ragged.from_rows([[1]], "int64")
    with pytest.raises(IndexError):
        r[3]


def test_nested():
    inner = Ragged.from_rows([[1], [2, 3], [], [4]], "int64")
    outer = Ragged(inner, [0, 3, 3, 4])
    assert outer.to_list() == [[[1], [2, 3], []], [], [[4]]]
    assert outer.shape == (3, None, None) and outer.flat_values.tolist() == [1, 2, 3, 4]
    assert [s.tolist() for s in outer.nested_row_splits] == [[0, 3, 3, 4], [0, 1, 3, 3, 4]]
    assert outer[0].to_list() == [[1], [2, 3], []] and outer[2].to_list() == [[4]]
    assert outer.to_dense(-1).tolist() == [
        [[1, -1], [2, 3], [-1, -1]],
        [[-1, -1], [-1, -1], [-1, -1]],
        [[4, -1], [-1, -1], [-1, -1]],
    ]
    with pytest.raises(InvalidArgumentError, match="one ragged dimension"):
        outer.to_sparse()


def test_validation():
    with pytest.raises(InvalidArgumentError, match="starting at 0"):
        Ragged(np.arange(3), [1, 3])
    with pytest.raises(InvalidArgumentError, match="must not decrease"):
        Ragged(np.arange(3), [0, 2, 1, 3])
    with pytest.raises(InvalidArgumentError, match="3 values"):
        Ragged(np.arange(3), [0, 2])
    assert Ragged.from_rows([], "float32").to_list() == [] and Ragged.from_rows(
        [], "float32"
    ).to_dense().shape == (0, 0)
    assert "Ragged([[b'a']]" in repr(Ragged.from_rows([[b"a"]], object))
