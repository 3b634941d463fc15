"""crop_and_resize."""

from __future__ import annotations

import numpy as np
import pytest

import headrace.image as hi
from headrace.core.errors import InvalidArgumentError
from tests.image.conftest import random_image


def test_whole_box_equals_align_corners_resize():
    image = random_image((2, 9, 11, 3), np.float32)
    out = hi.crop_and_resize(image, [[0, 0, 1, 1], [0, 0, 1, 1]], [0, 1], (5, 6))
    expected = hi.resize(image, (5, 6), align_corners=True, half_pixel_centers=False)
    np.testing.assert_allclose(out, expected, atol=1e-6)


def test_sub_box_flip_and_extrapolation_by_hand():
    image = np.arange(16, dtype=np.uint8).reshape(1, 4, 4, 1)
    # rows 1..2 and columns 1..3 in pixel units: a box of the normalised corners /3
    out = hi.crop_and_resize(image, [[1 / 3, 1 / 3, 2 / 3, 1.0]], [0], (2, 3))
    np.testing.assert_allclose(out[0, :, :, 0], [[5, 6, 7], [9, 10, 11]], atol=1e-5)
    flipped = hi.crop_and_resize(image, [[1.0, 0.0, 0.0, 1.0]], [0], (4, 4))
    np.testing.assert_allclose(flipped[0, :, :, 0], image[0, ::-1, :, 0], atol=1e-5)
    outside = hi.crop_and_resize(image, [[-1.0, 0.0, 1.0, 1.0]], [0], (3, 4), extrapolation_value=-7)
    assert outside[0, 0, :, 0].tolist() == [-7.0] * 4  # sample row -3: outside the image
    assert outside.dtype == np.float32


def test_nearest_and_box_indices():
    image = np.stack([np.full((3, 3, 1), v, np.float32) for v in (1, 2, 3)])
    out = hi.crop_and_resize(image, [[0, 0, 1, 1]] * 3, [2, 0, 2], (2, 2), method="nearest")
    assert out[:, 0, 0, 0].tolist() == [3.0, 1.0, 3.0]
    assert hi.crop_and_resize(image, np.zeros((0, 4)), np.zeros(0, np.int32), (2, 2)).shape == (0, 2, 2, 1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"boxes": [[0, 0, 1]]}, r"\[num_boxes, 4\]"),
        ({"box_indices": [0, 0]}, "box_indices has shape"),
        ({"box_indices": [2]}, r"box_indices\[0\]=2 is not an image of the batch \(size 2\)"),
        ({"crop_size": (0, 2)}, "crop_size"),
        ({"method": "bicubic"}, "method='bicubic'"),
        ({"image": np.zeros((4, 4, 1))}, "rank 4"),
    ],
)
def test_errors(kwargs, match):
    arguments = {
        "image": np.zeros((2, 4, 4, 1)),
        "boxes": [[0, 0, 1, 1]],
        "box_indices": [0],
        "crop_size": (2, 2),
    }
    with pytest.raises(InvalidArgumentError, match=match):
        hi.crop_and_resize(**{**arguments, **kwargs})
