import pickle

import pytest

from headrace.ops.map import FusedFunction
from headrace.ops.support.shared_list import SharedList


def test_shared_list_grows_without_changing_what_it_grew_from():
    a = SharedList([1, 2])
    b = a.plus([3])
    c = a.plus([4, 5])  # a's storage is taken by b: c copies a's items
    assert (a.items, b.items, c.items) == ((1, 2), (1, 2, 3), (1, 2, 4, 5))
    assert (b[-1], c[2], len(c)) == (3, 4, 4)
    with pytest.raises(IndexError):
        b[3]
    assert pickle.loads(pickle.dumps(c)).items == (1, 2, 4, 5)


def _inc(x):
    return x + 1


def test_fusing_a_chain_one_map_at_a_time_shares_one_list():
    fused = FusedFunction(_inc, _inc)
    chain = [fused]
    for _ in range(50):
        chain.append(FusedFunction(chain[-1], _inc))
    # Each fused function sees its own prefix of one storage list, so earlier ones are unchanged.
    assert [len(f.functions) for f in (chain[0], chain[10], chain[-1])] == [2, 12, 52]
    assert chain[-1].steps._shared is chain[0].steps._shared
    assert (chain[0](0), chain[10](0), chain[-1](0)) == (2, 12, 52)
    assert pickle.loads(pickle.dumps(chain[10]))(0) == 12
    assert FusedFunction.of([chain[0], _inc, chain[1]]).functions == (_inc,) * 6
