"""tf.train.Example without TensorFlow: :func:`serialize_example`, and :func:`parse_example` that
turns a batch of serialized Examples into numpy columns in a few compiled passes.

Parsing walks the protobuf wire format in numba kernels: one pass finds every wanted feature of every
record, then one pass per feature copies its values straight into the output array. Fixed-size
numeric features (the tabular case) take a single fused pass that checks kind and count while
copying. Variable-length features come back as :class:`~headrace.io.codec.ragged.Ragged`.

>>> spec = {"x": FixedLenFeature([2], "float32"), "tags": VarLenFeature("string")}
>>> batch = parse_example(
...     [serialize_example({"x": [1.0, 2.0], "tags": [b"a"]}), serialize_example({"x": [3.0, 4.0], "tags": []})],
...     spec,
... )
>>> batch["x"].tolist(), batch["tags"].to_list()
([[1.0, 2.0], [3.0, 4.0]], [[b'a'], []])
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import numpy as np

from ...core.errors import InvalidArgumentError
from ...core.spec import string
from ...core.trace_hook import traceable
from ..limits import check_size, limit
from .example_single import SinglePlan
from .features import (
    FLOAT32,
    INT64,
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    RowLengths,
    RowLimits,
    RowSplits,
    RowStarts,
    UniformRowLength,
    VarLenFeature,
    dtype_name,
)
from .ragged import Ragged
from .sparse import SparseTensor
from .sparse_feature import assemble, sparse_row, split_sparse

_KIND_OF = {string: 1, FLOAT32: 2, INT64: 3}
_KIND_NAMES = {0: "no values", 1: "bytes", 2: "float", 3: "int64"}


def parser_kernels():
    # numba costs ~0.4 s to import: load the compiled parser on first use, not on `import headrace`.
    from . import example_kernels  # noqa: PLC0415

    return example_kernels


class ExampleParseError(InvalidArgumentError):
    """A serialized Example does not fit the feature spec, or is not a valid protobuf message."""


# --- serializing ------------------------------------------------------------------------------------
def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _varints(values: np.ndarray) -> bytes:
    """Varint encoding of many int64 values at once (negative values take 10 bytes, as protobuf)."""
    if len(values) <= 8:
        return b"".join(_varint(int(v)) for v in values)
    unsigned = values.astype(np.int64).view(np.uint64)
    sizes = np.ones(len(unsigned), dtype=np.int64)
    for k in range(1, 10):
        sizes += unsigned >= (np.uint64(1) << np.uint64(7 * k))
    groups = np.empty((len(unsigned), 10), dtype=np.uint8)
    for k in range(10):
        groups[:, k] = ((unsigned >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
    groups[np.arange(10)[None, :] < (sizes - 1)[:, None]] |= 0x80
    return groups[np.arange(10)[None, :] < sizes[:, None]].tobytes()


def length_delimited(tag: int, payload: bytes) -> bytes:
    return bytes((tag,)) + _varint(len(payload)) + payload


def _as_bytes(value: Any, key: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytearray, memoryview, np.bytes_)):
        return bytes(value)
    raise InvalidArgumentError(
        f"serialize_example: feature {key!r} mixes byte strings with {type(value).__name__}"
    )


def encode_feature(key: str, value: Any) -> bytes:
    """One serialized ``tf.train.Feature``: floats -> float_list (float32), ints and bools ->
    int64_list, bytes/str -> bytes_list. An empty untyped list gives a Feature with no list, which
    parsers treat as missing; use a typed empty numpy array for an empty typed list."""
    if isinstance(value, (bytes, str, bytearray, memoryview, np.bytes_, np.str_)):
        return length_delimited(0x0A, length_delimited(0x0A, _as_bytes(value, key)))
    if isinstance(value, (list, tuple)) and not value:
        return b""
    if isinstance(value, (list, tuple)) and isinstance(
        value[0], (bytes, str, bytearray, memoryview, np.bytes_)
    ):
        return length_delimited(0x0A, b"".join(length_delimited(0x0A, _as_bytes(v, key)) for v in value))
    array = np.asarray(value)
    kind = array.dtype.kind
    if kind in "SUO":
        flat = array.ravel().tolist()
        return length_delimited(0x0A, b"".join(length_delimited(0x0A, _as_bytes(v, key)) for v in flat))
    if kind == "f":
        data = array.astype("<f4", copy=False).ravel().tobytes()
        return length_delimited(0x12, length_delimited(0x0A, data) if data else b"")
    if kind in "iub":
        if kind == "u" and array.size and array.max() >= 1 << 63:
            raise InvalidArgumentError(f"serialize_example: feature {key!r} has values above int64's range")
        data = _varints(array.astype(np.int64).ravel())
        return length_delimited(0x1A, length_delimited(0x0A, data) if data else b"")
    raise InvalidArgumentError(
        f"serialize_example: feature {key!r} has values of type {array.dtype} ({type(value).__name__}); "
        "an Example holds floats, ints (and bools) or bytes/str"
    )


def encode_features(features: Mapping[str, Any]) -> bytes:
    """A serialized ``tf.train.Features`` message (the map of key -> Feature)."""
    if not isinstance(features, Mapping):
        raise InvalidArgumentError(
            f"features must be a dict of name -> values, got {type(features).__name__}"
        )
    entries = []
    for key, value in features.items():
        if not isinstance(key, str):
            raise InvalidArgumentError(f"feature names must be str, got {key!r}")
        entry = length_delimited(0x0A, key.encode("utf-8")) + length_delimited(
            0x12, encode_feature(key, value)
        )
        entries.append(length_delimited(0x0A, entry))
    return b"".join(entries)


def serialize_example(features: Mapping[str, Any]) -> bytes:
    """A serialized ``tf.train.Example`` from a dict of numpy arrays, scalars, bytes/str and lists.

    >>> serialize_example({"label": 3})
    b'\\n\\x10\\n\\x0e\\n\\x05label\\x12\\x05\\x1a\\x03\\n\\x01\\x03'
    """
    return length_delimited(0x0A, encode_features(features))


# --- parsing: shared machinery ----------------------------------------------------------------------
def as_records(serialized: Any, function: str) -> list[bytes]:
    """A batch of serialized messages as a list of bytes."""
    if isinstance(serialized, (bytes, str)):
        raise InvalidArgumentError(
            f"{function} takes a batch (a list or 1-D array of serialized records); for one record use "
            f"{function.replace('parse_', 'parse_single_')}"
        )
    if isinstance(serialized, np.ndarray):
        if serialized.dtype.kind == "S":
            raise InvalidArgumentError(
                f"{function}: serialized is a numpy array of dtype {serialized.dtype}, which silently drops "
                "trailing zero bytes of each record; pass a list of bytes or an object array"
            )
        if serialized.ndim != 1:
            raise InvalidArgumentError(
                f"{function}: serialized must be 1-D (a batch), got shape {serialized.shape}"
            )
        serialized = serialized.tolist()
    elif not isinstance(serialized, list):
        try:
            serialized = list(serialized)
        except TypeError:
            raise InvalidArgumentError(
                f"{function}: serialized must be a list or 1-D array of bytes, got {type(serialized).__name__}"
            ) from None
    for i, record in enumerate(serialized):
        if type(record) is not bytes:
            if isinstance(record, (bytearray, memoryview, np.bytes_)):
                serialized = [bytes(r) if not isinstance(r, bytes) else r for r in serialized]
                break
            raise InvalidArgumentError(
                f"{function}: record {i} is {type(record).__name__}, not bytes (a serialized message)"
            )
    return serialized


class Batch:
    """Serialized records joined into one buffer, with each record's span."""

    def __init__(self, records: list[bytes]):
        self.size = len(records)
        lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
        self.ends = np.cumsum(lengths)
        self.starts = self.ends - lengths
        self.data = b"".join(records)
        self.buf = np.frombuffer(self.data, dtype=np.uint8)

    def record_of(self, position: int) -> int:
        """Which record a byte position of the joined buffer belongs to."""
        return int(np.searchsorted(self.ends, position, side="right"))

    def strings(self, spans: np.ndarray) -> np.ndarray:
        """Object array of the byte strings at ``spans`` (start, stop)."""
        data = self.data
        out = np.empty(len(spans), dtype=object)
        out[:] = [data[a:b] for a, b in spans.tolist()]
        return out


