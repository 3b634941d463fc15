"""Image decoding, encoding and augmentation: numpy in, numpy out, tf.image's names and semantics.

Every augmentation takes one ``(H, W, C)`` image or an ``(N, H, W, C)`` batch; random ones take
``rng`` (a numpy Generator, as ``map(..., seed=S)`` provides) and draw independently per image.

>>> import numpy as np
>>> import headrace.image as hi
>>> rng = np.random.default_rng(0)
>>> image = hi.decode_jpeg(hi.encode_jpeg(np.zeros((32, 32, 3), np.uint8)))
>>> out = hi.random_flip_left_right(hi.random_crop(image, (24, 24), rng=rng), rng=rng)
>>> hi.resize(out, (16, 16)).shape
(16, 16, 3)
"""

from .bounding_box import sample_distorted_bounding_box, stateless_sample_distorted_bounding_box
from .color import (
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    grayscale_to_rgb,
    random_brightness,
    random_contrast,
    rgb_to_grayscale,
)
from .colorspace import rgb_to_yiq, rgb_to_yuv, yiq_to_rgb, yuv_to_rgb
from .convert import convert_image_dtype, saturate_cast
from .crop import central_crop, crop_to_bounding_box, random_crop, resize_with_crop_or_pad
from .crop_and_resize import crop_and_resize
from .cutout import cutout, random_cutout
from .decode import (
    ImageDecodeError,
    decode_batch,
    decode_image,
    decode_jpeg,
    decode_png,
    extract_jpeg_shape,
    sniff_format,
)
from .decode_crop import decode_and_crop_jpeg, decode_crop_and_resize_jpeg
from .encode import encode_jpeg, encode_png
from .flip import flip_left_right, flip_up_down, random_flip_left_right, random_flip_up_down, transpose
from .hsv import adjust_hue, adjust_saturation, hsv_to_rgb, random_hue, random_saturation, rgb_to_hsv
from .jpeg_quality import adjust_jpeg_quality, random_jpeg_quality
from .metrics import psnr, ssim, total_variation
from .normalize import normalize, per_image_standardization
from .pad import pad, pad_to_bounding_box
from .patches import extract_patches
from .resize import ResizeMethod, resize, resize_with_pad
from .resize_v1 import (
    ResizeMethodV1,
    resize_area,
    resize_bicubic,
    resize_bilinear,
    resize_images,
    resize_nearest_neighbor,
)
from .rotate import random_rotate, rot90, rotate
from .stateless import (
    stateless_random_brightness,
    stateless_random_contrast,
    stateless_random_crop,
    stateless_random_flip_left_right,
    stateless_random_flip_up_down,
    stateless_random_hue,
    stateless_random_jpeg_quality,
    stateless_random_saturation,
)
from .synthetic import synthetic_image, synthetic_images

__all__ = [
    "ImageDecodeError",
    "ResizeMethod",
    "ResizeMethodV1",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_jpeg_quality",
    "adjust_saturation",
    "central_crop",
    "convert_image_dtype",
    "crop_and_resize",
    "crop_to_bounding_box",
    "cutout",
    "decode_and_crop_jpeg",
    "decode_batch",
    "decode_crop_and_resize_jpeg",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "encode_jpeg",
    "encode_png",
    "extract_jpeg_shape",
    "extract_patches",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "hsv_to_rgb",
    "normalize",
    "pad",
    "pad_to_bounding_box",
    "per_image_standardization",
    "psnr",
    "random_brightness",
    "random_contrast",
    "random_crop",
    "random_cutout",
    "random_flip_left_right",
    "random_flip_up_down",
    "random_hue",
    "random_jpeg_quality",
    "random_rotate",
    "random_saturation",
    "resize",
    "resize_area",
    "resize_bicubic",
    "resize_bilinear",
    "resize_images",
    "resize_nearest_neighbor",
    "resize_with_crop_or_pad",
    "resize_with_pad",
    "rgb_to_grayscale",
    "rgb_to_hsv",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "rot90",
    "rotate",
    "sample_distorted_bounding_box",
    "saturate_cast",
    "sniff_format",
    "ssim",
    "stateless_random_brightness",
    "stateless_random_contrast",
    "stateless_random_crop",
    "stateless_random_flip_left_right",
    "stateless_random_flip_up_down",
    "stateless_random_hue",
    "stateless_random_jpeg_quality",
    "stateless_random_saturation",
    "stateless_sample_distorted_bounding_box",
    "synthetic_image",
    "synthetic_images",
    "total_variation",
    "transpose",
    "yiq_to_rgb",
    "yuv_to_rgb",
]
