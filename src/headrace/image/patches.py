"""``extract_patches``: every ``size`` window of an image batch, flattened into the channel axis (tf's).

Output ``[batch, out_rows, out_cols, size_rows * size_cols * depth]``, each patch in (row, column,
channel) order; ``rates`` dilate the window (``rate - 1`` pixels skipped between taps); ``SAME``
zero-pads so that ``out = ceil(in / stride)``, ``VALID`` keeps windows inside the image.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ._checks import as_image


def _four(value: Any, fn: str, name: str) -> tuple[int, int]:
    array = np.asarray(value)
    if (
        array.shape != (4,)
        or array.dtype.kind not in "ui"
        or array[0] != 1
        or array[3] != 1
        or np.any(array < 1)
    ):
        raise InvalidArgumentError(
            f"{fn}: {name}={value!r} is not allowed: [1, rows, cols, 1] with ints >= 1"
        )
    return int(array[1]), int(array[2])


def _output_and_padding(size: int, window: int, stride: int, padding: str) -> tuple[int, int]:
    if padding == "VALID":
        return -(-(size - window + 1) // stride), 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + window - size, 0) // 2


def extract_patches(images: Any, sizes: Any, strides: Any, rates: Any, padding: str, name: str | None = None):
    """Patches of ``sizes=[1, rows, cols, 1]`` every ``strides``, dilated by ``rates``; ``padding`` SAME or VALID.

    >>> images = np.arange(16).reshape(1, 4, 4, 1)
    >>> out = extract_patches(images, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    >>> out.shape, out[0, 0, 1].tolist()
    ((1, 2, 2, 4), [2, 3, 6, 7])
    """
    fn = "extract_patches"
    batch = as_image(images, fn, ranks=(4,), numeric=False)
    size_rows, size_cols = _four(sizes, fn, "sizes")
    stride_rows, stride_cols = _four(strides, fn, "strides")
    rate_rows, rate_cols = _four(rates, fn, "rates")
    mode = str(padding).upper()
    if mode not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"{fn}: padding={padding!r} is not allowed: 'SAME' or 'VALID'")
    n, height, width, depth = batch.shape
    window_rows = size_rows + (size_rows - 1) * (rate_rows - 1)
    window_cols = size_cols + (size_cols - 1) * (rate_cols - 1)
    if mode == "VALID" and (window_rows > height or window_cols > width):
        raise InvalidArgumentError(
            f"{fn}: the {window_rows}x{window_cols} window (sizes dilated by rates) does not fit in images of "
            f"{height}x{width} with padding='VALID'; use smaller sizes or rates, or padding='SAME'"
        )
    out_rows, pad_top = _output_and_padding(height, window_rows, stride_rows, mode)
    out_cols, pad_left = _output_and_padding(width, window_cols, stride_cols, mode)
    out = np.zeros((n, out_rows, out_cols, size_rows, size_cols, depth), dtype=batch.dtype)
    # Pad enough for every tap of every window, then take each tap as one strided slice.
    padded = np.zeros(
        (
            n,
            pad_top + max(height, (out_rows - 1) * stride_rows + window_rows),
            pad_left + max(width, (out_cols - 1) * stride_cols + window_cols),
            depth,
        ),
        dtype=batch.dtype,
    )
    padded[:, pad_top : pad_top + height, pad_left : pad_left + width] = batch
    row_span = (out_rows - 1) * stride_rows + 1
    col_span = (out_cols - 1) * stride_cols + 1
    for i in range(size_rows):
        for j in range(size_cols):
            top, left = i * rate_rows, j * rate_cols
            out[:, :, :, i, j] = padded[
                :, top : top + row_span : stride_rows, left : left + col_span : stride_cols
            ]
    return out.reshape(n, out_rows, out_cols, size_rows * size_cols * depth)
