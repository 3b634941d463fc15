"""Writes tf_reference.npz: TensorFlow's outputs for small fixed inputs, which the tests compare against
without TensorFlow installed. Run with TensorFlow available: ``python tests/image/data/make_tf_reference.py``."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(12)
    return {
        "image": rng.uniform(0, 1, (6, 7, 2)).astype(np.float32),
        "batch": rng.uniform(0, 1, (2, 5, 6, 3)).astype(np.float32),
        "boxes": np.array([[0.1, 0.2, 0.9, 0.7], [-0.2, 0.5, 0.6, 1.3], [0.8, 0.9, 0.1, 0.2]], np.float32),
        "a": rng.integers(0, 256, (2, 16, 16, 3)).astype(np.uint8),
        "b": rng.integers(0, 256, (2, 16, 16, 3)).astype(np.uint8),
    }


def main() -> None:
    data = inputs()
    out = dict(data)
    image = data["image"]
    for size in ((4, 5), (9, 11)):
        tag = f"{size[0]}x{size[1]}"
        for method in METHODS:
            for antialias in (False, True):
                out[f"resize/{method}/{antialias}/{tag}"] = tf.image.resize(
                    image, size, method, antialias=antialias
                ).numpy()
        v1 = tf.compat.v1.image
        for align in (False, True):
            out[f"v1/bilinear/{align}/{tag}"] = v1.resize_bilinear(
                image[None], size, align_corners=align
            ).numpy()[0]
            out[f"v1/nearest/{align}/{tag}"] = v1.resize_nearest_neighbor(
                image[None], size, align_corners=align
            ).numpy()[0]
            out[f"v1/bicubic/{align}/{tag}"] = v1.resize_bicubic(
                image[None], size, align_corners=align
            ).numpy()[0]
            out[f"v1/area/{align}/{tag}"] = v1.resize_area(image[None], size, align_corners=align).numpy()[0]
    for method in ("bilinear", "nearest"):
        out[f"crop_and_resize/{method}"] = tf.image.crop_and_resize(
            data["batch"], data["boxes"], [0, 1, 1], (4, 3), method=method, extrapolation_value=-1.0
        ).numpy()
    out["psnr"] = tf.image.psnr(data["a"], data["b"], 255).numpy()
    out["ssim"] = tf.image.ssim(data["a"], data["b"], 255, filter_size=7).numpy()
    out["total_variation"] = tf.image.total_variation(tf.constant(data["batch"])).numpy()
    out["rgb_to_yuv"] = tf.image.rgb_to_yuv(data["batch"]).numpy()
    out["rgb_to_yiq"] = tf.image.rgb_to_yiq(data["batch"]).numpy()
    out["extract_patches"] = tf.image.extract_patches(
        data["batch"], [1, 2, 3, 1], [1, 2, 2, 1], [1, 2, 1, 1], "SAME"
    ).numpy()
    np.savez_compressed(Path(__file__).with_name("tf_reference.npz"), **out)


if __name__ == "__main__":
    main()
