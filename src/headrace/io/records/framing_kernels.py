"""Compiled TFRecord framing: walk many frames of a buffer in one call, verifying both CRCs.

A frame is ``uint64 length | uint32 masked_crc(length) | data | uint32 masked_crc(data)``, little
endian. Imported lazily by :mod:`headrace.io.records.tfrecord`.
"""

from __future__ import annotations

import numpy as np

from ...core.jit import njit
from .crc_kernels import load_u32, load_u64, masked_crc32c_span

OK = 0  # stopped after max_records frames, or at a frame boundary at the end of the buffer
NEED_MORE = 1  # the frame at pos is incomplete; aux = bytes the whole frame needs (12 if unknown yet)
LENGTH_CRC = 2  # the length field at pos fails its CRC
DATA_CRC = 3  # the data of the frame at pos fails its CRC; aux = data length
TOO_LARGE = 4  # the length field at pos passes its CRC but exceeds max_length; aux unused

HEADER = 12
FOOTER = 4


@njit(nogil=True, boundscheck=False)
def frame_records(buf, pos, end, max_records, max_length, starts, ends):
    """Frames of ``buf[pos:end]``: fills ``starts``/``ends`` (data spans) and returns
    ``(count, pos, status, aux)`` where ``pos`` is where the first unframed byte is."""
    count = 0
    limit = np.uint64(max_length)
    while count < max_records:
        available = end - pos
        if available < HEADER:
            if available == 0:
                return count, pos, OK, 0
            return count, pos, NEED_MORE, HEADER
        length = load_u64(buf, pos)
        if masked_crc32c_span(buf, pos, 8) != load_u32(buf, pos + 8):
            return count, pos, LENGTH_CRC, 0
        if length > limit:
            return count, pos, TOO_LARGE, 0
        size = np.int64(length)
        if available < HEADER + size + FOOTER:
            return count, pos, NEED_MORE, HEADER + size + FOOTER
        start = pos + HEADER
        if masked_crc32c_span(buf, start, size) != load_u32(buf, start + size):
            return count, pos, DATA_CRC, size
        starts[count] = start
        ends[count] = start + size
        count += 1
        pos = start + size + FOOTER
    return count, pos, OK, 0


@njit(nogil=True, boundscheck=False)
def find_frame(buf, pos, end, max_length):
    """First position ``>= pos`` where a plausible frame starts (length CRC passes, length within
    ``max_length``, and the data CRC passes when the whole frame is in the buffer); -1 if none
    starts before ``end - 11``."""
    limit = np.uint64(max_length)
    p = pos
    while p + HEADER <= end:
        length = load_u64(buf, p)
        if length <= limit and masked_crc32c_span(buf, p, 8) == load_u32(buf, p + 8):
            size = np.int64(length)
            if p + HEADER + size + FOOTER > end:
                return p
            if masked_crc32c_span(buf, p + HEADER, size) == load_u32(buf, p + HEADER + size):
                return p
        p += 1
    return -1


@njit(nogil=True, boundscheck=False)
def frames_at(buf, offsets, starts, ends):
    """Verify the frames that start at ``offsets`` (random access through an index): fills
    ``starts``/``ends`` (data spans) and returns ``(-1, OK)`` or ``(i, status)`` for the first
    frame ``i`` that is damaged or runs past the end of ``buf``."""
    end = len(buf)
    for i in range(len(offsets)):
        pos = offsets[i]
        if pos < 0 or pos + HEADER > end:
            return i, NEED_MORE
        if masked_crc32c_span(buf, pos, 8) != load_u32(buf, pos + 8):
            return i, LENGTH_CRC
        length = load_u64(buf, pos)
        if length > np.uint64(end):
            return i, NEED_MORE
        size = np.int64(length)
        start = pos + HEADER
        if start + size + FOOTER > end:
            return i, NEED_MORE
        if masked_crc32c_span(buf, start, size) != load_u32(buf, start + size):
            return i, DATA_CRC
        starts[i] = start
        ends[i] = start + size
    return -1, OK
