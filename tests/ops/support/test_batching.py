import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from headrace.core.errors import StructureError
from headrace.core.structure import flatten, same_structure
from headrace.ops.support.batching import LayoutCheck, leaf_columns, leaf_kind, stack

shapes = st.recursive(
    st.just("leaf"),
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from("abc"), children, min_size=1, max_size=3),
    ),
    max_leaves=6,
)


def fill(shape, value):
    if isinstance(shape, tuple):
        return tuple(fill(s, value) for s in shape)
    if isinstance(shape, dict):
        return {k: fill(s, value) for k, s in shape.items()}
    return np.int64(value)


@given(shapes, st.integers(1, 6))
def test_columns_are_the_flattened_leaves_of_each_element(shape, count):
    elements = [fill(shape, i) for i in range(count)]
    _, columns = leaf_columns(elements)
    assert [list(c) for c in zip(*columns)] == [flatten(e) for e in elements]


@given(shapes, shapes, st.integers(0, 4))
def test_any_element_with_another_structure_is_named(shape, other, offset):
    if same_structure(fill(shape, 0), fill(other, 0)):
        return
    elements = [fill(shape, i) for i in range(5)]
    elements[offset] = fill(other, 9)
    named = offset or 1  # a different first element makes element 1 the odd one
    with pytest.raises(StructureError, match=f"element {named} has structure"):
        stack(elements)


def test_leaf_kinds():
    assert [leaf_kind(v) for v in (True, np.int8(1), 2**70, np.float16(1), 1j, "s", np.array([b"x"]))] == [
        "bool",
        "int",
        "int",
        "float",
        "complex",
        "string",
        "string",
    ]


def test_layout_check_accepts_the_same_layout_and_names_a_changed_kind():
    check = LayoutCheck("stage")
    check({"a": np.zeros(2)}, 0)
    check({"a": np.ones(3)}, 1)
    with pytest.raises(
        StructureError, match=r"input element 2 has int values at \['a'\], where input element 0 has float"
    ):
        check({"a": np.arange(2)}, 2)
