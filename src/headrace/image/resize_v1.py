"""TF1's resizing (``tf.compat.v1.image``): ``resize_images`` and the four ``resize_*`` ops.

Their grid differs from TF2's: output pixel ``i`` samples input position ``i * scale`` (no half-pixel
offset), or the corners line up with ``align_corners=True``. ImageNet evaluation code written for TF1
relies on it: the same image through TF2's ``resize`` differs by tens of levels at edges. These are
``resize`` with ``half_pixel_centers=False``; results equal tf.compat.v1's (see docs/image.md).
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ._checks import as_image
from .resize import _size, resize


class ResizeMethodV1(enum.IntEnum):
    """tf.compat.v1.image.ResizeMethod: integer method codes of ``resize_images``."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def resize_images(
    images: Any,
    size: Any,
    method: Any = ResizeMethodV1.BILINEAR,
    align_corners: bool = False,
    preserve_aspect_ratio: bool = False,
    name: str | None = None,
) -> np.ndarray:
    """tf.compat.v1.image.resize_images: TF1's grid, and the input returned unchanged at its own size.

    ``method`` is a ``ResizeMethodV1`` (0 to 3) or a name: bilinear, nearest, bicubic or area.

    >>> image = np.array([[0.0, 10.0]], np.float32).reshape(1, 2, 1)
    >>> resize_images(image, (1, 4))[0, :, 0].tolist()
    [0.0, 5.0, 10.0, 10.0]
    """
    fn = "resize_images"
    array = as_image(images, fn)
    if not preserve_aspect_ratio and tuple(array.shape[-3:-1]) == _size(size, fn):
        return array  # tf1's skip_resize_if_same: no copy, no dtype change
    return resize(
        array,
        size,
        method,
        preserve_aspect_ratio=preserve_aspect_ratio,
        align_corners=align_corners,
        half_pixel_centers=False,
    )


def resize_bilinear(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> np.ndarray:
    """tf.compat.v1.image.resize_bilinear (float32 result).

    >>> resize_bilinear(np.array([[[0.0], [4.0]]], np.float32), (1, 3), align_corners=True)[0, :, 0].tolist()
    [0.0, 2.0, 4.0]
    """
    return resize(
        images, size, "bilinear", align_corners=align_corners, half_pixel_centers=half_pixel_centers
    )


def resize_nearest_neighbor(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> np.ndarray:
    """tf.compat.v1.image.resize_nearest_neighbor (keeps the dtype).

    >>> resize_nearest_neighbor(np.array([[[1], [2]]], np.uint8), (1, 4))[0, :, 0].tolist()
    [1, 1, 2, 2]
    """
    return resize(images, size, "nearest", align_corners=align_corners, half_pixel_centers=half_pixel_centers)


def resize_bicubic(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> np.ndarray:
    """tf.compat.v1.image.resize_bicubic: Keys' cubic with a=-0.75 on TF1's grid (a=-0.5 with half-pixel centres).

    >>> float(resize_bicubic(np.full((3, 3, 1), 7.0, np.float32), (5, 5)).max().round(4))
    7.0
    """
    return resize(images, size, "bicubic", align_corners=align_corners, half_pixel_centers=half_pixel_centers)


def resize_area(images: Any, size: Any, align_corners: bool = False, name: str | None = None) -> np.ndarray:
    """tf.compat.v1.image.resize_area: the mean of the input pixels each output pixel covers.

    >>> resize_area(np.arange(4, dtype=np.float32).reshape(1, 4, 1), (1, 2))[0, :, 0].tolist()
    [0.5, 2.5]
    """
    return resize(images, size, "area", align_corners=align_corners, half_pixel_centers=False)
