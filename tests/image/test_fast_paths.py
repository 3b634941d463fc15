"""The per-call shortcuts of the image ops give what the long way gives: the same draws for a seed or a
generator, the same crops, and fresh streams for unseeded calls (per thread, per forked process)."""

from __future__ import annotations

import multiprocessing
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headrace.core.errors import InvalidArgumentError
from headrace.image import (
    random_brightness,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
)
from headrace.image._checks import resolve_rng

SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


def reference_crop(array: np.ndarray, height: int, width: int, generator: np.random.Generator) -> np.ndarray:
    """random_crop of one image, written out: two draws, then the slice."""
    top = int(generator.integers(0, array.shape[0] - height + 1))
    left = int(generator.integers(0, array.shape[1] - width + 1))
    return array[top : top + height, left : left + width]


@SETTINGS
@given(
    st.integers(1, 9),
    st.integers(1, 9),
    st.integers(1, 4),
    st.data(),
    st.integers(0, 2**40),
    st.sampled_from([tuple, list, np.array]),
)
def test_random_crop_equals_its_draws_and_slice(height, width, channels, data, seed, container):
    array = np.arange(height * width * channels, dtype=np.int32).reshape(height, width, channels)
    size_h, size_w = data.draw(st.integers(1, height)), data.draw(st.integers(1, width))
    size = container([size_h, size_w])
    expected = reference_crop(array, size_h, size_w, np.random.default_rng(seed))
    for _ in range(2):  # the second call with the same seed rewinds the cached generator
        np.testing.assert_array_equal(random_crop(array, size, seed=seed), expected)
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(3):  # a generator's stream advances exactly as the written-out draws advance it
        np.testing.assert_array_equal(
            random_crop(array, size, rng=ours), reference_crop(array, size_h, size_w, theirs)
        )


@SETTINGS
@given(st.integers(1, 7), st.integers(1, 7), st.integers(1, 4), st.data(), st.integers(0, 2**40))
def test_random_crop_of_tfs_full_rank_size_equals_one_draw_per_dimension(height, width, channels, data, seed):
    # tf.image's form, size (h, w, c): the general path draws integers(0, limit + 1) per dimension in
    # order; the shortcut skips dimensions kept whole (such a draw leaves the generator as it was).
    array = np.arange(height * width * channels, dtype=np.int16).reshape(height, width, channels)
    size = tuple(data.draw(st.integers(0, n)) for n in array.shape)
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(3):
        offsets = [int(theirs.integers(0, n - s + 1)) for n, s in zip(array.shape, size)]
        expected = array[tuple(slice(o, o + s) for o, s in zip(offsets, size))]
        np.testing.assert_array_equal(random_crop(array, size, rng=ours), expected)
    with pytest.raises(InvalidArgumentError, match="does not fit"):
        random_crop(array, (height + 1, width, channels), rng=ours)


