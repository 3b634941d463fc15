"""``sample_distorted_bounding_box``: the random crop window of the Inception / ImageNet recipe.

The sampler is TensorFlow's (``SampleDistortedBoundingBoxV2``) step for step: boxes scale to pixels by
truncation, a candidate's height is drawn between the heights that give ``area_range`` at the drawn
aspect ratio (``lrintf`` rounding, float32 arithmetic), and a candidate is kept once it covers at least
``min_object_covered`` of one box; after ``max_attempts`` failures the whole image is the window. The
random numbers come from numpy, so windows equal tf's in distribution, not draw for draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ._checks import resolve_rng, stateless_rng

_EPS = 0.0000001  # tf's kEps, a float in C++ promoted to double


def _pair(value: Any, default: tuple[float, float], fn: str, name: str) -> tuple[np.float32, np.float32]:
    try:
        values = np.asarray(default if value is None else value, dtype=np.float64)
    except (TypeError, ValueError):
        values = np.full(1, np.nan)
    if values.shape != (2,) or not np.all(np.isfinite(values)) or values[0] > values[1]:
        raise InvalidArgumentError(
            f"{fn}: {name}={value!r} is not allowed: two finite numbers (low, high), low <= high"
        )
    return np.float32(values[0]), np.float32(values[1])


def _rint(value: Any) -> int:
    return int(np.rint(np.float32(value)))  # lrintf: round half to even


def _random_crop(
    width: int, height: int, min_relative: np.float32, max_relative: np.float32, aspect: np.float32, rng
) -> tuple[int, int, int, int] | None:
    """tf's GenerateRandomCrop: ``(x, y, w, h)`` of a window with this aspect ratio, or None."""
    f32 = np.float32
    min_area = min_relative * f32(width) * f32(height)
    max_area = max_relative * f32(width) * f32(height)
    crop_height = _rint(np.sqrt(min_area / aspect))
    max_height = _rint(np.sqrt(max_area / aspect))
    if _rint(f32(max_height) * aspect) > width:
        max_height = int((width + 0.5 - float(f32(_EPS))) / float(aspect))
        if _rint(f32(max_height) * aspect) > width:
            max_height -= 1
    max_height = min(max_height, height)
    crop_height = min(crop_height, max_height)
    if crop_height < max_height:
        crop_height += int(rng.integers(0, max_height - crop_height + 1))
    crop_width = _rint(f32(crop_height) * aspect)
    area = f32(crop_width * crop_height)
    for _ in range(2):  # rounding may leave the area just below the minimum: try one pixel taller, twice
        if area < min_area:
            crop_height += 1
            crop_width = _rint(f32(crop_height) * aspect)
            area = f32(crop_width * crop_height)
    if not (min_area <= area <= max_area) or not (0 < crop_width <= width and 0 < crop_height <= height):
        return None
    # tf draws offsets in [0, size - crop) (exclusive), so a window never touches the far edge unless full.
    y = int(rng.integers(0, height - crop_height)) if crop_height < height else 0
    x = int(rng.integers(0, width - crop_width)) if crop_width < width else 0
    return x, y, crop_width, crop_height


def _covers(window: tuple[int, int, int, int], boxes: np.ndarray, min_object_covered: np.float32) -> bool:
    """tf's SatisfiesOverlapConstraints: the window covers enough of at least one non-empty box."""
    x, y, w, h = window
    if w * h < 1:
        return False
    for x_min, y_min, x_max, y_max in boxes.tolist():
        object_area = (x_max - x_min) * (y_max - y_min)
        if object_area < 1:
            continue
        overlap_w = min(x + w, x_max) - max(x, x_min)
        overlap_h = min(y + h, y_max) - max(y, y_min)
        overlap = overlap_w * overlap_h if overlap_w > 0 and overlap_h > 0 else 0
        if np.float32(overlap) / np.float32(object_area) >= min_object_covered:
            return True
    return False


