"""stateless_random_*: deterministic in the seed, each the matching random_* op."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import headrace.image as hi
from headrace.core.errors import InvalidArgumentError
from tests.image.conftest import random_image

CASES = [
    ("stateless_random_flip_left_right", ()),
    ("stateless_random_flip_up_down", ()),
    ("stateless_random_brightness", (0.3,)),
    ("stateless_random_contrast", (0.5, 1.5)),
    ("stateless_random_saturation", (0.5, 1.5)),
    ("stateless_random_hue", (0.2,)),
    ("stateless_random_jpeg_quality", (20, 90)),
    ("stateless_random_crop", ((5, 6),)),
]


@pytest.mark.parametrize("name, args", CASES)
def test_same_seed_same_result_other_seeds_vary(name, args):
    fn = getattr(hi, name)
    image = random_image((4, 12, 14, 3))
    first = fn(image, *args, seed=(7, 9))
    np.testing.assert_array_equal(first, fn(image, *args, seed=np.array([7, 9], np.int64)))
    outcomes = {fn(image, *args, seed=(i, 1)).tobytes() for i in range(12)}
    assert len(outcomes) > 1


@pytest.mark.parametrize("name, args", CASES)
def test_equals_the_random_op_fed_by_the_seed_stream(name, args):
    from headrace.image._checks import stateless_rng

    image = random_image((3, 10, 10, 3))
    random_fn = getattr(hi, name.replace("stateless_", ""))
    expected = random_fn(image, *args, rng=stateless_rng((2, 3), name))
    np.testing.assert_array_equal(getattr(hi, name)(image, *args, seed=(2, 3)), expected)


def test_per_image_draws_in_a_batch():
    batch = np.stack([random_image((8, 8, 3))] * 6)
    out = hi.stateless_random_brightness(batch, 0.5, seed=(1, 1))
    assert len({image.tobytes() for image in out}) == 6


def test_same_result_in_another_process():
    code = (
        "import numpy as np, headrace.image as hi;"
        "print(hi.stateless_random_crop(np.arange(400).reshape(20, 20, 1), (3, 3), seed=(11, 12)).sum())"
    )
    runs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    }
    local = hi.stateless_random_crop(np.arange(400).reshape(20, 20, 1), (3, 3), seed=(11, 12)).sum()
    assert runs == {f"{local}\n"}


def test_errors_name_the_stateless_function():
    image = random_image((8, 8, 3))
    with pytest.raises(InvalidArgumentError, match="stateless_random_hue: seed=5 is not allowed"):
        hi.stateless_random_hue(image, 0.1, seed=5)
    with pytest.raises(InvalidArgumentError, match="^stateless_random_contrast: upper=0.2"):
        hi.stateless_random_contrast(image, 0.5, 0.2, seed=(1, 2))
    with pytest.raises(
        InvalidArgumentError, match="^stateless_random_jpeg_quality: min_jpeg_quality=90 must be less"
    ):
        hi.stateless_random_jpeg_quality(image, 90, 90, seed=(1, 2))
