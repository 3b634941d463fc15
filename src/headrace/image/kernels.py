"""Compiled (numba) loops for the hot image operations on uint8 and float32 arrays.

Each kernel does in one pass over memory what numpy would do in five to thirty, and releases the
GIL. The arithmetic is written step for step like the numpy reference in the calling module (same
float32 operations in the same order, no fused multiply-add), so both give identical results and
both match tf.image. Imported lazily: numba takes ~0.4 s to import.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit

_ONE_255 = np.float32(1.0 / 255)  # convert_image_dtype(uint8 -> float32) multiplies by this
_UP_255 = np.float32(255.5)  # and float32 -> uint8 multiplies by this, then truncates


@njit(nogil=True, inline="always")
def _to_u8(value):
    # Branch-free saturation (min/max compile to single instructions), then truncation: as tf.
    return np.uint8(min(max(value * _UP_255, np.float32(0)), np.float32(255)))


@njit(nogil=True, boundscheck=False)
def apply_luts(src, luts, out):
    """``out[n, y, x, c] = luts[n, c, src[n, y, x, c]]``: uint8 ``(N, H, W, C)`` images (any strides,
    so crops and flips need no copy) and ``(N or 1, C or 1, 256)`` tables (size-1 axes broadcast)."""
    count, height, width, channels = src.shape
    per_image, per_channel = luts.shape[0] > 1, luts.shape[1] > 1
    for n in range(count):
        tables = luts[n if per_image else 0]
        if channels == 3:  # the common case, unrolled: about 2.5x faster
            red = tables[0]
            green = tables[1] if per_channel else red
            blue = tables[2] if per_channel else red
            for y in range(height):
                for x in range(width):
                    out[n, y, x, 0] = red[src[n, y, x, 0]]
                    out[n, y, x, 1] = green[src[n, y, x, 1]]
                    out[n, y, x, 2] = blue[src[n, y, x, 2]]
        else:
            for y in range(height):
                for x in range(width):
                    for c in range(channels):
                        out[n, y, x, c] = tables[c if per_channel else 0, src[n, y, x, c]]


@njit(nogil=True, boundscheck=False)
def channel_means(src, zero, out):
    """Mean of each channel of each ``(N, H, W, C)`` image into ``out`` ``(N, C)``. Sums start from
    ``zero``: an int64 for integer images (exact), a float64 for float images."""
    count, height, width, channels = src.shape
    pixels = height * width
    for n in range(count):
        if channels == 3:  # three independent accumulators in registers
            red, green, blue = zero, zero, zero
            for y in range(height):
                for x in range(width):
                    red += src[n, y, x, 0]
                    green += src[n, y, x, 1]
                    blue += src[n, y, x, 2]
            out[n, 0], out[n, 1], out[n, 2] = red / pixels, green / pixels, blue / pixels
        else:
            for c in range(channels):
                total = zero
                for y in range(height):
                    for x in range(width):
                        total += src[n, y, x, c]
                out[n, c] = total / pixels


@njit(nogil=True, boundscheck=False)
def contrast_f32(src, means, factors, out):
    """``(x - mean) * factor + mean`` per image and channel on float32 ``(N, H, W, C)`` images."""
    count, height, width, channels = src.shape
    for n in range(count):
        factor = factors[n]
        for y in range(height):
            for x in range(width):
                for c in range(channels):
                    mean = means[n, c]
                    out[n, y, x, c] = (src[n, y, x, c] - mean) * factor + mean


# Hexagon sector of a pixel (see ``hue``), indexed by comparisons of its channels.
_SECTOR_OF = np.array([5, 0, 4, 4, 2, 3, 1, 1], dtype=np.int64)
# Which of (max, mid, min) each of r, g, b takes in sectors 0..5: 1.0 where it does, else 0.0.
_TAKES_MAX = np.array([[1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1], [1, 0, 0]], dtype=np.float32)
_TAKES_MID = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=np.float32)
_TAKES_MIN = np.array([[0, 0, 1], [0, 0, 1], [1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0]], dtype=np.float32)


@njit(nogil=True, inline="always")
def _load_rgb(src, n, y, x, as_bytes):
    if as_bytes:
        return (
            np.float32(src[n, y, x, 0]) * _ONE_255,
            np.float32(src[n, y, x, 1]) * _ONE_255,
            np.float32(src[n, y, x, 2]) * _ONE_255,
        )
    return np.float32(src[n, y, x, 0]), np.float32(src[n, y, x, 1]), np.float32(src[n, y, x, 2])


@njit(nogil=True, inline="always")
def _store_rgb(out, n, y, x, r, g, b, as_bytes):
    if as_bytes:
        out[n, y, x, 0], out[n, y, x, 1], out[n, y, x, 2] = _to_u8(r), _to_u8(g), _to_u8(b)
    else:
        out[n, y, x, 0], out[n, y, x, 1], out[n, y, x, 2] = r, g, b


@njit(nogil=True, boundscheck=False, error_model="numpy")
def saturation(src, factors, out, as_bytes):
    """Scale HSV saturation by ``factors[n]`` (clipped to 1) on ``(N, H, W, 3)`` uint8 (``as_bytes``)
    or float32 images. Branch-free: every pixel does the same arithmetic."""
    count, height, width, _ = src.shape
    for n in range(count):
        factor = max(factors[n], np.float32(0))
        for y in range(height):
            for x in range(width):
                r, g, b = _load_rgb(src, n, y, x, as_bytes)
                value = max(max(r, g), b)
                spread = value - min(min(r, g), b)
                ratio = min(factor, value / spread)  # grey pixels: value / 0 is inf or nan
                ratio = ratio if spread > 0 else np.float32(1)
                _store_rgb(
                    out,
                    n,
                    y,
                    x,
                    value - ratio * (value - r),
                    value - ratio * (value - g),
                    value - ratio * (value - b),
                    as_bytes,
                )


@njit(nogil=True, boundscheck=False, error_model="numpy")
def hue(src, deltas, out, as_bytes):
    """Rotate the hue by ``deltas[n]`` turns keeping each pixel's min and max, on ``(N, H, W, 3)`` uint8
    (``as_bytes``) or float32 images. Sectors come from small tables rather than branches, which the
    branch predictor cannot learn on real images."""
    count, height, width, _ = src.shape
    six = np.float32(6)
    one = np.float32(1)
    for n in range(count):
        shift = deltas[n] * six
        for y in range(height):
            for x in range(width):
                r, g, b = _load_rgb(src, n, y, x, as_bytes)
                high = max(max(r, g), b)
                low = min(min(r, g), b)
                mid = max(min(r, g), min(max(r, g), b))
                spread = high - low
                # tf's branch order: r < g ? (b < r ? 1 : b > g ? 3 : 2) : (b > r ? 4 : b < g ? 0 : 5)
                below = np.int64(r < g)
                key = below * (np.int64(b < r) * 2 + np.int64(b > g)) + (1 - below) * (
                    np.int64(b > r) * 2 + np.int64(b < g)
                )
                sector = _SECTOR_OF[below * 4 + key]
                fraction = (mid - low) / spread
                h = np.float32(sector) + ((one - fraction) if sector & 1 else fraction)
                h = (h if spread > 0 else np.float32(0)) + shift
                h = h + six if h < 0 else h
                h = h + six if h < 0 else h
                h = h - six if h >= six else h
                h = h - six if h >= six else h
                sector = np.int64(h)
                fraction = h - np.float32(sector)
                fraction = (one - fraction) if sector & 1 else fraction
                mid = low + fraction * spread
                takes_max, takes_mid, takes_min = _TAKES_MAX[sector], _TAKES_MID[sector], _TAKES_MIN[sector]
                # x * 1.0 + 0.0 + 0.0 is x exactly, so these sums pick one of (max, mid, min) per channel.
                _store_rgb(
                    out,
                    n,
                    y,
                    x,
                    high * takes_max[0] + mid * takes_mid[0] + low * takes_min[0],
                    high * takes_max[1] + mid * takes_mid[1] + low * takes_min[1],
                    high * takes_max[2] + mid * takes_mid[2] + low * takes_min[2],
                    as_bytes,
                )


@njit(nogil=True, boundscheck=False)
def resize_bilinear(src, y_low, y_high, y_lerp, x_low, x_high, x_lerp, out):
    """Half-pixel bilinear resize of ``(N, H, W, C)`` uint8 or float32 into float32 ``out``, in tf's
    order: along x on the two rows, then along y."""
    count, out_height, out_width, channels = out.shape
    for n in range(count):
        for oy in range(out_height):
            top_source, bottom_source, wy = src[n, y_low[oy]], src[n, y_high[oy]], y_lerp[oy]
            row = out[n, oy]
            if channels == 3:  # unrolled for the common case
                for ox in range(out_width):
                    left, right, wx = x_low[ox], x_high[ox], x_lerp[ox]
                    for c in range(3):
                        top_left = np.float32(top_source[left, c])
                        top = top_left + (np.float32(top_source[right, c]) - top_left) * wx
                        bottom_left = np.float32(bottom_source[left, c])
                        bottom = bottom_left + (np.float32(bottom_source[right, c]) - bottom_left) * wx
                        row[ox, c] = top + (bottom - top) * wy
                continue
            for ox in range(out_width):
                left, right, wx = x_low[ox], x_high[ox], x_lerp[ox]
                for c in range(channels):
                    top_left = np.float32(top_source[left, c])
                    top = top_left + (np.float32(top_source[right, c]) - top_left) * wx
                    bottom_left = np.float32(bottom_source[left, c])
                    bottom = bottom_left + (np.float32(bottom_source[right, c]) - bottom_left) * wx
                    row[ox, c] = top + (bottom - top) * wy


@njit(nogil=True, boundscheck=False)
def normalize(src, scale, offset, out):
    """``out = x * scale[c] + offset[c]`` (float32) on ``(N, H, W, C)`` images of any strides."""
    count, height, width, channels = src.shape
    for n in range(count):
        for y in range(height):
            for x in range(width):
                for c in range(channels):
                    out[n, y, x, c] = np.float32(src[n, y, x, c]) * scale[c] + offset[c]


@njit(nogil=True, inline="always")
def _map_coordinate(coord, size, mode):
    """Where an out-of-range sample coordinate reads from: mode 1 reflect, 2 wrap, 3 nearest, else as is."""
    if mode == 0:
        return coord
    if size <= 1:
        return np.float32(0)
    last = np.float32(size - 1)
    if mode == 1:
        period = np.float32(2 * size)
        if coord < 0:
            coord = coord + period * np.float32(np.trunc(-coord / period))
            coord = coord + period if coord < -np.float32(size) else -coord - np.float32(1)
        elif coord > last:
            coord = coord - period * np.float32(np.trunc(coord / period))
            if coord >= np.float32(size):
                coord = period - coord - np.float32(1)
    elif mode == 2:
        span = np.float32(size - 1)
        if coord < 0:
            coord = coord + np.float32(size) * (np.float32(np.trunc(-coord / span)) + np.float32(1))
        elif coord > last:
            coord = coord - np.float32(size) * np.float32(np.trunc(coord / span))
    return min(max(coord, np.float32(0)), last)


@njit(nogil=True, inline="always")
def _read(src, n, row, col, c, fill):
    if row < 0 or row >= src.shape[1] or col < 0 or col >= src.shape[2]:
        return fill
    return np.float32(src[n, row, col, c])


@njit(nogil=True, boundscheck=False)
def affine_sample(src, transforms, bilinear, mode, fill, out, as_bytes):
    """Sample ``(N, H, W, C)`` uint8 (``as_bytes``) or float32 images at affine coordinates: output
    pixel (x, y) reads input ``(t0 x + t1 y + t2, t3 x + t4 y + t5)`` with ``transforms[n] = t``;
    fill ``mode`` 0 constant, 1 reflect, 2 wrap, 3 nearest. ``fill`` is the (already cast) fill value."""
    count, height, width, channels = out.shape
    for n in range(count):
        t = transforms[n]
        for y in range(height):
            fy = np.float32(y)
            for x in range(width):
                fx = np.float32(x)
                sx = _map_coordinate(t[0] * fx + t[1] * fy + t[2], src.shape[2], mode)
                sy = _map_coordinate(t[3] * fx + t[4] * fy + t[5], src.shape[1], mode)
                if not bilinear:
                    row = np.int64(np.trunc(sy + (np.float32(0.5) if sy >= 0 else np.float32(-0.5))))
                    col = np.int64(np.trunc(sx + (np.float32(0.5) if sx >= 0 else np.float32(-0.5))))
                    for c in range(channels):
                        out[n, y, x, c] = _read(src, n, row, col, c, fill)
                    continue
                y0 = np.float32(np.floor(sy))
                x0 = np.float32(np.floor(sx))
                row, col = np.int64(y0), np.int64(x0)
                wx1, wy1 = sx - x0, sy - y0
                wx0, wy0 = x0 + np.float32(1) - sx, y0 + np.float32(1) - sy
                for c in range(channels):
                    top = wx0 * _read(src, n, row, col, c, fill) + wx1 * _read(src, n, row, col + 1, c, fill)
                    bottom = wx0 * _read(src, n, row + 1, col, c, fill) + wx1 * _read(
                        src, n, row + 1, col + 1, c, fill
                    )
                    value = wy0 * top + wy1 * bottom
                    if as_bytes:
                        out[n, y, x, c] = np.uint8(min(max(value, np.float32(0)), np.float32(255)))
                    else:
                        out[n, y, x, c] = value


@njit(nogil=True, boundscheck=False)
def resample(src, channels, row_starts, row_weights, col_starts, col_weights, rows, out):
    """Separable resampling of C-contiguous ``(N, H, W * C)`` uint8 or float32 images into float32
    ``out`` ``(N, out_h, out_w, C)``: along y into ``rows`` ``(N, out_h, W * C)``, then along x. Output
    pixel ``i`` of an axis reads ``weights[i, k] * input[starts[i] + k]`` (see ``resize_weights``)."""
    count, out_height, out_width, _ = out.shape
    row_length = src.shape[2]
    row_span, col_span = row_weights.shape[1], col_weights.shape[1]
    for n in range(count):
        for oy in range(out_height):
            start = row_starts[oy]
            target = rows[n, oy]
            weight = row_weights[oy, 0]
            source = src[n, start]
            for i in range(row_length):  # contiguous rows: this loop vectorises
                target[i] = weight * np.float32(source[i])
            for k in range(1, row_span):
                weight = row_weights[oy, k]
                if weight == 0:
                    continue
                source = src[n, start + k]
                for i in range(row_length):
                    target[i] += weight * np.float32(source[i])
        for oy in range(out_height):
            source = rows[n, oy]
            row = out[n, oy]
            for ox in range(out_width):
                base = col_starts[ox] * channels
                for c in range(channels):
                    total = np.float32(0)
                    for k in range(col_span):
                        total += col_weights[ox, k] * source[base + k * channels + c]
                    row[ox, c] = total


@njit(nogil=True, boundscheck=False)
def flip_images(src, flips, up_down, out):
    """``out[n] = src[n]`` mirrored (along y when ``up_down``, else along x) where ``flips[n]``, as is
    elsewhere: ``(N, H, W, C)`` uint8 or float32 images of any strides (a crop's window needs no copy).
    numpy's copy of a reversed view moves C-item runs one at a time (~20 us for a 64 px RGB image)."""
    count, height, width, channels = src.shape
    for n in range(count):
        flip = flips[n]
        for y in range(height):
            sy = height - 1 - y if flip and up_down else y
            if channels == 3:  # unrolled, indexed directly (a row view per y costs more than the copy)
                for x in range(width):
                    sx = width - 1 - x if flip and not up_down else x
                    out[n, y, x, 0] = src[n, sy, sx, 0]
                    out[n, y, x, 1] = src[n, sy, sx, 1]
                    out[n, y, x, 2] = src[n, sy, sx, 2]
            else:
                for x in range(width):
                    sx = width - 1 - x if flip and not up_down else x
                    for c in range(channels):
                        out[n, y, x, c] = src[n, sy, sx, c]
