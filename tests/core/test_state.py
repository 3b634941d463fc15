import collections
import json
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from headrace.core.errors import CheckpointError
from headrace.core.state import decode_element, encode_element, encode_structure
from tests.helpers.elements import to_python

arrays = hnp.arrays(
    dtype=st.sampled_from([np.float32, np.int64, np.uint8, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3),
)


@given(arrays, st.binary(), st.integers(-(2**62), 2**62))
def test_round_trip_through_json(array, blob, number):
    element = ({"a": array, "b": blob}, np.int64(number), "text")
    back = decode_element(json.loads(json.dumps(encode_element(element))))
    assert to_python(back[1:]) == to_python(element[1:]) and back[0]["b"] == blob
    a = back[0]["a"]  # compare bytes: NaN must survive, and -0.0 stay -0.0
    assert a.dtype == array.dtype and a.shape == array.shape and a.tobytes() == array.tobytes()


def test_object_arrays_of_bytes_round_trip():
    strings = np.array([b"x", b"yz"], dtype=object)
    assert decode_element(encode_element(strings)).tolist() == [b"x", b"yz"]


def test_unsupported_and_malformed_are_clear_errors():
    with pytest.raises(CheckpointError, match="type object"):
        encode_element(object())
    with pytest.raises(CheckpointError, match="malformed"):
        decode_element({"zzz": 1})


# --- one codec for checkpoints and cache files ------------------------------------------------------
Pair = collections.namedtuple("Pair", "left right")

leaves = st.one_of(
    arrays,
    st.binary(max_size=8),
    st.text(max_size=5),
    st.integers(-(2**62), 2**62),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.integers(-100, 100).map(np.int32),
)
elements = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=3).map(tuple),
        st.builds(Pair, children, children),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers(-5, 5)), children, max_size=3),
    ),
    max_leaves=10,
)


def same(a, b) -> bool:
    if isinstance(a, tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (np.ndarray, np.generic)):
        return (
            type(a) is type(b)
            and a.dtype == b.dtype
            and np.shape(a) == np.shape(b)
            and a.tobytes() == b.tobytes()
        )
    return type(a) is type(b) and a == b


@given(elements)
def test_any_nested_element_round_trips_exactly(element):
    """Tuples, namedtuples (as themselves), dicts with str or int keys (in order), every leaf kind."""
    back = decode_element(json.loads(json.dumps(encode_element(element))))
    assert same(back, element)


def test_the_structure_tree_is_the_one_cache_files_store(tmp_path):
    from headrace.ops.support.cache_file import CacheFileReader, CacheFileWriter

    element = (Pair(np.int64(1), b"x"), {"k": np.zeros(2, np.float32), 3: "s"})
    writer = CacheFileWriter(str(tmp_path / "c"), {})
    writer.append(element)
    writer.commit()
    with CacheFileReader(str(tmp_path / "c")) as reader:
        stored_tree = reader.element_spec["tree"]
        (back,) = list(reader)
    counter = iter(range(100))
    assert stored_tree == json.loads(
        json.dumps(encode_structure(element, lambda value, where: next(counter)))
    )
    assert type(back[0]) is Pair and back[1][3] == "s"


def test_a_namedtuple_class_never_imported_comes_back_as_a_tuple():
    Hidden = collections.namedtuple("Hidden", "a")
    Hidden.__module__ = "headrace_module_never_imported"
    back = decode_element(json.loads(json.dumps(encode_element(Hidden(1)))))
    assert type(back) is tuple and back == (1,) and "headrace_module_never_imported" not in sys.modules


def test_version_1_dicts_are_still_decoded():
    old = {"d": {"1": {"p": 5}, "k": {"p": 6}}, "k": ["int", "str"]}
    assert decode_element(old) == {1: 5, "k": 6}


@pytest.mark.parametrize(
    "data, match",
    [
        ({"a": "!!", "dt": "<i8", "s": [], "g": True}, "malformed"),
        ({"a": "AAAA", "dt": "<i8", "s": [4], "g": False}, "do not fill shape"),
        ({"a": "AAAAAAAAAAA=", "dt": "<i8", "s": [1], "g": True}, "numpy scalar with shape"),
        ({"a": "AAAAAAAAAAA=", "dt": "|O", "s": [], "g": True}, "never decoded"),
        ({"a": "AAAAAAAAAAA=", "dt": 5, "s": [], "g": True}, "not a string"),
        ({"a": "", "dt": "<i8", "s": [-1], "g": False}, "malformed shape"),
        ({"t": "x"}, "expected a list"),
        ({"d": [[1.5, {"p": 1}]]}, "not a str or int"),
        ({"p": [1, 2]}, "plain value"),
        ({"o": [{"p": 1}], "s": [2], "g": False}, "do not fill shape"),
    ],
)
def test_malformed_elements_are_checkpoint_errors(data, match):
    with pytest.raises(CheckpointError, match=match):
        decode_element(data)


def test_unsupported_keys_name_where():
    with pytest.raises(CheckpointError, match=r"element\[0\] has a dict key b'k'"):
        encode_element(({b"k": 1},))
