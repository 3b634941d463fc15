"""Linear colour spaces: ``rgb_to_yuv`` / ``yuv_to_rgb`` and ``rgb_to_yiq`` / ``yiq_to_rgb``, tf's matrices.

Float images only, as tf (convert integer images with ``convert_image_dtype`` first); RGB values are
in 0..1, Y in 0..1, U in [-0.436, 0.436], V in [-0.615, 0.615].
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ._checks import require_channels

# Columns map an RGB row vector to (Y, U, V) or (Y, I, Q): out = rgb @ matrix (tf.image's constants).
_RGB_TO_YUV = np.array(
    [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512], [0.114, 0.43601035, -0.10001026]]
)
_YUV_TO_RGB = np.array([[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]])
_RGB_TO_YIQ = np.array(
    [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955]]
)
_YIQ_TO_RGB = np.array(
    [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
)


def _apply(images: Any, matrix: np.ndarray, fn: str) -> np.ndarray:
    array = images if isinstance(images, np.ndarray) else np.asarray(images)
    if array.ndim < 1:
        raise InvalidArgumentError(f"{fn}: images has shape {array.shape}; expected [..., 3]")
    if array.dtype.kind != "f":
        raise InvalidArgumentError(
            f"{fn}: images has dtype {array.dtype}; expected a float dtype (values in 0..1): "
            "use convert_image_dtype(images, np.float32) first"
        )
    require_channels(array, fn, 3)
    return array @ matrix.astype(array.dtype)


def rgb_to_yuv(images: Any) -> np.ndarray:
    """RGB (0..1) to YUV, last axis of size 3.

    >>> rgb_to_yuv(np.array([1.0, 1.0, 1.0], np.float32)).round(4).tolist()
    [1.0, 0.0, 0.0]
    """
    return _apply(images, _RGB_TO_YUV, "rgb_to_yuv")


def yuv_to_rgb(images: Any) -> np.ndarray:
    """YUV to RGB, the inverse of ``rgb_to_yuv``.

    >>> yuv_to_rgb(np.array([0.5, 0.0, 0.0], np.float32)).tolist()
    [0.5, 0.5, 0.5]
    """
    return _apply(images, _YUV_TO_RGB, "yuv_to_rgb")


def rgb_to_yiq(images: Any) -> np.ndarray:
    """RGB (0..1) to YIQ, last axis of size 3.

    >>> rgb_to_yiq(np.array([0.0, 0.0, 0.0], np.float32)).tolist()
    [0.0, 0.0, 0.0]
    """
    return _apply(images, _RGB_TO_YIQ, "rgb_to_yiq")


def yiq_to_rgb(images: Any) -> np.ndarray:
    """YIQ to RGB, the inverse of ``rgb_to_yiq``.

    >>> yiq_to_rgb(np.array([0.25, 0.0, 0.0], np.float32)).tolist()
    [0.25, 0.25, 0.25]
    """
    return _apply(images, _YIQ_TO_RGB, "yiq_to_rgb")
