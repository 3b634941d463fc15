"""A fast path for parsing ONE serialized Example (``parse_single_example``, ``parse_example`` of one
record): the wire format walked in plain Python, with no joined buffer, span arrays or kernel calls.

The batch parser's fixed costs (joining records, allocating span tables, several compiled calls)
are ~100 us whatever the batch size; one record is then mostly overhead. This walker reads only
the canonical encoding every writer produces (TensorFlow, protobuf, ``serialize_example``): map
entries of key then value, one packed list per Feature. Anything else -- an unknown field, an
unpacked list, a wrong kind or count, a missing feature without default, malformed bytes, a record
with very many features -- makes it return None, and the caller runs the batch parser, which
gives the values or the error. So the fast path never decides an error, and its results equal the
batch parser's (tests/io/codec/test_example_single.py checks both on generated specs and records).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.spec import string
from .features import FLOAT32, FixedLenFeature, RaggedFeature, VarLenFeature
from .ragged import Ragged

_KIND = {string: 1, FLOAT32: 2, np.dtype(np.int64): 3}
_EMPTY = {1: np.empty(0, dtype=object), 2: np.empty(0, dtype=np.float32), 3: np.empty(0, dtype=np.int64)}
_INT64 = np.int64
#: np.int64 scalars are immutable: the common small values are made once
_SMALL = [np.int64(i) for i in range(128)]
_F4 = np.dtype("<f4")
_MASK = (1 << 64) - 1
_SIGN = 1 << 63
#: Map entries walked before giving the record to the compiled parser: a Python walk costs ~0.3 us
#: an entry, so a record of thousands of features (of which the spec may want one) goes there.
MAX_ENTRIES = 64
#: Varint payloads longer than this decode with numpy rather than a Python loop.
_LOOP_BYTES = 48


def _varint(data: bytes, p: int, end: int) -> tuple[int, int]:
    """(value, next position) of the varint at ``p``; position -1 when cut off or over 10 bytes."""
    value = 0
    shift = 0
    while p < end and shift < 64:
        byte = data[p]
        p += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & _MASK, p
        shift += 7
    return 0, -1


def _ints(data: bytes, p: int, end: int) -> list[int] | np.ndarray | None:
    """The int64 values of a packed varint run ``data[p:end]``, or None if it is malformed."""
    if end - p > _LOOP_BYTES:
        return _ints_numpy(data, p, end)
    out = []
    while p < end:
        byte = data[p]
        if byte < 0x80:
            out.append(byte)
            p += 1
            continue
        value, p = _varint(data, p, end)
        if p < 0:
            return None
        out.append(value - (1 << 64) if value >= _SIGN else value)
    return out


def _ints_numpy(data: bytes, p: int, end: int) -> np.ndarray | None:
    raw = np.frombuffer(data, dtype=np.uint8, count=end - p, offset=p)
    last = raw < 0x80
    if not last[-1]:
        return None
    ends = np.flatnonzero(last)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts + 1
    longest = int(lengths.max())
    if longest > 10:
        return None
    low = (raw & 0x7F).astype(np.uint64)
    values = low[starts]
    for k in range(1, longest):
        more = np.flatnonzero(lengths > k)
        values[more] |= low[starts[more] + k] << np.uint64(7 * k)  # bits past 64 drop, as protobuf
    return values.view(np.int64)


class Step:
    """How one output of the spec is read: its slot among the wanted keys, kind, size and defaults."""

    __slots__ = ("key", "slot", "kind", "dtype", "fixed", "size", "shape", "scalar", "default")

    def __init__(self, key: str, slot: int, spec: Any):
        self.key = key
        self.slot = slot
        self.dtype = spec.dtype
        self.kind = _KIND[spec.dtype]
        self.fixed = isinstance(spec, FixedLenFeature)
        if self.fixed:
            self.shape = spec.shape
            self.size = int(np.prod(spec.shape))
            self.scalar = spec.shape == ()
            self.default = spec.default_value


class SinglePlan:
    """The steps of a spec for one record, or ``supported`` False when a feature needs the batch
    parser (FixedLenSequenceFeature, partitioned RaggedFeature)."""

    def __init__(self, items: list[tuple[str, Any]], column: dict[str, int]):
        self.index = {key.encode("utf-8"): slot for key, slot in column.items()}
        self.slots = len(column)
        self.steps: list[Step] = []
        self.supported = True
        for key, spec in items:
            if isinstance(spec, FixedLenFeature) or isinstance(spec, VarLenFeature):
                self.steps.append(Step(key, column[key], spec))
            elif isinstance(spec, RaggedFeature) and not spec.partitions:
                self.steps.append(Step(key, column[spec.value_key or key], spec))
            else:
                self.supported = False
        #: (key, slot, read) of each output; [0] without a batch dimension, [1] with one
        self.readers = [
            [(s.key, s.slot, _reader(s, batched)) for s in self.steps] for batched in (False, True)
        ]

    def locate(self, data: bytes) -> list | None:
        """The Feature span ``(start, stop)`` of each wanted key (None when absent)."""
        found: list = [None] * self.slots
        index = self.index
        end = len(data)
        entries = 0
        p = 0
        # Reading a byte past a bound is harmless: the length check that follows then fails.
        while p < end:  # Example: field 1 (features), a map of key -> Feature
            if data[p] != 0x0A:
                return None
            size = data[p + 1]
            p += 2
            if size >= 0x80:
                size, p = _long_length(data, p, end)
                if p < 0:
                    return None
            stop = p + size
            if stop > end:
                return None
            while p < stop:  # map entries: field 1, each holding key (1) then value (2)
                entries += 1
                if data[p] != 0x0A or entries > MAX_ENTRIES:
                    return None
                size = data[p + 1]
                p += 2
                if size >= 0x80:
                    size, p = _long_length(data, p, stop)
                    if p < 0:
                        return None
                entry_end = p + size
                if entry_end > stop or p == entry_end or data[p] != 0x0A:
                    return None
                size = data[p + 1]
                p += 2
                key_end = p + size
                if size >= 0x80 or key_end > entry_end:  # a key over 127 bytes: the batch parser's
                    return None
                slot = index.get(data[p:key_end])
                p = key_end
                if p < entry_end:
                    if data[p] != 0x12:
                        return None
                    size = data[p + 1]
                    p += 2
                    if size >= 0x80:
                        size, p = _long_length(data, p, entry_end)
                    if p + size != entry_end:  # also when cut off (p is -1)
                        return None
                if slot is not None:
                    found[slot] = (p, entry_end)
                p = entry_end
        return found

    def parse(self, data: bytes, batched: bool) -> dict[str, Any] | None:
        """The parsed features (with a batch dimension of one when ``batched``), or None when the
        record needs the batch parser (to parse it or to raise its error)."""
        try:
            found = self.locate(data)
            if found is None:
                return None
            out = {}
            for key, slot, read in self.readers[batched]:
                value = read(data, found[slot])
                if value is None:
                    return None
                out[key] = value
            return out
        except IndexError:  # a length byte past the end: malformed, the batch parser says where
            return None


def _reader(step: Step, batched: bool) -> Callable[[bytes, Any], Any]:
    """``read(data, span)`` of one output: :func:`_read`, behind a shortcut for the common fixed
    features in canonical form (n floats, one int64, one byte string) that gives its same values."""

    def read(data: bytes, span: Any) -> Any:
        return _read(data, span, step, batched)

    if not step.fixed or step.size == 0 or (step.size > 1 and step.kind != 2):
        return read
    shape = (1, *step.shape) if batched else step.shape
    unwrap = step.scalar and not batched
    flat = shape == (step.size,)  # no reshape needed
    if step.kind == 2:  # Feature field 2 (FloatList), holding field 1: one packed run of n floats
        count = step.size
        run = _encode_varint(4 * count)
        header = b"\x12" + _encode_varint(1 + len(run) + 4 * count) + b"\x0a" + run
        offset, total = len(header), len(header) + 4 * count

        def read_floats(data: bytes, span: Any) -> Any:
            if span is not None and span[1] - span[0] == total and data.startswith(header, span[0]):
                values = np.frombuffer(data, _F4, count, span[0] + offset)
                if unwrap:
                    return values[0]
                return values.astype(FLOAT32) if flat else values.astype(FLOAT32).reshape(shape)
            return _read(data, span, step, batched)

        return read_floats
    if step.kind == 3:  # Feature field 3 (Int64List), holding field 1: one packed run of one varint

        def read_int(data: bytes, span: Any) -> Any:
            if span is not None:
                p, end = span
                n = end - p  # 1A n-2 0A n-4 varint: no length byte here can reach 0x80
                if 5 <= n <= 14 and data[p] == 0x1A and data[p + 1] == n - 2 and data[p + 2] == 0x0A:
                    if data[p + 3] == n - 4:
                        value = data[p + 4]
                        if n == 5 and value < 0x80 and unwrap:
                            return _SMALL[value]
                        if n > 5 or value >= 0x80:
                            value, p = _varint(data, p + 4, end)
                            if p != end:  # cut off, or more than one value
                                return _read(data, span, step, batched)
                            if value >= _SIGN:
                                value -= 1 << 64
                        if unwrap:
                            return _INT64(value)
                        array = np.array([value], dtype=_INT64)
                        return array if flat else array.reshape(shape)
            return _read(data, span, step, batched)

        return read_int

    def read_bytes(data: bytes, span: Any) -> Any:  # Feature field 1 (BytesList) of one value
        if span is not None and span[0] < span[1]:
            p, end = span
            p = _payload(data, p, end)
            if p >= 0 and p < end:
                p = _payload(data, p, end)
                if p >= 0:
                    if unwrap:
                        return data[p:end]
                    array = np.empty(1, dtype=object)
                    array[0] = data[p:end]
                    return array if flat else array.reshape(shape)
        return _read(data, span, step, batched)

    return read_bytes


def _payload(data: bytes, p: int, end: int) -> int:
    """Where the payload of the length-delimited field 1 at ``p`` starts, when it ends at ``end``
    (-1 otherwise)."""
    if data[p] != 0x0A:
        return -1
    size = data[p + 1]
    p += 2
    if size >= 0x80:
        size, p = _long_length(data, p, end)
    return p if p >= 0 and p + size == end else -1


def _long_length(data: bytes, p: int, end: int) -> tuple[int, int]:
    """``(length, position after it)`` of a field length of two bytes or more, whose first byte is
    ``data[p - 1]`` (a one-byte length, the usual case, is read in place by the callers); position -1
    when cut off."""
    if data[p] < 0x80:  # two bytes: a feature of up to 16 KiB
        return (data[p - 1] & 0x7F) | data[p] << 7, p + 1
    return _varint(data, p - 1, end)


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read(data: bytes, span: tuple[int, int] | None, step: Step, batched: bool) -> Any:
    if span is None:
        kind = 0
    else:
        p, end = span
        if p == end:
            kind = 0  # a Feature with no list reads as missing
        else:
            tag = data[p]
            if tag != 0x0A and tag != 0x12 and tag != 0x1A:
                return None
            size = data[p + 1]
            p += 2
            if size >= 0x80:
                size, p = _varint(data, p - 1, end)
            if p < 0 or p + size != end:
                return None
            kind = tag >> 3
    if kind == 0:
        return _missing(step, batched)
    if kind != step.kind:
        return None
    values = _values(data, p, end, kind)
    if values is None:
        return None
    count = len(values)
    if not step.fixed:
        if kind == 1:
            array = np.empty(count, dtype=object)
            array[:] = values
        elif count == 0:
            array = _EMPTY[kind].copy()
        elif kind == 2 or not isinstance(values, np.ndarray):
            array = np.array(values, dtype=step.dtype)  # a copy: the floats are a view of the record
        else:
            array = values
        if batched:
            return Ragged(array, np.array([0, count], dtype=np.int64), validate=False)
        return array
    if count != step.size:
        return None
    if step.scalar and not batched:
        return values[0] if kind == 1 else step.dtype.type(values[0])
    shape = (1, *step.shape) if batched else step.shape
    if kind == 1:
        array = np.empty(count, dtype=object)
        array[:] = values
        return array.reshape(shape)
    if isinstance(values, np.ndarray):
        return values.astype(step.dtype).reshape(shape)
    return np.array(values, dtype=step.dtype).reshape(shape)


def _values(data: bytes, p: int, end: int, kind: int) -> Any:
    """The values of a list payload in its one canonical form, or None for anything else."""
    if kind == 1:  # BytesList: repeated length-delimited values
        strings = []
        while p < end:
            if data[p] != 0x0A:
                return None
            size = data[p + 1]
            p += 2
            if size >= 0x80:
                size, p = _varint(data, p - 1, end)
            stop = p + size
            if p < 0 or stop > end:
                return None
            strings.append(data[p:stop])
            p = stop
        return strings
    if p == end:
        return ()
    if data[p] != 0x0A:  # one packed run (field 1); unpacked values go to the batch parser
        return None
    size = data[p + 1]
    p += 2
    if size >= 0x80:
        size, p = _varint(data, p - 1, end)
    if p < 0 or p + size != end:
        return None
    if kind == 2:
        if size % 4:
            return None
        return np.frombuffer(data, dtype="<f4", count=size // 4, offset=p)
    return _ints(data, p, end)


def _missing(step: Step, batched: bool) -> Any:
    """A missing feature: its default (a fresh array, as the batch parser's), or an empty row."""
    if not step.fixed:
        empty = _EMPTY[step.kind].copy()
        if batched:
            return Ragged(empty, np.zeros(2, dtype=np.int64), validate=False)
        return empty
    default = step.default
    if default is None:
        return None
    if batched:
        return default.reshape((1, *step.shape)).copy()
    return default[()] if step.scalar else default.copy()