class Plan:
    """A feature spec compiled for the kernels: the keys to find, in one byte buffer."""

    def __init__(self, features: Mapping[str, Any], function: str, allowed: tuple):
        if not isinstance(features, Mapping) or not features:
            raise InvalidArgumentError(
                f"{function}: features must be a non-empty dict of name -> feature spec"
            )
        self.items: list[tuple[str, Any]] = []
        keys: list[str] = []
        for key, spec in features.items():
            if not isinstance(key, str):
                raise InvalidArgumentError(f"{function}: feature names must be str, got {key!r}")
            if not isinstance(spec, allowed):
                names = ", ".join(t.__name__ for t in allowed)
                raise InvalidArgumentError(
                    f"{function}: feature {key!r} has spec {spec!r}; use one of {names}"
                )
            if (
                isinstance(spec, FixedLenSequenceFeature)
                and function == "parse_example"
                and not spec.allow_missing
            ):
                raise InvalidArgumentError(
                    f"{function}: feature {key!r}: FixedLenSequenceFeature in an Example needs allow_missing=True "
                    "(as in tf.io)"
                )
            self.items.append((key, spec))
            for needed in spec_keys(key, spec):
                if needed not in keys:
                    keys.append(needed)
        self.keys = keys
        self.column = {key: i for i, key in enumerate(keys)}
        encoded = [k.encode("utf-8") for k in keys]
        self.key_bytes = np.frombuffer(b"".join(encoded) or b"\0", dtype=np.uint8)
        lengths = np.array([len(k) for k in encoded], dtype=np.int64)
        self.key_ends = np.cumsum(lengths)
        self.key_starts = self.key_ends - lengths

    @functools.cached_property
    def single(self) -> SinglePlan:
        """The spec compiled for the one-record fast path (built on first use, kept with the plan)."""
        return SinglePlan(self.items, self.column)

    def locate(self, batch: Batch, outer_field: int, function: str, what: str) -> np.ndarray:
        """Value spans ``(records, keys, 2)`` of every wanted key in every record."""
        spans = np.full((batch.size, len(self.keys), 2), -1, dtype=np.int64)
        status, record, _ = parser_kernels().locate_features(
            batch.buf,
            batch.starts,
            batch.ends,
            outer_field,
            self.key_bytes,
            self.key_starts,
            self.key_ends,
            spans,
        )
        if status:
            raise ExampleParseError(
                f"{function}: record {record} is not a valid serialized {what} (malformed protobuf data); "
                "is the file holding another kind of record?"
            )
        return spans


