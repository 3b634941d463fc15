"""resize (bilinear, nearest, area, antialias) / resize_with_pad."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace.core.errors import InvalidArgumentError
from headrace.image import ResizeMethod, ResizeMethodV1, resize, resize_images, resize_with_pad
from tests.image.conftest import image_strategy, random_image


@settings(max_examples=40, deadline=None)
@given(image_strategy())
def test_same_size_is_identity(image):
    size = image.shape[-3:-1]
    same = resize(image, size, method="nearest")
    assert same.dtype == image.dtype
    np.testing.assert_array_equal(same, image)
    np.testing.assert_array_equal(resize(image, size, method="bilinear"), image.astype(np.float32))
    np.testing.assert_allclose(resize(image, size, method="area"), image.astype(np.float32), rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    image_strategy(), st.integers(1, 20), st.integers(1, 20), st.sampled_from(["bilinear", "nearest", "area"])
)
def test_shapes_and_value_range(image, height, width, method):
    out = resize(image, (height, width), method=method)
    assert out.shape == (*image.shape[:-3], height, width, image.shape[-1])
    assert out.dtype == (image.dtype if method == "nearest" else np.float32)
    # every method interpolates: results stay within the input's range
    slack = 1e-5 * max(float(image.max()), 1.0)
    assert out.min() >= image.min() - slack and out.max() <= image.max() + slack


def test_constant_image_stays_constant():
    image = np.full((2, 7, 9, 3), 42, np.uint8)
    for method in ("bilinear", "nearest", "area"):
        for antialias in (False, True):
            out = resize(image, (4, 13), method=method, antialias=antialias)
            np.testing.assert_allclose(out, 42, rtol=1e-6)


def test_bilinear_by_hand():
    image = np.array([[0.0, 10.0]], np.float32).reshape(1, 2, 1)
    # half-pixel centres: output x=0..3 sample input at -0.25, 0.25, 0.75, 1.25 (clamped at the edges)
    assert resize(image, (1, 4))[0, :, 0].tolist() == [0.0, 2.5, 7.5, 10.0]


def test_area_by_hand_and_nearest_by_hand():
    image = np.arange(16, dtype=np.float32).reshape(4, 4, 1)
    np.testing.assert_allclose(resize(image, (2, 2), method="area")[:, :, 0], [[2.5, 4.5], [10.5, 12.5]])
    np.testing.assert_allclose(resize(image, (1, 1), method="area").item(), 7.5)
    assert resize(image, (2, 2), method="nearest")[:, :, 0].tolist() == [[5.0, 7.0], [13.0, 15.0]]


def test_antialias_smooths_when_shrinking():
    stripes = np.zeros((1, 48, 1), np.float32)
    stripes[0, ::2] = 1.0
    aliased = resize(stripes, (1, 16), antialias=False)
    smooth = resize(stripes, (1, 16), antialias=True)
    assert aliased.std() > 0.3  # bilinear samples pick up the stripes
    np.testing.assert_allclose(smooth, 0.5, atol=0.06)  # the filter averages them away


def test_preserve_aspect_ratio():
    image = random_image((20, 40, 3))
    assert resize(image, (10, 10), preserve_aspect_ratio=True).shape == (5, 10, 3)
    assert resize(image, (100, 60), preserve_aspect_ratio=True).shape == (30, 60, 3)


def test_resize_with_pad_centres_the_content():
    image = np.ones((2, 4, 1), np.float32)
    out = resize_with_pad(image, 6, 4)
    assert out.shape == (6, 4, 1)
    assert out[:, 0, 0].tolist() == [0, 0, 1, 1, 0, 0]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"size": (0, 4)}, "size="),
        ({"size": (4,)}, "size="),
        ({"size": (2.5, 4)}, "size="),
        ({"size": (4, 4), "method": "cubic"}, "method='cubic' is not allowed"),
        ({"size": (4, 4), "align_corners": True}, "align_corners=True needs half_pixel_centers=False"),
        ({"size": (4, 4), "method": "lanczos3", "half_pixel_centers": False}, "no align_corners"),
    ],
)
def test_argument_errors(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        resize(np.zeros((3, 3, 1)), **kwargs)


def test_empty_image_error():
    with pytest.raises(InvalidArgumentError, match="height and width must be > 0"):
        resize(np.zeros((0, 3, 1)), (2, 2))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_resize_equals_tensorflow(tf, dtype):
    images = random_image((2, 17, 23, 3), dtype=dtype)
    scale = 255.0 if dtype == np.uint8 else 1.0
    for size in [(8, 11), (31, 40), (17, 23), (3, 60), (64, 64), (1, 1)]:
        for method in ("bicubic", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"):
            for antialias in (False, True):
                np.testing.assert_allclose(
                    resize(images, size, method, antialias=antialias),
                    tf.image.resize(images, size, method, antialias=antialias).numpy(),
                    rtol=0,
                    atol=1e-5 * scale,
                    err_msg=f"{size} {method} {antialias}",
                )
        for align in (False, True):
            for method, op in [
                ("bilinear", tf.compat.v1.image.resize_bilinear),
                ("nearest", tf.compat.v1.image.resize_nearest_neighbor),
                ("bicubic", tf.compat.v1.image.resize_bicubic),
            ]:
                np.testing.assert_allclose(
                    resize(images, size, method, align_corners=align, half_pixel_centers=False),
                    op(images, size, align_corners=align).numpy(),
                    rtol=0,
                    atol=1e-5 * scale,
                    err_msg=f"{size} v1 {method} {align}",
                )
        for method in ("nearest", "bilinear"):  # same float32 arithmetic as tf: identical
            np.testing.assert_array_equal(
                resize(images, size, method),
                tf.image.resize(images, size, method).numpy(),
                err_msg=f"{size} {method}",
            )
        # area and antialiased bilinear: the same weights, summed in another order
        np.testing.assert_allclose(
            resize(images, size, "area"),
            tf.image.resize(images, size, "area").numpy(),
            rtol=0,
            atol=3e-5 * scale,
        )
        np.testing.assert_allclose(
            resize(images, size, antialias=True),
            tf.image.resize(images, size, antialias=True).numpy(),
            rtol=0,
            atol=3e-5 * scale,
        )
        np.testing.assert_array_equal(
            resize(images, size, preserve_aspect_ratio=True),
            tf.image.resize(images, size, preserve_aspect_ratio=True).numpy(),
        )
        if min(size) > 1:
            np.testing.assert_array_equal(
                resize_with_pad(images, *size), tf.image.resize_with_pad(images, *size).numpy()
            )


ALL_METHODS = [m.value for m in ResizeMethod]


@pytest.mark.parametrize("method", ALL_METHODS)
@pytest.mark.parametrize("antialias", [False, True])
def test_every_method_keeps_a_constant_image_constant(method, antialias):
    image = np.full((2, 9, 13, 3), 77, np.uint8)
    for size in [(4, 5), (9, 13), (20, 31), (1, 1)]:
        out = resize(image, size, method, antialias=antialias)
        assert out.shape == (2, *size, 3)
        np.testing.assert_allclose(out, 77, rtol=1e-5)


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5"])
def test_interpolating_methods_are_the_identity_at_the_same_size(method):
    # Their kernels are 1 at distance 0 and 0 at every other whole-pixel distance.
    image = random_image((7, 6, 3), np.float32)
    np.testing.assert_allclose(resize(image, (7, 6), method), image, atol=1e-6)


def test_smoothing_kernels_blur_at_the_same_size():
    image = random_image((7, 6, 3), np.float32)
    for method in ("gaussian", "mitchellcubic"):
        out = resize(image, (7, 6), method)
        assert 1e-3 < np.abs(out - image).max() and out.std() < image.std()


def test_bicubic_by_hand():
    # A step upsampled 2x: Keys' cubic (a=-0.5) overshoots on both sides of the edge.
    image = np.array([0.0, 0.0, 1.0, 1.0], np.float32).reshape(1, 4, 1)
    out = resize(image, (1, 8), "bicubic")[0, :, 0]
    assert out.min() < 0 and out.max() > 1
    np.testing.assert_allclose(out[3] + out[4], 1.0, atol=1e-6)  # symmetric around the edge


def test_tf1_grid_by_hand():
    image = np.array([[0.0, 10.0]], np.float32).reshape(1, 2, 1)
    # TF1: output x samples input x * scale (0, 0.5, 1, 1.5 -> clamped): no half-pixel offset.
    assert resize(image, (1, 4), half_pixel_centers=False)[0, :, 0].tolist() == [0.0, 5.0, 10.0, 10.0]
    # align_corners: the corners line up, scale = (2 - 1) / (4 - 1).
    out = resize(image, (1, 4), align_corners=True, half_pixel_centers=False)[0, :, 0]
    np.testing.assert_allclose(out, [0.0, 10 / 3, 20 / 3, 10.0], rtol=1e-6)
    nearest = resize(
        np.arange(3, dtype=np.uint8).reshape(1, 3, 1), (1, 5), "nearest", half_pixel_centers=False
    )
    assert nearest[0, :, 0].tolist() == [0, 0, 1, 1, 2]  # floor(x * 3 / 5)


def test_tf1_and_tf2_grids_differ_as_in_the_issue():
    image = random_image((32, 32, 3))
    v1 = resize_images(image, (224, 224))
    v2 = resize(image, (224, 224))
    assert np.abs(v1 - v2).max() > 20  # why ImageNet evaluation code needs the TF1 grid


def test_resize_method_names_enums_and_tf1_codes():
    image = random_image((5, 6, 3))
    reference = resize(image, (3, 4), "bicubic")
    np.testing.assert_array_equal(resize(image, (3, 4), ResizeMethod.BICUBIC), reference)
    np.testing.assert_array_equal(resize(image, (3, 4), "BICUBIC"), reference)
    tf1 = resize(image, (3, 4), "bicubic", half_pixel_centers=False)
    np.testing.assert_array_equal(resize_images(image, (3, 4), ResizeMethodV1.BICUBIC), tf1)
    np.testing.assert_array_equal(resize_images(image, (3, 4), 2), tf1)
    assert resize(image, (3, 4), ResizeMethod.NEAREST_NEIGHBOR).dtype == np.uint8


def test_resize_images_returns_the_input_at_its_own_size():
    image = random_image((5, 6, 3))
    assert resize_images(image, (5, 6)) is image
    assert resize_images(image, (5, 7)).dtype == np.float32


def test_other_dtypes_resample_in_float32():
    image = random_image((5, 6, 3)).astype(np.int16)
    out = resize(image, (8, 9), "lanczos3")
    np.testing.assert_allclose(out, resize(image.astype(np.float32), (8, 9), "lanczos3"), atol=1e-4)
