"""Mirroring: ``flip_left_right``, ``flip_up_down``, ``transpose`` and their random versions.

Every function takes one ``(H, W, C)`` image or an ``(N, H, W, C)`` batch. The deterministic flips
return numpy views (no copy), as slicing does; the random ones decide per image of a batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.trace_hook import traceable
from ._checks import as_image, resolve_rng
from ._compiled import kernels

#: dtypes the compiled flip takes (the warm-up compiles these); others go through numpy
_COMPILED = (np.dtype(np.uint8), np.dtype(np.float32))


@traceable("image.flip_left_right")
def flip_left_right(image: Any) -> np.ndarray:
    """Mirror horizontally (reverse the width axis); a view of the input.

    >>> flip_left_right(np.arange(3).reshape(1, 3, 1))[0, :, 0].tolist()
    [2, 1, 0]
    """
    return as_image(image, "flip_left_right", numeric=False)[..., ::-1, :]


@traceable("image.flip_up_down")
def flip_up_down(image: Any) -> np.ndarray:
    """Mirror vertically (reverse the height axis); a view of the input.

    >>> flip_up_down(np.arange(3).reshape(3, 1, 1))[:, 0, 0].tolist()
    [2, 1, 0]
    """
    return as_image(image, "flip_up_down", numeric=False)[..., ::-1, :, :]


@traceable("image.transpose")
def transpose(image: Any) -> np.ndarray:
    """Swap height and width; a view of the input.

    >>> transpose(np.zeros((2, 5, 3))).shape
    (5, 2, 3)
    """
    array = as_image(image, "transpose", numeric=False)
    return np.swapaxes(array, -3, -2)


def flip_rows(batch: np.ndarray, flips: Any, up_down: bool = False) -> np.ndarray:
    """A new ``(N, H, W, C)`` array: ``batch[n]`` mirrored where ``flips[n]`` (along the height axis
    when ``up_down``, else the width), copied as is elsewhere. One compiled pass for uint8 and float32
    (numpy copies a reversed view a few bytes at a time: 16-35 us for a 64 px RGB image, against 4).

    >>> flip_rows(np.arange(6).reshape(2, 1, 3, 1), np.array([True, False]))[:, 0, :, 0].tolist()
    [[2, 1, 0], [3, 4, 5]]
    """
    flips = np.asarray(flips, dtype=np.bool_)
    if batch.dtype in _COMPILED:
        out = np.empty(batch.shape, dtype=batch.dtype)
        kernels().flip_images(batch, flips, bool(up_down), out)
        return out
    out = batch.copy()
    chosen = np.flatnonzero(flips)
    if chosen.size:
        out[chosen] = batch[chosen, ::-1] if up_down else batch[chosen, :, ::-1]
    return out


@traceable("image.random_flip_left_right")
def random_flip_left_right(image: Any, seed: int | None = None, *, rng: np.random.Generator | None = None):
    """Mirror horizontally with probability 1/2, drawn per image of a batch.

    Pass ``rng`` (``map(..., seed=S)`` provides one) for reproducible results; ``seed`` is
    tf.image's spelling of ``rng=np.random.default_rng(seed)``.

    >>> image = np.arange(4).reshape(1, 4, 1)
    >>> out = random_flip_left_right(image, rng=np.random.default_rng(0))
    >>> out[0, :, 0].tolist() in ([0, 1, 2, 3], [3, 2, 1, 0])
    True
    """
    fn = "random_flip_left_right"
    array = as_image(image, fn, numeric=False)
    generator = resolve_rng(rng, seed, fn)
    if array.ndim == 3:
        return array[:, ::-1] if generator.random() < 0.5 else array
    return flip_rows(array, generator.random(array.shape[0]) < 0.5)


@traceable("image.random_flip_up_down")
def random_flip_up_down(image: Any, seed: int | None = None, *, rng: np.random.Generator | None = None):
    """Mirror vertically with probability 1/2, drawn per image of a batch.

    >>> batch = np.arange(6).reshape(3, 2, 1, 1)
    >>> out = random_flip_up_down(batch, rng=np.random.default_rng(1))
    >>> sorted(out[i, :, 0, 0].tolist() in ([2 * i, 2 * i + 1], [2 * i + 1, 2 * i]) for i in range(3))
    [True, True, True]
    """
    fn = "random_flip_up_down"
    array = as_image(image, fn, numeric=False)
    generator = resolve_rng(rng, seed, fn)
    if array.ndim == 3:
        return array[::-1] if generator.random() < 0.5 else array
    return flip_rows(array, generator.random(array.shape[0]) < 0.5, up_down=True)
