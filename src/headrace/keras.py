"""Keras 3: ``model.fit(dataset)``, ``evaluate`` and ``predict`` take headrace Datasets, on every backend.

Importing this module teaches Keras one more input type: Keras picks a data adapter for each input
(``keras.src.trainers.data_adapters.get_data_adapter``) and has no public registry, so the import
wraps that function: headrace Datasets get a :class:`DatasetAdapter`, every other input goes to Keras
as before. The adapter reports ``cardinality()`` as the number of batches, so ``fit`` knows where an
epoch ends without ``steps_per_epoch``; each epoch is a fresh pass (reshuffled as ``iter(ds)`` is).
An infinite dataset needs ``steps_per_epoch`` as with tf.data. Without the import, pass
``DatasetAdapter(ds)`` where Keras takes ``x``. See docs/keras.md.

Elements are ``x``, ``(x, y)`` or ``(x, y, sample_weight)``, batched, as Keras expects of tf.data.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from keras.src.trainers import data_adapters
from keras.src.trainers.data_adapters import data_adapter_utils
from keras.src.trainers.data_adapters.data_adapter import DataAdapter
from keras.src.trainers.data_adapters.generator_data_adapter import GeneratorDataAdapter

from .core.errors import InvalidArgumentError
from .core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .core.structure import map_structure
from .dataset import Dataset
from .iterator import Iterator

__all__ = ["DatasetAdapter", "install"]


def _keras_batch(batch: Any) -> Any:
    # Keras unpacks tuples into (x, y, sample_weight); lists and dicts are one input.
    return map_structure(lambda leaf: np.asarray(leaf) if isinstance(leaf, np.generic) else leaf, batch)


class _Epochs:
    """Re-iterable: each ``iter`` is a new epoch of the dataset (Keras's torch path iterates it per epoch)."""

    def __init__(self, dataset: Dataset):
        self.dataset = dataset

    def __iter__(self):
        for batch in self.dataset:
            yield _keras_batch(batch)


class DatasetAdapter(DataAdapter):
    """The Keras data adapter of a headrace Dataset of batches."""

    def __init__(self, dataset: Dataset):
        if not isinstance(dataset, Dataset):
            raise InvalidArgumentError(
                f"DatasetAdapter takes a headrace Dataset, got {type(dataset).__name__}"
            )
        self.dataset = dataset
        n = dataset.cardinality()
        self._num_batches = None if n in (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY) else n

    def get_numpy_iterator(self):
        return iter(_Epochs(self.dataset))

    def get_jax_iterator(self):
        return self.get_numpy_iterator()  # Keras's JAX trainer puts numpy batches on devices itself

    def get_tf_dataset(self):
        from .tf import to_tf  # noqa: PLC0415 (TensorFlow only on that backend)

        return to_tf(self.dataset, batch_axis_to_none=True)  # as Keras does with its inputs

    def get_torch_dataloader(self):
        return data_adapter_utils.get_torch_dataloader(_Epochs(self.dataset))

    @property
    def num_batches(self) -> int | None:
        return self._num_batches

    @property
    def batch_size(self) -> int | None:
        return None  # batches are formed by the pipeline; Keras only shows it

    @property
    def has_partial_batch(self) -> bool | None:
        return None

    @property
    def partial_batch_size(self) -> int | None:
        return None


def _refuse(argument: str) -> None:
    raise ValueError(
        f"When providing `x` as a headrace Dataset, `{argument}` should not be passed: put it in the "
        "dataset's elements, as (x, y, sample_weight)"
    )


def install() -> None:
    """Make Keras accept headrace Datasets and Iterators as ``x`` (done on import; idempotent)."""
    original = data_adapters.get_data_adapter
    if getattr(original, "headrace_wrapped", None) is not None:
        return

    def get_data_adapter(x, y=None, sample_weight=None, *args, **kwargs):
        if isinstance(x, (Dataset, Iterator)):
            for name, value in (("y", y), ("sample_weight", sample_weight)):
                if value is not None:
                    _refuse(name)
            if kwargs.get("class_weight") is not None:
                _refuse("class_weight")
            if isinstance(x, Iterator):  # one pass that goes on from where it stands, as a generator
                return GeneratorDataAdapter(_keras_batch(batch) for batch in x)
            return DatasetAdapter(x)
        return original(x, y, sample_weight, *args, **kwargs)

    get_data_adapter.headrace_wrapped = original  # type: ignore[attr-defined]  # a function attribute
    get_data_adapter.__doc__ = original.__doc__
    data_adapters.get_data_adapter = get_data_adapter


install()
