"""headrace.image against TensorFlow's recorded outputs (tests/data/tf_fixtures/image.*, written by
tools/record_tf_fixtures.py), without TensorFlow: the comparisons of the live ``*_equals_tensorflow``
tests, with their inputs stored beside tf's outputs and their tolerances (exact unless the case says
``atol=`` / ``rtol=,atol=``). Each group below is one live test; its cases name the op and arguments."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import headrace.image as hi
from tests.helpers.tf_fixtures import load_json, load_npz

CASES = load_json("image.json")
ARRAYS = load_npz("image.npz")
GROUPS = collections.defaultdict(list)
for _case in CASES:
    _parts = _case["key"].split("/")
    GROUPS["/".join(_parts[:2]) if _parts[0] in ("color", "hsv", "rotate", "resize") else _parts[0]].append(
        _case
    )


def _pad(image, paddings, mode):
    return hi.pad(image, tuple(tuple(p) for p in paddings), mode)


OPS = {
    "adjust_brightness": hi.adjust_brightness,
    "adjust_contrast": hi.adjust_contrast,
    "adjust_gamma": hi.adjust_gamma,
    "rgb_to_grayscale": hi.rgb_to_grayscale,
    "grayscale_to_rgb": hi.grayscale_to_rgb,
    "adjust_saturation": hi.adjust_saturation,
    "adjust_hue": hi.adjust_hue,
    "rgb_to_hsv": hi.rgb_to_hsv,
    "hsv_to_rgb": hi.hsv_to_rgb,
    "rotate": lambda x, angles, **kw: hi.rotate(x, np.asarray(angles), **kw),
    "resize": lambda x, size, **kw: hi.resize(x, tuple(size), **kw),
    "resize_v1": lambda x, size, method, align_corners: hi.resize(
        x, tuple(size), method, align_corners=align_corners, half_pixel_centers=False
    ),
    "resize_with_pad": hi.resize_with_pad,
    "convert_image_dtype": lambda x, dtype, saturate: hi.convert_image_dtype(
        x, np.dtype(dtype), saturate=saturate
    ),
    "central_crop": hi.central_crop,
    "resize_with_crop_or_pad": hi.resize_with_crop_or_pad,
    "crop_to_bounding_box": hi.crop_to_bounding_box,
    "decode_jpeg": hi.decode_jpeg,
    "decode_batch_second": lambda data: hi.decode_batch([data, data])[1],
    "decode_png": lambda data, dtype="uint8": hi.decode_png(data, dtype=np.dtype(dtype)),
    "decode_image": hi.decode_image,
    "decode_and_crop_jpeg": hi.decode_and_crop_jpeg,
    "flip_left_right": hi.flip_left_right,
    "flip_up_down": hi.flip_up_down,
    "transpose": hi.transpose,
    "adjust_jpeg_quality": hi.adjust_jpeg_quality,
    "per_image_standardization": hi.per_image_standardization,
    "pad_to_bounding_box": hi.pad_to_bounding_box,
    "pad": _pad,
    "rot90": hi.rot90,
}


def check(ours, theirs, how: str, where: str) -> None:
    ours = np.asarray(ours)
    assert ours.shape == theirs.shape, f"{where}: shape {ours.shape}, tf {theirs.shape}"
    if how.startswith("exact"):
        if how == "exact+dtype":
            assert ours.dtype == theirs.dtype, f"{where}: dtype {ours.dtype}, tf {theirs.dtype}"
        np.testing.assert_array_equal(ours, theirs, err_msg=where)
        return
    tolerances = dict(part.split("=") for part in how.split(","))
    np.testing.assert_allclose(
        ours,
        theirs,
        rtol=float(tolerances.get("rtol", 0)),
        atol=float(tolerances["atol"]),
        err_msg=where,
    )


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_equals_recorded_tensorflow(group):
    for case in GROUPS[group]:
        value = ARRAYS["in/" + case["input"]]
        if case["op"].startswith("decode"):
            value = value.tobytes()
        check(
            OPS[case["op"]](value, **case["kwargs"]), ARRAYS["out/" + case["key"]], case["check"], case["key"]
        )


def test_every_recorded_op_is_checked():
    assert {case["op"] for case in CASES} == set(OPS)
    assert len(GROUPS) >= 15  # the 15 live tests (color, hsv, resize and rotate per dtype)


def test_tensorflow_read_our_png_and_its_jpeg_is_close_to_ours():
    # test_encode.py's live test: tf.io.decode_png(headrace's PNG) gave the image (case encode/png), and
    # TensorFlow's JPEG of the image is about the size of ours and decodes close to it.
    image = ARRAYS["in/encode/image"]
    np.testing.assert_array_equal(ARRAYS["out/encode/png"], image)
    np.testing.assert_array_equal(hi.decode_png(hi.encode_png(image)), image)
    ours, theirs = hi.encode_jpeg(image, quality=90), ARRAYS["in/encode/tf_jpeg"].tobytes()
    assert abs(len(theirs) - len(ours)) < 0.1 * len(ours)
    assert np.abs(hi.decode_jpeg(theirs).astype(int) - hi.decode_jpeg(ours)).mean() < 2
    # the PNG headrace writes today has the header (size, bit depth, colour type) TensorFlow accepted
    assert hi.encode_png(image)[:29] == ARRAYS["in/encode/png"].tobytes()[:29]
