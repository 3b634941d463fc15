import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process


def lengths_dataset(n: int = 4):
    # tf.data's docstring dataset: element k is k copies of k, as int64.
    return hr.Dataset.range(1, n + 1).map(lambda x: np.full(int(x), x, dtype=np.int64))


def lists(ds) -> list:
    return [b.tolist() for b in ds]


def test_pads_to_the_batch_maximum_by_default():
    # tf.data: A.padded_batch(2, padded_shapes=(None,)) on [[1], [2, 2], [3, 3, 3], [4, 4, 4, 4]]
    ds = lengths_dataset().padded_batch(2, padded_shapes=(None,))
    assert lists(ds) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    assert lists(lengths_dataset().padded_batch(2)) == lists(ds)


def test_fixed_padded_shape_and_padding_value():
    # tf.data: padded_shapes=(5,) and padding_values=-1 (cast to the component's dtype)
    assert lists(lengths_dataset().padded_batch(2, padded_shapes=(5,))) == [
        [[1, 0, 0, 0, 0], [2, 2, 0, 0, 0]],
        [[3, 3, 3, 0, 0], [4, 4, 4, 4, 0]],
    ]
    out = list(lengths_dataset().padded_batch(2, padded_shapes=(None,), padding_values=np.int64(-1)))
    assert [b.tolist() for b in out] == [[[1, -1], [2, 2]], [[3, 3, 3, -1], [4, 4, 4, 4]]]
    assert all(b.dtype == np.int64 for b in out)
    small = (
        hr.Dataset.range(2).map(lambda x: np.zeros(int(x) + 1, np.int32)).padded_batch(2, padding_values=-1)
    )
    (batch,) = list(small)
    assert batch.dtype == np.int32 and batch.tolist() == [[0, -1], [0, 0]]


def test_tuple_elements_with_per_component_shapes_and_values():
    # tf.data: elements ([k]*k, [[k]*(4-k)]*3-ish) padded per component
    ds = hr.Dataset.range(1, 4).map(
        lambda k: (np.full(int(k), k), np.full((2, 4 - int(k)), k), np.float32(k))
    )
    out = list(ds.padded_batch(2, padded_shapes=([4], [None, None], []), padding_values=(-1, 100, 0.5)))
    assert out[0][0].tolist() == [[1, -1, -1, -1], [2, 2, -1, -1]]
    assert out[0][1].tolist() == [[[1, 1, 1], [1, 1, 1]], [[2, 2, 100], [2, 2, 100]]]
    assert out[0][2].tolist() == [1.0, 2.0] and out[0][2].dtype == np.float32
    assert out[1][0].tolist() == [[3, 3, 3, -1]]
    # One padding value for every component (tf.data broadcasts a single value).
    (first, _) = list(ds.padded_batch(2, padding_values=7))
    assert first[0].tolist() == [[1, 7], [2, 2]] and first[1].tolist() == [
        [[1, 1, 1], [1, 1, 1]],
        [[2, 2, 7], [2, 2, 7]],
    ]


def test_dict_elements_strings_and_bools_use_their_default_padding():
    ds = hr.Dataset.range(1, 3).map(
        lambda k: {
            "words": np.array([b"w"] * int(k), dtype=object),
            "mask": np.ones(int(k), bool),
            "id": k,
        }
    )
    (batch,) = list(ds.padded_batch(2))
    assert batch["words"].tolist() == [[b"w", b""], [b"w", b"w"]]
    assert batch["mask"].tolist() == [[True, False], [True, True]] and batch["mask"].dtype == bool
    assert batch["id"].tolist() == [1, 2]
    (batch,) = list(ds.padded_batch(2, padding_values={"words": b"<pad>", "mask": None, "id": 0}))
    assert batch["words"].tolist() == [[b"w", b"<pad>"], [b"w", b"w"]]
    assert batch["mask"].tolist() == [[True, False], [True, True]]


def test_scalar_strings_and_equal_shapes_are_plain_stacks():
    ds = hr.Dataset.from_tensor_slices(np.array([b"a", b"bb", b"c"], dtype=object))
    assert lists(ds.padded_batch(2)) == [[b"a", b"bb"], [b"c"]]
    ds = hr.Dataset.range(4).map(lambda x: np.full((2, 2), x))
    assert np.array_equal(list(ds.padded_batch(4))[0], np.stack([np.full((2, 2), i) for i in range(4)]))


def test_multi_dimensional_padding():
    ds = hr.Dataset.range(1, 3).map(lambda k: np.ones((int(k), 3 - int(k)), np.float32))
    (batch,) = list(ds.padded_batch(2))
    assert batch.shape == (2, 2, 2)
    assert batch.tolist() == [[[1, 1], [0, 0]], [[1, 0], [1, 0]]]
    (batch,) = list(ds.padded_batch(2, padded_shapes=[-1, 4]))
    assert batch.shape == (2, 2, 4)


