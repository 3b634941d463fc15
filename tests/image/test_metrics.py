"""total_variation / psnr / ssim."""

from __future__ import annotations

import numpy as np
import pytest

import headrace.image as hi
from headrace.core.errors import InvalidArgumentError
from tests.image.conftest import random_image


def test_total_variation_by_hand():
    image = np.array([[1, 4, 2], [0, 0, 7]], np.float32).reshape(2, 3, 1)
    # down: |0-1| + |0-4| + |7-2| = 10; across: |4-1| + |2-4| + |0-0| + |7-0| = 12
    assert hi.total_variation(image).item() == 22.0
    batch = np.stack([image, image * 2])
    assert hi.total_variation(batch).tolist() == [22.0, 44.0]


def test_total_variation_of_integers_is_exact():
    image = np.array([[0, 255]], np.uint8).reshape(1, 2, 1)
    out = hi.total_variation(image)
    assert out.dtype == np.int64 and out.item() == 255  # no uint8 wrap-around


def test_psnr_by_hand_and_dtype_scaling():
    a = np.zeros((2, 4, 4, 3), np.float32)
    b = a.copy()
    b[0] += 0.1  # mse 0.01 -> 20 dB
    b[1, 0, 0, 0] = 1.0  # mse 1/48 -> 10 log10(48)
    np.testing.assert_allclose(hi.psnr(a, b, 1.0), [20.0, 10 * np.log10(48)], rtol=1e-5)
    assert hi.psnr(a, a, 1.0).tolist() == [np.inf, np.inf]
    u8a, u8b = random_image((8, 8, 3), seed=1), random_image((8, 8, 3), seed=2)
    as_float = hi.psnr(u8a.astype(np.float32) / 255, u8b.astype(np.float32) / 255, 1.0)
    np.testing.assert_allclose(hi.psnr(u8a, u8b, 255), as_float, rtol=1e-5)


def test_ssim_properties():
    image = random_image((2, 24, 24, 3), np.float32)
    np.testing.assert_allclose(hi.ssim(image, image, 1.0), [1.0, 1.0], rtol=1e-6)
    noisy = np.clip(image + np.random.default_rng(0).normal(0, 0.1, image.shape), 0, 1).astype(np.float32)
    noisier = np.clip(image + np.random.default_rng(0).normal(0, 0.3, image.shape), 0, 1).astype(np.float32)
    assert np.all(hi.ssim(image, noisier, 1.0) < hi.ssim(image, noisy, 1.0))
    assert np.all(hi.ssim(image, noisy, 1.0) < 1.0)
    np.testing.assert_allclose(hi.ssim(image, noisy, 1.0), hi.ssim(noisy, image, 1.0), rtol=1e-5)  # symmetric
    index_map = hi.ssim(image, noisy, 1.0, return_index_map=True)
    assert index_map.shape == (2, 14, 14)
    np.testing.assert_allclose(index_map.mean(axis=(-2, -1)), hi.ssim(image, noisy, 1.0), rtol=1e-5)


def test_ssim_uint8_equals_float():
    a, b = random_image((16, 16, 3), seed=1), random_image((16, 16, 3), seed=2)
    as_float = hi.ssim(a.astype(np.float32) / 255, b.astype(np.float32) / 255, 1.0)
    np.testing.assert_allclose(hi.ssim(a, b, 255), as_float, rtol=1e-5)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: hi.psnr(np.zeros((4, 4, 3)), np.zeros((4, 5, 3)), 1.0), "shapes"),
        (lambda: hi.psnr(np.zeros((4, 4, 3)), np.zeros((4, 4, 3), np.float32), 1.0), "dtypes"),
        (lambda: hi.psnr(np.zeros((4, 4, 3)), np.zeros((4, 4, 3)), 0), "max_val=0"),
        (lambda: hi.ssim(np.zeros((8, 8, 3)), np.zeros((8, 8, 3)), 1.0), "smaller than filter_size=11"),
        (lambda: hi.ssim(np.zeros((12, 12, 3)), np.zeros((12, 12, 3)), 1.0, filter_sigma=0), "filter_sigma"),
        (lambda: hi.total_variation(np.zeros((4, 4))), "rank"),
    ],
)
def test_errors(call, match):
    with pytest.raises(InvalidArgumentError, match=match):
        call()
