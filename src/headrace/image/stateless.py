"""tf.image's ``stateless_random_*``: the random augmentations driven by a 2-int ``seed``.

The same seed gives the same result, call after call and process after process, with no generator
to carry: the seed keys a Philox stream (``_checks.stateless_rng``) that feeds the matching
``random_*`` function. As in tf, a batch draws one value per image from that one stream. The streams
are numpy's, not TensorFlow's: values follow the same distributions, not the same draws.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ._checks import stateless_rng
from .color import random_brightness, random_contrast
from .crop import random_crop
from .flip import random_flip_left_right, random_flip_up_down
from .hsv import random_hue, random_saturation
from .jpeg_quality import random_jpeg_quality


def _run(fn: str, random_fn: Callable[..., np.ndarray], seed: Any, *args: Any) -> np.ndarray:
    rng = stateless_rng(seed, fn)
    try:
        return random_fn(*args, rng=rng)
    except InvalidArgumentError as exc:  # name the function the user called
        raise InvalidArgumentError(str(exc).replace(f"{random_fn.__name__}:", f"{fn}:", 1)) from None


def stateless_random_flip_left_right(image: Any, seed: Any) -> np.ndarray:
    """Mirror horizontally with probability 1/2 (per image), decided by ``seed``.

    >>> image = np.arange(3).reshape(1, 3, 1)
    >>> a = stateless_random_flip_left_right(image, seed=(1, 2))
    >>> (a == stateless_random_flip_left_right(image, seed=(1, 2))).all()
    np.True_
    """
    return _run("stateless_random_flip_left_right", random_flip_left_right, seed, image)


def stateless_random_flip_up_down(image: Any, seed: Any) -> np.ndarray:
    """Mirror vertically with probability 1/2 (per image), decided by ``seed``.

    >>> stateless_random_flip_up_down(np.zeros((2, 4, 4, 1)), seed=(0, 0)).shape
    (2, 4, 4, 1)
    """
    return _run("stateless_random_flip_up_down", random_flip_up_down, seed, image)


def stateless_random_brightness(image: Any, max_delta: float, seed: Any) -> np.ndarray:
    """``adjust_brightness`` by a delta in ``[-max_delta, max_delta)`` decided by ``seed``.

    >>> out = stateless_random_brightness(np.full((2, 2, 1), 0.5, np.float32), 0.2, seed=(3, 4))
    >>> bool(0.3 <= out.min() <= 0.7)
    True
    """
    return _run("stateless_random_brightness", random_brightness, seed, image, max_delta)


def stateless_random_contrast(image: Any, lower: float, upper: float, seed: Any) -> np.ndarray:
    """``adjust_contrast`` by a factor in ``[lower, upper)`` decided by ``seed``.

    >>> stateless_random_contrast(np.zeros((4, 4, 3), np.uint8), 0.5, 1.5, seed=(1, 1)).dtype
    dtype('uint8')
    """
    return _run("stateless_random_contrast", random_contrast, seed, image, lower, upper)


def stateless_random_saturation(image: Any, lower: float, upper: float, seed: Any) -> np.ndarray:
    """``adjust_saturation`` by a factor in ``[lower, upper)`` decided by ``seed``.

    >>> stateless_random_saturation(np.zeros((4, 4, 3), np.float32), 0.5, 1.5, seed=(1, 1)).shape
    (4, 4, 3)
    """
    return _run("stateless_random_saturation", random_saturation, seed, image, lower, upper)


def stateless_random_hue(image: Any, max_delta: float, seed: Any) -> np.ndarray:
    """``adjust_hue`` by a delta in ``[-max_delta, max_delta)`` (``max_delta`` <= 0.5) decided by ``seed``.

    >>> stateless_random_hue(np.zeros((4, 4, 3), np.float32), 0.2, seed=(1, 1)).shape
    (4, 4, 3)
    """
    return _run("stateless_random_hue", random_hue, seed, image, max_delta)


def stateless_random_jpeg_quality(
    image: Any, min_jpeg_quality: int, max_jpeg_quality: int, seed: Any
) -> np.ndarray:
    """``adjust_jpeg_quality`` at a quality in ``[min_jpeg_quality, max_jpeg_quality)`` decided by ``seed``.

    >>> stateless_random_jpeg_quality(np.zeros((8, 8, 3), np.uint8), 50, 90, seed=(1, 1)).shape
    (8, 8, 3)
    """
    return _run(
        "stateless_random_jpeg_quality", random_jpeg_quality, seed, image, min_jpeg_quality, max_jpeg_quality
    )


def stateless_random_crop(value: Any, size: Any, seed: Any) -> np.ndarray:
    """A window of ``size`` (``(h, w)`` or the value's full rank, as ``random_crop``) placed by ``seed``.

    >>> stateless_random_crop(np.arange(100).reshape(10, 10, 1), (3, 3), seed=(5, 5)).shape
    (3, 3, 1)
    """
    return _run("stateless_random_crop", random_crop, seed, value, size)
