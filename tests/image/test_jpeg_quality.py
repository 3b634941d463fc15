"""adjust_jpeg_quality / random_jpeg_quality."""

from __future__ import annotations

import numpy as np
import pytest

import headrace.image as hi
from headrace.core.errors import InvalidArgumentError
from tests.image.conftest import random_image


def test_lower_quality_loses_more():
    image = random_image((32, 32, 3))
    errors = [np.abs(hi.adjust_jpeg_quality(image, q).astype(int) - image).mean() for q in (95, 50, 5)]
    assert errors[0] < errors[1] < errors[2]


def test_equals_encode_then_decode_and_keeps_dtype():
    image = random_image((16, 16, 3))
    expected = hi.decode_jpeg(hi.encode_jpeg(image, quality=40))
    np.testing.assert_array_equal(hi.adjust_jpeg_quality(image, 40), expected)
    as_float = hi.adjust_jpeg_quality(image.astype(np.float32) / 255, 40)
    assert as_float.dtype == np.float32
    np.testing.assert_allclose(as_float, expected / 255, atol=1 / 255 + 1e-6)
    grey = hi.adjust_jpeg_quality(image[:, :, :1], 40)
    assert grey.shape == (16, 16, 1)


def test_batch_with_one_quality_per_image():
    batch = np.stack([random_image((16, 16, 3))] * 2)
    out = hi.adjust_jpeg_quality(batch, np.array([95, 5]))
    np.testing.assert_array_equal(out[0], hi.adjust_jpeg_quality(batch[0], 95))
    np.testing.assert_array_equal(out[1], hi.adjust_jpeg_quality(batch[1], 5))


def test_random_quality_draws_from_the_range():
    image = random_image((16, 16, 3))
    outcomes = {hi.random_jpeg_quality(image, 10, 12, seed=s).tobytes() for s in range(20)}
    candidates = {hi.adjust_jpeg_quality(image, q).tobytes() for q in (10, 11)}
    assert outcomes == candidates  # [min, max): 12 is never drawn


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda im: hi.adjust_jpeg_quality(im, 101), "jpeg_quality=101"),
        (lambda im: hi.adjust_jpeg_quality(im, 50.5), "jpeg_quality=50.5"),
        (lambda im: hi.adjust_jpeg_quality(np.zeros((4, 4, 2), np.uint8), 50), "expected 1 or 3"),
        (lambda im: hi.adjust_jpeg_quality(im, [50, 60]), "one value per image"),
        (lambda im: hi.random_jpeg_quality(im, 50, 40), "must be less than"),
        (lambda im: hi.random_jpeg_quality(im, -1, 40), "min_jpeg_quality=-1"),
    ],
)
def test_errors(call, match):
    with pytest.raises(InvalidArgumentError, match=match):
        call(random_image((8, 8, 3)))


@pytest.mark.slow
def test_close_to_tensorflow(tf):
    image = random_image((16, 16, 3), np.float32)
    # Both are libjpeg; the encoders' settings differ slightly: within 3 levels of 255.
    np.testing.assert_allclose(
        hi.adjust_jpeg_quality(image, 40), tf.image.adjust_jpeg_quality(image, 40).numpy(), atol=3.5 / 255
    )
