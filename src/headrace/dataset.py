"""The fluent facade: ``Dataset`` methods build nodes from ``ops/`` and ``sources/``.

This module imports the ops; no op imports it. Each method mirrors tf.data's name, argument names
and defaults, so moving a pipeline over is an import change.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .core.closures import check_pipeline
from .core.elements import ElementsNode
from .core.errors import InvalidArgumentError
from .core.fingerprint import fingerprint as pipeline_fingerprint
from .core.node import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Node, session_of, tree_lines
from .core.options import Options
from .core.run import Run, Seeds
from .io import saved
from .iterator import Iterator
from .ops import vectorize as _vectorize  # noqa: F401 (registers the map+batch vectorisation rule)
from .ops.assert_cardinality import AssertCardinalityNode
from .ops.batch import BatchNode
from .ops.bucket_by_sequence_length import BucketBySequenceLengthNode
from .ops.cache import CacheNode
from .ops.choose_from_datasets import ChooseFromDatasetsNode
from .ops.concatenate import ConcatenateNode
from .ops.distribute import DistributeNode
from .ops.enumerate import EnumerateNode
from .ops.filter import FilterNode
from .ops.flat_map import FlatMapNode
from .ops.global_shuffle import GlobalShuffleNode
from .ops.group_by_window import GroupByWindowNode
from .ops.ignore_errors import IgnoreErrorsNode
from .ops.interleave_node import InterleaveNode
from .ops.map import MapNode
from .ops.padded_batch import PaddedBatchNode
from .ops.prefetch import PrefetchNode
from .ops.ragged_batch import RaggedBatchNode
from .ops.rebatch import RebatchNode
from .ops.reduce import reduce as _reduce
from .ops.rejection_resample import RejectionResampleNode
from .ops.repeat import RepeatNode
from .ops.sample_from_datasets import SampleFromDatasetsNode
from .ops.scan import ScanNode
from .ops.shard import ShardNode
from .ops.shuffle import ShuffleNode
from .ops.skip import SkipNode
from .ops.sparse_batch import SparseBatchNode
from .ops.take import TakeNode
from .ops.take_while import TakeWhileNode
from .ops.unbatch import UnbatchNode
from .ops.unique import UniqueNode
from .ops.window import WindowNode
from .ops.with_options import OptionsNode, effective_options
from .ops.zip import ZipNode
from .sources.counter import CounterNode
from .sources.files import ListFilesNode
from .sources.generator import GeneratorNode
from .sources.random import RandomNode
from .sources.range import RangeNode
from .sources.tensor_slices import TensorSlicesNode, TensorsNode
from .sources.tfrecord import TFRecordNode
from .tune.rewrite import explain, optimise


def _prefetch(node: Node) -> Node:
    """The stage ``inject_prefetch`` adds at the end of a plan (given to the optimiser, which
    builds no op itself)."""
    return PrefetchNode(node, AUTOTUNE)


def _node(value: Any, argument: str) -> Node:
    if isinstance(value, Dataset):
        return value.node
    if isinstance(value, Node):
        return value
    raise InvalidArgumentError(f"{argument} must be a headrace Dataset, got {type(value).__name__}")


class Dataset:
    """An immutable description of an input pipeline. ``iter(ds)`` starts a fresh epoch.

    >>> import headrace as hr
    >>> ds = hr.Dataset.range(10).map(lambda x: x * 2).filter(lambda x: x % 3 == 0).batch(2)
    >>> [b.tolist() for b in ds]
    [[0, 6], [12, 18]]
    """

    __slots__ = ("node",)

    def __init__(self, node: Node):
        if not isinstance(node, Node):
            raise InvalidArgumentError(f"Dataset wraps a Node, got {type(node).__name__}")
        self.node = node

    # --- iteration and introspection ------------------------------------------------------------
    def __iter__(self) -> Iterator:
        return self._iterate()

    def _iterate(self, seeds: Seeds | None = None) -> Iterator:
        """``iter(self)``; ``seeds``: the iteration numbers of a copy of the pipeline elsewhere (torch)."""
        check_pipeline(self.node)  # warn if a value a user function captured has changed since
        options = effective_options(self.node)
        run = Run(options, session=session_of(self.node), seeds=seeds)
        return Iterator(optimise(self.node, options, _prefetch).optimised, options, run)

    def explain(self) -> str:
        """The pipeline as written, as it will run after the static rewrites, and why they differ.

        >>> print(Dataset.range(3).map(lambda x: x + 1, name="a").map(lambda x: x * 2, name="b").take(-1).explain())
        logical plan (input first):
              range(0, 3, 1)
            map(a)
          map(b)
        take(-1)
        optimised plan (input first):
            range(0, 3, 1)
          map(a -> b)
        rewrites:
        - map(a) and map(b) fused into one stage: one call of overhead per element
        - take(-1) removed: it changes nothing
        """
        return explain(self.node, effective_options(self.node), _prefetch)

    def as_numpy_iterator(self) -> Iterator:
        """Elements are numpy already; kept for tf.data compatibility."""
        return iter(self)

    @property
    def element_spec(self) -> Any:
        """Structure of ``TensorSpec`` describing each element."""
        return self.node.element_spec

    def cardinality(self) -> int:
        """Number of elements, ``INFINITE_CARDINALITY`` (-1) or ``UNKNOWN_CARDINALITY`` (-2).

        >>> Dataset.range(10).batch(3).cardinality(), Dataset.range(3).repeat().cardinality()
        (4, -1)
        """
        return self.node.cardinality()

    def __len__(self) -> int:
        n = self.cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("the dataset is infinite (cardinality -1)")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("the dataset length is unknown (cardinality -2); use cardinality()")
        return n

    def __bool__(self) -> bool:
        return True  # never fall back to __len__ for truth tests

    def options(self) -> Options:
        return effective_options(self.node)

    def __repr__(self) -> str:
        return f"<Dataset {self.node!r}, element_spec unknown until asked>"

    def describe(self) -> str:
        """The pipeline as text, one stage per line, output last."""
        return "\n".join(tree_lines(self.node))

    # --- sources ----------------------------------------------------------------------------------
    @staticmethod
    def range(*args: int, output_type=None, name: str | None = None) -> Dataset:
        """``range([start,] stop[, step])`` of int64 scalars.

        >>> [int(x) for x in Dataset.range(2, 10, 3)]
        [2, 5, 8]
        """
        import numpy as np

        return Dataset(RangeNode(*args, output_type=np.int64 if output_type is None else output_type))

    @staticmethod
    def from_tensor_slices(tensors: Any, name: str | None = None) -> Dataset:
        """One element per row of the leading dimension of every component.

        Elements are read-only views: copy with ``np.array(x)`` to edit one in place (an in-place
        edit raises numpy's "assignment destination is read-only"). A writable array is copied once
        here, as tf.data does, so changing it afterwards does not change the dataset; read-only
        arrays and memory maps are used in place (see docs/remote_storage.md, "Outputs are the
        user's own").

        >>> [(int(a), b) for a, b in Dataset.from_tensor_slices(([1, 2], [b"x", b"y"]))]
        [(1, b'x'), (2, b'y')]
        """
        return Dataset(TensorSlicesNode(tensors))

    @staticmethod
    def from_tensors(tensors: Any, name: str | None = None) -> Dataset:
        """A single element, its arrays read-only (copy with ``np.array(x)`` to edit one in place).

        >>> [x.tolist() for x in Dataset.from_tensors([1, 2])]
        [[1, 2]]
        """
        return Dataset(TensorsNode(tensors))

    @staticmethod
    def from_generator(
        generator: Callable,
        output_types: Any = None,
        output_shapes: Any = None,
        args: tuple | None = None,
        output_signature: Any = None,
        name: str | None = None,
    ) -> Dataset:
        """Elements yielded by ``generator(*args)``, called afresh each epoch, checked against
        ``output_signature`` (or tf.data's older ``output_types``/``output_shapes``).

        Checkpoints replay the generator, so it must yield the same sequence on every call.

        >>> from headrace import TensorSpec
        >>> def squares(n):
        ...     for i in range(n):
        ...         yield i, i * i
        >>> ds = Dataset.from_generator(
        ...     squares, args=(3,), output_signature=(TensorSpec((), "int64"), TensorSpec((), "int64"))
        ... )
        >>> [(int(a), int(b)) for a, b in ds]
        [(0, 0), (1, 1), (2, 4)]
        """
        return Dataset(GeneratorNode(generator, output_types, output_shapes, args, output_signature, name))

    @staticmethod
    def list_files(
        file_pattern: Any,
        shuffle: bool | None = None,
        seed: int | None = None,
        name: str | None = None,
        *,
        storage_options: dict | None = None,
    ) -> Dataset:
        """Names (bytes) of the files matching one or more glob patterns, sorted; shuffled unless
        ``shuffle=False`` (as in tf.data, a new order each epoch; pass ``seed`` to reproduce it).

        Patterns may be remote (``s3://bucket/train-*``, through fsspec; ``storage_options`` are the
        filesystem's arguments, see docs/remote_storage.md). headrace's own sidecar files (indexes,
        manifests) never match.

        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     for file_name in ("b.txt", "a.txt", "c.csv"):
        ...         open(os.path.join(folder, file_name), "w").close()
        ...     ds = Dataset.list_files(os.path.join(folder, "*.txt"), shuffle=False)
        ...     names = [os.path.basename(path) for path in ds]
        >>> names
        [b'a.txt', b'b.txt']
        """
        if shuffle is not None and not isinstance(shuffle, bool):
            raise InvalidArgumentError(f"shuffle={shuffle!r} is not allowed: None (shuffled), True or False")
        files = ListFilesNode(file_pattern, storage_options)
        node: Node = files
        if shuffle is None or shuffle:
            node = ShuffleNode(files, max(files.length, 1), seed=seed, name=name)
        return Dataset(node)

    # --- transformations ---------------------------------------------------------------------------
    def map(
        self,
        map_func: Callable,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
        *,
        executor: str | None = None,
        seed: int | None = None,
    ) -> Dataset:
        """Apply ``map_func`` to each element (tuples are unpacked into arguments).

        ``num_parallel_calls`` (an int or ``AUTOTUNE``) runs it in the background on ``executor``:
        ``"thread"`` (functions that release the GIL: numpy, decoders, I/O), ``"process"`` (pure
        Python; lambdas and closures work), or None to measure and choose. ``deterministic=False``
        yields what is ready first. With ``seed``, ``map_func`` also gets ``rng=``, a numpy Generator
        fixed by (seed, epoch, element position): identical for any parallelism and executor.

        >>> [int(x) for x in Dataset.range(3).map(lambda x: x + 10)]
        [10, 11, 12]
        >>> [int(x) for x in Dataset.range(4).map(lambda x: x * x, num_parallel_calls=2, executor="thread")]
        [0, 1, 4, 9]
        >>> noisy = Dataset.range(3).map(lambda x, rng: x + rng.integers(100), seed=7)
        >>> [int(x) for x in noisy] == [int(x) for x in Dataset.range(3).map(
        ...     lambda x, rng: x + rng.integers(100), num_parallel_calls=2, seed=7)]
        True
        """
        return Dataset(
            MapNode(
                self.node, map_func, num_parallel_calls, deterministic, name, executor=executor, seed=seed
            )
        )

    def filter(self, predicate: Callable, name: str | None = None) -> Dataset:
        """Keep elements for which ``predicate`` returns True.

        >>> [int(x) for x in Dataset.range(6).filter(lambda x: x % 2 == 1)]
        [1, 3, 5]
        """
        return Dataset(FilterNode(self.node, predicate, name))

    def batch(
        self,
        batch_size: int,
        drop_remainder: bool = False,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Stack ``batch_size`` consecutive elements; the last batch is smaller unless dropped.

        >>> [b.tolist() for b in Dataset.range(5).batch(2)]
        [[0, 1], [2, 3], [4]]
        """
        return Dataset(
            BatchNode(self.node, batch_size, drop_remainder, num_parallel_calls, deterministic, name)
        )

    def shuffle(
        self,
        buffer_size: int,
        seed: int | None = None,
        reshuffle_each_iteration: bool | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Shuffle through a buffer of ``buffer_size`` elements (uniform within the buffer).

        >>> sorted(int(x) for x in Dataset.range(5).shuffle(5, seed=1))
        [0, 1, 2, 3, 4]
        """
        return Dataset(ShuffleNode(self.node, buffer_size, seed, reshuffle_each_iteration, name))

    def global_shuffle(
        self, seed: int | None = None, reshuffle_each_iteration: bool = True, name: str | None = None
    ) -> Dataset:
        """Visit every element once per epoch in a uniformly shuffled order, with no shuffle buffer.

        Needs random access (range, from_tensor_slices, indexed TFRecord files, and map/take/skip/
        batch over them); checkpoints are a few integers whatever the dataset's size.

        >>> sorted(int(x) for x in Dataset.range(6).global_shuffle(seed=1))
        [0, 1, 2, 3, 4, 5]
        """
        return Dataset(GlobalShuffleNode(self.node, seed, reshuffle_each_iteration, name))

    def repeat(self, count: int | None = None, name: str | None = None) -> Dataset:
        """Repeat for ``count`` epochs, forever when None.

        >>> [int(x) for x in Dataset.range(2).repeat(2)]
        [0, 1, 0, 1]
        """
        return Dataset(RepeatNode(self.node, count, name))

    def take(self, count: int, name: str | None = None) -> Dataset:
        """At most ``count`` elements (-1 for all).

        >>> [int(x) for x in Dataset.range(10).take(2)]
        [0, 1]
        """
        return Dataset(TakeNode(self.node, count, name))

    def skip(self, count: int, name: str | None = None) -> Dataset:
        """Drop the first ``count`` elements (-1 for all).

        >>> [int(x) for x in Dataset.range(4).skip(2)]
        [2, 3]
        """
        return Dataset(SkipNode(self.node, count, name))

    def with_options(self, options: Options, name: str | None = None) -> Dataset:
        """Attach pipeline-wide options; options nearer the output win.

        >>> opts = Options(); opts.seed = 3
        >>> Dataset.range(3).with_options(opts).options().seed
        3
        """
        return Dataset(OptionsNode(self.node, options))

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        """``transformation_func(self)``, for reusable pipeline pieces.

        >>> Dataset.range(5).apply(lambda ds: ds.take(2)).cardinality()
        2
        """
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise InvalidArgumentError(
                f"apply: transformation_func must return a Dataset, got {type(result).__name__}"
            )
        return result

    @staticmethod
    def zip(*args: Any, datasets: Any = None, name: str | None = None) -> Dataset:
        """Combine datasets element by element; ends when the shortest does. Several datasets give
        tuples; a tuple or dict (nested as deep as you like) gives elements of that structure.

        >>> [(int(a), int(b)) for a, b in Dataset.zip(Dataset.range(3), Dataset.range(10, 20))]
        [(0, 10), (1, 11), (2, 12)]
        >>> ds = Dataset.zip({"x": Dataset.range(2), "y": Dataset.range(5, 7)})
        >>> [{key: int(value) for key, value in element.items()} for element in ds]
        [{'x': 0, 'y': 5}, {'x': 1, 'y': 6}]
        """
        if not args and datasets is None:
            raise InvalidArgumentError("zip needs datasets: Dataset.zip(a, b) or Dataset.zip((a, b))")
        if args and datasets is not None:
            raise InvalidArgumentError("give zip its datasets positionally or as datasets=, not both")
        if len(args) == 1:
            datasets = args[0]
        elif args:
            datasets = args
        return Dataset(ZipNode(datasets, name))

    def concatenate(self, dataset: Dataset, name: str | None = None) -> Dataset:
        """This dataset's elements, then ``dataset``'s (same structure and dtypes).

        >>> [int(x) for x in Dataset.range(2).concatenate(Dataset.range(5, 7))]
        [0, 1, 5, 6]
        """
        return Dataset(ConcatenateNode(self.node, _node(dataset, "dataset"), name))

    def enumerate(self, start: int = 0, name: str | None = None) -> Dataset:
        """Pairs ``(index, element)`` with int64 indices counting from ``start``.

        >>> [(int(i), x) for i, x in Dataset.from_tensor_slices([b"a", b"b"]).enumerate(start=5)]
        [(5, b'a'), (6, b'b')]
        """
        return Dataset(EnumerateNode(self.node, start, name))

    def take_while(self, predicate: Callable, name: str | None = None) -> Dataset:
        """Elements up to (not including) the first one for which ``predicate`` is False.

        >>> [int(x) for x in Dataset.range(10).take_while(lambda x: x < 3)]
        [0, 1, 2]
        """
        return Dataset(TakeWhileNode(self.node, predicate, name))

    def shard(self, num_shards: int, index: int, name: str | None = None) -> Dataset:
        """Every ``num_shards``-th element starting at ``index`` (one worker's share).

        >>> [int(x) for x in Dataset.range(10).shard(num_shards=3, index=1)]
        [1, 4, 7]
        """
        return Dataset(ShardNode(self.node, num_shards, index, name))

    def distribute(
        self,
        num_replicas: int | None = None,
        rank: int | None = None,
        remainder: str = "repeat",
        name: str | None = None,
    ) -> Dataset:
        """Replica ``rank``'s share of each epoch when ``num_replicas`` ranks train together: element
        ``rank`` of every block of ``num_replicas``, the same count on every rank (so DDP never hangs).

        The last partial block is ``remainder``: ``"repeat"`` (short ranks take an element of that block
        again), ``"pad"`` (the same, zeroed) or ``"drop"``. A checkpoint saved by any rank restores on
        any rank of a job of any size, continuing the epoch with nothing seen twice or lost. Random
        stages above need a seed, so ranks agree; put distribute before expensive maps (it seeks past
        other ranks' elements where the input can, e.g. after global_shuffle). With no arguments the
        job's layout decides when iterating: ranks and DataLoader workers under ``headrace.torch``, else
        torchrun's ``WORLD_SIZE``/``RANK``. See docs/distributed_training.md.

        >>> def rank_pipeline(rank, remainder="repeat"):  # what each rank's process builds
        ...     return Dataset.range(10).global_shuffle(seed=3).distribute(4, rank, remainder)
        >>> ranks = [[int(x) for x in rank_pipeline(rank)] for rank in range(4)]
        >>> [len(r) for r in ranks], sorted(set(sum(ranks, [])))
        ([3, 3, 3, 3], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
        >>> [len(list(rank_pipeline(rank, "drop"))) for rank in range(4)]
        [2, 2, 2, 2]
        """
        return Dataset(DistributeNode(self.node, num_replicas, rank, remainder, name))

    def run_on(
        self,
        address: str | None = None,
        num_workers: int = 2,
        *,
        deterministic: bool = True,
        chunk_size: int = 64,
        prefetch: int = 2,
        cpus_per_worker: float = 1.0,
        name: str | None = None,
    ) -> Dataset:
        """Run the pipeline so far on ``num_workers`` Ray actors (the ``ray`` extra) and stream its
        elements back: ``address`` joins a cluster (``"HOST:PORT"``, ``"auto"``), None starts a local
        Ray. Each worker computes one share (every source sharded ``num_workers`` ways), so each
        element is computed and delivered exactly once per epoch; a dead worker's share restarts
        from its last state on another node. ``deterministic=False`` serves whichever worker is
        ready. At most ``prefetch`` chunks of ``chunk_size`` elements are in flight per worker.
        Put ``distribute`` above it to split ranks' shares too. See docs/distributed.md.

        >>> ds = Dataset.range(6).map(lambda x: x * x).run_on(num_workers=2)  # doctest: +SKIP
        >>> [int(x) for x in ds]  # doctest: +SKIP
        [0, 1, 4, 9, 16, 25]
        """
        from .core.args import integer  # noqa: PLC0415 (kept local: only for Ray users)
        from .ops.run_on import RunOnNode  # noqa: PLC0415
        from .ray.shares import split_at_sources  # noqa: PLC0415

        num_workers = integer(num_workers)
        if not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 1:
            raise InvalidArgumentError(f"run_on: num_workers={num_workers!r} is not allowed: a positive int")
        shares = tuple(split_at_sources(self.node, num_workers, j) for j in range(num_workers))
        return Dataset(
            RunOnNode(self.node, shares, address, deterministic, chunk_size, prefetch, cpus_per_worker, name)
        )

    @staticmethod
    def choose_from_datasets(
        datasets: list[Dataset], choice_dataset: Dataset, stop_on_empty_dataset: bool = True
    ) -> Dataset:
        """Each element of ``choice_dataset`` (an int ``i``) yields the next element of ``datasets[i]``.

        >>> letters = [Dataset.from_tensor_slices([b"a", b"b"]), Dataset.from_tensor_slices([b"x", b"y"])]
        >>> list(Dataset.choose_from_datasets(letters, Dataset.from_tensor_slices([0, 1, 1, 0])))
        [b'a', b'x', b'y', b'b']
        """
        if not isinstance(datasets, (list, tuple)):
            raise InvalidArgumentError(f"datasets must be a list of datasets, got {type(datasets).__name__}")
        nodes = [_node(d, f"datasets[{i}]") for i, d in enumerate(datasets)]
        choice = _node(choice_dataset, "choice_dataset")
        return Dataset(ChooseFromDatasetsNode(nodes, choice, stop_on_empty_dataset))

    @staticmethod
    def sample_from_datasets(
        datasets: list[Dataset],
        weights: Any = None,
        seed: int | None = None,
        stop_on_empty_dataset: bool = False,
        rerandomize_each_iteration: bool | None = None,
    ) -> Dataset:
        """Each element comes from ``datasets[i]`` with probability ``weights[i] / sum(weights)``
        (uniform by default; ``weights`` may also be a dataset of weight lists, one per element).

        >>> ds = Dataset.sample_from_datasets([Dataset.range(3), Dataset.range(100, 103)], seed=7)
        >>> sorted(int(x) for x in ds)
        [0, 1, 2, 100, 101, 102]
        >>> ds.cardinality()
        6
        """
        if not isinstance(datasets, (list, tuple)):
            raise InvalidArgumentError(f"datasets must be a list of datasets, got {type(datasets).__name__}")
        nodes = [_node(d, f"datasets[{i}]") for i, d in enumerate(datasets)]
        if isinstance(weights, Dataset):
            weights = weights.node
        node = SampleFromDatasetsNode(nodes, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration)
        if node.weights is not None:
            # As tf.data: with one dataset left to draw from, that dataset is returned as it is.
            candidates = [d for d, w in zip(nodes, node.weights) if w > 0]
            if len(candidates) == 1:
                return Dataset(candidates[0])
        return Dataset(node)

    def flat_map(self, map_func: Callable, name: str | None = None) -> Dataset:
        """Map each element to a Dataset and yield their elements one dataset after the other.

        >>> ds = Dataset.range(1, 4).flat_map(lambda n: Dataset.range(n))
        >>> [int(x) for x in ds]
        [0, 0, 1, 0, 1, 2]
        """
        return Dataset(FlatMapNode(self.node, map_func, name))

    def interleave(
        self,
        map_func: Callable,
        cycle_length: int | None = None,
        block_length: int | None = None,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Map elements to Datasets and take ``block_length`` elements from ``cycle_length`` of them in
        turn (tf.data's order; ``cycle_length=None`` means the CPUs available).

        >>> ds = Dataset.range(1, 6).interleave(
        ...     lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
        >>> [int(x) for x in ds]  # doctest: +NORMALIZE_WHITESPACE
        [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4,
         5, 5, 5, 5, 5, 5]
        """
        return Dataset(
            InterleaveNode(
                self.node, map_func, cycle_length, block_length, num_parallel_calls, deterministic, name
            )
        )

    def padded_batch(
        self,
        batch_size: int,
        padded_shapes: Any = None,
        padding_values: Any = None,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Dataset:
        """Batch elements of different shapes, padding each component (to the batch's largest size
        where ``padded_shapes`` is None or says None/-1) with 0, False or b"" by default.

        >>> import numpy as np
        >>> ds = Dataset.range(1, 5).map(lambda n: np.full(n, n))
        >>> [b.tolist() for b in ds.padded_batch(2)]
        [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
        >>> [b.tolist() for b in ds.padded_batch(2, padded_shapes=[5], padding_values=-1)][0]
        [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]]
        """
        return Dataset(
            PaddedBatchNode(self.node, batch_size, padded_shapes, padding_values, drop_remainder, name)
        )

    def unbatch(self, name: str | None = None) -> Dataset:
        """Split each element along its first dimension (the inverse of ``batch``).

        >>> [int(x) for x in Dataset.range(5).batch(2).unbatch()]
        [0, 1, 2, 3, 4]
        """
        return Dataset(UnbatchNode(self.node, name))

    def rebatch(self, batch_size: Any, drop_remainder: bool = False, name: str | None = None) -> Dataset:
        """Regroup batched elements into batches of ``batch_size`` rows (a list is cycled through);
        the same as ``unbatch().batch(batch_size)`` with one copy at most.

        >>> [b.tolist() for b in Dataset.range(7).batch(4).rebatch(3)]
        [[0, 1, 2], [3, 4, 5], [6]]
        >>> [b.tolist() for b in Dataset.range(8).batch(4).rebatch([2, 1, 1])]
        [[0, 1], [2], [3], [4, 5], [6], [7]]
        """
        return Dataset(RebatchNode(self.node, batch_size, drop_remainder, name))

    def scan(self, initial_state: Any, scan_func: Callable, name: str | None = None) -> Dataset:
        """Like map with a carried state: ``scan_func(state, element)`` returns ``(new_state, output)``.

        >>> ds = Dataset.range(6).scan(0, lambda total, x: (total + x, total + x))
        >>> [int(x) for x in ds]
        [0, 1, 3, 6, 10, 15]
        """
        return Dataset(ScanNode(self.node, initial_state, scan_func, name))

    def reduce(self, initial_state: Any, reduce_func: Callable, name: str | None = None) -> Any:
        """Fold all elements into one value: ``reduce_func(state, element)`` returns the new state.

        >>> Dataset.range(5).reduce(0, lambda total, x: total + x)
        np.int64(10)
        """
        return _reduce(self.node, initial_state, reduce_func, effective_options(self.node))

    def group_by_window(
        self,
        key_func: Callable,
        reduce_func: Callable,
        window_size: int | None = None,
        window_size_func: Callable | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Gather elements by ``key_func`` into windows of ``window_size`` (or
        ``window_size_func(key)``); each window becomes ``reduce_func(key, window_dataset)``.
        Unfinished windows are reduced at the end, in ascending key order.

        >>> ds = Dataset.range(10).group_by_window(
        ...     key_func=lambda x: x % 2, reduce_func=lambda key, window: window.batch(3), window_size=3)
        >>> [b.tolist() for b in ds]
        [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
        """
        return Dataset(
            GroupByWindowNode(
                self.node, key_func, reduce_func, window_size, window_size_func, wrap=Dataset, name=name
            )
        )

    def bucket_by_sequence_length(
        self,
        element_length_func: Callable,
        bucket_boundaries: Any,
        bucket_batch_sizes: Any,
        padded_shapes: Any = None,
        padding_values: Any = None,
        pad_to_bucket_boundary: bool = False,
        no_padding: bool = False,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Dataset:
        """Batch elements of similar length together: bucket ``i`` takes lengths in
        ``[bucket_boundaries[i-1], bucket_boundaries[i])`` and is padded and batched when it holds
        ``bucket_batch_sizes[i]`` elements (partial buckets at the end, in bucket order).

        >>> import numpy as np
        >>> rows = [[0], [1, 2, 3, 4], [5, 6, 7], [7, 8, 9, 10, 11], [13, 14, 15, 16, 19, 20], [21, 22]]
        >>> ds = Dataset.range(6).map(lambda i: np.array(rows[i]))
        >>> for batch in ds.bucket_by_sequence_length(lambda x: len(x), [3, 5], [2, 2, 2]):
        ...     print(batch.tolist())
        [[1, 2, 3, 4], [5, 6, 7, 0]]
        [[7, 8, 9, 10, 11, 0], [13, 14, 15, 16, 19, 20]]
        [[0, 0], [21, 22]]
        """
        return Dataset(
            BucketBySequenceLengthNode(
                self.node,
                element_length_func,
                bucket_boundaries,
                bucket_batch_sizes,
                padded_shapes,
                padding_values,
                pad_to_bucket_boundary,
                no_padding,
                drop_remainder,
                name,
            )
        )

    def ignore_errors(self, log_warning: bool = False, name: str | None = None) -> Dataset:
        """Skip the elements whose computation raised (counted as ``errors_ignored``).

        >>> ds = Dataset.from_tensor_slices([1.0, 0.0, 2.0]).map(lambda x: 1 / int(x)).ignore_errors()
        >>> [float(x) for x in ds]
        [1.0, 0.5]
        """
        return Dataset(IgnoreErrorsNode(self.node, log_warning, name))

    def cache(
        self, filename: str = "", name: str | None = None, *, storage_options: dict | None = None
    ) -> Dataset:
        """Keep the elements of the first complete pass; later passes read them instead of the input.

        ``filename=""`` keeps them in memory, as read-only copies that every pass hands out (copy with
        ``np.array(x)`` to edit one in place). A filename streams them to that file as they pass; it
        appears only when the pass completes (an interrupted run leaves nothing that looks complete),
        is keyed by a fingerprint of the pipeline above (change a function or argument and it is
        rebuilt, not reused) and holds no pickle. See docs/cache.md. A ``protocol://`` filename (with
        ``storage_options``) is worked on as a local copy and uploaded when a pass completes (see
        docs/remote_storage.md).

        >>> calls = []
        >>> ds = Dataset.range(3).map(lambda x: calls.append(int(x)) or x).cache()
        >>> [int(x) for x in ds.repeat(2)], calls
        ([0, 1, 2, 0, 1, 2], [0, 1, 2])
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "squares.hrcache")
        >>> on_disk = Dataset.range(4).map(lambda x: x * x).cache(path)
        >>> [int(x) for x in on_disk], os.path.exists(path), [int(x) for x in on_disk]
        ([0, 1, 4, 9], True, [0, 1, 4, 9])
        """
        return Dataset(CacheNode(self.node, filename, name, storage_options))

    def prefetch(self, buffer_size: int, name: str | None = None) -> Dataset:
        """Run the pipeline up to ``buffer_size`` elements ahead in a background thread, so producing
        the next element overlaps the consumer's work (``AUTOTUNE``: 2; 0: no prefetch).

        >>> [int(x) for x in Dataset.range(4).map(lambda x: x * 3).prefetch(2)]
        [0, 3, 6, 9]
        """
        return Dataset(PrefetchNode(self.node, buffer_size, name))

    def parallelize(self, num_workers: int, name: str | None = None) -> Dataset:
        """Run the whole pipeline above in ``num_workers`` worker processes (not a tf.data method).

        Worker ``k`` runs a copy of the pipeline whose every source keeps its ``k``-th of
        ``num_workers`` shares (every N-th element, or every N-th file); outputs are merged
        round-robin, so the order is fixed, and equals the serial order when each stage above maps
        one element to one. Checkpoints hold every worker's state and are exact. For pure-Python
        pipelines where no single stage is the bottleneck; see docs/parallel.md.

        >>> ds = Dataset.range(8).map(lambda x: x * 10).parallelize(2)
        >>> [int(x) for x in ds]
        [0, 10, 20, 30, 40, 50, 60, 70]
        """
        from .ops.parallelize import ParallelizeNode  # noqa: PLC0415 (worker processes: on demand)

        return Dataset(ParallelizeNode(self.node, num_workers, ShardNode, name))

    # --- tf.data methods added for compatibility (issue 12) -----------------------------------------
    def window(
        self,
        size: int,
        shift: int | None = None,
        stride: int = 1,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Dataset:
        """Windows of ``size`` elements starting every ``shift`` (default ``size``) elements, taking
        every ``stride``-th; each window is a Dataset per component (batch it to get arrays).

        >>> ds = Dataset.range(7).window(3, shift=2)
        >>> [[int(x) for x in window] for window in ds]
        [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]
        >>> [b.tolist() for b in Dataset.range(5).window(2, 1, drop_remainder=True).flat_map(lambda w: w.batch(2))]
        [[0, 1], [1, 2], [2, 3], [3, 4]]
        """
        return Dataset(WindowNode(self.node, size, shift, stride, drop_remainder, wrap=Dataset, name=name))

    def ragged_batch(
        self,
        batch_size: int,
        drop_remainder: bool = False,
        row_splits_dtype: Any = None,
        name: str | None = None,
    ) -> Dataset:
        """Batch elements whose shapes differ: components of rank >= 1 become ``hr.io.Ragged`` (one row
        per element), scalars are stacked. ``row_splits_dtype`` is accepted; splits are int64.

        >>> import numpy as np
        >>> batch = next(iter(Dataset.range(1, 4).map(lambda n: np.arange(n)).ragged_batch(3)))
        >>> batch.to_list()
        [[0], [0, 1], [0, 1, 2]]
        """
        return Dataset(RaggedBatchNode(self.node, batch_size, drop_remainder, name))

    def sparse_batch(self, batch_size: int, row_shape: Any, name: str | None = None) -> Dataset:
        """Batch elements of different shapes into ``hr.io.SparseTensor``s of dense shape
        ``[batch, *row_shape]`` (-1 in ``row_shape``: the batch's largest size).

        >>> batch = next(iter(Dataset.range(1, 3).map(lambda n: [7] * n).sparse_batch(2, row_shape=[3])))
        >>> batch.to_dense().tolist()
        [[7, 0, 0], [7, 7, 0]]
        """
        return Dataset(SparseBatchNode(self.node, batch_size, row_shape, name))

    def unique(self, name: str | None = None) -> Dataset:
        """Each distinct element once, in order of first appearance (integer or string elements).

        >>> [int(x) for x in Dataset.from_tensor_slices([1, 37, 2, 37, 2, 1]).unique()]
        [1, 37, 2]
        """
        return Dataset(UniqueNode(self.node, name))

    @staticmethod
    def random(
        seed: int | None = None, rerandomize_each_iteration: bool | None = None, name: str | None = None
    ) -> Dataset:
        """An endless stream of random int64 values in ``[0, 2**32)``, tf.data's range (not its values).

        >>> a = [int(x) for x in Dataset.random(seed=4).take(3)]
        >>> a == [int(x) for x in Dataset.random(seed=4).take(3)], len(set(a))
        (True, 3)
        """
        return Dataset(RandomNode(seed, rerandomize_each_iteration))

    @staticmethod
    def counter(start: int = 0, step: int = 1, dtype: Any = "int64", name: str | None = None) -> Dataset:
        """``start, start + step, ...`` forever (cardinality ``INFINITE_CARDINALITY``).

        >>> [int(x) for x in Dataset.counter(start=2, step=5).take(3)]
        [2, 7, 12]
        """
        return Dataset(CounterNode(start, step, dtype))

    def get_single_element(self, name: str | None = None) -> Any:
        """The dataset's only element; InvalidArgumentError if it has none or more than one.

        >>> Dataset.range(5).batch(5).get_single_element().tolist()
        [0, 1, 2, 3, 4]
        """
        it = iter(self)
        try:
            try:
                element = next(it)
            except StopIteration:
                raise InvalidArgumentError("get_single_element: the dataset was empty") from None
            try:
                next(it)
            except StopIteration:
                return element
            raise InvalidArgumentError(
                "get_single_element: the dataset had more than one element; use take(1) or batch first"
            )
        finally:
            it.close()

    def save(
        self,
        path: Any,
        compression: str | None = None,
        shard_func: Callable | None = None,
        checkpoint_args: Any = None,
    ) -> None:
        """Write every element under directory ``path`` (TFRecord shards and a spec file, see
        ``headrace.io.saved``); ``shard_func(element)`` picks each element's shard.
        ``checkpoint_args`` is accepted and ignored (a save is not resumable).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "saved")
        >>> Dataset.range(4).map(lambda x: {"x": x, "sq": x * x}).save(path)
        >>> [int(e["sq"]) for e in Dataset.load(path)]
        [0, 1, 4, 9]
        """
        it = iter(self)
        try:
            saved.save(it, path, compression, shard_func)
        finally:
            it.close()

    @staticmethod
    def load(
        path: Any,
        element_spec: Any = None,
        compression: str | None = None,
        reader_func: Callable | None = None,
    ) -> Dataset:
        """The dataset written by ``save`` at ``path``. Shards are read one after another in shard order,
        or as ``reader_func(dataset_of_shard_datasets)`` decides.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "saved")
        >>> Dataset.range(6).save(path, shard_func=lambda x: x % 2)
        >>> [int(x) for x in Dataset.load(path)]
        [0, 2, 4, 1, 3, 5]
        >>> [int(x) for x in Dataset.load(path, reader_func=lambda shards: shards.interleave(lambda s: s))]
        [0, 1, 2, 3, 4, 5]
        """
        meta = saved.read_meta(path)
        if (
            compression is not None
            and saved.normalize_compression(compression, "compression") != meta["compression"]
        ):
            raise InvalidArgumentError(
                f"load: compression={compression!r} but {path!r} was saved with {meta['compression'] or 'none'}; "
                "leave compression=None to use the saved one"
            )
        stored_spec = None if meta["element_spec"] is None else saved.decode_spec(meta["element_spec"])
        spec = stored_spec if element_spec is None else element_spec
        shards = [
            TFRecordDataset(saved.shard_path(os.fspath(path), k), meta["compression"], index=False).map(
                saved.decode_saved, name="decode_saved"
            )
            for k in range(meta["num_shards"])
        ]
        if reader_func is not None:
            result = reader_func(Dataset(ElementsNode(shards)))
            if not isinstance(result, Dataset):
                raise InvalidArgumentError(
                    f"load: reader_func must return a Dataset, got {type(result).__name__}"
                )
            return result
        if not shards:
            return Dataset(ElementsNode([], spec))
        out = shards[0]
        for shard in shards[1:]:
            out = out.concatenate(shard)
        return out

    def snapshot(
        self,
        path: Any,
        compression: str | None = "AUTO",
        reader_func: Callable | None = None,
        shard_func: Callable | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Persist the elements of the first complete pass under directory ``path`` and read them on
        later runs: ``cache`` to a file in ``path``, keyed by the pipeline's fingerprint, so a
        changed pipeline writes a new snapshot. ``compression``, ``reader_func`` and ``shard_func`` are
        accepted for tf.data compatibility and not used.

        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> [int(x) for x in Dataset.range(3).snapshot(folder)], len(os.listdir(folder)) > 0
        ([0, 1, 2], True)
        """
        path = os.fspath(path)
        os.makedirs(path, exist_ok=True)
        return Dataset(CacheNode(self.node, os.path.join(path, "snapshot.hrcache"), name))

    def assert_cardinality(self, expected_cardinality: int, name: str | None = None) -> Dataset:
        """The same elements, with ``cardinality()`` set to ``expected_cardinality``; iteration raises
        ``CardinalityMismatchError`` if the count turns out different (as
        ``tf.data.experimental.assert_cardinality``).

        >>> Dataset.range(10).filter(lambda x: x < 5).assert_cardinality(5).cardinality()
        5
        """
        return Dataset(AssertCardinalityNode(self.node, expected_cardinality, name))

    def rejection_resample(
        self,
        class_func: Callable,
        target_dist: Any,
        initial_dist: Any = None,
        seed: int | None = None,
        name: str | None = None,
    ) -> Dataset:
        """``(class, element)`` pairs, elements dropped at random so that classes (``class_func(element)``,
        an int) follow ``target_dist``; ``initial_dist`` is the input's, estimated when None.

        >>> ds = Dataset.range(4000).rejection_resample(lambda x: x % 4 // 3, [0.5, 0.5], seed=1)
        >>> counts = [0, 0]
        >>> for label, _ in ds:
        ...     counts[label] += 1
        >>> 0.8 < counts[0] / counts[1] < 1.25
        True
        """
        return Dataset(RejectionResampleNode(self.node, class_func, target_dist, initial_dist, seed, name))

    def fingerprint(self) -> Any:
        """A uint64 identifying the pipeline: equal for pipelines built the same way (same stages,
        arguments and function code), different when any of them changes.

        >>> def pipeline(offset):
        ...     return Dataset.range(3).map(lambda x: x + offset)
        >>> bool(pipeline(1).fingerprint() == pipeline(1).fingerprint()), bool(pipeline(1).fingerprint() == pipeline(2).fingerprint())
        (True, False)
        """
        import numpy as np  # noqa: PLC0415

        return np.uint64(int(pipeline_fingerprint(self.node)[:16], 16))


def TFRecordDataset(  # noqa: N802 (tf.data's name: moving a pipeline over is an import change)
    filenames: Any,
    compression_type: str | None = None,
    buffer_size: int | None = None,
    num_parallel_reads: int | None = None,
    name: str | None = None,
    *,
    on_corrupt: str = "raise",
    index: Any = None,
    storage_options: dict | None = None,
) -> Dataset:
    """Records (scalar ``bytes``) of TFRecord files, every length and data CRC verified.

    ``filenames``: a path, a list of paths, or a Dataset of path strings; ``protocol://`` paths go
    through fsspec, with ``storage_options`` (credentials, endpoint; see docs/remote_storage.md) and
    transient read errors retried. ``compression_type``: None/"", "GZIP" or "ZLIB". ``num_parallel_reads=k`` reads
    ``k`` files round-robin, in tf.data's order, in parallel where reader threads pay (the interleave
    op's parallel iterator: reads that wait or decompress). ``on_corrupt``: "raise"
    (a ``RecordError`` naming file, record, offset and kind), "skip_record" or "skip_file" (logged,
    counted in the stage's counters). ``index``: sidecar indexes give exact ``cardinality()`` and
    make ``skip(n)`` a seek; None uses fresh ones when present, "build" builds missing or stale ones,
    "require" refuses to start without them, False ignores them. See docs/io.md.

    >>> import os, tempfile, headrace as hr
    >>> path = os.path.join(tempfile.mkdtemp(), "r.tfrecord")
    >>> with hr.io.TFRecordWriter(path) as writer:
    ...     for i in range(5):
    ...         writer.write(b"record %d" % i)
    >>> [bytes(r) for r in TFRecordDataset(path).skip(3)]
    [b'record 3', b'record 4']
    """
    source = filenames.node if isinstance(filenames, Dataset) else filenames
    return Dataset(
        TFRecordNode(
            source,
            compression_type,
            buffer_size,
            num_parallel_reads,
            on_corrupt,
            index,
            name,
            storage_options,
        )
    )
