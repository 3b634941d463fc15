"""``crop_and_resize``: boxes cut from a batch of images and resampled to one size (tf's CropAndResize).

A box ``[y1, x1, y2, x2]`` is in normalised coordinates where 0 and 1 are the centres of the first and
last pixel, so output pixel ``i`` of ``crop_height`` samples row ``y1 * (H - 1) + i * (y2 - y1) * (H - 1)
/ (crop_height - 1)`` (the middle of the box for a height of 1); samples outside the image take
``extrapolation_value``. Boxes may be flipped (y1 > y2) or reach outside 0..1. float32 arithmetic in
tf's order, so bilinear results equal TensorFlow's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ._checks import as_image


def _positions(low: np.ndarray, high: np.ndarray, size: int, out: int) -> np.ndarray:
    """``(boxes, out)`` float32 sample positions along one axis of an image of ``size`` pixels."""
    last = np.float32(size - 1)
    if out > 1:
        scale = (high - low) * last / np.float32(out - 1)
        return low[:, None] * last + np.arange(out, dtype=np.float32)[None, :] * scale[:, None]
    return (np.float32(0.5) * (low + high) * last)[:, None]


def crop_and_resize(
    image: Any,
    boxes: Any,
    box_indices: Any,
    crop_size: Any,
    method: str = "bilinear",
    extrapolation_value: float = 0.0,
    name: str | None = None,
) -> np.ndarray:
    """``(num_boxes, crop_height, crop_width, C)`` float32 crops of ``image[box_indices[i]]`` at ``boxes[i]``.

    >>> image = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    >>> crop_and_resize(image, [[0.0, 0.0, 1.0, 1.0]], [0], (2, 2))[0, :, :, 0].tolist()
    [[0.0, 2.0], [6.0, 8.0]]
    >>> crop_and_resize(image, [[0.5, 0.5, 0.5, 0.5]], [0], (1, 1)).item()
    4.0
    """
    fn = "crop_and_resize"
    batch = as_image(image, fn, ranks=(4,))
    box_array = np.asarray(boxes, dtype=np.float32)
    if box_array.ndim != 2 or box_array.shape[1] != 4:
        raise InvalidArgumentError(
            f"{fn}: boxes has shape {box_array.shape}; expected [num_boxes, 4] of [y1, x1, y2, x2]"
        )
    indices = np.asarray(box_indices)
    if indices.shape != (len(box_array),) or (indices.size and indices.dtype.kind not in "ui"):
        raise InvalidArgumentError(
            f"{fn}: box_indices has shape {indices.shape}; expected ({len(box_array)},) ints, one image index per box"
        )
    indices = indices.astype(np.int64)
    if indices.size and (indices.min() < 0 or indices.max() >= batch.shape[0]):
        bad = int(np.flatnonzero((indices < 0) | (indices >= batch.shape[0]))[0])
        raise InvalidArgumentError(
            f"{fn}: box_indices[{bad}]={int(indices[bad])} is not an image of the batch (size {batch.shape[0]})"
        )
    size = np.asarray(crop_size)
    if size.shape != (2,) or size.dtype.kind not in "ui" or np.any(size <= 0):
        raise InvalidArgumentError(
            f"{fn}: crop_size={crop_size!r} is not allowed: (crop_height, crop_width), ints > 0"
        )
    if method not in ("bilinear", "nearest"):
        raise InvalidArgumentError(f"{fn}: method={method!r} is not allowed: 'bilinear' or 'nearest'")
    crop_height, crop_width = int(size[0]), int(size[1])
    height, width, channels = batch.shape[1:]
    ys = _positions(box_array[:, 0], box_array[:, 2], height, crop_height)  # (B, ch)
    xs = _positions(box_array[:, 1], box_array[:, 3], width, crop_width)  # (B, cw)
    inside = ((ys >= 0) & (ys <= height - 1))[:, :, None] & ((xs >= 0) & (xs <= width - 1))[:, None, :]
    image_of = indices[:, None, None]
    if method == "nearest":
        # roundf: halves away from zero (positions inside the image are >= 0).
        rows = np.clip(np.floor(ys.astype(np.float64) + 0.5).astype(np.int64), 0, height - 1)
        cols = np.clip(np.floor(xs.astype(np.float64) + 0.5).astype(np.int64), 0, width - 1)
        out = batch[image_of, rows[:, :, None], cols[:, None, :]].astype(np.float32)
    else:
        top = np.floor(ys)
        left = np.floor(xs)
        y_lerp = (ys - top)[:, :, None, None]
        x_lerp = (xs - left)[:, None, :, None]
        top_row = np.clip(top.astype(np.int64), 0, height - 1)[:, :, None]
        bottom_row = np.clip(np.ceil(ys).astype(np.int64), 0, height - 1)[:, :, None]
        left_col = np.clip(left.astype(np.int64), 0, width - 1)[:, None, :]
        right_col = np.clip(np.ceil(xs).astype(np.int64), 0, width - 1)[:, None, :]
        top_left = batch[image_of, top_row, left_col].astype(np.float32)
        top_right = batch[image_of, top_row, right_col].astype(np.float32)
        bottom_left = batch[image_of, bottom_row, left_col].astype(np.float32)
        bottom_right = batch[image_of, bottom_row, right_col].astype(np.float32)
        upper = top_left + (top_right - top_left) * x_lerp
        lower = bottom_left + (bottom_right - bottom_left) * x_lerp
        out = upper + (lower - upper) * y_lerp
    out[~inside] = np.float32(extrapolation_value)
    return out.reshape(len(box_array), crop_height, crop_width, channels)
