"""Padding: ``pad_to_bounding_box`` (zeros, tf.image) and ``pad`` (constant, reflect, symmetric, edge)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable
from ._checks import as_image, check_size

# tf.pad's names (REFLECT leaves out the edge pixel, SYMMETRIC repeats it) and numpy's.
_MODES: dict[str, Literal["constant", "reflect", "symmetric", "edge"]] = {
    "constant": "constant",
    "reflect": "reflect",
    "symmetric": "symmetric",
    "edge": "edge",
}


@traceable("image.pad_to_bounding_box")
def pad_to_bounding_box(
    image: Any, offset_height: int, offset_width: int, target_height: int, target_width: int
) -> np.ndarray:
    """Place the image at the offsets inside a zero canvas of ``target_height x target_width``.

    >>> pad_to_bounding_box(np.ones((1, 2, 1), np.uint8), 1, 0, 3, 3)[:, :, 0].tolist()
    [[0, 0, 0], [1, 1, 0], [0, 0, 0]]
    """
    fn = "pad_to_bounding_box"
    array = as_image(image, fn, numeric=False)
    top = check_size(offset_height, fn, "offset_height")
    left = check_size(offset_width, fn, "offset_width")
    height = check_size(target_height, fn, "target_height")
    width = check_size(target_width, fn, "target_width")
    image_height, image_width = array.shape[-3], array.shape[-2]
    if top + image_height > height or left + image_width > width:
        raise InvalidArgumentError(
            f"{fn}: an image of height {image_height} and width {image_width} at offset ({top}, {left}) "
            f"needs a canvas of at least {top + image_height}x{left + image_width}, got {height}x{width}; "
            "use resize_with_crop_or_pad to crop as well"
        )
    out = np.zeros((*array.shape[:-3], height, width, array.shape[-1]), dtype=array.dtype)
    out[..., top : top + image_height, left : left + image_width, :] = array
    return out


def _paddings(padding: Any, fn: str, rank: int = 3) -> tuple[tuple[int, int], tuple[int, int]]:
    try:
        values = np.asarray(padding)
    except ValueError:  # ragged nesting
        values = np.asarray(0.5)
    if values.dtype.kind in "ui" and values.shape == (rank, 2) and rank > 2:
        # tf.pad's form, one (before, after) row per dimension: only height and width may be padded
        others = np.delete(values, [rank - 3, rank - 2], axis=0)
        if np.any(others != 0):
            raise InvalidArgumentError(
                f"{fn}: padding={values.tolist()} pads a dimension other than height and width; only the "
                "rows of height and width may be non-zero (use headrace.pad for other dimensions)"
            )
        values = values[rank - 3 : rank - 1]
    if values.dtype.kind in "ui" and values.shape in ((), (2,), (2, 2)) and np.all(values >= 0):
        grid = np.broadcast_to(values.reshape(values.shape + (1,) * (2 - values.ndim)), (2, 2))
        return (int(grid[0, 0]), int(grid[0, 1])), (int(grid[1, 0]), int(grid[1, 1]))
    raise InvalidArgumentError(
        f"{fn}: padding={padding!r} is not allowed: an int (every side), (height, width) or "
        "((top, bottom), (left, right)) of ints >= 0"
    )


def pad(image: Any, padding: Any, mode: str = "constant", constant_values: float = 0) -> np.ndarray:
    """Pad the height and width: ``padding`` is an int, ``(height, width)``, ``((top, bottom), (left, right))``
    or tf.pad's one row per dimension (``[[0, 0], [top, bottom], [left, right], [0, 0]]``).

    ``mode`` is ``constant`` (``constant_values``: a scalar or one per channel), ``reflect`` (dcb|abcd|cba, tf's REFLECT),
    ``symmetric`` (cba|abcd|dcb, tf's SYMMETRIC) or ``edge`` (aaa|abcd|ddd); tf's upper-case names work.

    >>> pad(np.arange(3).reshape(1, 3, 1), (0, 2), mode="reflect")[0, :, 0].tolist()
    [2, 1, 0, 1, 2, 1, 0]
    """
    fn = "pad"
    array = as_image(image, fn, numeric=False)
    key = str(mode).lower()
    if key not in _MODES:
        raise InvalidArgumentError(
            f"{fn}: mode={mode!r} is not allowed: 'constant', 'reflect', 'symmetric' or 'edge'"
        )
    (top, bottom), (left, right) = _paddings(padding, fn, array.ndim)
    if key != "constant" and 0 in array.shape[-3:-1] and top + bottom + left + right:
        raise InvalidArgumentError(f"{fn}: mode={mode!r} cannot pad an empty image (shape {array.shape})")
    widths = [(0, 0)] * (array.ndim - 3) + [(top, bottom), (left, right), (0, 0)]
    if key == "constant":
        out = np.empty(
            (
                *array.shape[:-3],
                array.shape[-3] + top + bottom,
                array.shape[-2] + left + right,
                array.shape[-1],
            ),
            dtype=array.dtype,
        )
        out[...] = np.asarray(constant_values).astype(array.dtype)
        out[..., top : top + array.shape[-3], left : left + array.shape[-2], :] = array
        return out
    return np.pad(array, widths, mode=_MODES[key])
