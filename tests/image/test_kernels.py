"""The compiled kernels give exactly what their numpy references give (same float32 arithmetic)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace.image import (
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    normalize,
    resize,
    rotate,
)
from headrace.image.color import channel_means
from headrace.image.convert import from_float, to_float
from headrace.image.hsv import hue_reference, saturation_reference
from headrace.image.normalize import normalize_reference
from headrace.image.resize import _linear_taps, bilinear_reference
from headrace.image.rotate import rotate_reference
from tests.image.conftest import image_strategy

rgb_images = image_strategy(max_side=12).map(lambda x: x if x.shape[-1] == 3 else np.repeat(x, 3, axis=-1))
factors = st.floats(0, 4, width=32)
deltas = st.floats(-1, 1, width=32)


def _batch(image):
    return image if image.ndim == 4 else image[None]


@settings(max_examples=60, deadline=None)
@given(rgb_images, factors, deltas)
def test_hue_and_saturation_kernels_equal_numpy(image, factor, delta):
    flt = to_float(image)
    expected = from_float(saturation_reference(flt, np.float32(factor)), image.dtype)
    np.testing.assert_array_equal(adjust_saturation(image, factor), expected)
    expected = from_float(hue_reference(flt, np.float32(delta)), image.dtype)
    np.testing.assert_array_equal(adjust_hue(image, delta), expected)


@settings(max_examples=60, deadline=None)
@given(image_strategy(max_side=12), st.floats(-1, 1, width=32), factors, st.floats(0.25, 3, width=32))
def test_lookup_tables_equal_elementwise_math(image, delta, factor, gamma):
    if image.dtype != np.uint8:
        image = (image * 255).astype(np.uint8)
    flt = to_float(image)
    np.testing.assert_array_equal(
        adjust_brightness(image, delta), from_float(flt + np.float32(delta), np.uint8)
    )
    np.testing.assert_array_equal(
        adjust_gamma(image, gamma), from_float(np.float32(1) * flt ** np.float32(gamma), np.uint8)
    )
    means = channel_means(image).astype(np.float32)
    centre = means[:, None, None, :] if image.ndim == 4 else means[0]
    expected = from_float((flt - centre) * np.float32(factor) + centre, np.uint8)
    np.testing.assert_array_equal(adjust_contrast(image, factor), expected)


@settings(max_examples=40, deadline=None)
@given(image_strategy(max_side=12, dtypes=(np.float32,)), factors)
def test_float_contrast_kernel_equals_numpy(image, factor):
    means = channel_means(image).astype(np.float32)
    centre = means[:, None, None, :] if image.ndim == 4 else means[0]
    np.testing.assert_array_equal(
        adjust_contrast(image, factor), (image - centre) * np.float32(factor) + centre
    )
    np.testing.assert_allclose(
        channel_means(image), _batch(image).astype(np.float64).mean(axis=(1, 2)), rtol=1e-12, atol=1e-12
    )


@settings(max_examples=60, deadline=None)
@given(image_strategy(max_side=12), st.integers(1, 20), st.integers(1, 20))
def test_bilinear_kernel_equals_numpy(image, height, width):
    taps = (*_linear_taps(image.shape[-3], height), *_linear_taps(image.shape[-2], width))
    expected = bilinear_reference(_batch(image), *taps)
    np.testing.assert_array_equal(_batch(resize(image, (height, width))), expected)


@settings(max_examples=40, deadline=None)
@given(image_strategy(max_side=12))
def test_normalize_kernel_equals_numpy(image):
    channels = image.shape[-1]
    mean = np.linspace(0.1, 0.7, channels)
    std = np.linspace(0.2, 0.9, channels)
    scale, offset = (1 / std).astype(np.float32), (-mean / std).astype(np.float32)
    np.testing.assert_array_equal(normalize(image, mean, std), normalize_reference(image, scale, offset))


@settings(max_examples=60, deadline=None)
@given(
    image_strategy(max_side=12),
    st.floats(-7, 7),
    st.sampled_from(["nearest", "bilinear"]),
    st.sampled_from(["constant", "reflect", "wrap", "nearest"]),
)
def test_rotation_kernel_equals_numpy(image, angle, interpolation, fill_mode):
    batch = _batch(image)
    angles = np.full(batch.shape[0], angle)
    expected = rotate_reference(batch, angles, interpolation, fill_mode, 0.5)
    np.testing.assert_array_equal(_batch(rotate(image, angle, interpolation, fill_mode, 0.5)), expected)


def test_other_dtypes_take_the_numpy_path_with_the_same_results():
    image = (np.random.default_rng(0).random((2, 9, 11, 3)) * 255).astype(np.uint8)
    wide = image.astype(np.uint16) * 257  # same values in 0..1 as the uint8 image
    np.testing.assert_allclose(adjust_hue(wide, 0.3) / 257, adjust_hue(image, 0.3), atol=1)
    np.testing.assert_allclose(resize(image.astype(np.float64), (5, 7)), resize(image, (5, 7)), atol=1e-4)
    rotated = rotate(image.astype(np.int32), 0.4, "bilinear")
    np.testing.assert_array_equal(rotated, rotate(image, 0.4, "bilinear"))


def _dense(spans, in_size):
    starts, weights = spans
    matrix = np.zeros((len(starts), in_size))
    for i, start in enumerate(starts.tolist()):
        matrix[i, start : start + weights.shape[1]] = weights[i]
    return matrix


@settings(max_examples=60, deadline=None)
@given(
    image_strategy(max_side=12),
    st.integers(1, 20),
    st.integers(1, 20),
    st.sampled_from(["bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"]),
    st.booleans(),
)
def test_resample_kernel_equals_the_weight_matrices(image, height, width, method, antialias):
    from headrace.image.resize_weights import area_weights, cubic_weights, span_weights

    in_height, in_width = image.shape[-3], image.shape[-2]
    if method == "area":
        rows, cols = area_weights(in_height, height, False), area_weights(in_width, width, False)
    elif method == "bicubic" and not antialias:
        rows, cols = (
            cubic_weights(in_height, height, False, True),
            cubic_weights(in_width, width, False, True),
        )
    else:
        rows = span_weights(method, in_height, height, antialias)
        cols = span_weights(method, in_width, width, antialias)
    # Every span lies inside the image, and each output pixel's weights sum to 1.
    for (starts, weights), size in ((rows, in_height), (cols, in_width)):
        assert starts.min() >= 0 and starts.max() + weights.shape[1] <= size
        np.testing.assert_allclose(weights.sum(axis=1), 1, rtol=1e-5)
    expected = np.einsum(
        "yh,nhwc,xw->nyxc", _dense(rows, in_height), _batch(image).astype(np.float64), _dense(cols, in_width)
    )
    out = _batch(resize(image, (height, width), method, antialias=antialias))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5 * max(float(image.max()), 1.0))
