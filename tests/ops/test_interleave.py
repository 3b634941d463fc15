from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as hr
from headrace.ops.interleave import InterleaveIterator, default_cycle_length
from tests.helpers.checkpoint import check_checkpoints, check_fresh_process
from tests.helpers.tf_fixtures import load_json


def values(ds) -> list[int]:
    return [int(x) for x in ds]


def tf_interleave(inputs: list[list[int]], cycle_length: int, block_length: int) -> list[int]:
    """tf.data's InterleaveDatasetOp loop, transcribed: the reference order."""
    pending = iter(inputs)
    slots: list = [None] * cycle_length
    cycle, block, open_count, end = 0, 0, 0, False
    out = []
    while not end or open_count:
        if slots[cycle] is not None:
            try:
                out.append(next(slots[cycle]))
                block += 1
                if block == block_length:
                    cycle, block = (cycle + 1) % cycle_length, 0
            except StopIteration:
                slots[cycle] = None
                open_count -= 1
                cycle, block = (cycle + 1) % cycle_length, 0
        elif not end:
            element = next(pending, None)
            if element is None:
                end = True
            else:
                slots[cycle] = iter(element)
                open_count += 1
        else:
            cycle, block = (cycle + 1) % cycle_length, 0
    return out


def test_documented_example():
    # tf.data's interleave docstring example.
    ds = hr.Dataset.range(1, 6).interleave(
        lambda x: hr.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4
    )
    assert values(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4] + [5] * 6


def test_block_length_one_round_robin_and_refill_on_exhaustion():
    # Sub-dataset n holds n copies of n: shorter ones end first and their slot takes the next input
    # only when the cycle comes back to it.
    ds = hr.Dataset.range(1, 5).interleave(
        lambda n: hr.Dataset.from_tensors(n).repeat(int(n)), cycle_length=2, block_length=1
    )
    assert values(ds) == [1, 2, 2, 3, 3, 4, 3, 4, 4, 4]
    assert values(ds) == tf_interleave([[n] * n for n in range(1, 5)], 2, 1)


def test_empty_sub_datasets_and_more_slots_than_inputs():
    sizes = [0, 3, 0, 0, 2, 0]
    ds = hr.Dataset.from_tensor_slices(np.array(sizes)).interleave(
        lambda n: hr.Dataset.range(n), cycle_length=4, block_length=2
    )
    assert values(ds) == tf_interleave([list(range(n)) for n in sizes], 4, 2)
    assert values(hr.Dataset.range(2).interleave(lambda x: hr.Dataset.range(x, x + 3), cycle_length=5)) == [
        0,
        1,
        1,
        2,
        2,
        3,
    ]
    assert values(hr.Dataset.range(0).interleave(lambda x: hr.Dataset.range(3), cycle_length=2)) == []


@given(
    sizes=st.lists(st.integers(0, 7), max_size=12),
    cycle_length=st.integers(1, 5),
    block_length=st.integers(1, 4),
)
@settings(max_examples=80, deadline=None)
def test_matches_tf_order_and_keeps_every_sub_dataset_in_order(sizes, cycle_length, block_length):
    inputs = [[100 * i + j for j in range(n)] for i, n in enumerate(sizes)]
    ds = hr.Dataset.range(len(sizes)).interleave(
        lambda i: hr.Dataset.range(100 * i, 100 * i + sizes[int(i)]),
        cycle_length=cycle_length,
        block_length=block_length,
    )
    out = values(ds)
    assert Counter(out) == Counter(x for sub in inputs for x in sub)
    for i, sub in enumerate(inputs):
        assert [x for x in out if x // 100 == i] == sub
    assert out == tf_interleave(inputs, cycle_length, block_length)


def test_tuple_elements_are_unpacked_and_nested_structures_pass_through():
    ds = hr.Dataset.from_tensor_slices(([1, 2], [b"a", b"b"])).interleave(
        lambda n, tag: hr.Dataset.from_tensors({"n": n, "tag": tag}).repeat(2), cycle_length=2
    )
    assert [(int(e["n"]), e["tag"]) for e in ds] == [(1, b"a"), (2, b"b"), (1, b"a"), (2, b"b")]


def test_defaults_cycle_length_cpu_count_and_block_length_one():
    node = hr.Dataset.range(3).interleave(lambda x: hr.Dataset.range(2)).node
    assert node.cycle_length == default_cycle_length() >= 1
    assert node.block_length == 1
    assert hr.Dataset.range(3).interleave(
        lambda x: hr.Dataset.range(2), cycle_length=hr.AUTOTUNE
    ).node.cycle_length == (default_cycle_length())
    assert f"cycle_length={default_cycle_length()}" in repr(node)


def test_num_parallel_calls_is_validated_kept_and_serial_order_holds():
    ds = hr.Dataset.range(6).interleave(
        lambda x: hr.Dataset.range(x, x + 2), cycle_length=3, num_parallel_calls=2, deterministic=True
    )
    assert ds.node.num_parallel_calls == 2 and ds.node.deterministic is True
    assert isinstance(iter(ds).root, InterleaveIterator)
    assert values(ds) == tf_interleave([[x, x + 1] for x in range(6)], 3, 1)
    with pytest.raises(hr.InvalidArgumentError, match="num_parallel_calls=4.*cycle_length"):
        hr.Dataset.range(3).interleave(lambda x: hr.Dataset.range(1), cycle_length=3, num_parallel_calls=4)
    hr.Dataset.range(3).interleave(
        lambda x: hr.Dataset.range(1), cycle_length=1, num_parallel_calls=hr.AUTOTUNE
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"cycle_length": 0}, "cycle_length=0"),
        ({"cycle_length": -5}, "cycle_length=-5"),
        ({"block_length": 0}, "block_length=0"),
        ({"block_length": True}, "block_length=True"),
        ({"num_parallel_calls": 0}, "num_parallel_calls=0"),
        ({"deterministic": "yes"}, "deterministic='yes'"),
    ],
)
def test_invalid_arguments(kwargs, match):
    with pytest.raises(hr.InvalidArgumentError, match=match):
        hr.Dataset.range(3).interleave(lambda x: hr.Dataset.range(1), **kwargs)


