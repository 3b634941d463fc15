"""rgb_to_yuv / yuv_to_rgb / rgb_to_yiq / yiq_to_rgb."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import headrace.image as hi
from headrace.core.errors import InvalidArgumentError
from tests.image.conftest import image_strategy


@settings(max_examples=40, deadline=None)
@given(image_strategy(ranks=(3, 4), dtypes=(np.float32,)))
def test_round_trips(image):
    if image.shape[-1] != 3:
        image = np.repeat(image[..., :1], 3, axis=-1)
    # tf's matrices are inverses to about 8 digits: a round trip moves white by ~6e-5
    np.testing.assert_allclose(hi.yuv_to_rgb(hi.rgb_to_yuv(image)), image, atol=1e-4)
    np.testing.assert_allclose(hi.yiq_to_rgb(hi.rgb_to_yiq(image)), image, atol=1e-4)


def test_known_colours():
    red = np.array([1.0, 0.0, 0.0])
    np.testing.assert_allclose(hi.rgb_to_yuv(red), [0.299, -0.14714119, 0.61497538])
    np.testing.assert_allclose(hi.rgb_to_yiq(red), [0.299, 0.59590059, 0.2115])
    grey = np.full((2, 2, 3), 0.4, np.float32)
    yuv = hi.rgb_to_yuv(grey)
    assert yuv.dtype == np.float32
    np.testing.assert_allclose(yuv[..., 0], 0.4, rtol=1e-6)  # greys have no chroma
    np.testing.assert_allclose(yuv[..., 1:], 0, atol=1e-6)


@pytest.mark.parametrize("fn", [hi.rgb_to_yuv, hi.yuv_to_rgb, hi.rgb_to_yiq, hi.yiq_to_rgb])
def test_errors(fn):
    with pytest.raises(InvalidArgumentError, match="convert_image_dtype"):
        fn(np.zeros((2, 2, 3), np.uint8))
    with pytest.raises(InvalidArgumentError, match="expected 3"):
        fn(np.zeros((2, 2, 4), np.float32))
