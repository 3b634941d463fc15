"""decode_and_crop_jpeg / decode_crop_and_resize_jpeg / dct_ratio."""

from __future__ import annotations

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError
from headrace.image import (
    ImageDecodeError,
    decode_and_crop_jpeg,
    decode_crop_and_resize_jpeg,
    decode_jpeg,
    encode_jpeg,
    encode_png,
    resize,
    sample_distorted_bounding_box,
)
from headrace.image.decode_crop import dct_ratio
from tests.image.conftest import random_image


@pytest.fixture(scope="module")
def photo() -> bytes:
    return encode_jpeg(random_image((120, 160, 3)), quality=90)


@pytest.mark.parametrize("channels", [0, 1, 3])
@pytest.mark.parametrize("ratio", [1, 2, 4])
@pytest.mark.parametrize("dct_method", ["", "INTEGER_ACCURATE"])
def test_equals_decode_then_crop(photo, channels, ratio, dct_method):
    window = [7, 11, 40 // ratio, 60 // ratio]
    out = decode_and_crop_jpeg(photo, window, channels=channels, ratio=ratio, dct_method=dct_method)
    full = decode_jpeg(photo, channels=channels, ratio=ratio, dct_method=dct_method)
    np.testing.assert_array_equal(out, full[7 : 7 + window[2], 11 : 11 + window[3]])
    assert out.flags.c_contiguous and not np.shares_memory(out, full)


def test_whole_image_window_and_io_export(photo):
    np.testing.assert_array_equal(decode_and_crop_jpeg(photo, [0, 0, 120, 160]), decode_jpeg(photo))
    assert hr.io.decode_and_crop_jpeg is decode_and_crop_jpeg
    assert hr.io.decode_jpeg is decode_jpeg


def test_with_sample_distorted_bounding_box(photo):
    begin, size, _ = sample_distorted_bounding_box(
        hr.io.extract_jpeg_shape(photo), [[[0.0, 0.0, 1.0, 1.0]]], area_range=(0.08, 1.0), seed=3
    )
    window = np.concatenate([begin[:2], size[:2]])
    out = decode_and_crop_jpeg(photo, window, channels=3)
    assert out.shape == (size[0], size[1], 3)


@pytest.mark.parametrize(
    "window, match",
    [
        ([100, 0, 30, 10], "rows 100..129, columns 0..9 do not fit in the 120x160 decoded image"),
        ([0, 150, 10, 11], "columns 150..160"),
        ([0, 0, 0, 10], "sizes > 0"),
        ([-1, 0, 5, 5], "offsets >= 0"),
        ([0, 0, 5], r"\[crop_y, crop_x, crop_height, crop_width\]"),
        ([0.0, 0.0, 5.0, 5.0], r"\[crop_y, crop_x, crop_height, crop_width\]"),
    ],
)
def test_window_errors(photo, window, match):
    with pytest.raises(InvalidArgumentError, match=match):
        decode_and_crop_jpeg(photo, window)


def test_window_is_checked_at_the_scaled_size(photo):
    with pytest.raises(InvalidArgumentError, match="1/2-scale image"):
        decode_and_crop_jpeg(photo, [0, 0, 100, 10], ratio=2)


def test_not_a_jpeg_and_damaged_data(photo):
    with pytest.raises(ImageDecodeError, match="it is a PNG"):
        decode_and_crop_jpeg(encode_png(np.zeros((4, 4, 3), np.uint8)), [0, 0, 2, 2])
    with pytest.raises(ImageDecodeError):
        decode_and_crop_jpeg(photo[: len(photo) // 2], [0, 0, 2, 2])
    with pytest.raises(ImageDecodeError, match="^decode_and_crop_jpeg: .* not a readable JPEG"):
        decode_and_crop_jpeg(photo[:30], [0, 0, 2, 2])
    with pytest.raises(InvalidArgumentError, match="channels=2"):
        decode_and_crop_jpeg(photo, [0, 0, 2, 2], channels=2)


def test_dct_ratio():
    assert dct_ratio(224, 224, 224, 224) == 1
    assert dct_ratio(447, 1000, 224, 224) == 1
    assert dct_ratio(448, 1000, 224, 224) == 2
    assert dct_ratio(900, 900, 224, 224) == 4
    assert dct_ratio(1800, 1800, 224, 224) == 8
    assert dct_ratio(1800, 1800, 224, 224, max_ratio=2) == 2


def test_crop_and_resize_without_scaling_equals_decode_crop_resize(photo):
    out = decode_crop_and_resize_jpeg(photo, [10, 20, 80, 100], (32, 40), max_ratio=1)
    expected = resize(decode_jpeg(photo, channels=3)[10:90, 20:120], (32, 40))
    np.testing.assert_array_equal(out, expected)


def test_reduced_scale_is_close_to_full_scale():
    # Smooth content (like photos): the DCT-scaled decode differs from decode-crop-resize by a few levels.
    ys, xs = np.mgrid[0:512, 0:640]
    image = np.stack([128 + 90 * np.sin(xs / 40 + c) * np.cos(ys / 55) for c in range(3)], -1).astype(
        np.uint8
    )
    data = encode_jpeg(image, quality=92)
    window = [40, 60, 448, 520]
    fast = decode_crop_and_resize_jpeg(data, window, (112, 128))
    exact = decode_crop_and_resize_jpeg(data, window, (112, 128), max_ratio=1)
    assert dct_ratio(448, 520, 112, 128) == 4
    assert fast.shape == exact.shape == (112, 128, 3)
    assert np.abs(fast - exact).mean() < 2.0 and np.abs(fast - exact).max() < 12


def test_crop_and_resize_errors(photo):
    with pytest.raises(InvalidArgumentError, match="do not fit in the 120x160 image"):
        decode_crop_and_resize_jpeg(photo, [0, 0, 121, 10], (8, 8))
    with pytest.raises(InvalidArgumentError, match="size="):
        decode_crop_and_resize_jpeg(photo, [0, 0, 10, 10], (8, 0))
    with pytest.raises(InvalidArgumentError, match="max_ratio=3"):
        decode_crop_and_resize_jpeg(photo, [0, 0, 10, 10], (8, 8), max_ratio=3)
    with pytest.raises(ImageDecodeError, match="not a JPEG"):
        decode_crop_and_resize_jpeg(b"not an image", [0, 0, 10, 10], (8, 8))


@pytest.mark.slow
def test_equals_tensorflow(tf, photo):
    for channels in (0, 1, 3):
        for ratio in (1, 2, 4):
            window = [3, 5, 20 // ratio, 30 // ratio]
            expected = tf.io.decode_and_crop_jpeg(photo, window, channels=channels, ratio=ratio).numpy()
            np.testing.assert_array_equal(
                decode_and_crop_jpeg(photo, window, channels=channels, ratio=ratio), expected
            )
