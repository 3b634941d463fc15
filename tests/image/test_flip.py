"""flip_left_right / flip_up_down / transpose / random flips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace.core.errors import InvalidArgumentError
from headrace.image import (
    flip_left_right,
    flip_up_down,
    random_flip_left_right,
    random_flip_up_down,
    transpose,
)
from headrace.image.flip import flip_rows
from tests.image.conftest import image_strategy, random_image


@settings(max_examples=40, deadline=None)
@given(image_strategy())
def test_flipping_twice_is_identity(image):
    np.testing.assert_array_equal(flip_left_right(flip_left_right(image)), image)
    np.testing.assert_array_equal(flip_up_down(flip_up_down(image)), image)
    np.testing.assert_array_equal(transpose(transpose(image)), image)


def test_flip_values_single_and_batch():
    image = np.arange(6).reshape(2, 3, 1)
    assert flip_left_right(image)[:, :, 0].tolist() == [[2, 1, 0], [5, 4, 3]]
    assert flip_up_down(image)[:, :, 0].tolist() == [[3, 4, 5], [0, 1, 2]]
    assert transpose(image)[:, :, 0].tolist() == [[0, 3], [1, 4], [2, 5]]
    batch = np.stack([image, image + 10])
    assert flip_left_right(batch)[1, :, :, 0].tolist() == [[12, 11, 10], [15, 14, 13]]
    assert flip_up_down(batch).shape == (2, 2, 3, 1)


def test_flips_do_not_touch_the_input():
    image = random_image((5, 6, 3))
    before = image.copy()
    random_flip_left_right(np.stack([image] * 4), rng=np.random.default_rng(0))
    flip_left_right(image)
    np.testing.assert_array_equal(image, before)


@pytest.mark.parametrize(
    "fn, mirror", [(random_flip_left_right, flip_left_right), (random_flip_up_down, flip_up_down)]
)
def test_random_flip_batch_flips_each_image_independently(fn, mirror):
    batch = random_image((64, 5, 7, 3))
    out = fn(batch, rng=np.random.default_rng(3))
    flipped = [not np.array_equal(out[i], batch[i]) for i in range(64)]
    for i in range(64):
        np.testing.assert_array_equal(out[i], mirror(batch[i]) if flipped[i] else batch[i])
    assert 15 < sum(flipped) < 49  # about half, independently drawn


@pytest.mark.parametrize("fn", [random_flip_left_right, random_flip_up_down])
def test_random_flip_is_reproducible_and_fair(fn):
    image = random_image((4, 4, 3))
    same = [fn(image, rng=np.random.default_rng(7)) for _ in range(2)]
    np.testing.assert_array_equal(*same)
    rng = np.random.default_rng(0)
    flips = sum(not np.array_equal(fn(image, rng=rng), image) for _ in range(400))
    assert 150 < flips < 250
    np.testing.assert_array_equal(fn(image, seed=5), fn(image, rng=np.random.default_rng(5)))


def test_random_flip_rejects_bad_rng_and_seed():
    image = np.zeros((2, 2, 1))
    with pytest.raises(InvalidArgumentError, match="numpy Generator"):
        random_flip_left_right(image, rng=42)
    with pytest.raises(InvalidArgumentError, match="not both"):
        random_flip_left_right(image, seed=1, rng=np.random.default_rng(1))
    with pytest.raises(InvalidArgumentError, match="seed=-1"):
        random_flip_up_down(image, seed=-1)


@pytest.mark.parametrize("fn", [flip_left_right, flip_up_down, transpose, random_flip_left_right])
def test_rank_and_dtype_errors_name_the_function(fn):
    with pytest.raises(InvalidArgumentError, match=rf"{fn.__name__}: image has shape \(4, 4\) \(rank 2\)"):
        fn(np.zeros((4, 4)))
    with pytest.raises(InvalidArgumentError, match="rank 5"):
        fn(np.zeros((1, 1, 4, 4, 3)))
    with pytest.raises(InvalidArgumentError, match="dtype object"):
        fn(np.empty((2, 2, 1), dtype=object))


def test_bool_images_flip():
    mask = np.array([[[True], [False]]])
    assert flip_left_right(mask)[0, :, 0].tolist() == [False, True]


@pytest.mark.slow
def test_flips_equal_tensorflow(tf):
    for shape in [(5, 7, 3), (2, 5, 7, 1)]:
        image = random_image(shape)
        np.testing.assert_array_equal(flip_left_right(image), tf.image.flip_left_right(image).numpy())
        np.testing.assert_array_equal(flip_up_down(image), tf.image.flip_up_down(image).numpy())
        np.testing.assert_array_equal(transpose(image), tf.image.transpose(image).numpy())


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([np.uint8, np.float32, np.int16]),
    st.integers(1, 4),
    st.integers(1, 4),
    st.booleans(),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_flip_rows_mirrors_the_chosen_images_only(dtype, channels, count, up_down, window, seed):
    # the compiled pass (uint8, float32) and numpy's (other dtypes), contiguous and a crop's window
    rng = np.random.default_rng(seed)
    batch = (rng.random((count, 5, 7, channels)) * 200).astype(dtype)
    if window:
        batch = batch[:, 1:4, 2:6]
    flips = rng.random(count) < 0.5
    out = flip_rows(batch, flips, up_down)
    for image, flipped, flip in zip(batch, out, flips):
        expected = (image[::-1] if up_down else image[:, ::-1]) if flip else image
        np.testing.assert_array_equal(flipped, expected)
    assert out.dtype == batch.dtype and out.flags.c_contiguous and not np.shares_memory(out, batch)
