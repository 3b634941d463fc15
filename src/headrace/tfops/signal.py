"""tf.signal on numpy: framing, windows, FFTs, the short-time Fourier transform, mel weights."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ._tensor import FLOATS, as_tensor, check_dtype, dtype_arg, infer, is_tensor


def _floats(value: Any, op: str) -> np.ndarray:
    array = as_tensor(value) if is_tensor(value) else infer(value)
    check_dtype(op, array.dtype, FLOATS)
    return array


def hann_window(
    window_length: Any, periodic: bool = True, dtype: Any = np.float32, name: str | None = None
) -> np.ndarray:
    return _raised_cosine(int(window_length), periodic, dtype_arg(dtype), 0.5, 0.5)


def hamming_window(
    window_length: Any, periodic: bool = True, dtype: Any = np.float32, name: str | None = None
) -> np.ndarray:
    return _raised_cosine(int(window_length), periodic, dtype_arg(dtype), 0.54, 0.46)


def _raised_cosine(n: int, periodic: bool, dtype: np.dtype, a: float, b: float) -> np.ndarray:
    if n == 1:
        return np.ones(1, dtype)
    denominator = n - 1 + (1 if periodic and n % 2 == 0 else 0)  # tf: periodic only changes even lengths
    count = np.arange(n, dtype=np.float64)
    return (a - b * np.cos(2 * np.pi * count / denominator)).astype(dtype)


def frame(
    signal: Any,
    frame_length: Any,
    frame_step: Any,
    pad_end: bool = False,
    pad_value: Any = 0,
    axis: int = -1,
    name: str | None = None,
) -> np.ndarray:
    """Frames of ``frame_length`` every ``frame_step`` samples along ``axis`` (a new axis after it)."""
    array = as_tensor(signal) if is_tensor(signal) else infer(signal)
    length, step = int(np.asarray(frame_length)), int(np.asarray(frame_step))
    if length <= 0 or step <= 0:
        raise InvalidArgumentError(
            f"frame: frame_length and frame_step must be positive, got {length} and {step}"
        )
    a = axis % array.ndim
    n = array.shape[a]
    if pad_end:
        count = -(-n // step) if n else 0
        needed = max(0, (count - 1) * step + length - n) if count else 0
        widths = [(0, 0)] * array.ndim
        widths[a] = (0, needed)
        array = np.pad(array, widths, constant_values=pad_value)
    else:
        count = max(0, 1 + (n - length) // step) if n >= length else 0
    starts = np.arange(count) * step
    index = starts[:, None] + np.arange(length)
    moved = np.moveaxis(array, a, -1)
    framed = moved[..., index] if count else np.zeros((*moved.shape[:-1], 0, length), array.dtype)
    return np.moveaxis(framed, [-2, -1], [a, a + 1])


def _fft_length(frame_length: int) -> int:
    return 1 << max(0, (frame_length - 1).bit_length())


def rfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> np.ndarray:
    array = _floats(input_tensor, "RFFT")
    n = array.shape[-1] if fft_length is None else int(np.asarray(fft_length).reshape(-1)[0])
    result = np.fft.rfft(array.astype(np.float64), n=n)
    return result.astype(np.complex64 if array.dtype != np.float64 else np.complex128)


def irfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> np.ndarray:
    array = np.asarray(input_tensor)
    n = None if fft_length is None else int(np.asarray(fft_length).reshape(-1)[0])
    result = np.fft.irfft(array, n=n)
    return result.astype(np.float32 if array.dtype == np.complex64 else np.float64)


def fft(input: Any, name: str | None = None) -> np.ndarray:  # noqa: A002
    array = np.asarray(input)
    return np.fft.fft(array).astype(array.dtype)


def ifft(input: Any, name: str | None = None) -> np.ndarray:  # noqa: A002
    array = np.asarray(input)
    return np.fft.ifft(array).astype(array.dtype)


def stft(
    signals: Any,
    frame_length: Any,
    frame_step: Any,
    fft_length: Any = None,
    window_fn: Callable | None = hann_window,
    pad_end: bool = False,
    name: str | None = None,
) -> np.ndarray:
    """[..., frames, fft_length // 2 + 1] complex: windowed frames through a real FFT; ``fft_length``
    defaults to the smallest power of 2 enclosing ``frame_length``."""
    array = _floats(signals, "stft")
    if array.ndim < 1:
        raise ValueError("stft: signals must have rank >= 1")
    length = int(np.asarray(frame_length))
    n = _fft_length(length) if fft_length is None else int(np.asarray(fft_length))
    framed = frame(array, length, int(np.asarray(frame_step)), pad_end=pad_end, axis=-1)
    if window_fn is not None:
        framed = framed * np.asarray(window_fn(length, dtype=array.dtype))
    result = np.fft.rfft(framed.astype(np.float64), n=n)
    return result.astype(np.complex128 if array.dtype == np.float64 else np.complex64)


def inverse_stft_window_fn(
    frame_step: int, forward_window_fn: Callable = hann_window, name: str | None = None
) -> Callable:
    def window(frame_length: int, dtype: Any = np.float32) -> np.ndarray:
        forward = np.asarray(forward_window_fn(frame_length, dtype=dtype), dtype=np.float64)
        squared = forward**2
        denominator = np.zeros(frame_length)
        for shift in range(-frame_length, frame_length + 1, frame_step):
            lo, hi = max(0, shift), min(frame_length, frame_length + shift)
            if lo < hi:
                denominator[lo:hi] += squared[lo - shift : hi - shift]
        return (forward / denominator).astype(dtype)

    return window


_MEL_BREAK_HZ, _MEL_HIGH_Q = 700.0, 1127.0


def _hz_to_mel(hz: np.ndarray) -> np.ndarray:
    return _MEL_HIGH_Q * np.log(1.0 + hz / _MEL_BREAK_HZ)


def linear_to_mel_weight_matrix(
    num_mel_bins: int = 20,
    num_spectrogram_bins: int = 129,
    sample_rate: Any = 8000,
    lower_edge_hertz: float = 125.0,
    upper_edge_hertz: float = 3800.0,
    dtype: Any = np.float32,
    name: str | None = None,
) -> np.ndarray:
    """[num_spectrogram_bins, num_mel_bins] triangular filters on the HTK mel scale (bin 0, DC, is zero)."""
    rate = float(np.asarray(sample_rate))
    if (
        num_mel_bins <= 0
        or lower_edge_hertz < 0
        or lower_edge_hertz >= upper_edge_hertz
        or upper_edge_hertz > rate / 2
    ):
        raise ValueError(
            "linear_to_mel_weight_matrix: need num_mel_bins > 0 and 0 <= lower_edge_hertz < upper_edge_hertz <= sample_rate / 2"
        )
    nyquist = rate / 2.0
    linear = np.linspace(0.0, nyquist, num_spectrogram_bins)[1:]
    spectrogram_mel = _hz_to_mel(linear)[:, None]
    edges = np.linspace(
        _hz_to_mel(np.float64(lower_edge_hertz)), _hz_to_mel(np.float64(upper_edge_hertz)), num_mel_bins + 2
    )
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    lower_slopes = (spectrogram_mel - lower) / (center - lower)
    upper_slopes = (upper - spectrogram_mel) / (upper - center)
    weights = np.maximum(0.0, np.minimum(lower_slopes, upper_slopes))
    return np.pad(weights, [[1, 0], [0, 0]]).astype(dtype_arg(dtype))
