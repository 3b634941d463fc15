"""extract_patches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace.image as hi
from headrace.core.errors import InvalidArgumentError


@settings(max_examples=50, deadline=None)
@given(
    height=st.integers(1, 9),
    width=st.integers(1, 9),
    size=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    rate=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    padding=st.sampled_from(["SAME", "VALID"]),
)
def test_every_patch_is_the_dilated_window(height, width, size, stride, rate, padding):
    images = np.arange(2 * height * width * 2).reshape(2, height, width, 2) + 1
    window = (size[0] + (size[0] - 1) * (rate[0] - 1), size[1] + (size[1] - 1) * (rate[1] - 1))
    args = ([1, *size, 1], [1, *stride, 1], [1, *rate, 1], padding)
    if padding == "VALID" and (window[0] > height or window[1] > width):
        with pytest.raises(InvalidArgumentError, match="does not fit"):
            hi.extract_patches(images, *args)
        return
    out = hi.extract_patches(images, *args)
    if padding == "SAME":
        rows, cols = -(-height // stride[0]), -(-width // stride[1])
        top = max((rows - 1) * stride[0] + window[0] - height, 0) // 2
        left = max((cols - 1) * stride[1] + window[1] - width, 0) // 2
    else:
        rows, cols = -(-(height - window[0] + 1) // stride[0]), -(-(width - window[1] + 1) // stride[1])
        top = left = 0
    assert out.shape == (2, rows, cols, size[0] * size[1] * 2) and out.dtype == images.dtype
    padded = np.zeros((2, height + 2 * window[0], width + 2 * window[1], 2), images.dtype)
    padded[:, window[0] : window[0] + height, window[1] : window[1] + width] = images
    for r in range(rows):
        for c in range(cols):
            y0 = window[0] - top + r * stride[0]
            x0 = window[1] - left + c * stride[1]
            patch = padded[:, y0 : y0 + window[0] : rate[0], x0 : x0 + window[1] : rate[1]]
            np.testing.assert_array_equal(out[:, r, c], patch.reshape(2, -1))


@pytest.mark.parametrize(
    "args, match",
    [
        (([1, 2, 2], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"), "sizes="),
        (([2, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"), "sizes="),
        (([1, 2, 2, 1], [1, 0, 1, 1], [1, 1, 1, 1], "VALID"), "strides="),
        (([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "FULL"), "padding='FULL'"),
    ],
)
def test_errors(args, match):
    with pytest.raises(InvalidArgumentError, match=match):
        hi.extract_patches(np.zeros((1, 4, 4, 1)), *args)
