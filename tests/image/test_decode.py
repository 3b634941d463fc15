"""decode_jpeg / decode_png / decode_image / decode_batch / extract_jpeg_shape."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

import headrace as hr
from headrace.core.errors import DataLossError, InvalidArgumentError, StructureError
from headrace.image import (
    ImageDecodeError,
    decode_batch,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    sniff_format,
)
from tests.image.conftest import random_image


def _pillow_bytes(array: np.ndarray, fmt: str, **kwargs) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, fmt, **kwargs)
    return buffer.getvalue()


def test_jpeg_round_trip_is_close_and_shaped():
    image = random_image((40, 30, 3))
    out = decode_jpeg(
        encode_jpeg(image, quality=95, chroma_downsampling=False), dct_method="INTEGER_ACCURATE"
    )
    assert out.shape == (40, 30, 3) and out.dtype == np.uint8
    assert np.abs(out.astype(int) - image).mean() < 4


def test_jpeg_matches_pillow_pixels_exactly():
    data = encode_jpeg(random_image((33, 47, 3)), quality=80)
    expected = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    np.testing.assert_array_equal(decode_jpeg(data, dct_method="INTEGER_ACCURATE"), expected)


def test_jpeg_channels():
    color = encode_jpeg(random_image((16, 16, 3)))
    gray = encode_jpeg(random_image((16, 16, 1)))
    assert decode_jpeg(color).shape == (16, 16, 3)
    assert decode_jpeg(gray).shape == (16, 16, 1)
    assert decode_jpeg(color, channels=1).shape == (16, 16, 1)
    assert decode_jpeg(gray, channels=3).shape == (16, 16, 3)
    assert decode_image(gray, channels=3).shape == (16, 16, 3)


@pytest.mark.parametrize("ratio", [1, 2, 4, 8])
def test_jpeg_ratio_downscales_with_ceiling(ratio):
    data = encode_jpeg(random_image((101, 75, 3)))
    assert decode_jpeg(data, ratio=ratio).shape == (-(-101 // ratio), -(-75 // ratio), 3)


def test_jpeg_decoder_options_change_pixels_a_little():
    image = random_image((64, 64, 3))
    data = encode_jpeg(image)
    default = decode_jpeg(data).astype(int)
    np.testing.assert_array_equal(default, decode_jpeg(data, dct_method="INTEGER_FAST"))
    accurate = decode_jpeg(data, dct_method="INTEGER_ACCURATE").astype(int)
    blocky = decode_jpeg(data, fancy_upscaling=False).astype(int)
    assert 0 < np.abs(default - accurate).mean() < 3
    assert 0 < np.abs(default - blocky).mean() < 12


def test_cmyk_jpeg_decodes_to_rgb():
    image = random_image((24, 24, 3))
    buffer = io.BytesIO()
    Image.fromarray(image).convert("CMYK").save(buffer, "JPEG", quality=95)
    data = buffer.getvalue()
    out = decode_jpeg(data)
    assert out.shape == (24, 24, 3)
    assert np.abs(out.astype(int) - image).mean() < 12


def test_truncated_jpeg_raises_then_recovers():
    data = encode_jpeg(random_image((64, 64, 3)))
    truncated = data[: len(data) // 2]
    with pytest.raises(ImageDecodeError, match="try_recover_truncated"):
        decode_jpeg(truncated)
    assert decode_jpeg(truncated, try_recover_truncated=True).shape == (64, 64, 3)


@pytest.mark.parametrize(
    "contents, match",
    [
        (b"", "empty"),
        (b"hello world, not an image", "not a JPEG"),
        (b"BM" + b"\0" * 40, "it is a BMP: use decode_image"),
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 20, "damaged or unsupported PNG"),  # PNG bytes decode, as in TF
        (b"\xff\xd8\xff" + b"\0" * 30, "not a readable JPEG"),
    ],
)
def test_bad_jpeg_bytes_raise_decode_error(contents, match):
    with pytest.raises(ImageDecodeError, match=match) as info:
        decode_jpeg(contents)
    assert isinstance(info.value, DataLossError)
    assert "decode_jpeg" in str(info.value)


def test_decode_errors_are_headrace_errors():
    assert issubclass(ImageDecodeError, hr.HeadraceError)
    assert issubclass(ImageDecodeError, hr.DataLossError)


@pytest.mark.parametrize(
    "contents, match",
    [
        ("a/path.jpg", "is a str"),
        (123, "has type int"),
        (np.zeros((2, 2), np.uint8), "has type ndarray with shape"),
    ],
)
def test_wrong_argument_types(contents, match):
    with pytest.raises(InvalidArgumentError, match=match):
        decode_image(contents)


def test_accepts_bytes_like_containers():
    data = encode_png(random_image((4, 5, 3)))
    expected = decode_png(data)
    holder = np.empty((), dtype=object)
    holder[()] = data
    for form in (bytearray(data), memoryview(data), np.bytes_(data), holder, np.frombuffer(data, np.uint8)):
        np.testing.assert_array_equal(decode_image(form), expected)


def test_bad_arguments():
    data = encode_jpeg(random_image((8, 8, 3)))
    with pytest.raises(InvalidArgumentError, match="channels=2"):
        decode_jpeg(data, channels=2)
    with pytest.raises(InvalidArgumentError, match="ratio=3"):
        decode_jpeg(data, ratio=3)
    with pytest.raises(InvalidArgumentError, match="dct_method"):
        decode_jpeg(data, dct_method="FLOAT")
    with pytest.raises(InvalidArgumentError, match="dtype"):
        decode_png(encode_png(random_image((4, 4, 1))), dtype=np.float32)
    with pytest.raises(InvalidArgumentError, match="channels=4 is not allowed for a JPEG"):
        decode_image(data, channels=4)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_png_round_trip_is_exact(channels):
    image = random_image((9, 7, channels))
    np.testing.assert_array_equal(decode_png(encode_png(image)), image)


def test_png_16_bit():
    image = (random_image((6, 6, 1)).astype(np.uint16) * 257) + 3
    data = encode_png(image)
    np.testing.assert_array_equal(decode_png(data, dtype=np.uint16), image)
    np.testing.assert_array_equal(decode_png(data), (image >> 8).astype(np.uint8))
    assert decode_image(data, dtype=np.uint16).dtype == np.uint16


def test_png_channel_conversions():
    rgba = random_image((5, 5, 4))
    data = encode_png(rgba)
    np.testing.assert_array_equal(decode_png(data, channels=3), rgba[:, :, :3])
    gray = random_image((5, 5, 1))
    out = decode_png(encode_png(gray), channels=4)
    np.testing.assert_array_equal(out[:, :, 0], gray[:, :, 0])
    assert (out[:, :, 3] == 255).all()
    # 8-bit to uint16 scales by 257 (0 -> 0, 255 -> 65535)
    np.testing.assert_array_equal(decode_png(encode_png(gray), dtype=np.uint16), gray.astype(np.uint16) * 257)


def test_palette_png_decodes_to_rgb():
    image = random_image((8, 8, 3))
    data = _pillow_bytes(np.asarray(Image.fromarray(image).quantize(16).convert("RGB")), "PNG")
    palette = _pillow_bytes(np.asarray(Image.fromarray(image).quantize(16)), "PNG")  # saved as mode L
    assert decode_png(data).shape == (8, 8, 3)
    assert decode_png(palette).shape == (8, 8, 1)
    buffer = io.BytesIO()
    Image.fromarray(image).quantize(16).save(buffer, "PNG")  # a true palette PNG
    out = decode_png(buffer.getvalue())
    assert out.shape == (8, 8, 3)
    np.testing.assert_array_equal(out, np.asarray(Image.fromarray(image).quantize(16).convert("RGB")))


def test_damaged_png():
    data = encode_png(random_image((16, 16, 3)))
    with pytest.raises(ImageDecodeError, match="damaged or unsupported PNG"):
        decode_png(data[:40])


@pytest.mark.parametrize("fmt", ["GIF", "BMP", "WEBP"])
def test_other_formats_through_decode_image(fmt):
    image = random_image((10, 12, 3))
    data = _pillow_bytes(image, fmt, **({"lossless": True} if fmt == "WEBP" else {}))
    assert sniff_format(data) == fmt.lower()
    out = decode_image(data)
    assert out.shape == (10, 12, 3) and out.dtype == np.uint8
    if fmt != "GIF":  # GIF quantises to a palette
        np.testing.assert_array_equal(out, image)


def test_decode_jpeg_and_decode_png_take_each_others_bytes_and_one_frame_gifs_as_tf():
    # TF's decode_jpeg / decode_png run one kernel for JPEG, PNG and GIF (non-animated): either op
    # decodes either format, with the result of the matching op (or decode_image).
    image = random_image((10, 12, 3))
    jpeg, png, gif = encode_jpeg(image), encode_png(image), _pillow_bytes(image, "GIF")
    np.testing.assert_array_equal(decode_png(jpeg), decode_jpeg(jpeg))
    np.testing.assert_array_equal(decode_png(jpeg, channels=1), decode_jpeg(jpeg, channels=1))
    # TF scales a JPEG (or GIF) by 256 to uint16 (convert_image_dtype); an 8-bit PNG by 257 (libpng)
    np.testing.assert_array_equal(
        decode_png(jpeg, dtype=np.uint16), decode_jpeg(jpeg).astype(np.uint16) * 256
    )
    np.testing.assert_array_equal(decode_jpeg(png), image)
    np.testing.assert_array_equal(decode_jpeg(png, channels=1), decode_png(png, channels=1))
    np.testing.assert_array_equal(decode_jpeg(png, ratio=2, dct_method="INTEGER_ACCURATE"), image)
    for decode in (decode_jpeg, decode_png):
        np.testing.assert_array_equal(decode(gif), decode_image(gif, expand_animations=False))
        assert decode(gif).shape == (10, 12, 3)
    with pytest.raises(InvalidArgumentError, match="decode_png: channels=4 is not allowed for a JPEG"):
        decode_png(jpeg, channels=4)
    with pytest.raises(ImageDecodeError, match="decode_png: .* JPEG"):
        decode_png(jpeg[: len(jpeg) // 2])
    frames = [Image.fromarray(np.full((6, 6, 3), v, np.uint8)) for v in (0, 120, 250)]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:])
    with pytest.raises(ImageDecodeError, match="decode_jpeg: .* an animated GIF of 3 frames; decode_image"):
        decode_jpeg(buffer.getvalue())
    for fmt in ("BMP", "WEBP"):  # as TF, these need decode_image
        with pytest.raises(ImageDecodeError, match=f"it is a {fmt}: use decode_image"):
            decode_png(_pillow_bytes(image, fmt))
        with pytest.raises(ImageDecodeError, match=f"it is a {fmt}: use decode_image"):
            decode_jpeg(_pillow_bytes(image, fmt))


def test_animated_gif_frames():
    frames = [Image.fromarray(np.full((6, 6, 3), v, np.uint8)) for v in (0, 120, 250)]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:])
    data = buffer.getvalue()
    assert decode_image(data).shape == (3, 6, 6, 3)
    assert decode_image(data, expand_animations=False).shape == (6, 6, 3)


def test_decode_image_float_dtype_and_unknown_format():
    data = encode_png(np.array([[[0, 255, 51]]], np.uint8))
    np.testing.assert_allclose(decode_image(data, dtype=np.float32)[0, 0], [0.0, 1.0, 0.2], rtol=1e-6)
    with pytest.raises(ImageDecodeError, match="not an image in a supported format"):
        decode_image(b"GIF88?garbage")
    with pytest.raises(ImageDecodeError, match="empty"):
        decode_image(b"")


def test_extract_jpeg_shape():
    assert extract_jpeg_shape(encode_jpeg(random_image((13, 21, 3)))).tolist() == [13, 21, 3]
    assert extract_jpeg_shape(encode_jpeg(random_image((13, 21, 1)))).tolist() == [13, 21, 1]
    with pytest.raises(ImageDecodeError, match="not a JPEG"):
        extract_jpeg_shape(b"nope")


def test_decode_batch_mixed_formats_equals_per_image():
    images = [random_image((12, 10, 3), seed=i) for i in range(4)]
    encoded = [encode_jpeg(images[0]), encode_png(images[1]), encode_jpeg(images[2]), encode_png(images[3])]
    out = decode_batch(np.array(encoded, dtype=object))
    assert out.shape == (4, 12, 10, 3)
    for i, data in enumerate(encoded):
        np.testing.assert_array_equal(out[i], decode_image(data))
    assert decode_batch(encoded, channels=1).shape == (4, 12, 10, 1)


def test_decode_batch_errors_name_the_image():
    good = encode_jpeg(random_image((8, 8, 3)))
    with pytest.raises(StructureError, match="image 1 is 9x8 but image 0 is 8x8"):
        decode_batch([good, encode_jpeg(random_image((9, 8, 3)))])
    with pytest.raises(StructureError, match="image 2 has shape"):
        decode_batch([good, good, encode_png(random_image((9, 8, 3)))])
    with pytest.raises(ImageDecodeError, match="image 1"):
        decode_batch([good, b"\xff\xd8\xff" + b"\0" * 10])
    with pytest.raises(ImageDecodeError, match="image 0"):
        decode_batch([b"junk"])
    with pytest.raises(InvalidArgumentError, match="empty"):
        decode_batch([])
    with pytest.raises(InvalidArgumentError, match="sequence of encoded images"):
        decode_batch(good)


def test_error_in_pipeline_names_stage_and_position():
    encoded = [encode_jpeg(random_image((8, 8, 3))), b"broken", encode_jpeg(random_image((8, 8, 3)))]
    iterator = iter(hr.Dataset.from_tensor_slices(np.array(encoded, dtype=object)).map(decode_jpeg))
    assert next(iterator).shape == (8, 8, 3)
    with pytest.raises(ImageDecodeError) as info:
        next(iterator)
    assert "on input element 1" in " ".join(getattr(info.value, "__notes__", []))
    assert next(iterator).shape == (8, 8, 3)  # the stage continues after the bad element


@pytest.mark.slow
def test_jpeg_equals_tensorflow(tf):
    for shape, kwargs in [
        ((37, 53, 3), {}),
        ((64, 64, 1), {}),
        ((48, 40, 3), {"chroma_downsampling": False}),
    ]:
        data = encode_jpeg(random_image(shape), quality=90, **kwargs)
        np.testing.assert_array_equal(decode_jpeg(data), tf.io.decode_jpeg(data).numpy())
        np.testing.assert_array_equal(
            decode_jpeg(data, channels=3), tf.io.decode_jpeg(data, channels=3).numpy()
        )
        for options in ({"dct_method": "INTEGER_ACCURATE"}, {"fancy_upscaling": False}, {"channels": 1}):
            np.testing.assert_array_equal(
                decode_jpeg(data, **options), tf.io.decode_jpeg(data, **options).numpy()
            )
        np.testing.assert_array_equal(
            decode_batch([data, data])[1], tf.io.decode_jpeg(data, channels=3).numpy()
        )
        for ratio in (2, 4, 8):
            ours = decode_jpeg(data, ratio=ratio)
            theirs = tf.io.decode_jpeg(data, ratio=ratio).numpy()
            assert ours.shape == theirs.shape
            np.testing.assert_array_equal(ours, theirs)
    tf_encoded = tf.io.encode_jpeg(random_image((20, 30, 3)), quality=85).numpy()
    np.testing.assert_array_equal(decode_jpeg(tf_encoded), tf.io.decode_jpeg(tf_encoded).numpy())


@pytest.mark.slow
def test_png_equals_tensorflow(tf):
    for channels in (1, 3, 4):
        data = encode_png(random_image((11, 9, channels)))
        np.testing.assert_array_equal(decode_png(data), tf.io.decode_png(data).numpy())
        np.testing.assert_array_equal(decode_image(data), tf.io.decode_image(data).numpy())
    wide = (random_image((5, 4, 1)).astype(np.uint16) * 250) + 7
    data = encode_png(wide)
    np.testing.assert_array_equal(
        decode_png(data, dtype=np.uint16), tf.io.decode_png(data, dtype=tf.uint16).numpy()
    )
    np.testing.assert_array_equal(decode_png(data), tf.io.decode_png(data).numpy())


def test_without_the_image_extra_the_error_names_it(monkeypatch):
    # `pip install headrace` without [image]: no simplejpeg, no Pillow. The README's example decodes
    # JPEGs; its error must say what to install, not "No module named 'PIL'".
    import sys

    from headrace.image import _checks
    from headrace.image import decode as decode_module
    from headrace.image import encode as encode_module

    jpeg = hr.image.encode_jpeg(np.zeros((4, 4, 3), np.uint8))
    monkeypatch.setattr(_checks, "_PIL", None)  # Pillow as this process would have it if never imported
    monkeypatch.setattr(decode_module, "simplejpeg", None)
    monkeypatch.setattr(encode_module, "simplejpeg", None)
    for name in ("PIL", "PIL.Image", "PIL.ImageSequence"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails
    extra = r"pip install 'headrace\[image\]'"
    with pytest.raises(ImportError, match=rf"decode_jpeg needs Pillow .*{extra}"):
        hr.image.decode_jpeg(jpeg)
    with pytest.raises(ImportError, match=rf"needs Pillow .*{extra}"):
        hr.image.decode_batch([jpeg])
    with pytest.raises(ImportError, match=rf"encode_jpeg needs Pillow .*{extra}"):
        hr.image.encode_jpeg(np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(ImportError, match=rf"encode_png needs Pillow .*{extra}"):
        hr.image.encode_png(np.zeros((4, 4, 3), np.uint8))
