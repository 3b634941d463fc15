"""Normalisation: ``per_image_standardization`` (tf.image) and ``normalize`` by a fixed mean and std."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable
from ._checks import as_image
from ._compiled import as_batch, kernels


@traceable("image.per_image_standardization")
def per_image_standardization(image: Any) -> np.ndarray:
    """Scale each image to mean 0 and standard deviation 1 over all its pixels and channels.

    The divisor is ``max(std, 1 / sqrt(pixels * channels))`` so flat images do not divide by zero.
    Integer images are standardised on their raw values (as tf); the result is float32 (float16
    and float64 inputs keep their dtype).

    >>> out = per_image_standardization(np.array([[[0], [2]]], np.uint8))
    >>> out[:, :, 0].tolist()
    [[-1.0, 1.0]]
    """
    fn = "per_image_standardization"
    array = as_image(image, fn)
    dtype = array.dtype if array.dtype in (np.float16, np.float64) else np.dtype(np.float32)
    work = np.float64 if dtype == np.float64 else np.float32
    flt = array.astype(work, copy=False)
    count = int(np.prod(array.shape[-3:]))
    mean = flt.mean(axis=(-3, -2, -1), keepdims=True, dtype=work)
    centred = flt - mean
    std = np.sqrt(np.mean(np.square(centred), axis=(-3, -2, -1), keepdims=True, dtype=work))
    floor = work(1.0 / np.sqrt(max(count, 1)))
    return (centred / np.maximum(std, floor)).astype(dtype, copy=False)


def normalize(image: Any, mean: Any, std: Any, dtype: Any = np.float32) -> np.ndarray:
    """``(image - mean) / std`` with a scalar or one value per channel, in the image's own units.

    For uint8 images give 0..255-scale values, e.g. ImageNet's ``mean=(123.675, 116.28, 103.53)``,
    ``std=(58.395, 57.12, 57.375)``. One multiply-add pass, computed in ``dtype`` (float32).

    >>> normalize(np.array([[[10, 20]]], np.uint8), mean=(10, 10), std=(1, 5))[0, 0].tolist()
    [0.0, 2.0]
    """
    fn = "normalize"
    array = as_image(image, fn)
    channels = array.shape[-1]
    try:  # the constants of a pipeline repeat: compute and check them once
        scale, offset = _constants(_key(mean), _key(std), channels, np.dtype(dtype))
    except TypeError:  # unhashable arguments
        scale, offset = _constants.__wrapped__(mean, std, channels, np.dtype(dtype))
    if scale.dtype == np.float32 and array.dtype in (np.uint8, np.float32):
        batch = as_batch(array)
        out = np.empty(batch.shape, dtype=np.float32)
        kernels().normalize(batch, scale, offset, out)
        return out if array.ndim == 4 else out[0]
    return normalize_reference(array, scale, offset)


def _key(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return tuple(value.ravel().tolist()) if value.ndim else value.item()
    if isinstance(value, list):
        return tuple(value)
    return value


@functools.lru_cache(maxsize=64)
def _constants(mean: Any, std: Any, channels: int, target: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel ``1 / std`` and ``-mean / std`` in ``target``, after checking the arguments."""
    fn = "normalize"
    if target.kind != "f":
        raise InvalidArgumentError(f"normalize: dtype={target} is not allowed: a float dtype")
    mean_values = np.asarray(mean, dtype=np.float64)
    std_values = np.asarray(std, dtype=np.float64)
    for label, values in (("mean", mean_values), ("std", std_values)):
        if values.ndim > 1 or (values.ndim == 1 and values.shape[0] not in (1, channels)):
            raise InvalidArgumentError(
                f"{fn}: {label} has shape {values.shape} for an image with {channels} channels; "
                f"expected a scalar or {channels} values"
            )
    if np.any(std_values == 0) or not np.all(np.isfinite(std_values)):
        raise InvalidArgumentError(f"{fn}: std={std!r} is not allowed: finite and non-zero")
    scale = np.empty(channels, dtype=target)
    offset = np.empty(channels, dtype=target)
    scale[...] = (1.0 / std_values).astype(target)
    offset[...] = (-mean_values / std_values).astype(target)
    scale.flags.writeable = offset.flags.writeable = False
    return scale, offset


def normalize_reference(array: np.ndarray, scale: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Numpy form of the normalize kernel: ``array * scale + offset`` in the dtype of ``scale``."""
    out = np.multiply(array, scale, dtype=scale.dtype)
    out += offset
    return out