def _sample(
    fn: str,
    image_size: Any,
    bounding_boxes: Any,
    rng: np.random.Generator,
    min_object_covered: Any,
    aspect_ratio_range: Any,
    area_range: Any,
    max_attempts: Any,
    use_image_if_no_bounding_boxes: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    size = np.asarray(image_size)
    if size.ndim != 1 or size.shape[0] not in (2, 3) or size.dtype.kind not in "ui" or np.any(size <= 0):
        raise InvalidArgumentError(
            f"{fn}: image_size={image_size!r} is not allowed: [height, width, channels] ints > 0 "
            "(e.g. extract_jpeg_shape(contents) or image.shape)"
        )
    height, width = int(size[0]), int(size[1])
    try:
        boxes = np.asarray(bounding_boxes, dtype=np.float32)
    except (TypeError, ValueError):
        boxes = np.zeros(0, np.float32)
    if boxes.ndim not in (2, 3) or boxes.shape[-1] != 4:
        raise InvalidArgumentError(
            f"{fn}: bounding_boxes has shape {boxes.shape}; expected [batch, num_boxes, 4] (or [num_boxes, 4]) "
            "of [ymin, xmin, ymax, xmax] in 0..1"
        )
    boxes = boxes.reshape(-1, 4)
    if np.any(~((boxes >= 0) & (boxes <= 1))):
        bad = int(np.flatnonzero(np.any(~((boxes >= 0) & (boxes <= 1)), axis=1))[0])
        raise InvalidArgumentError(
            f"{fn}: bounding box {bad} is {boxes[bad].tolist()}; all coordinates must be in [0.0, 1.0]"
        )
    try:
        covered = np.float32(min_object_covered)
    except (TypeError, ValueError):
        covered = np.float32(np.nan)
    if not (np.isfinite(covered) and covered >= 0):
        raise InvalidArgumentError(
            f"{fn}: min_object_covered={min_object_covered!r} is not allowed: a number >= 0"
        )
    aspect_low, aspect_high = _pair(aspect_ratio_range, (0.75, 1.33), fn, "aspect_ratio_range")
    if aspect_low <= 0:
        raise InvalidArgumentError(
            f"{fn}: aspect_ratio_range={aspect_ratio_range!r} is not allowed: both > 0"
        )
    area_low, area_high = _pair(area_range, (0.05, 1.0), fn, "area_range")
    if not (0 < area_low and area_high <= 1):
        raise InvalidArgumentError(f"{fn}: area_range={area_range!r} is not allowed: both in (0, 1]")
    attempts = 100 if max_attempts is None else max_attempts
    if isinstance(attempts, bool) or not isinstance(attempts, (int, np.integer)) or attempts < 1:
        raise InvalidArgumentError(f"{fn}: max_attempts={max_attempts!r} is not allowed: an int >= 1")
    # tf scales the normalised boxes to pixels by truncation, in float32.
    pixels = (boxes[:, [1, 0, 3, 2]] * np.array([width, height, width, height], np.float32)).astype(np.int64)
    if len(pixels) == 0:
        if not use_image_if_no_bounding_boxes:
            raise InvalidArgumentError(
                f"{fn}: bounding_boxes is empty; pass at least one box, or use_image_if_no_bounding_boxes=True "
                "to treat the whole image as the object"
            )
        pixels = np.array([[0, 0, width, height]], dtype=np.int64)
    window = None
    for _ in range(int(attempts)):
        aspect = np.float32(rng.random(dtype=np.float32)) * (aspect_high - aspect_low) + aspect_low
        candidate = _random_crop(width, height, area_low, area_high, aspect, rng)
        if candidate is not None and _covers(candidate, pixels, covered):
            window = candidate
            break
    x, y, w, h = window if window is not None else (0, 0, width, height)
    # tf returns image_size's dtype; a Python list becomes int32 there.
    out_dtype = (
        size.dtype if isinstance(image_size, np.ndarray) and size.dtype.kind == "i" else np.dtype(np.int32)
    )
    begin = np.array([y, x, 0], dtype=out_dtype)
    extent = np.array([h, w, -1], dtype=out_dtype)
    bboxes = np.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]], dtype=np.float32)
    return begin, extent, bboxes


def sample_distorted_bounding_box(
    image_size: Any,
    bounding_boxes: Any,
    seed: int | None = None,
    min_object_covered: float = 0.1,
    aspect_ratio_range: Any = None,
    area_range: Any = None,
    max_attempts: int | None = None,
    use_image_if_no_bounding_boxes: bool | None = None,
    name: str | None = None,
    *,
    rng: np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random crop window covering part of an object: ``(begin, size, bboxes)``, as tf.image.

    ``bounding_boxes`` are ``[ymin, xmin, ymax, xmax]`` in 0..1 (``[batch, n, 4]``). The window has an
    aspect ratio in ``aspect_ratio_range`` (default (0.75, 1.33)), an area fraction in ``area_range``
    (default (0.05, 1.0)) and covers at least ``min_object_covered`` of some box; after
    ``max_attempts`` (default 100) tries it is the whole image. ``begin``/``size`` feed
    ``image[begin[0]:begin[0] + size[0], begin[1]:begin[1] + size[1]]`` (or ``tf.slice``), and
    ``decode_and_crop_jpeg`` takes ``[begin[0], begin[1], size[0], size[1]]`` as its crop window.

    >>> begin, size, bboxes = sample_distorted_bounding_box(
    ...     [480, 640, 3], [[[0.0, 0.0, 1.0, 1.0]]], area_range=(0.08, 1.0), rng=np.random.default_rng(0))
    >>> begin.tolist(), size.tolist(), bboxes.shape
    ([62, 52, 0], [357, 444, -1], (1, 1, 4))
    """
    fn = "sample_distorted_bounding_box"
    return _sample(
        fn,
        image_size,
        bounding_boxes,
        resolve_rng(rng, seed, fn),
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
    )


def stateless_sample_distorted_bounding_box(
    image_size: Any,
    bounding_boxes: Any,
    seed: Any,
    min_object_covered: float = 0.1,
    aspect_ratio_range: Any = None,
    area_range: Any = None,
    max_attempts: int | None = None,
    use_image_if_no_bounding_boxes: bool | None = None,
    name: str | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sample_distorted_bounding_box`` drawn from a 2-int ``seed``: the same seed, the same window.

    >>> a = stateless_sample_distorted_bounding_box([100, 100, 3], [[[0.2, 0.2, 0.8, 0.8]]], seed=(1, 2))
    >>> b = stateless_sample_distorted_bounding_box([100, 100, 3], [[[0.2, 0.2, 0.8, 0.8]]], seed=(1, 2))
    >>> all((x == y).all() for x, y in zip(a, b))
    True
    """
    fn = "stateless_sample_distorted_bounding_box"
    return _sample(
        fn,
        image_size,
        bounding_boxes,
        stateless_rng(seed, fn),
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
    )
