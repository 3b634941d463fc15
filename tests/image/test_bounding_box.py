"""sample_distorted_bounding_box / stateless_sample_distorted_bounding_box."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace.core.errors import InvalidArgumentError
from headrace.image import sample_distorted_bounding_box, stateless_sample_distorted_bounding_box

WHOLE = [[[0.0, 0.0, 1.0, 1.0]]]


@settings(max_examples=60, deadline=None)
@given(
    height=st.integers(1, 400),
    width=st.integers(1, 400),
    box=st.lists(st.floats(0, 1, width=32), min_size=4, max_size=4),
    covered=st.floats(0, 1),
    area_low=st.floats(0.01, 1),
    aspect_low=st.floats(0.2, 2),
    seed=st.integers(0, 2**32 - 1),
)
def test_window_is_inside_the_image_and_outputs_agree(
    height, width, box, covered, area_low, aspect_low, seed
):
    y_min, y_max = sorted(box[0::2])
    x_min, x_max = sorted(box[1::2])
    begin, size, bboxes = sample_distorted_bounding_box(
        [height, width, 3],
        [[[y_min, x_min, y_max, x_max]]],
        min_object_covered=covered,
        aspect_ratio_range=(aspect_low, aspect_low * 1.5),
        area_range=(area_low, 1.0),
        rng=np.random.default_rng(seed),
    )
    assert begin.dtype == size.dtype == np.int32 and bboxes.shape == (1, 1, 4) and bboxes.dtype == np.float32
    y, x, _ = begin.tolist()
    h, w, channels = size.tolist()
    assert begin[2] == 0 and channels == -1
    assert 0 <= y and 0 <= x and 1 <= h and 1 <= w and y + h <= height and x + w <= width
    np.testing.assert_allclose(
        bboxes[0, 0], [y / height, x / width, (y + h) / height, (x + w) / width], rtol=1e-6
    )


def test_sampled_windows_follow_the_constraints():
    rng = np.random.default_rng(0)
    box = [[[0.1, 0.2, 0.6, 0.9]]]
    height, width = 375, 500
    object_pixels = (int(0.6 * height) - int(0.1 * height)) * (int(0.9 * width) - int(0.2 * width))
    areas, aspects = [], []
    for _ in range(400):
        begin, size, _ = sample_distorted_bounding_box(
            [height, width, 3], box, min_object_covered=0.5, area_range=(0.08, 1.0), rng=rng
        )
        (y, x, _), (h, w, _) = begin.tolist(), size.tolist()
        if (h, w) == (height, width):
            continue  # the fallback after max_attempts
        areas.append(h * w / (height * width))
        aspects.append(w / h)
        overlap_h = min(y + h, int(0.6 * height)) - max(y, int(0.1 * height))
        overlap_w = min(x + w, int(0.9 * width)) - max(x, int(0.2 * width))
        assert overlap_h * overlap_w / object_pixels >= 0.5
    assert len(areas) > 300
    assert 0.08 <= min(areas) and max(areas) <= 1.0
    # lrintf rounding of the width moves the ratio by at most half a pixel over the height
    assert 0.75 - 0.01 <= min(aspects) and max(aspects) <= 1.33 + 0.01
    assert np.std(areas) > 0.1  # spread over the range, not stuck at one size


def test_distribution_matches_tensorflow_statistics():
    """Mean window over 1500 draws; tf 2.21's means for these arguments were (54, 118, 254, 262)."""
    windows = np.array(
        [
            np.concatenate([b[:2], s[:2]])
            for b, s, _ in (
                stateless_sample_distorted_bounding_box(
                    [375, 500, 3], [[[0.1, 0.2, 0.6, 0.9]]], seed=(i, 7), area_range=(0.08, 1.0)
                )
                for i in range(1500)
            )
        ]
    )
    np.testing.assert_allclose(windows.mean(axis=0), [54.2, 118.1, 253.5, 262.3], rtol=0.06)


def test_no_window_found_falls_back_to_the_whole_image():
    # A tiny object that must be fully covered by a crop of at least 90% of the image at aspect 4:
    # impossible in a square image, so every attempt fails.
    begin, size, bboxes = sample_distorted_bounding_box(
        [50, 50, 3],
        [[[0.4, 0.4, 0.5, 0.5]]],
        min_object_covered=1.0,
        aspect_ratio_range=(4.0, 5.0),
        area_range=(0.9, 1.0),
        max_attempts=5,
        seed=1,
    )
    assert begin.tolist() == [0, 0, 0] and size.tolist() == [50, 50, -1]
    assert bboxes.tolist() == [[[0.0, 0.0, 1.0, 1.0]]]


def test_use_image_if_no_bounding_boxes():
    empty = np.zeros((1, 0, 4), np.float32)
    with pytest.raises(InvalidArgumentError, match="use_image_if_no_bounding_boxes=True"):
        sample_distorted_bounding_box([10, 10, 3], empty, seed=0)
    begin, size, _ = sample_distorted_bounding_box(
        [10, 10, 3], empty, seed=0, use_image_if_no_bounding_boxes=True
    )
    assert size[0] >= 1 and begin[0] + size[0] <= 10


def test_seed_rng_and_stateless_determinism():
    args = ([200, 300, 3], WHOLE)
    first = sample_distorted_bounding_box(*args, seed=5)
    assert all((a == b).all() for a, b in zip(first, sample_distorted_bounding_box(*args, seed=5)))
    same = [stateless_sample_distorted_bounding_box(*args, seed=np.array([3, 4])) for _ in range(2)]
    assert all((a == b).all() for a, b in zip(*same))
    windows = {
        tuple(stateless_sample_distorted_bounding_box(*args, seed=(i, 0))[1].tolist()) for i in range(20)
    }
    assert len(windows) > 10  # different seeds, different windows


def test_output_dtype_follows_an_array_image_size():
    begin, size, _ = sample_distorted_bounding_box(np.array([20, 30, 3], np.int64), WHOLE, seed=0)
    assert begin.dtype == size.dtype == np.int64


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"image_size": [10]}, "image_size="),
        ({"image_size": [0, 10, 3]}, "image_size="),
        ({"image_size": [10.0, 10.0, 3.0]}, "image_size="),
        ({"bounding_boxes": [[0.0, 0.0, 1.0]]}, "bounding_boxes has shape"),
        ({"bounding_boxes": [[[0.0, 0.0, 1.5, 1.0]]]}, r"bounding box 0 is \[0.0, 0.0, 1.5, 1.0\]"),
        ({"min_object_covered": -0.1}, "min_object_covered"),
        ({"aspect_ratio_range": (0.0, 1.0)}, "aspect_ratio_range"),
        ({"aspect_ratio_range": (2.0, 1.0)}, "aspect_ratio_range"),
        ({"area_range": (0.0, 1.0)}, "area_range"),
        ({"area_range": (0.5, 1.5)}, "area_range"),
        ({"max_attempts": 0}, "max_attempts"),
        ({"rng": 3}, "rng=3 is not allowed"),
    ],
)
def test_argument_errors(kwargs, match):
    arguments = {"image_size": [10, 10, 3], "bounding_boxes": WHOLE, **kwargs}
    with pytest.raises(InvalidArgumentError, match=match):
        sample_distorted_bounding_box(**arguments)


@pytest.mark.parametrize("seed", [3, (1,), (1, 2, 3), (1.5, 2.0), "ab"])
def test_stateless_seed_errors(seed):
    with pytest.raises(InvalidArgumentError, match="shape \\[2\\] integer array"):
        stateless_sample_distorted_bounding_box([10, 10, 3], WHOLE, seed=seed)
