"""Values against TensorFlow's, recorded in data/tf_reference.npz (data/make_tf_reference.py writes it).

Tolerances: nearest, crop_and_resize, extract_patches, the colour matrices and v1/v2 bilinear are
exact or float32-rounding close (1e-6); the separable kernels (bicubic, area, lanczos, gaussian,
mitchellcubic, antialias) sum the same float32 weights in another order (1e-5); ssim blurs separably
where tf convolves in 2-D (1e-5).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import headrace.image as hi

REFERENCE = np.load(Path(__file__).with_name("data") / "tf_reference.npz")
RESIZE_KEYS = sorted(k for k in REFERENCE.files if k.startswith("resize/"))
V1_KEYS = sorted(k for k in REFERENCE.files if k.startswith("v1/"))


def _size(tag: str) -> tuple[int, int]:
    height, width = tag.split("x")
    return int(height), int(width)


@pytest.mark.parametrize("key", RESIZE_KEYS)
def test_resize_matches_tensorflow(key):
    _, method, antialias, tag = key.split("/")
    out = hi.resize(REFERENCE["image"], _size(tag), method, antialias=antialias == "True")
    expected = REFERENCE[key]
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize("key", V1_KEYS)
def test_tf1_resize_matches_tensorflow(key):
    _, method, align, tag = key.split("/")
    ops = {
        "bilinear": hi.resize_bilinear,
        "nearest": hi.resize_nearest_neighbor,
        "bicubic": hi.resize_bicubic,
        "area": hi.resize_area,
    }
    out = ops[method](REFERENCE["image"], _size(tag), align_corners=align == "True")
    np.testing.assert_allclose(out, REFERENCE[key], rtol=0, atol=1e-5)
    via_resize_images = hi.resize_images(
        REFERENCE["image"], _size(tag), method, align_corners=align == "True"
    )
    np.testing.assert_array_equal(via_resize_images, out)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize_matches_tensorflow(method):
    out = hi.crop_and_resize(
        REFERENCE["batch"], REFERENCE["boxes"], [0, 1, 1], (4, 3), method=method, extrapolation_value=-1.0
    )
    np.testing.assert_allclose(out, REFERENCE[f"crop_and_resize/{method}"], rtol=0, atol=1e-6)


def test_metrics_and_colour_spaces_match_tensorflow():
    a, b, batch = REFERENCE["a"], REFERENCE["b"], REFERENCE["batch"]
    np.testing.assert_allclose(hi.psnr(a, b, 255), REFERENCE["psnr"], rtol=1e-6)
    np.testing.assert_allclose(hi.ssim(a, b, 255, filter_size=7), REFERENCE["ssim"], atol=1e-5)
    np.testing.assert_allclose(hi.total_variation(batch), REFERENCE["total_variation"], rtol=1e-6)
    np.testing.assert_allclose(hi.rgb_to_yuv(batch), REFERENCE["rgb_to_yuv"], atol=1e-6)
    np.testing.assert_allclose(hi.rgb_to_yiq(batch), REFERENCE["rgb_to_yiq"], atol=1e-6)
    patches = hi.extract_patches(batch, [1, 2, 3, 1], [1, 2, 2, 1], [1, 2, 1, 1], "SAME")
    np.testing.assert_array_equal(patches, REFERENCE["extract_patches"])
