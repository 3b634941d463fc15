"""tf.audio: 16-bit PCM WAV files to float32 samples in [-1, 1) and back, as TensorFlow's kernels."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ._tensor import STRING, DTypeError, as_tensor, infer, is_tensor, tf_name


def _bytes(contents: Any) -> bytes:
    if isinstance(contents, (bytes, bytearray)):
        return bytes(contents)
    array = as_tensor(contents) if is_tensor(contents) else infer(contents)
    if array.dtype != STRING or array.ndim != 0:
        raise DTypeError(
            f"DecodeWav: contents must be a scalar string, got {tf_name(array.dtype)} of shape {list(array.shape)}"
        )
    return bytes(array[()])


def decode_wav(
    contents: Any, desired_channels: int = -1, desired_samples: int = -1, name: str | None = None
) -> tuple:
    """``(audio [samples, channels] float32, sample_rate int32)``. ``desired_samples`` cuts or pads
    with zeros; ``desired_channels`` above the file's repeats its last channel, below keeps the first."""
    data = _bytes(contents)
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise InvalidArgumentError("DecodeWav: Header mismatch: Expected RIFF ... WAVE")
    offset = 12
    fmt = None
    samples = None
    while offset + 8 <= len(data):
        chunk, size = data[offset : offset + 4], struct.unpack("<I", data[offset + 4 : offset + 8])[0]
        body = data[offset + 8 : offset + 8 + size]
        if chunk == b"fmt ":
            if len(body) < 16:
                raise InvalidArgumentError("DecodeWav: fmt chunk is too short")
            fmt = struct.unpack("<HHIIHH", body[:16])
        elif chunk == b"data":
            if fmt is None:
                raise InvalidArgumentError("DecodeWav: data chunk before the fmt chunk")
            samples = body
            break
        offset += 8 + size + (size & 1)
    if fmt is None:
        raise InvalidArgumentError("DecodeWav: no fmt chunk found")
    if samples is None:
        raise InvalidArgumentError("DecodeWav: no data chunk found")
    audio_format, channels, rate, _byte_rate, _align, bits = fmt
    if audio_format != 1:
        raise InvalidArgumentError(
            f"DecodeWav: Bad audio format for WAV: Expected 1 (PCM), but got {audio_format}"
        )
    if bits != 16:
        raise InvalidArgumentError(f"DecodeWav: Can only read 16-bit WAV files, but received {bits}")
    if channels == 0:
        raise InvalidArgumentError("DecodeWav: the file has no channels")
    count = len(samples) // (2 * channels)
    decoded = np.frombuffer(samples[: count * 2 * channels], dtype="<i2").reshape(
        count, channels
    ) / np.float32(32768.0)
    decoded = decoded.astype(np.float32)
    out_samples = count if desired_samples == -1 else int(desired_samples)
    out_channels = channels if desired_channels == -1 else int(desired_channels)
    result = np.zeros((out_samples, out_channels), dtype=np.float32)
    take = min(out_samples, count)
    source = np.minimum(np.arange(out_channels), channels - 1)
    result[:take] = decoded[:take][:, source]
    return result, np.int32(rate)


def encode_wav(audio: Any, sample_rate: Any, name: str | None = None) -> bytes:
    """16-bit PCM WAV bytes of float samples [samples, channels] (times 32768, clamped to int16)."""
    array = np.asarray(audio)
    if array.dtype != np.float32:
        raise DTypeError(f"EncodeWav: audio must be float32, got {tf_name(array.dtype)}")
    if array.ndim != 2:
        raise InvalidArgumentError(f"EncodeWav: audio must be 2-dimensional, got shape {list(array.shape)}")
    rate = int(np.asarray(sample_rate))
    samples, channels = array.shape
    pcm = np.clip(np.round(array.astype(np.float64) * 32768.0), -32768, 32767).astype("<i2").tobytes()
    header = b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVE"
    fmt = b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2, 16)
    return header + fmt + b"data" + struct.pack("<I", len(pcm)) + pcm
