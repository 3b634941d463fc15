"""``hr.data`` / ``hr.data.experimental``: tf.data's names, each calling the Dataset method."""

import numpy as np
import pytest

import headrace as hr
from headrace.ops.assert_cardinality import CardinalityMismatchError
from tests.helpers.checkpoint import check_checkpoints

D = hr.data.Dataset
E = hr.data.experimental


def values(ds) -> list:
    return [int(x) for x in ds]


def test_data_namespace_mirrors_tf_data():
    assert hr.data.Dataset is hr.Dataset and hr.data.TFRecordDataset is hr.TFRecordDataset
    assert hr.data.AUTOTUNE == hr.AUTOTUNE == E.AUTOTUNE == -1
    assert hr.experimental is E and E.INFINITE_CARDINALITY == -1 and E.UNKNOWN_CARDINALITY == -2
    for name in E.__all__:
        assert getattr(E, name) is not None


# tf.data.experimental's public names (TensorFlow 2.16); headrace may offer fewer, never others.
TF_DATA_EXPERIMENTAL = set(
    """AUTOTUNE AutoShardPolicy AutotuneAlgorithm AutotuneOptions Counter CsvDataset DatasetInitializer
    DatasetStructure DistributeOptions ExternalStatePolicy INFINITE_CARDINALITY OptimizationOptions
    Optional OptionalStructure RaggedTensorStructure RandomDataset Reducer SHARD_HINT SparseTensorStructure
    SqlDataset Structure TFRecordWriter TensorArrayStructure TensorStructure ThreadingOptions
    UNKNOWN_CARDINALITY assert_cardinality at bucket_by_sequence_length cardinality choose_from_datasets
    copy_to_device dense_to_ragged_batch dense_to_sparse_batch enable_debug_mode enumerate_dataset
    from_list from_variant get_next_as_optional get_single_element get_structure group_by_reducer
    group_by_window ignore_errors index_table_from_dataset load make_batched_features_dataset
    make_csv_dataset make_saveable_from_iterator map_and_batch map_and_batch_with_legacy_function
    pad_to_cardinality parallel_interleave parse_example_dataset prefetch_to_device rejection_resample
    sample_from_datasets save scan service shuffle_and_repeat snapshot table_from_dataset take_while
    to_variant unbatch unique""".split()
)


def test_experimental_public_names_are_tf_data_experimental_names():
    # No typing helpers or internals (Any, Callable, annotations, Dataset ...) in the public namespace.
    public = {name for name in dir(E) if not name.startswith("_")}
    assert public == set(E.__all__)
    assert public <= TF_DATA_EXPERIMENTAL, sorted(public - TF_DATA_EXPERIMENTAL)
    try:
        import tensorflow as tf  # noqa: PLC0415 (optional: a stronger check where it is installed)
    except ImportError:
        return
    assert public <= set(dir(tf.data.experimental))


def test_transformations_for_apply():
    assert values(D.range(4).apply(E.scan(0, lambda s, x: (s + x, s)))) == [0, 0, 1, 3]
    assert values(D.range(9).apply(E.take_while(lambda x: x < 3))) == [0, 1, 2]
    assert values(D.range(4).batch(2).apply(E.unbatch())) == [0, 1, 2, 3]
    assert values(D.from_tensor_slices([1, 1, 2]).apply(E.unique())) == [1, 2]
    assert [b.tolist() for b in D.range(5).apply(E.map_and_batch(lambda x: x * 2, 2))] == [
        [0, 2],
        [4, 6],
        [8],
    ]
    ds = D.from_tensor_slices([1.0, 0.0, 2.0]).map(lambda x: 1 / int(x)).apply(E.ignore_errors())
    assert [float(x) for x in ds] == [1.0, 0.5]
    assert [(int(i), int(x)) for i, x in D.range(2).apply(E.enumerate_dataset(3))] == [(3, 0), (4, 1)]
    assert sorted(values(D.range(4).apply(E.shuffle_and_repeat(4, 2, seed=1)))) == [0, 0, 1, 1, 2, 2, 3, 3]
    grouped = D.range(6).apply(E.group_by_window(lambda x: x % 2, lambda k, w: w.batch(3), 3))
    assert [b.tolist() for b in grouped] == [[0, 2, 4], [1, 3, 5]]
    interleaved = D.range(1, 3).apply(
        E.parallel_interleave(lambda x: D.from_tensors(x).repeat(2), cycle_length=2)
    )
    assert values(interleaved) == [1, 2, 1, 2]
    bucketed = D.range(1, 5).map(lambda n: np.ones(n)).apply(E.bucket_by_sequence_length(len, [3], [2, 2]))
    assert [b.shape for b in bucketed] == [(2, 2), (2, 4)]