def spec_keys(key: str, spec: Any) -> list[str]:
    """The feature keys a spec reads (a RaggedFeature may read several)."""
    if isinstance(spec, RaggedFeature):
        out = [spec.value_key or key]
        out.extend(p.key for p in spec.partitions if not isinstance(p, UniformRowLength))
        return out
    return [key]


@functools.lru_cache(maxsize=64)
def _cached_plan(items: tuple, function: str, allowed: tuple) -> Plan:
    return Plan(dict(items), function, allowed)


def plan_for(features: Mapping[str, Any], function: str, allowed: tuple) -> Plan:
    # Specs hash by identity and the cache keeps them alive, so a cached plan never outlives its specs.
    try:
        return _cached_plan(tuple(features.items()), function, allowed)
    except (TypeError, AttributeError):  # unhashable values: build (and validate) without caching
        return Plan(features, function, allowed)


class Column:
    """The occurrences of one feature: for each item (a record, or a step of a sequence) the span of
    its Feature message. ``where(i)`` names item ``i`` in error messages."""

    def __init__(self, batch: Batch, spans: np.ndarray, key: str, function: str, where: Callable[[int], str]):
        self.batch, self.key, self.function, self.where = batch, key, function, where
        self.spans = np.ascontiguousarray(spans)  # one compiled signature for every caller
        self._inspected: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def error(self, item: int, message: str) -> ExampleParseError:
        return ExampleParseError(f"{self.function}: feature {self.key!r} of {self.where(item)} {message}")

    def inspect(self, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(kinds, list spans, counts) per item, after checking every present list has ``dtype``'s kind."""
        if self._inspected is None:
            n = len(self.spans)
            kinds = np.empty(n, dtype=np.int64)
            lists = np.empty((n, 2), dtype=np.int64)
            counts = np.empty(n, dtype=np.int64)
            status, item, _ = parser_kernels().inspect_features(
                self.batch.buf, self.spans, kinds, lists, counts
            )
            if status:
                raise self.error(item, "is not a valid serialized Feature (malformed protobuf data)")
            self._inspected = kinds, lists, counts
        kinds, lists, counts = self._inspected
        expected = _KIND_OF[dtype]
        wrong = np.flatnonzero((kinds > 0) & (kinds != expected))
        if len(wrong):
            item = int(wrong[0])
            raise self.error(
                item,
                f"holds {_KIND_NAMES[int(kinds[item])]} values but the spec's dtype is {dtype_name(dtype)}",
            )
        return kinds, lists, counts

    def values(
        self, dtype: np.dtype, counts: np.ndarray, offsets: np.ndarray, total: int, out=None
    ) -> np.ndarray:
        """Fill the values of the items with ``offsets >= 0`` into a flat array of ``total`` values."""
        kernels = parser_kernels()
        _, lists, _ = cast(tuple, self._inspected)  # set by inspect(), which callers run first
        if dtype == string:
            spans = np.full((total, 2), -1, dtype=np.int64)
            status, item, _ = kernels.fill_bytes(self.batch.buf, lists, offsets, spans)
            if status:
                raise self.error(item, "is not a valid serialized Feature (malformed protobuf data)")
            if out is None:
                return self.batch.strings(spans)
            filled = np.flatnonzero(spans[:, 0] >= 0)
            out[filled] = self.batch.strings(spans[filled])
            return out
        if out is None:
            out = np.empty(total, dtype=dtype)
        target = out.view(np.uint32) if dtype == FLOAT32 else out
        status, item, _ = kernels.fill_numeric(self.batch.buf, _KIND_OF[dtype], lists, offsets, target)
        if status:
            raise self.error(item, "is not a valid serialized Feature (malformed protobuf data)")
        return out

    def ragged(self, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
        """(flat values, row splits) of the items, missing items as empty rows."""
        _, _, counts = self.inspect(dtype)
        sizes = np.maximum(counts, 0)
        splits = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=splits[1:])
        total = int(splits[-1])
        if dtype == string:
            values = (
                self.values(dtype, counts, splits[:-1].copy(), total) if total else np.empty(0, dtype=object)
            )
        else:
            values = self.values(dtype, counts, splits[:-1].copy(), total)
        return values, splits


def fixed_column(column: Column, spec: FixedLenFeature, batch_shape: tuple) -> np.ndarray:
    """Dense ``(*batch_shape, *spec.shape)`` values of a FixedLenFeature."""
    kernels = parser_kernels()
    n = len(column.spans)
    size = int(np.prod(spec.shape))
    dtype = spec.dtype
    if dtype != string:
        out = np.empty(n * size, dtype=dtype)
        missing = np.empty(n, dtype=np.bool_)
        target = out.view(np.uint32) if dtype == FLOAT32 else out
        status, item, found = kernels.fill_fixed(
            column.batch.buf, column.spans, _KIND_OF[dtype], size, target, missing
        )
        if status == kernels.MALFORMED:
            raise column.error(item, "is not a valid serialized Feature (malformed protobuf data)")
        if status == kernels.WRONG_KIND:
            raise column.error(
                item, f"holds {_KIND_NAMES[int(found)]} values but the spec's dtype is {dtype_name(dtype)}"
            )
        if status in (kernels.WRONG_COUNT, kernels.EMPTY):
            raise column.error(
                item, f"has {found} values but FixedLenFeature shape {spec.shape} needs {size}"
            )
    else:
        kinds, _, counts = column.inspect(dtype)
        missing = kinds <= 0
        wrong = np.flatnonzero(~missing & (counts != size))
        if len(wrong):
            item = int(wrong[0])
            raise column.error(
                item, f"has {counts[item]} values but FixedLenFeature shape {spec.shape} needs {size}"
            )
        offsets = np.where(missing, -1, np.arange(n, dtype=np.int64) * size)
        out = np.empty(n * size, dtype=object)
        if size and not missing.all():
            column.values(dtype, counts, offsets, n * size, out=out)
    out = out.reshape(n, size)
    if missing.any():
        if spec.default_value is None:
            item = int(np.flatnonzero(missing)[0])
            raise column.error(item, "is missing and the FixedLenFeature has no default_value")
        out[missing] = spec.default_value.reshape(-1)
    return out.reshape(*batch_shape, *spec.shape)


def sequence_in_example(column: Column, spec: FixedLenSequenceFeature) -> np.ndarray:
    """A FixedLenSequenceFeature of an Example: values split into items of ``spec.shape``, padded."""
    n = len(column.spans)
    stride = int(np.prod(spec.shape))
    _, _, counts = column.inspect(spec.dtype)
    counts = np.maximum(counts, 0)
    if stride == 0:
        raise column.error(0, f"cannot be split into items of shape {spec.shape} (zero values each)")
    bad = np.flatnonzero(counts % stride)
    if len(bad):
        item = int(bad[0])
        raise column.error(item, f"has {counts[item]} values, not a multiple of the item shape {spec.shape}")
    rows = counts // stride
    width = int(rows.max()) if n else 0
    check_padding(column.function, column.key, rows, width * stride)
    out = padded(spec, (n, width))
    offsets = np.where(counts > 0, np.arange(n, dtype=np.int64) * width * stride, -1)
    if width:
        flat = out.reshape(-1)
        column.values(spec.dtype, counts, offsets, len(flat), out=flat)
    return out


def check_padding(function: str, key: str, lengths: np.ndarray, row_size: int) -> None:
    """Padding every record to the longest costs ``records * row_size`` elements: one long record
    multiplies by the batch size, so that product is what the budget bounds."""
    if len(lengths) and len(lengths) * row_size > limit("max_padded_elements"):
        longest = int(np.argmax(lengths))
        check_size(
            "max_padded_elements",
            len(lengths) * row_size,
            f"{function}: feature {key!r}, padded over {len(lengths)} records to its longest "
            f"({int(lengths[longest])} items, record {longest}),",
        )


def padded(spec: FixedLenSequenceFeature, leading: tuple) -> np.ndarray:
    """An array of ``(*leading, *spec.shape)`` filled with the spec's padding value."""
    if spec.default_value is not None:
        fill = spec.default_value.reshape(())[()]
    else:
        fill = b"" if spec.dtype == string else 0
    out = np.empty((*leading, *spec.shape), dtype=spec.dtype)
    out[...] = fill
    return out


def ragged_column(columns: Mapping[str, Column], key: str, spec: Any) -> Ragged:
    """A VarLenFeature or RaggedFeature of a batch: rows of values, split by any partitions."""
    values: np.ndarray | Ragged  # flat values, then wrapped once per partition
    if isinstance(spec, VarLenFeature):
        values, splits = columns[key].ragged(spec.dtype)
        return Ragged(values, splits, validate=False)
    value_column = columns[spec.value_key or key]
    values, splits = value_column.ragged(spec.dtype)
    n = len(splits) - 1
    # Apply partitions innermost first: each turns the items of every record into rows of items.
    for depth, partition in enumerate(reversed(spec.partitions)):
        what = "values" if depth == 0 else "rows of the partition inside it"
        item_counts = np.diff(splits)
        if isinstance(partition, UniformRowLength):
            length = int(partition.length)
            if length <= 0:
                raise value_column.error(0, f"cannot be split by UniformRowLength({length})")
            bad = np.flatnonzero(item_counts % length)
            if len(bad):
                raise value_column.error(
                    int(bad[0]),
                    f"has {item_counts[bad[0]]} items, not a multiple of UniformRowLength({length})",
                )
            row_lengths = [np.full(int(c) // length, length, dtype=np.int64) for c in item_counts]
        else:
            part_column = columns[partition.key]
            part_values, part_splits = part_column.ragged(INT64)
            row_lengths = []
            for r in range(n):
                given = part_values[part_splits[r] : part_splits[r + 1]]
                row_lengths.append(_row_lengths(partition, given, int(item_counts[r]), part_column, r, what))
        lengths = np.concatenate(row_lengths) if row_lengths else np.empty(0, dtype=np.int64)
        inner_splits = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=inner_splits[1:])
        values = Ragged(values, inner_splits, validate=False)
        splits = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(x) for x in row_lengths], out=splits[1:])
    return Ragged(values, splits, validate=False)


