"""Compiled protobuf walking for tf.train.Example and SequenceExample (imported lazily).

Every length read from the data is checked against the end of the message that holds it before it
is used, so malformed or hostile input yields a status code, never an out-of-bounds read, and output
sizes are bounded by the input size.

Feature kinds: -1 missing (key absent), 0 present with no value list, 1 bytes, 2 float, 3 int64.
"""

from __future__ import annotations

import numpy as np

from ...core.jit import njit
from ..records.crc_kernels import load_u32

OK = 0
MALFORMED = 1  # not a valid protobuf message (truncated varint, length past the end, bad wire type)
WRONG_KIND = 2  # the feature holds another kind of list than the spec's dtype
WRONG_COUNT = 3  # a fixed-size feature has another number of values than its shape needs
EMPTY = 4  # a fixed-size feature is present with an empty list (TensorFlow refuses it too)

MISSING = -1
NO_KIND = 0
BYTES = 1
FLOAT = 2
INT64 = 3

_LIMIT = 1 << 62
_MAX_VARINT_BYTES = 10


@njit(inline="always")
def _varint(buf, p, end):
    """(value as uint64, next position); position -1 when the varint is cut off or too long."""
    result = np.uint64(0)
    shift = np.uint64(0)
    while p < end and shift < 64:
        byte = buf[p]
        p += 1
        result |= np.uint64(byte & 0x7F) << shift
        if byte < 0x80:
            return result, p
        shift += np.uint64(7)
    return result, -1


@njit(inline="always")
def _length(buf, p, end):
    """A length or tag as int64 with its end position; position -1 if malformed or past ``end``."""
    value, q = _varint(buf, p, end)
    if q < 0 or value >= np.uint64(_LIMIT):
        return 0, -1
    return np.int64(value), q


@njit
def _skip(buf, p, end, wire):
    """Position after a field's payload; -1 if malformed."""
    if wire == 0:
        _, q = _varint(buf, p, end)
        return q
    if wire == 1:
        return p + 8 if p + 8 <= end else -1
    if wire == 2:
        size, q = _length(buf, p, end)
        if q < 0 or size > end - q:
            return -1
        return q + size
    if wire == 5:
        return p + 4 if p + 4 <= end else -1
    return -1  # groups (3, 4) and unknown wire types are not allowed in these messages


@njit
def _match(buf, start, stop, keys, key_starts, key_ends, hint):
    n = len(key_starts)
    length = stop - start
    for j in range(n):
        k = hint + j
        if k >= n:
            k -= n
        a = key_starts[k]
        if key_ends[k] - a != length:
            continue
        same = True
        for i in range(length):
            if buf[start + i] != keys[a + i]:
                same = False
                break
        if same:
            return k
    return -1


@njit(nogil=True)
def locate_features(buf, starts, ends, outer_field, keys, key_starts, key_ends, out):
    """For each message ``buf[starts[r]:ends[r]]``, find the map under field ``outer_field``
    (Example.features = 1; SequenceExample.context = 1, .feature_lists = 2) and record the value span
    of each wanted key in ``out[r, k] = (start, length)`` (left as -1 when absent; last one wins).
    Returns ``(status, record, position)``."""
    n_keys = len(key_starts)
    for r in range(len(starts)):
        p = starts[r]
        end = ends[r]
        hint = 0
        while p < end:
            tag, p = _length(buf, p, end)
            if p < 0:
                return MALFORMED, r, end
            field = tag >> 3
            wire = tag & 7
            if field != outer_field or wire != 2:
                p = _skip(buf, p, end, wire)
                if p < 0:
                    return MALFORMED, r, end
                continue
            size, p = _length(buf, p, end)
            if p < 0 or size > end - p:
                return MALFORMED, r, end
            map_end = p + size
            while p < map_end:
                tag, p = _length(buf, p, map_end)
                if p < 0:
                    return MALFORMED, r, map_end
                if tag != 0x0A:  # not a map entry (field 1, length-delimited)
                    p = _skip(buf, p, map_end, tag & 7)
                    if p < 0:
                        return MALFORMED, r, map_end
                    continue
                size, p = _length(buf, p, map_end)
                if p < 0 or size > map_end - p:
                    return MALFORMED, r, map_end
                entry_end = p + size
                key_start = p
                key_stop = p
                value_start = entry_end
                value_stop = entry_end
                while p < entry_end:
                    tag, p = _length(buf, p, entry_end)
                    if p < 0:
                        return MALFORMED, r, entry_end
                    if tag == 0x0A or tag == 0x12:
                        size, p = _length(buf, p, entry_end)
                        if p < 0 or size > entry_end - p:
                            return MALFORMED, r, entry_end
                        if tag == 0x0A:
                            key_start = p
                            key_stop = p + size
                        else:
                            value_start = p
                            value_stop = p + size
                        p += size
                    else:
                        p = _skip(buf, p, entry_end, tag & 7)
                        if p < 0:
                            return MALFORMED, r, entry_end
                k = _match(buf, key_start, key_stop, keys, key_starts, key_ends, hint)
                if k >= 0:
                    out[r, k, 0] = value_start
                    out[r, k, 1] = value_stop - value_start
                    hint = k + 1 if k + 1 < n_keys else 0
    return OK, 0, 0