def test_drop_remainder_cardinality_and_spec():
    ds = lengths_dataset(5)
    assert len(lists(ds.padded_batch(2))) == 3
    assert len(lists(ds.padded_batch(2, drop_remainder=True))) == 2
    assert hr.Dataset.range(5).padded_batch(2).cardinality() == 3
    assert hr.Dataset.range(5).padded_batch(2, drop_remainder=True).cardinality() == 2
    assert hr.Dataset.range(5).repeat().padded_batch(2).cardinality() == hr.INFINITE_CARDINALITY
    assert hr.Dataset.range(5).padded_batch(2, drop_remainder=True).element_spec == hr.TensorSpec(
        (2,), "int64"
    )
    spec = ds.padded_batch(2, padded_shapes=[None]).element_spec
    assert spec == hr.TensorSpec((None, None), "int64")
    assert ds.padded_batch(2, padded_shapes=[8], drop_remainder=True).element_spec == hr.TensorSpec(
        (2, 8), "int64"
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"batch_size": 0}, "batch_size=0"),
        ({"batch_size": 2, "drop_remainder": 1}, "drop_remainder=1"),
        ({"batch_size": 2, "padded_shapes": "abc"}, "is not a shape"),
        ({"batch_size": 2, "padded_shapes": [1.5]}, r"padded_shapes\[0\]=1.5 is not a shape"),
        ({"batch_size": 2, "padded_shapes": [-3]}, "sizes must be ints"),
        ({"batch_size": 2, "padding_values": [[1, 2], object()]}, "not a padding value"),
    ],
)
def test_invalid_arguments_fail_when_building(kwargs, match):
    with pytest.raises(hr.InvalidArgumentError, match=match):
        lengths_dataset().padded_batch(**kwargs)


def test_failures_while_batching_name_the_problem():
    with pytest.raises(
        hr.StructureError, match=r"element 1 has shape \(2,\), larger than the padded shape \[1\]"
    ):
        list(lengths_dataset().padded_batch(2, padded_shapes=[1]))
    with pytest.raises(hr.StructureError, match="rank 2"):
        list(lengths_dataset().padded_batch(2, padded_shapes=[None, None]))
    with pytest.raises(hr.InvalidArgumentError, match="must match the element structure"):
        list(hr.Dataset.range(2).map(lambda x: (x, x)).padded_batch(2, padded_shapes=([], [], [])))
    with pytest.raises(hr.StructureError, match="does not fit"):
        list(
            hr.Dataset.range(1, 3)
            .map(lambda x: np.zeros(int(x), np.uint8))
            .padded_batch(2, padding_values=-1)
        )
    with pytest.raises(hr.StructureError, match="cannot pad a string component"):
        list(
            hr.Dataset.range(1, 3)
            .map(lambda x: np.array([b"a"] * int(x), object))
            .padded_batch(2, padding_values=0)
        )
    with pytest.raises(hr.StructureError, match="dtype"):
        list(
            hr.Dataset.from_tensor_slices([0, 1])
            .map(lambda x: np.zeros(1, np.float32) if x else np.zeros(1, np.int64))
            .padded_batch(2)
        )


@given(
    lengths=st.lists(st.integers(0, 6), min_size=1, max_size=20),
    batch_size=st.integers(1, 7),
    pad=st.integers(-5, 5),
)
@settings(max_examples=60, deadline=None)
def test_every_row_holds_its_element_then_padding(lengths, batch_size, pad):
    ds = hr.Dataset.from_tensor_slices(np.array(lengths)).map(lambda n: np.arange(1, int(n) + 1))
    rows = [row for batch in ds.padded_batch(batch_size, padding_values=pad) for row in batch.tolist()]
    assert len(rows) == len(lengths)
    for i, (row, n) in enumerate(zip(rows, lengths)):
        batch_max = max(lengths[(i // batch_size) * batch_size : (i // batch_size + 1) * batch_size])
        assert row == list(range(1, n + 1)) + [pad] * (batch_max - n)


def make():
    return (
        lengths_dataset(7).map(lambda x: (x, x.astype(np.float32))).padded_batch(3, padding_values=(-1, 0.5))
    )


def test_checkpoints():
    check_checkpoints(make)
    check_checkpoints(lambda: make().repeat(2))


def test_checkpoint_in_a_fresh_process():
    check_fresh_process("tests.ops.test_padded_batch:make", after=1)


def test_upstream_error_keeps_the_partial_batch():
    ds = hr.Dataset.range(1, 6).map(lambda x: np.full(int(x), x) if x != 3 else 1 // 0).padded_batch(2)
    it = iter(ds)
    assert next(it).tolist() == [[1, 0], [2, 2]]
    with pytest.raises(ZeroDivisionError):
        next(it)
    assert [b.tolist() for b in it] == [[[4, 4, 4, 4, 0], [5, 5, 5, 5, 5]]]


def test_every_element_structure_and_dtype_is_checked():
    def from_list(values):
        return hr.Dataset.range(len(values)).map(lambda i: values[int(i)])

    keys = from_list([{"a": np.arange(2), "b": np.arange(1)}, {"a": np.arange(3), "c": np.arange(1)}])
    with pytest.raises(
        hr.StructureError, match=r"padded_batch.*element 1 has structure \{'a': leaf, 'c': leaf\}"
    ):
        list(keys.padded_batch(2))
    lengths = from_list([(np.arange(2),), (np.arange(2), np.arange(2))])
    with pytest.raises(
        hr.StructureError, match=r"element 1 has structure \(leaf, leaf\) but element 0 has \(leaf,\)"
    ):
        list(lengths.padded_batch(2))
    dtypes = from_list([np.arange(2), np.arange(3, dtype=np.float64)])
    with pytest.raises(hr.StructureError, match=r"element 1 has shape \(3,\) and dtype float64"):
        list(dtypes.padded_batch(2))
