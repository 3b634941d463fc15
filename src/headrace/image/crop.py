"""Cropping: ``crop_to_bounding_box``, ``central_crop``, ``resize_with_crop_or_pad``, ``random_crop``.

Deterministic crops return numpy views of the input (no copy). ``random_crop`` of a batch with a
two-number ``size`` draws one window per image.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable
from ._checks import as_image, check_number, check_size, resolve_rng


@traceable("image.crop_to_bounding_box")
def crop_to_bounding_box(
    image: Any, offset_height: int, offset_width: int, target_height: int, target_width: int
) -> np.ndarray:
    """The window of ``target_height x target_width`` pixels whose top-left corner is at the offsets.

    >>> crop_to_bounding_box(np.arange(16).reshape(4, 4, 1), 1, 2, 2, 2)[:, :, 0].tolist()
    [[6, 7], [10, 11]]
    """
    fn = "crop_to_bounding_box"
    array = as_image(image, fn, numeric=False)
    top = check_size(offset_height, fn, "offset_height")
    left = check_size(offset_width, fn, "offset_width")
    height = check_size(target_height, fn, "target_height", minimum=1)
    width = check_size(target_width, fn, "target_width", minimum=1)
    image_height, image_width = array.shape[-3], array.shape[-2]
    if top + height > image_height or left + width > image_width:
        raise InvalidArgumentError(
            f"{fn}: the box rows {top}..{top + height - 1}, columns {left}..{left + width - 1} does not fit in "
            f"an image of height {image_height} and width {image_width} (shape {array.shape}); "
            "use resize_with_crop_or_pad or pad_to_bounding_box to grow the image"
        )
    return array[..., top : top + height, left : left + width, :]


@traceable("image.central_crop")
def central_crop(image: Any, central_fraction: float) -> np.ndarray:
    """The central ``central_fraction`` (in (0, 1]) of the height and width.

    >>> central_crop(np.zeros((10, 8, 3)), 0.5).shape
    (6, 4, 3)
    """
    fn = "central_crop"
    array = as_image(image, fn, numeric=False)
    check_number(
        isinstance(central_fraction, (int, float, np.number)) and 0.0 < central_fraction <= 1.0,
        fn,
        "central_fraction",
        central_fraction,
        "a number in (0, 1]",
    )
    if central_fraction == 1.0:
        return array
    height, width = array.shape[-3], array.shape[-2]
    # tf.image's rounding: the offset is truncated and the size is what remains on both sides.
    top = int((height - height * central_fraction) / 2)
    left = int((width - width * central_fraction) / 2)
    return array[..., top : height - top, left : width - left, :]


@traceable("image.resize_with_crop_or_pad")
def resize_with_crop_or_pad(image: Any, target_height: int, target_width: int) -> np.ndarray:
    """Centre-crop and/or zero-pad to exactly ``target_height x target_width``.

    >>> out = resize_with_crop_or_pad(np.ones((2, 6, 1)), 4, 4)
    >>> out[:, :, 0].tolist()
    [[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]]
    """
    fn = "resize_with_crop_or_pad"
    array = as_image(image, fn, numeric=False)
    target_h = check_size(target_height, fn, "target_height", minimum=1)
    target_w = check_size(target_width, fn, "target_width", minimum=1)
    height, width = array.shape[-3], array.shape[-2]
    crop_top, crop_left = max((height - target_h) // 2, 0), max((width - target_w) // 2, 0)
    cropped = array[
        ..., crop_top : crop_top + min(height, target_h), crop_left : crop_left + min(width, target_w), :
    ]
    if target_h <= height and target_w <= width:
        return cropped
    pad_top, pad_left = max((target_h - height) // 2, 0), max((target_w - width) // 2, 0)
    out = np.zeros((*array.shape[:-3], target_h, target_w, array.shape[-1]), dtype=array.dtype)
    out[..., pad_top : pad_top + cropped.shape[-3], pad_left : pad_left + cropped.shape[-2], :] = cropped
    return out


@traceable("image.random_crop")
def random_crop(
    value: Any, size: Any, seed: int | None = None, *, rng: np.random.Generator | None = None
) -> np.ndarray:
    """A random window of ``size``: ``(height, width)`` per image, or tf's full-rank size.

    With ``(height, width)``, each image of an ``(N, H, W, C)`` batch gets its own window. A size of
    the value's full rank (tf.image's form, e.g. ``(h, w, C)``) cuts one window out of the whole array.

    >>> out = random_crop(np.zeros((8, 8, 3)), (5, 4), rng=np.random.default_rng(0))
    >>> out.shape
    (5, 4, 3)
    """
    fn = "random_crop"
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    if (
        array.ndim == 3
        and type(size) in (tuple, list)
        and len(size) == 2
        and type(size[0]) is int
        and type(size[1]) is int
        and array.dtype.kind in "uifb"
    ):  # one image and (height, width): the checks below, without building arrays for them
        height, width = size
        image_height, image_width = array.shape[0], array.shape[1]
        if (
            rng is None
            and type(seed) is int
            and seed >= 0
            and 0 < height <= image_height
            and 0 < width <= image_width
        ):
            top, left = _seeded_window(seed, image_height - height + 1, image_width - width + 1, fn)
            return array[top : top + height, left : left + width]
        generator = resolve_rng(rng, seed, fn)
        if not (0 < height <= image_height and 0 < width <= image_width):
            raise _does_not_fit(fn, height, width, array)
        top = int(generator.integers(0, image_height - height + 1))
        left = int(generator.integers(0, image_width - width + 1))
        return array[top : top + height, left : left + width]
    if (
        array.ndim == 3
        and type(size) in (tuple, list)
        and len(size) == 3
        and type(size[0]) is int
        and type(size[1]) is int
        and type(size[2]) is int
        and array.dtype.kind in "uifb"
        and 0 <= size[0] <= array.shape[0]
        and 0 <= size[1] <= array.shape[1]
        and 0 <= size[2] <= array.shape[2]
    ):  # one image and tf's full-rank (h, w, c): the general path below, without arrays for its checks
        generator = resolve_rng(rng, seed, fn)
        (height, width, depth), (image_height, image_width, image_depth) = size, array.shape
        # A dimension kept whole draws nothing: integers(0, 1) leaves the generator as it was.
        top = int(generator.integers(0, image_height - height + 1)) if height < image_height else 0
        left = int(generator.integers(0, image_width - width + 1)) if width < image_width else 0
        first = int(generator.integers(0, image_depth - depth + 1)) if depth < image_depth else 0
        return array[top : top + height, left : left + width, first : first + depth]
    if array.dtype == object:
        raise InvalidArgumentError(f"{fn}: value has dtype object; expected a numeric array")
    sizes = np.asarray(size)
    if sizes.ndim != 1 or sizes.dtype.kind not in "ui" or not (len(sizes) == 2 or len(sizes) == array.ndim):
        raise InvalidArgumentError(
            f"{fn}: size={size!r} is not allowed for a value of shape {array.shape}: (height, width), or "
            f"{array.ndim} ints (one per dimension, as tf.image.random_crop)"
        )
    generator = resolve_rng(rng, seed, fn)
    if len(sizes) == array.ndim and not (len(sizes) == 2 and array.ndim in (3, 4)):
        limits = np.asarray(array.shape) - sizes
        if np.any(sizes < 0) or np.any(limits < 0):
            raise InvalidArgumentError(
                f"{fn}: size={tuple(sizes.tolist())} does not fit in a value of shape {array.shape}; every size "
                "must be between 0 and the dimension"
            )
        offsets = [int(generator.integers(0, limit + 1)) for limit in limits]
        return array[tuple(slice(o, o + s) for o, s in zip(offsets, sizes.tolist()))]
    array = as_image(array, fn, numeric=False)
    height, width = int(sizes[0]), int(sizes[1])
    image_height, image_width = array.shape[-3], array.shape[-2]
    if not (0 < height <= image_height and 0 < width <= image_width):
        raise _does_not_fit(fn, height, width, array)
    if array.ndim == 3:
        top = int(generator.integers(0, image_height - height + 1))
        left = int(generator.integers(0, image_width - width + 1))
        return array[top : top + height, left : left + width]
    n = array.shape[0]
    tops = generator.integers(0, image_height - height + 1, size=n)
    lefts = generator.integers(0, image_width - width + 1, size=n)
    out = np.empty((n, height, width, array.shape[-1]), dtype=array.dtype)
    # One slice copy per image: whole rows move with memcpy, faster than a per-pixel fancy-index gather.
    for i, (top, left) in enumerate(zip(tops.tolist(), lefts.tolist())):
        out[i] = array[i, top : top + height, left : left + width]
    return out


@functools.lru_cache(maxsize=1024)
def _seeded_window(seed: int, rows: int, columns: int, fn: str) -> tuple[int, int]:
    """``(top, left)`` of a crop seeded with ``seed``: ``default_rng(seed)``'s first two draws, the same
    every call, so drawn once per seed and range (making the generator costs more than the crop)."""
    generator = resolve_rng(None, seed, fn)
    return int(generator.integers(0, rows)), int(generator.integers(0, columns))


def _does_not_fit(fn: str, height: int, width: int, array: np.ndarray) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"{fn}: size=({height}, {width}) does not fit in images of height {array.shape[-3]} and width "
        f"{array.shape[-2]} (shape {array.shape}); pad first (pad or resize_with_crop_or_pad)"
    )