def _row_lengths(
    partition: Any, given: np.ndarray, items: int, column: Column, record: int, what: str = "values"
) -> np.ndarray:
    """Row lengths of one record's items as a partition feature describes them, validated."""
    name = type(partition).__name__
    if isinstance(partition, RowLengths):
        lengths = given
    elif isinstance(partition, RowSplits):
        if len(given) == 0 or given[0] != 0:
            raise column.error(record, f"must start at 0 to be {name} (got {given[:5].tolist()})")
        lengths = np.diff(given)
    elif isinstance(partition, RowStarts):
        lengths = np.diff(np.append(given, items))
        if len(given) and given[0] != 0:
            raise column.error(record, f"must start at 0 to be {name}")
    elif isinstance(partition, RowLimits):
        lengths = np.diff(np.concatenate([[0], given]))
    else:  # ValueRowIds
        if len(given) != items:
            raise column.error(record, f"has {len(given)} row ids for {items} {what} ({name})")
        if len(given) and (given.min() < 0 or np.any(np.diff(given) < 0)):
            raise column.error(record, f"must hold non-decreasing row ids >= 0 ({name})")
        rows = int(given.max()) + 1 if len(given) else 0
        # Rows cost memory without taking bytes in the record (one id of 2**29 asks for 4 GiB).
        check_size(
            "max_ragged_rows", rows, f"{column.function}: feature {column.key!r} of {column.where(record)}"
        )
        lengths = np.bincount(given, minlength=rows)
    lengths = np.asarray(lengths, dtype=np.int64)
    if np.any(lengths < 0) or int(lengths.sum()) != items:
        raise column.error(
            record,
            f"describes {int(lengths.sum())} {what} as {name} but there are {items} (misaligned partitions)",
        )
    return lengths