@njit
def _count_list(buf, kind, p, end):
    """Number of values in a BytesList/FloatList/Int64List payload; -1 if malformed."""
    count = 0
    while p < end:
        tag, p = _length(buf, p, end)
        if p < 0:
            return -1
        if tag == 0x0A:  # field 1, length-delimited: a bytes value or a packed run
            size, p = _length(buf, p, end)
            if p < 0 or size > end - p:
                return -1
            if kind == BYTES:
                count += 1
            elif kind == FLOAT:
                if size % 4:
                    return -1
                count += size // 4
            else:
                # A varint ends at a byte < 0x80 and is at most 10 bytes long (64 bits in 7-bit
                # groups): a longer run of continuation bytes is malformed, and counting it as one
                # value would let the copy pass decode a different number of values than counted.
                run = 0
                for i in range(p, p + size):
                    if buf[i] < 0x80:
                        count += 1
                        run = 0
                    else:
                        run += 1
                        if run >= _MAX_VARINT_BYTES:
                            return -1
                if run:
                    return -1
            p += size
        elif tag == 0x0D and kind == FLOAT:  # one unpacked float
            if p + 4 > end:
                return -1
            count += 1
            p += 4
        elif tag == 0x08 and kind == INT64:  # one unpacked varint
            _, p = _varint(buf, p, end)
            if p < 0:
                return -1
            count += 1
        else:
            p = _skip(buf, p, end, tag & 7)
            if p < 0:
                return -1
    return count


@njit
def _value_list(buf, start, end):
    """The kind of a Feature message ``buf[start:end]`` and the span of its value list:
    ``(kind, list start, list end)``, kind -1 if malformed (the last list wins, as in protobuf)."""
    kind = NO_KIND
    list_start = end
    list_end = end
    p = start
    while p < end:
        tag, p = _length(buf, p, end)
        if p < 0:
            return -1, 0, 0
        if tag == 0x0A or tag == 0x12 or tag == 0x1A:
            size, p = _length(buf, p, end)
            if p < 0 or size > end - p:
                return -1, 0, 0
            kind = tag >> 3
            list_start = p
            list_end = p + size
            p += size
        else:
            p = _skip(buf, p, end, tag & 7)
            if p < 0:
                return -1, 0, 0
    return kind, list_start, list_end


@njit
def _copy_values(buf, kind, p, end, out, o):
    """Write the numbers of a FloatList/Int64List payload at ``out[o:]``; returns the position after
    the last value written, or -1 if the payload is malformed or would not fit in ``out``.

    The payload was counted by :func:`_count_list` first, but every length, varint and write position
    is checked again here, so no input can make this write outside ``out`` whatever the caller did.
    """
    capacity = len(out)
    while p < end:
        tag, p = _length(buf, p, end)
        if p < 0:
            return -1
        if tag == 0x0A:
            size, p = _length(buf, p, end)
            if p < 0 or size > end - p:
                return -1
            stop = p + size
            if kind == FLOAT:
                if size % 4 or o + size // 4 > capacity:
                    return -1
                while p < stop:
                    out[o] = load_u32(buf, p)
                    o += 1
                    p += 4
            else:
                while p < stop:
                    value, p = _varint(buf, p, stop)
                    if p < 0 or o >= capacity:
                        return -1
                    out[o] = np.int64(value)
                    o += 1
        elif tag == 0x0D and kind == FLOAT:
            if p + 4 > end or o >= capacity:
                return -1
            out[o] = load_u32(buf, p)
            o += 1
            p += 4
        elif tag == 0x08 and kind == INT64:
            value, p = _varint(buf, p, end)
            if p < 0 or o >= capacity:
                return -1
            out[o] = np.int64(value)
            o += 1
        else:
            p = _skip(buf, p, end, tag & 7)
            if p < 0:
                return -1
    return o


