"""``tf.data.experimental`` names: ``hr.data.experimental.X`` (also ``hr.experimental.X``).

Transformations are returned as functions for ``Dataset.apply``, as in tf.data; each one calls the
``Dataset`` method of the same meaning, so there is one implementation of each.

>>> import headrace as hr
>>> ds = hr.Dataset.range(10).apply(hr.data.experimental.scan(0, lambda s, x: (s + x, s + x)))
>>> [int(x) for x in ds][-1], hr.data.experimental.cardinality(hr.Dataset.range(4))
(45, 4)
"""

from __future__ import annotations

import typing as _typing

from .core.elements import ElementsNode as _ElementsNode
from .core.errors import InvalidArgumentError as _InvalidArgumentError
from .core.node import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .core.options import (
    AutoShardPolicy,
    AutotuneAlgorithm,
    AutotuneOptions,
    DistributeOptions,
    ExternalStatePolicy,
    OptimizationOptions,
    ThreadingOptions,
)
from .dataset import Dataset as _Dataset
from .readers import CsvDataset, make_batched_features_dataset, make_csv_dataset

if _typing.TYPE_CHECKING:  # annotations only: Any and Callable stay out of the public namespace
    from collections.abc import Callable
    from typing import Any

    _Transformation = Callable[[_Dataset], _Dataset]


#: tf.data's placeholder for "this worker's index" in sharding hints; headrace has no auto-sharding.
SHARD_HINT = -1


def cardinality(dataset: _Dataset) -> int:
    """``dataset.cardinality()``."""
    return dataset.cardinality()


def assert_cardinality(expected_cardinality: int) -> _Transformation:
    """Declare (and check while iterating) the number of elements."""
    return lambda dataset: dataset.assert_cardinality(expected_cardinality)


def bucket_by_sequence_length(
    element_length_func: Callable,
    bucket_boundaries: Any,
    bucket_batch_sizes: Any,
    padded_shapes: Any = None,
    padding_values: Any = None,
    pad_to_bucket_boundary: bool = False,
    no_padding: bool = False,
    drop_remainder: bool = False,
) -> _Transformation:
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func,
        bucket_boundaries,
        bucket_batch_sizes,
        padded_shapes,
        padding_values,
        pad_to_bucket_boundary,
        no_padding,
        drop_remainder,
    )


def group_by_window(
    key_func: Callable,
    reduce_func: Callable,
    window_size: int | None = None,
    window_size_func: Callable | None = None,
) -> _Transformation:
    return lambda dataset: dataset.group_by_window(key_func, reduce_func, window_size, window_size_func)


def sample_from_datasets(
    datasets: list,
    weights: Any = None,
    seed: int | None = None,
    stop_on_empty_dataset: bool = False,
    rerandomize_each_iteration: bool | None = None,
) -> _Dataset:
    return _Dataset.sample_from_datasets(
        datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration
    )


def choose_from_datasets(
    datasets: list, choice_dataset: _Dataset, stop_on_empty_dataset: bool = True
) -> _Dataset:
    return _Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def parallel_interleave(
    map_func: Callable,
    cycle_length: int,
    block_length: int = 1,
    sloppy: bool | None = False,
    buffer_output_elements: int | None = None,
    prefetch_input_elements: int | None = None,
) -> _Transformation:
    """``interleave`` with ``cycle_length`` sub-datasets read in parallel; ``sloppy=True`` allows
    any order. The two buffer sizes are accepted and not used (the runtime sizes its buffers)."""
    return lambda dataset: dataset.interleave(
        map_func, cycle_length, block_length, num_parallel_calls=cycle_length, deterministic=not sloppy
    )