# --- parsing: Examples ------------------------------------------------------------------------------
EXAMPLE_FEATURES = (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, RaggedFeature)


def parse_example(
    serialized: Any,
    features: Mapping[str, Any],
    example_names: Sequence[str] | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """Parse a batch of serialized ``tf.train.Example`` into a dict of columns:

    - ``FixedLenFeature(shape)``: a ``(batch, *shape)`` array (float32, int64, or object of bytes);
    - ``VarLenFeature`` and ``RaggedFeature``: a :class:`Ragged` (tf.io gives SparseTensor / RaggedTensor);
    - ``FixedLenSequenceFeature(shape, allow_missing=True)``: ``(batch, longest, *shape)``, padded.

    Errors name the feature, the record and what was expected vs found. One record given as a
    scalar (bytes, or a 0-d array) parses as in tf.io: the columns have no batch dimension.

    >>> records = [serialize_example({"label": 1}), serialize_example({})]
    >>> parse_example(records, {"label": FixedLenFeature([], "int64", default_value=-1)})["label"].tolist()
    [1, -1]
    """
    if isinstance(serialized, np.ndarray) and serialized.ndim == 0 and serialized.dtype == object:
        serialized = serialized[()]
    if isinstance(serialized, (bytes, bytearray, np.bytes_)):  # a scalar: one record, as tf.io
        return parse_single_example(serialized, features, example_names)
    if type(serialized) is list and len(serialized) == 1 and type(serialized[0]) is bytes:
        records = serialized  # what as_records gives, without its checks (the per-element case)
    else:
        records = as_records(serialized, "parse_example")
    plan, sparse = example_plan(features)
    if len(records) == 1 and not sparse and plan.single.supported:
        parsed = plan.single.parse(records[0], batched=True)
        if parsed is not None:
            return parsed
    return parse_records(records, features, plan, sparse, example_names)


@functools.lru_cache(maxsize=64)
def _cached_example_plan(items: tuple) -> tuple[Plan, dict]:
    features, sparse = split_sparse(dict(items))
    return Plan(features, "parse_example", EXAMPLE_FEATURES), sparse


def example_plan(features: Mapping[str, Any]) -> tuple[Plan, dict]:
    """The validated plan of an Example spec and its SparseFeatures, built once per spec."""
    # Specs hash by identity and the cache keeps them alive, so a cached plan never outlives its specs.
    try:
        return _cached_example_plan(tuple(features.items()))
    except (TypeError, AttributeError):  # not a dict, or unhashable values: build (and validate) uncached
        plain, sparse = split_sparse(features)  # SparseFeature: index/value lists
        return Plan(plain, "parse_example", EXAMPLE_FEATURES), sparse


def parse_records(
    records: list[bytes],
    requested: Mapping[str, Any],
    plan: Plan,
    sparse: dict,
    example_names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The batch parser: every record of ``records`` through the compiled kernels."""
    batch = Batch(records)
    spans = plan.locate(batch, 1, "parse_example", "tf.train.Example")
    names = list(example_names) if example_names is not None else None

    def where(item: int) -> str:
        return f"record {item}" + (f" ({names[item]!r})" if names and item < len(names) else "")

    columns = {key: Column(batch, spans[:, i], key, "parse_example", where) for key, i in plan.column.items()}
    parsed = {key: parse_column(columns, key, spec, (batch.size,)) for key, spec in plan.items}
    return assemble(parsed, sparse, requested, batch.size, "parse_example") if sparse else parsed


def parse_column(columns: Mapping[str, Column], key: str, spec: Any, batch_shape: tuple) -> Any:
    if isinstance(spec, FixedLenFeature):
        return fixed_column(columns[key], spec, batch_shape)
    if isinstance(spec, FixedLenSequenceFeature):
        return sequence_in_example(columns[key], spec)
    return ragged_column(columns, key, spec)


@traceable("io.parse_single_example")
def parse_single_example(
    serialized: bytes | bytearray | memoryview | np.ndarray,
    features: Mapping[str, Any],
    example_names: Any = None,
) -> dict[str, Any]:
    """Parse one serialized Example: fixed features without the batch dimension, variable-length
    ones as a 1-D array (or a :class:`Ragged` when partitioned).

    >>> parse_single_example(serialize_example({"v": [1, 2]}), {"v": VarLenFeature("int64")})["v"].tolist()
    [1, 2]
    """
    if not isinstance(serialized, (bytes, bytearray, memoryview, np.bytes_)):
        if isinstance(serialized, np.ndarray) and serialized.shape == () and serialized.dtype == object:
            serialized = serialized[()]
        else:
            raise InvalidArgumentError(
                f"parse_single_example takes one serialized Example (bytes), got {type(serialized).__name__}; "
                "for a batch use parse_example"
            )
    data = serialized if type(serialized) is bytes else bytes(serialized)
    plan, sparse = example_plan(features)
    if not sparse and plan.single.supported:
        single = plan.single.parse(data, batched=False)
        if single is not None:
            return single
    parsed = parse_records([data], features, plan, sparse)
    return {key: unbatch_one(value) for key, value in parsed.items()}


def unbatch_one(value: Any) -> Any:
    """Row 0 of a parsed batch of one."""
    if isinstance(value, SparseTensor):
        return sparse_row(value)
    if isinstance(value, Ragged):
        return value[0]
    return value[0]
