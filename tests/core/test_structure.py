import pytest
from hypothesis import given
from hypothesis import strategies as st

from headrace.core.errors import StructureError
from headrace.core.structure import flatten, map_structure, pack_as

leaves = st.integers()
structures = st.recursive(
    leaves,
    lambda children: (
        st.tuples(children, children) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=12,
)


@given(structures)
def test_pack_inverts_flatten(element):
    assert pack_as(element, flatten(element)) == element


def test_dicts_flatten_in_sorted_key_order():
    assert flatten({"b": 1, "a": (2, 3)}) == [2, 3, 1]


def test_pack_keeps_the_dicts_own_key_order():
    # tf.nest: leaves in sorted-key order, the rebuilt dict in the structure's order.
    packed = pack_as({"b": 0, "a": (0, 0)}, [2, 3, 1])
    assert list(packed) == ["b", "a"] and packed == {"b": 1, "a": (2, 3)}


def test_map_structure_rejects_mismatched_structures():
    with pytest.raises(StructureError, match="one structure"):
        map_structure(lambda a, b: a, (1, 2), (1, 2, 3))
    with pytest.raises(StructureError):
        map_structure(lambda a, b: a, {"a": 1}, {"b": 1})


def test_pack_rejects_wrong_leaf_count():
    with pytest.raises(StructureError, match="too few"):
        pack_as((1, 2), [1])
    with pytest.raises(StructureError, match="too many"):
        pack_as((1, 2), [1, 2, 3])