def map_and_batch(
    map_func: Callable,
    batch_size: int,
    num_parallel_batches: int | None = None,
    drop_remainder: bool = False,
    num_parallel_calls: int | None = None,
) -> _Transformation:
    """``map(map_func).batch(batch_size)`` (tf.data fuses them the same way itself)."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise _InvalidArgumentError(
            "map_and_batch: give num_parallel_batches or num_parallel_calls, not both"
        )
    calls = num_parallel_calls
    if num_parallel_batches is not None:
        calls = AUTOTUNE if num_parallel_batches == AUTOTUNE else num_parallel_batches * batch_size
    return lambda dataset: dataset.map(map_func, num_parallel_calls=calls).batch(batch_size, drop_remainder)


def dense_to_ragged_batch(
    batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = None
) -> _Transformation:
    return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder)


def dense_to_sparse_batch(batch_size: int, row_shape: Any) -> _Transformation:
    return lambda dataset: dataset.sparse_batch(batch_size, row_shape)


def scan(initial_state: Any, scan_func: Callable) -> _Transformation:
    return lambda dataset: dataset.scan(initial_state, scan_func)


def take_while(predicate: Callable) -> _Transformation:
    return lambda dataset: dataset.take_while(predicate)


def unbatch() -> _Transformation:
    return lambda dataset: dataset.unbatch()


def ignore_errors(log_warning: bool = False) -> _Transformation:
    return lambda dataset: dataset.ignore_errors(log_warning)


def unique() -> _Transformation:
    return lambda dataset: dataset.unique()


def enumerate_dataset(start: int = 0) -> _Transformation:
    return lambda dataset: dataset.enumerate(start)


def shuffle_and_repeat(
    buffer_size: int, count: int | None = None, seed: int | None = None
) -> _Transformation:
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def rejection_resample(
    class_func: Callable, target_dist: Any, initial_dist: Any = None, seed: int | None = None
) -> _Transformation:
    return lambda dataset: dataset.rejection_resample(class_func, target_dist, initial_dist, seed)


def snapshot(
    path: Any, compression: str | None = "AUTO", reader_func=None, shard_func=None
) -> _Transformation:
    return lambda dataset: dataset.snapshot(path, compression, reader_func, shard_func)


def get_single_element(dataset: _Dataset) -> Any:
    return dataset.get_single_element()


def save(dataset: _Dataset, path: Any, compression=None, shard_func=None, checkpoint_args=None) -> None:
    dataset.save(path, compression, shard_func, checkpoint_args)


def load(path: Any, element_spec: Any = None, compression=None, reader_func=None) -> _Dataset:
    return _Dataset.load(path, element_spec, compression, reader_func)


def Counter(start: int = 0, step: int = 1, dtype: Any = "int64") -> _Dataset:  # noqa: N802 (tf.data's name)
    return _Dataset.counter(start, step, dtype)


def RandomDataset(seed: int | None = None) -> _Dataset:  # noqa: N802 (tf.data's name)
    return _Dataset.random(seed)


def from_list(elements: list) -> _Dataset:
    """A dataset of the elements of a list, which may differ in shape (not in structure).

    >>> [x.tolist() for x in from_list([[1], [2, 3]])]
    [[1], [2, 3]]
    """
    from .core.spec import to_array  # noqa: PLC0415
    from .core.structure import map_structure  # noqa: PLC0415

    if not isinstance(elements, (list, tuple)) or not elements:
        raise _InvalidArgumentError("from_list needs a non-empty list of elements")
    return _Dataset(_ElementsNode([map_structure(to_array, e) for e in elements]))


def get_structure(dataset: _Dataset) -> Any:
    """``dataset.element_spec``."""
    return dataset.element_spec


def enable_debug_mode() -> None:
    """Accepted for compatibility: headrace always runs user functions as plain Python."""


def parse_example_dataset(features: dict, num_parallel_calls: int = 1, deterministic: bool | None = None):
    """Parse a dataset of batched serialized Examples (``map`` of ``hr.io.parse_example``)."""
    from .io.codec.example import parse_example  # noqa: PLC0415 (the Example codec only when used)

    return lambda dataset: dataset.map(
        lambda records: parse_example(records, features),
        num_parallel_calls=num_parallel_calls,
        deterministic=deterministic,
    )


class TFRecordWriter:
    """``tf.data.experimental.TFRecordWriter(filename, compression_type)``: ``write(dataset)`` writes a
    dataset of scalar strings as one TFRecord file.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "d.tfrecord")
    >>> import headrace as hr
    >>> TFRecordWriter(path).write(hr.data.Dataset.from_tensor_slices([b"a", b"b"]))
    >>> list(hr.data.TFRecordDataset(path))
    [b'a', b'b']
    """

    def __init__(self, filename: Any, compression_type: str | None = None):
        self.filename, self.compression_type = filename, compression_type

    def write(self, dataset: _Dataset) -> None:
        from .io.records.writer import TFRecordWriter as Writer  # noqa: PLC0415

        with Writer(self.filename, self.compression_type) as writer:
            for record in dataset:
                writer.write(record)


def at(dataset: _Dataset, index: int) -> Any:
    """The element at ``index``: read by index where the dataset allows random access, else by
    iterating up to it."""
    from .core.args import integer  # noqa: PLC0415

    index = integer(index)
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise _InvalidArgumentError(f"at: index={index!r} is not an int >= 0")
    found = list(dataset.skip(index).take(1))
    if not found:
        raise IndexError(f"at: index {index} is out of range: the dataset has fewer elements")
    return found[0]


__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "SHARD_HINT",
    "UNKNOWN_CARDINALITY",
    "AutoShardPolicy",
    "AutotuneAlgorithm",
    "AutotuneOptions",
    "Counter",
    "CsvDataset",
    "DistributeOptions",
    "ExternalStatePolicy",
    "OptimizationOptions",
    "RandomDataset",
    "TFRecordWriter",
    "ThreadingOptions",
    "assert_cardinality",
    "at",
    "bucket_by_sequence_length",
    "cardinality",
    "choose_from_datasets",
    "dense_to_ragged_batch",
    "dense_to_sparse_batch",
    "enable_debug_mode",
    "enumerate_dataset",
    "from_list",
    "get_single_element",
    "get_structure",
    "group_by_window",
    "ignore_errors",
    "load",
    "make_batched_features_dataset",
    "make_csv_dataset",
    "map_and_batch",
    "parallel_interleave",
    "parse_example_dataset",
    "rejection_resample",
    "sample_from_datasets",
    "save",
    "scan",
    "shuffle_and_repeat",
    "snapshot",
    "take_while",
    "unbatch",
    "unique",
]

# Only tf.data.experimental's names are public (tests/test_experimental.py checks it).
del annotations
