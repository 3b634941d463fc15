"""The "different results from tf.data" cases of issue 12, with the values tf.data gives."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.cpus import schedulable_cpus
from headrace.core.errors import UserStopIteration
from headrace.ops.interleave import default_cycle_length

D = hr.Dataset


def values(ds) -> list:
    return [int(x) for x in ds]


def test_map_returning_a_list_yields_a_tuple_and_str_bytes():
    assert list(D.range(2).map(lambda x: [x, "a"])) == [(0, b"a"), (1, b"a")]
    assert type(next(iter(D.range(2).map(lambda x: [x, x])))) is tuple
    assert list(D.range(2).map(lambda x: "s")) == [b"s", b"s"]
    # the next map gets the list's items as arguments, fused or not
    assert values(D.range(3).map(lambda x: [x, x + 1]).map(lambda a, b: a + b)) == [1, 3, 5]
    parallel = D.range(4).map(lambda x: [x, "a"], num_parallel_calls=2, executor="thread")
    assert [(int(a), b) for a, b in parallel] == [(i, b"a") for i in range(4)]
    batched = D.range(4).map(lambda x: [x, x]).batch(2)
    assert [(a.tolist(), b.tolist()) for a, b in batched] == [([0, 1], [0, 1]), ([2, 3], [2, 3])]


@pytest.mark.parametrize(
    "make",
    [
        lambda f: D.range(6).map(f),
        lambda f: D.range(6).map(f).batch(4),
        lambda f: D.range(6).map(f, num_parallel_calls=2, executor="thread"),
        lambda f: D.range(6).filter(lambda x: f(x) >= 0),
        lambda f: D.range(6).flat_map(lambda x: D.from_tensors(f(x))),
    ],
)
def test_stop_iteration_in_a_user_function_is_an_error(make):
    def f(x):
        if x == 3:
            raise StopIteration
        return x

    with pytest.raises(UserStopIteration, match="StopIteration on input element 3") as info:
        list(make(f))
    assert isinstance(info.value.__cause__, StopIteration)


def test_default_cycle_length_is_tensorflows():
    cpus = schedulable_cpus()
    assert default_cycle_length() == cpus  # serial: port::MaxParallelism()
    assert default_cycle_length(1) == 1 and default_cycle_length(10_000) == cpus  # min(k, CPUs)
    assert default_cycle_length(hr.AUTOTUNE) == -(-cpus // 3)  # both AUTOTUNE: ceil(CPUs / 3)
    ds = D.range(1, 4).interleave(lambda x: D.from_tensors(x).repeat(2), num_parallel_calls=hr.AUTOTUNE)
    expected = D.range(1, 4).interleave(lambda x: D.from_tensors(x).repeat(2), cycle_length=-(-cpus // 3))
    assert values(ds) == values(expected)


def test_global_shuffle_through_prefetch():
    ds = D.range(8).prefetch(2).global_shuffle(seed=3, reshuffle_each_iteration=False)
    assert sorted(values(ds)) == list(range(8))
    assert values(ds) == values(D.range(8).global_shuffle(seed=3, reshuffle_each_iteration=False))


def test_none_components_pass_through_map_and_batch():
    ds = D.range(3).map(lambda x: (x, None))
    assert list(ds)[0][1] is None
    assert [b[1] for b in ds.batch(2)] == [None, None]
    assert ds.element_spec[1] == hr.core.spec.NoneTensorSpec()


def test_padded_batch_none_padding_values_and_int_shapes():
    ds = D.range(1, 4).map(lambda n: np.full(n, n))
    assert [b.tolist() for b in ds.padded_batch(2, padded_shapes=3, padding_values=None)] == [
        [[1, 0, 0], [2, 2, 0]],
        [[3, 3, 3]],
    ]


def test_infinite_cardinality_is_known():
    inf = D.range(3).repeat()
    grouped = inf.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), 2)
    bucketed = inf.map(lambda n: np.ones(n + 1)).bucket_by_sequence_length(len, [2], [2, 2])
    for ds in (grouped, bucketed, inf.window(2), inf.prefetch(None), D.counter(), D.random()):
        assert ds.cardinality() == hr.INFINITE_CARDINALITY
    # tf.data does not know these either (checked against TF 2.21)
    for ds in (inf.filter(lambda x: True), inf.unique(), inf.batch(2).rebatch(3)):
        assert ds.cardinality() == hr.UNKNOWN_CARDINALITY


def test_prefetch_buffer_size_none():
    assert values(D.range(3).prefetch(buffer_size=None)) == [0, 1, 2]


def test_from_generator_releases_its_generator_at_the_end():
    closed = []

    def gen():
        try:
            yield from range(3)
        finally:
            closed.append(True)

    it = iter(D.from_generator(gen, output_signature=hr.TensorSpec((), hr.int64)))
    assert values(it) == [0, 1, 2]
    assert closed == [True]  # before the iterator object is gone


def test_bytes_with_trailing_nul_bytes_survive_from_python_lists():
    # numpy's fixed-width bytes would drop them; serialized records often end in b"\x00".
    records = [b"a\x00", b"b\x00\x00", b"c"]
    assert list(D.from_tensor_slices(records)) == records
    assert next(iter(D.from_tensors(records))).tolist() == records
    assert list(D.from_tensor_slices({"r": records}).map(lambda e: e["r"])) == records