def test_decode_jpeg_shortcut_equals_the_decoder_and_keeps_the_checks(monkeypatch):
    simplejpeg = pytest.importorskip("simplejpeg")
    from headrace.image import decode_jpeg, encode_jpeg
    from headrace.io.limits import LimitExceededError

    pixels = np.random.default_rng(0).integers(0, 256, (24, 20, 3), dtype=np.uint8)
    data = encode_jpeg(pixels, quality=90)
    expected = simplejpeg.decode_jpeg(data, colorspace="RGB", fastdct=True)
    for channels in (0, 3):
        np.testing.assert_array_equal(decode_jpeg(data, channels=channels), expected)
    gray = encode_jpeg(pixels[:, :, :1])
    assert decode_jpeg(gray).shape == (24, 20, 1) and decode_jpeg(gray, channels=3).shape == (24, 20, 3)
    monkeypatch.setenv("HEADRACE_MAX_IMAGE_PIXELS", "100")  # the budget is still read on every call
    with pytest.raises(LimitExceededError, match="max_image_pixels"):
        decode_jpeg(data, channels=3)
    monkeypatch.delenv("HEADRACE_MAX_IMAGE_PIXELS")
    assert decode_jpeg(data, channels=3).shape == (24, 20, 3)
    with pytest.raises(Exception, match="not a readable JPEG|damaged"):
        decode_jpeg(data[: len(data) // 2], channels=3)


def test_random_crop_errors_are_unchanged_by_the_fast_path():
    image = np.zeros((4, 5, 3), np.uint8)
    message = (
        r"random_crop: size=\(5, 2\) does not fit in images of height 4 and width 5 \(shape \(4, 5, 3\)\)"
    )
    for size in [(5, 2), [5, 2], np.array([5, 2])]:
        with pytest.raises(InvalidArgumentError, match=message):
            random_crop(image, size, seed=1)
    with pytest.raises(InvalidArgumentError, match=r"size=\(0, 2\) does not fit"):
        random_crop(image, (0, 2), seed=1)
    with pytest.raises(InvalidArgumentError, match="pass either rng or seed"):
        random_crop(image, (2, 2), seed=1, rng=np.random.default_rng(1))
    with pytest.raises(InvalidArgumentError, match="seed=-1 is not allowed"):
        random_crop(image, (2, 2), seed=-1)
    with pytest.raises(InvalidArgumentError, match="dtype object"):
        random_crop(np.zeros((4, 5, 3), object), (2, 2), seed=1)


@pytest.mark.parametrize("fn", [random_flip_left_right, random_flip_up_down])
def test_seeded_calls_draw_as_a_fresh_default_rng_every_time(fn):
    image = np.arange(2 * 3 * 1).reshape(2, 3, 1)
    batch = np.arange(16 * 2 * 3).reshape(16, 2, 3, 1)
    for seed in list(range(40)) + list(range(40)):  # more seeds than a thread keeps: evicted and rebuilt
        np.testing.assert_array_equal(fn(image, seed=seed), fn(image, rng=np.random.default_rng(seed)))
        np.testing.assert_array_equal(fn(batch, seed=seed), fn(batch, rng=np.random.default_rng(seed)))
    np.testing.assert_array_equal(
        random_brightness(batch.astype(np.float32), 0.5, seed=3),
        random_brightness(batch.astype(np.float32), 0.5, rng=np.random.default_rng(3)),
    )


def test_seeded_generators_are_per_thread():
    results: dict[int, list] = {}

    def draw(name: int) -> None:
        results[name] = [resolve_rng(None, seed % 3, "t").random() for seed in range(300)]

    threads = [threading.Thread(target=draw, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = [np.random.default_rng(seed % 3).random() for seed in range(300)]
    assert all(values == expected for values in results.values())


def test_unseeded_calls_continue_one_stream_per_thread():
    first = resolve_rng(None, None, "t")
    assert resolve_rng(None, None, "t") is first
    draws = [random_flip_left_right(np.arange(2).reshape(1, 2, 1))[0, 0, 0] for _ in range(64)]
    assert 0 < sum(int(d) for d in draws) < 64  # both outcomes: not one fixed draw
    other: list = []
    thread = threading.Thread(target=lambda: other.append(resolve_rng(None, None, "t")))
    thread.start()
    thread.join()
    assert other[0] is not first


def _child_draws(queue) -> None:
    queue.put(resolve_rng(None, None, "t").random(8).tolist())


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_a_forked_child_does_not_repeat_its_parents_unseeded_draws():
    parent = resolve_rng(None, None, "t")
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=_child_draws, args=(queue,))
    process.start()
    child = queue.get(timeout=60)
    process.join(timeout=60)
    assert child != parent.random(8).tolist()


def _jpegs() -> dict[str, bytes]:
    from headrace.image import encode_jpeg

    pixels = np.random.default_rng(1).integers(0, 256, (19, 23, 3), dtype=np.uint8)
    Image = pytest.importorskip("PIL.Image")
    out = {"rgb": encode_jpeg(pixels), "gray": encode_jpeg(pixels[:, :, :1])}
    for name, options in {
        "progressive": {"progressive": True},
        "restart intervals": {"restart_marker_blocks": 1},
        "comment": {"comment": b"hello"},
        "cmyk": {},
    }.items():
        import io

        buffer = io.BytesIO()
        image = Image.fromarray(pixels).convert("CMYK") if name == "cmyk" else Image.fromarray(pixels)
        image.save(buffer, "JPEG", **options)
        out[name] = buffer.getvalue()
    return out


def test_the_jpeg_frame_header_read_in_python_equals_libjpegs():
    simplejpeg = pytest.importorskip("simplejpeg")
    from headrace.image.decode import _jpeg_frame

    for name, data in _jpegs().items():
        height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data)
        components = {"Gray": 1, "CMYK": 4, "YCCK": 4}.get(colorspace, 3)
        assert _jpeg_frame(data) == (height, width, components), name
        assert _jpeg_frame(data[:8]) is None  # cut before the frame header
        assert _jpeg_frame(data[:2] + b"\xff" + data[2:]) is None  # a fill byte: libjpeg's to read
        assert _jpeg_frame(data[:2] + b"\x00" + data[2:]) is None  # stray data


def test_decode_jpeg_and_decode_image_shortcuts_equal_the_general_path():
    pytest.importorskip("simplejpeg")
    from headrace.image import decode_image, decode_jpeg

    for name, data in _jpegs().items():
        as_array = np.frombuffer(data, np.uint8)  # not bytes: the general path
        for channels in (0, 3):
            np.testing.assert_array_equal(decode_jpeg(data, channels), decode_jpeg(as_array, channels), name)
        np.testing.assert_array_equal(decode_image(data), decode_image(as_array), name)
        cut = data[: len(data) // 2]
        with pytest.raises(Exception) as fast:
            decode_image(cut)
        with pytest.raises(Exception) as general:
            decode_image(np.frombuffer(cut, np.uint8))
        assert type(fast.value) is type(general.value) and str(fast.value) == str(general.value)


def test_decode_png_and_decode_image_shortcuts_equal_the_general_path():
    from headrace.image import decode_image, decode_png, encode_png

    pixels = np.random.default_rng(2).integers(0, 256, (9, 7, 3), dtype=np.uint8)
    for image in (pixels, pixels[:, :, :1]):
        data = encode_png(image)
        np.testing.assert_array_equal(decode_png(data), decode_png(np.frombuffer(data, np.uint8)))
        np.testing.assert_array_equal(decode_image(data), decode_image(np.frombuffer(data, np.uint8)))


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_resize_shortcut_equals_the_general_path(dtype):
    from headrace.image import ResizeMethod, resize

    image = np.random.default_rng(3).integers(0, 256, (13, 17, 3)).astype(dtype)
    for size in [(5, 9), [26, 3], (13, 17)]:
        expected = resize(image[None], size)[0]  # a batch: the general path
        for method in ("bilinear", ResizeMethod.BILINEAR):
            out = resize(image, size, method)
            assert out.dtype == expected.dtype and out.shape == expected.shape
            np.testing.assert_array_equal(out, expected)


def test_seeded_random_crop_windows_are_remembered_per_seed_and_range():
    image = np.arange(10 * 12).reshape(10, 12, 1)
    for seed in (0, 1, 2**40):
        for size in [(3, 4), (10, 12), (1, 1)]:
            expected = reference_crop(image, *size, np.random.default_rng(seed))
            for _ in range(2):
                np.testing.assert_array_equal(random_crop(image, size, seed=seed), expected)
    with pytest.raises(InvalidArgumentError, match="seed=True is not allowed"):
        random_crop(image, (3, 4), seed=True)  # equal to 1 as a key, but not a seed
