import numpy as np
import pytest

import headrace as hr
from headrace.core.state import decode_element
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process


def values(ds) -> list[int]:
    return [int(x) for x in ds]


def test_flattens_in_input_order():
    # tf.data's flat_map docstring example: a dataset of rows becomes a dataset of their values.
    ds = hr.Dataset.from_tensor_slices(np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])).flat_map(
        hr.Dataset.from_tensor_slices
    )
    assert values(ds) == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert values(hr.Dataset.range(4).flat_map(lambda n: hr.Dataset.range(n))) == [0, 0, 1, 0, 1, 2]


def test_empty_sub_datasets_and_empty_input():
    assert values(hr.Dataset.range(3).flat_map(lambda n: hr.Dataset.range(0))) == []
    assert values(hr.Dataset.range(0).flat_map(lambda n: hr.Dataset.range(3))) == []


def test_tuple_elements_are_unpacked():
    ds = hr.Dataset.from_tensor_slices(([1, 2], [10, 20])).flat_map(
        lambda a, b: hr.Dataset.from_tensor_slices(np.array([a, b]))
    )
    assert values(ds) == [1, 10, 2, 20]


def test_chunks_come_from_one_sub_dataset_at_a_time():
    it = iter(hr.Dataset.range(3).flat_map(lambda n: hr.Dataset.range(n * 10, n * 10 + 4)))
    root = it.root
    assert [int(x) for x in root.next_chunk(100)] == [0, 1, 2, 3]
    assert [int(x) for x in root.next_chunk(3)] == [10, 11, 12]


def test_map_func_must_return_a_dataset():
    with pytest.raises(hr.InvalidArgumentError, match="not callable"):
        hr.Dataset.range(3).flat_map(None)
    with pytest.raises(hr.InvalidArgumentError, match=r"flat_map\(.*must return a headrace Dataset, got int"):
        values(hr.Dataset.range(3).flat_map(lambda x: 3))


def test_user_error_names_stage_and_input_and_loses_only_that_input():
    def sub(x):
        if x == 1:
            raise KeyError("missing")
        return hr.Dataset.from_tensors(x)

    it = iter(hr.Dataset.range(3).flat_map(sub))
    assert int(next(it)) == 0
    with pytest.raises(KeyError) as info:
        next(it)
    assert any("flat_map" in n and "input element 1" in n for n in info.value.__notes__)
    assert [int(x) for x in it] == [2]


def make():
    return hr.Dataset.range(5).flat_map(
        lambda n: hr.Dataset.range(n * 10, n * 10 + n).shuffle(3, seed=int(n)).map(lambda x: x * 2)
    )


def test_checkpoints():
    assert len(check_checkpoints(make)) == 10
    check_checkpoints(lambda: make().repeat(2))
    check_checkpoints(lambda: make().batch(3))


def test_checkpoint_keys_and_the_open_sub_dataset():
    it = iter(make())
    [next(it) for _ in range(2)]  # input 1's only element, then one of input 2's
    state = it.get_state()
    saved = state["state"]
    assert sorted(saved) == ["current", "parent", "position"]
    assert saved["position"] == 3 and sorted(saved["current"]) == ["input", "state"]
    assert decode_element(saved["current"]["input"]) == 2  # the input element map_func is called on again
    saved["position"] = 0  # a sub-dataset open before any input was taken
    with pytest.raises(hr.CheckpointError, match="'position' is 0, expected an int >= 1 while a sub-dataset"):
        iter(make()).set_state(state)


def test_checkpoint_in_a_fresh_process():
    check_fresh_process("tests.ops.test_flat_map:make", after=4)


def test_element_spec_and_cardinality():
    ds = hr.Dataset.range(3).flat_map(lambda n: hr.Dataset.from_tensors(np.zeros(2, np.float32)))
    assert ds.element_spec == hr.TensorSpec((2,), "float32")
    assert ds.cardinality() == hr.UNKNOWN_CARDINALITY