@njit(nogil=True)
def inspect_features(buf, spans, kinds, lists, counts):
    """For each Feature span (``spans[i] = (start, length)``, start -1 when missing): its kind, the
    span of its value list and the number of values. Returns ``(status, item, 0)``."""
    for i in range(len(spans)):
        start = spans[i, 0]
        if start < 0:
            kinds[i] = MISSING
            counts[i] = -1
            lists[i, 0] = 0
            lists[i, 1] = 0
            continue
        kind, list_start, list_end = _value_list(buf, start, start + spans[i, 1])
        if kind < 0:
            return MALFORMED, i, 0
        kinds[i] = kind
        lists[i, 0] = list_start
        lists[i, 1] = list_end
        if kind == NO_KIND:
            counts[i] = 0
            continue
        count = _count_list(buf, kind, list_start, list_end)
        if count < 0:
            return MALFORMED, i, 0
        counts[i] = count
    return OK, 0, 0


@njit(nogil=True)
def fill_numeric(buf, kind, lists, offsets, out):
    """Write the values of each list ``i`` with ``offsets[i] >= 0`` at ``out[offsets[i]:]``.
    ``out`` is uint32 (the bits of float32 values) for FLOAT, int64 for INT64."""
    for i in range(len(offsets)):
        if offsets[i] >= 0 and _copy_values(buf, kind, lists[i, 0], lists[i, 1], out, offsets[i]) < 0:
            return MALFORMED, i, 0
    return OK, 0, 0


@njit(nogil=True)
def fill_bytes(buf, lists, offsets, out):
    """Spans ``out[j] = (start, stop)`` of the byte strings of each list with ``offsets[i] >= 0``.
    Returns ``(status, item, 0)``: every length is checked again, so nothing is written outside ``out``."""
    capacity = len(out)
    for i in range(len(offsets)):
        o = offsets[i]
        if o < 0:
            continue
        p = lists[i, 0]
        end = lists[i, 1]
        while p < end:
            tag, p = _length(buf, p, end)
            if p < 0:
                return MALFORMED, i, 0
            if tag == 0x0A:
                size, p = _length(buf, p, end)
                if p < 0 or size > end - p or o >= capacity:
                    return MALFORMED, i, 0
                out[o, 0] = p
                out[o, 1] = p + size
                o += 1
                p += size
            else:
                p = _skip(buf, p, end, tag & 7)
                if p < 0:
                    return MALFORMED, i, 0
    return OK, 0, 0


@njit(nogil=True)
def fill_fixed(buf, spans, kind, size, out, missing):
    """Fast path for a fixed-size numeric feature: parse each Feature span, check its kind and
    count, and write its ``size`` values at ``out[r * size:]`` in one pass. Rows without the feature
    (or with an empty Feature) are flagged in ``missing`` for the caller to fill with the default.
    Returns ``(status, row, found)``; ``found`` is the kind or the count that did not fit."""
    for r in range(len(spans)):
        start = spans[r, 0]
        missing[r] = start < 0
        if start < 0:
            continue
        found, list_start, list_end = _value_list(buf, start, start + spans[r, 1])
        if found < 0:
            return MALFORMED, r, 0
        if found == NO_KIND:
            missing[r] = True
            continue
        if found != kind:
            return WRONG_KIND, r, found
        count = _count_list(buf, kind, list_start, list_end)
        if count < 0:
            return MALFORMED, r, 0
        if count != size:
            return (EMPTY if count == 0 else WRONG_COUNT), r, count
        if _copy_values(buf, kind, list_start, list_end, out, r * size) != r * size + size:
            return MALFORMED, r, 0
    return OK, 0, 0


@njit(nogil=True)
def explode_feature_lists(buf, spans, steps, out):
    """Each FeatureList span holds repeated Feature messages (field 1): count them into ``steps[i]``
    (-1 when the list is missing), and when ``out`` is large enough write each Feature's span.
    Returns ``(status, item, total)``."""
    total = 0
    capacity = len(out)
    for i in range(len(spans)):
        start = spans[i, 0]
        if start < 0:
            steps[i] = -1
            continue
        p = start
        end = start + spans[i, 1]
        count = 0
        while p < end:
            tag, p = _length(buf, p, end)
            if p < 0:
                return MALFORMED, i, total
            if tag == 0x0A:
                size, p = _length(buf, p, end)
                if p < 0 or size > end - p:
                    return MALFORMED, i, total
                if total < capacity:
                    out[total, 0] = p
                    out[total, 1] = size
                total += 1
                count += 1
                p += size
            else:
                p = _skip(buf, p, end, tag & 7)
                if p < 0:
                    return MALFORMED, i, total
        steps[i] = count
    return OK, 0, total