def test_sources_and_functions():
    assert values(E.Counter(3).take(2)) == [3, 4]
    assert len(values(E.RandomDataset(seed=1).take(3))) == 3
    assert E.cardinality(D.range(3)) == 3
    assert int(E.get_single_element(D.range(1))) == 0
    assert values(E.sample_from_datasets([D.range(2)], seed=1)) == [0, 1]
    assert values(E.choose_from_datasets([D.range(2), D.range(5, 7)], D.from_tensor_slices([1, 0]))) == [5, 0]
    assert [x.tolist() for x in E.from_list([[1], [2, 3]])] == [[1], [2, 3]]
    assert int(E.at(D.range(10).map(lambda x: x * 2), 4)) == 8
    with pytest.raises(IndexError):
        E.at(D.range(3), 3)


def test_save_load_functions(tmp_path):
    E.save(D.range(3), str(tmp_path / "s"))
    assert values(E.load(str(tmp_path / "s"))) == [0, 1, 2]


def test_assert_cardinality():
    ds = D.range(10).filter(lambda x: x < 5)
    assert ds.apply(E.assert_cardinality(5)).cardinality() == 5
    assert values(ds.apply(E.assert_cardinality(5))) == [0, 1, 2, 3, 4]
    with pytest.raises(
        CardinalityMismatchError, match="expected to contain 4 elements but contained at least 5"
    ):
        list(ds.apply(E.assert_cardinality(4)))
    it = iter(ds.apply(E.assert_cardinality(6)))
    assert len([next(it) for _ in range(5)]) == 5
    with pytest.raises(CardinalityMismatchError, match="contained only 5"):
        next(it)
    assert D.range(2).repeat().assert_cardinality(hr.INFINITE_CARDINALITY).cardinality() == -1
    with pytest.raises(hr.InvalidArgumentError):
        D.range(2).assert_cardinality(-2)
    check_checkpoints(lambda: D.range(10).filter(lambda x: x % 2 == 0).assert_cardinality(5))


def test_rejection_resample_reaches_the_target():
    ds = D.range(8000).rejection_resample(lambda x: int(x % 4 == 0), [0.5, 0.5], seed=3)
    labels = [int(label) for label, _ in ds]
    assert abs(labels.count(1) / len(labels) - 0.5) < 0.05
    known = D.range(8000).apply(
        E.rejection_resample(lambda x: int(x % 4 == 0), [0.5, 0.5], [0.75, 0.25], seed=3)
    )
    labels = [int(label) for label, _ in known]
    assert abs(labels.count(1) / len(labels) - 0.5) < 0.05
    label, element = next(iter(ds))
    assert label.dtype == np.int32 and element.dtype == np.int64


def test_rejection_resample_errors_and_checkpoints():
    with pytest.raises(hr.InvalidArgumentError, match="target_dist"):
        D.range(3).rejection_resample(lambda x: 0, [])
    with pytest.raises(hr.InvalidArgumentError, match="initial_dist"):
        D.range(3).rejection_resample(lambda x: 0, [0.5, 0.5], [1.0])
    with pytest.raises(hr.InvalidArgumentError, match="class id"):
        list(D.range(3).rejection_resample(lambda x: 5, [0.5, 0.5]))
    check_checkpoints(lambda: D.range(60).rejection_resample(lambda x: int(x % 3 == 0), [0.5, 0.5], seed=1))


def test_more_experimental_names(tmp_path):
    assert E.SHARD_HINT == -1 and E.get_structure(D.range(2)) == hr.TensorSpec((), "int64")
    E.enable_debug_mode()
    path = str(tmp_path / "w.tfrecord")
    E.TFRecordWriter(path, "GZIP").write(D.from_tensor_slices([b"x", b"y"]))
    assert list(hr.data.TFRecordDataset(path, "GZIP")) == [b"x", b"y"]
    records = [hr.io.serialize_example({"v": i}) for i in range(4)]
    parsed = (
        D.from_tensor_slices(records)
        .batch(2)
        .apply(E.parse_example_dataset({"v": hr.io.FixedLenFeature([], hr.int64)}))
    )
    assert [b["v"].tolist() for b in parsed] == [[0, 1], [2, 3]]
    ragged = D.range(1, 4).map(lambda n: np.arange(n)).apply(E.dense_to_ragged_batch(3))
    assert next(iter(ragged)).to_list() == [[0], [0, 1], [0, 1, 2]]
    sparse = D.range(1, 3).map(lambda n: np.arange(n)).apply(E.dense_to_sparse_batch(2, [2]))
    assert next(iter(sparse)).to_dense().tolist() == [[0, 0], [0, 1]]
    assert hr.data.NumpyIterator is hr.Iterator


def test_data_public_names_are_its_all():
    # hr.data is tf.data's facade: the __future__ import's `annotations` must not show in it.
    public = {name for name in dir(hr.data) if not name.startswith("_")}
    assert public == set(hr.data.__all__), sorted(public - set(hr.data.__all__))