def test_map_func_not_callable_or_not_returning_a_dataset():
    with pytest.raises(hr.InvalidArgumentError, match="not callable"):
        hr.Dataset.range(3).interleave(5)
    ds = hr.Dataset.range(3).interleave(lambda x: [x], cycle_length=1)
    with pytest.raises(
        hr.InvalidArgumentError, match=r"interleave\(.*must return a headrace Dataset, got list"
    ):
        values(ds)


def test_user_errors_name_the_stage_and_lose_only_the_failing_input():
    def make_sub(x):
        if x == 2:
            raise ValueError("bad input")
        return hr.Dataset.range(x * 10, x * 10 + 2)

    it = iter(hr.Dataset.range(4).interleave(make_sub, cycle_length=2))
    got = []
    with pytest.raises(ValueError, match="bad input") as info:
        while True:
            got.append(int(next(it)))
    assert any("interleave" in note and "input element 2" in note for note in info.value.__notes__)
    got.extend(int(x) for x in it)
    assert sorted(got) == [0, 1, 10, 11, 30, 31]


def test_errors_inside_a_sub_dataset_keep_the_cycle():
    def sub(x):
        return hr.Dataset.range(3).map(lambda y: 1 // int(y - 1) if x == 0 else y)

    it = iter(hr.Dataset.range(2).interleave(sub, cycle_length=2))
    out = []
    while True:
        try:
            out.append(int(next(it)))
        except ZeroDivisionError:
            out.append("error")
        except StopIteration:
            break
    # Sub-dataset 0 yields -1, error, 1; sub-dataset 1 yields 0, 1, 2; the error costs one element.
    assert out == [-1, 0, "error", 1, 1, 2]


def make_mid_block():
    return hr.Dataset.range(5).interleave(
        lambda x: hr.Dataset.range(x * 10, x * 10 + x + 1), cycle_length=3, block_length=2
    )


def make_shuffled_subs():
    return hr.Dataset.range(6).interleave(
        lambda x: hr.Dataset.range(x * 10, x * 10 + 4).shuffle(4, seed=int(x)).map(lambda y: y + 1),
        cycle_length=2,
        block_length=3,
    )


@pytest.mark.parametrize("make", [make_mid_block, make_shuffled_subs])
def test_checkpoints_every_step_mid_block_and_mid_cycle(make):
    out = check_checkpoints(make)
    assert len(out) == len(values(make()))


def test_checkpoints_across_repeat_epochs():
    check_checkpoints(lambda: make_mid_block().repeat(2))
    check_checkpoints(
        lambda: hr.Dataset.range(3).interleave(lambda x: hr.Dataset.range(x), cycle_length=2).repeat(3)
    )


def test_checkpoint_holds_the_inputs_of_the_open_slots():
    it = iter(make_mid_block())
    for _ in range(5):
        next(it)
    state = it.get_state()["state"]
    open_slots = [slot for slot in state["slots"] if slot is not None]
    assert len(open_slots) >= 2 and state["block_index"] in (0, 1)
    assert all(set(slot) == {"input", "position", "state"} for slot in open_slots)


def test_checkpoint_in_a_fresh_process():
    check_fresh_process("tests.ops.test_interleave:make_shuffled_subs", after=7)


def test_reset_and_close_release_sub_iterators():
    it = iter(make_mid_block())
    next(it)
    root = it.root
    subs = [slot[2] for slot in root.slots if slot is not None]
    root.reset()
    assert all(sub.closed for sub in subs) and root.open_count == 0
    assert [int(x) for x in it] == values(make_mid_block())
    it.close()
    assert root.closed


@pytest.mark.parametrize(
    "case", load_json("datasets.json")["interleave_orders"], ids=lambda c: str(c["sizes"])
)
def test_order_matches_recorded_tensorflow(case):
    # the live test's cases with tf.data's orders, recorded by tools/record_tf_fixtures.py
    sizes = case["sizes"]
    got = hr.Dataset.range(len(sizes)).interleave(
        lambda i: hr.Dataset.range(100 * i, 100 * i + sizes[int(i)]),
        cycle_length=case["cycle_length"],
        block_length=case["block_length"],
    )
    assert values(got) == case["expected"]
