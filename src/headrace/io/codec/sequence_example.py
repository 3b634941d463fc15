"""tf.train.SequenceExample: context features plus per-step feature lists.

>>> record = serialize_sequence_example(
...     {"id": 7}, {"tokens": [[1, 2], [3, 4], [5, 6]]}
... )
>>> context, sequences = parse_single_sequence_example(
...     record, {"id": FixedLenFeature([], "int64")}, {"tokens": FixedLenSequenceFeature([2], "int64")}
... )
>>> int(context["id"]), sequences["tokens"].tolist()
(7, [[1, 2], [3, 4], [5, 6]])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...core.errors import InvalidArgumentError
from .example import (
    Batch,
    Column,
    ExampleParseError,
    as_records,
    check_padding,
    encode_feature,
    encode_features,
    length_delimited,
    padded,
    parse_column,
    parser_kernels,
    plan_for,
    unbatch_one,
)
from .features import FixedLenFeature, FixedLenSequenceFeature, RaggedFeature, VarLenFeature, dtype_name
from .ragged import Ragged

CONTEXT_FEATURES = (FixedLenFeature, VarLenFeature, RaggedFeature)
SEQUENCE_FEATURES = (FixedLenSequenceFeature, VarLenFeature, RaggedFeature)


def serialize_sequence_example(
    context: Mapping[str, Any], feature_lists: Mapping[str, Sequence[Any]]
) -> bytes:
    """A serialized ``tf.train.SequenceExample``: ``context`` as in :func:`serialize_example`, and
    ``feature_lists`` mapping a name to its steps (each step encoded like one feature value)."""
    if not isinstance(feature_lists, Mapping):
        raise InvalidArgumentError(
            f"feature_lists must be a dict of name -> steps, got {type(feature_lists).__name__}"
        )
    entries = []
    for key, steps in feature_lists.items():
        if not isinstance(key, str):
            raise InvalidArgumentError(f"feature list names must be str, got {key!r}")
        body = b"".join(length_delimited(0x0A, encode_feature(key, step)) for step in steps)
        entries.append(
            length_delimited(0x0A, length_delimited(0x0A, key.encode("utf-8")) + length_delimited(0x12, body))
        )
    return length_delimited(0x0A, encode_features(context or {})) + length_delimited(0x12, b"".join(entries))


def _step_columns(batch: Batch, spans: np.ndarray, key: str, function: str) -> tuple[Column, np.ndarray]:
    """Split each record's FeatureList into its steps: (a Column over all steps, steps per record;
    -1 where the list is missing)."""
    kernels = parser_kernels()
    n = len(spans)
    steps = np.empty(n, dtype=np.int64)
    spans = np.ascontiguousarray(spans)
    status, item, total = kernels.explode_feature_lists(
        batch.buf, spans, steps, np.empty((0, 2), dtype=np.int64)
    )
    if status:
        raise ExampleParseError(
            f"{function}: feature list {key!r} of record {item} is malformed protobuf data"
        )
    step_spans = np.empty((total, 2), dtype=np.int64)
    kernels.explode_feature_lists(batch.buf, spans, steps, step_spans)
    first_step = np.concatenate([[0], np.cumsum(np.maximum(steps, 0))])

    def where(step: int) -> str:
        record = int(np.searchsorted(first_step, step, side="right")) - 1
        return f"record {record}, step {step - first_step[record]}"

    return Column(batch, step_spans, key, function, where), steps


def _sequence_column(batch: Batch, spans: np.ndarray, key: str, spec: Any, function: str) -> tuple[Any, Any]:
    """(parsed value, lengths or None) of one sequence feature over the batch."""
    column, steps = _step_columns(batch, spans, key, function)
    missing = np.flatnonzero(steps < 0)
    if isinstance(spec, FixedLenSequenceFeature):
        if len(missing) and not spec.allow_missing:
            raise ExampleParseError(
                f"{function}: feature list {key!r} is missing from record {int(missing[0])}; pass "
                "FixedLenSequenceFeature(..., allow_missing=True) to read it as zero steps"
            )
        steps = np.maximum(steps, 0)
        stride = int(np.prod(spec.shape))
        kinds, _, counts = column.inspect(spec.dtype)
        wrong = np.flatnonzero(counts != stride)
        if len(wrong):
            item = int(wrong[0])
            found = "no values" if kinds[item] <= 0 else f"{counts[item]} values"
            raise column.error(
                item, f"has {found} but FixedLenSequenceFeature shape {spec.shape} needs {stride}"
            )
        n = len(steps)
        width = int(steps.max()) if n else 0
        check_padding(function, key, steps, width * stride)
        out = padded(spec, (n, width))
        if width and stride:
            first = np.concatenate([[0], np.cumsum(steps)[:-1]])
            record_of_step = np.repeat(np.arange(n, dtype=np.int64), steps)
            index_in_record = np.arange(len(record_of_step), dtype=np.int64) - first[record_of_step]
            offsets = (record_of_step * width + index_in_record) * stride
            flat = out.reshape(-1)
            column.values(spec.dtype, counts, offsets, len(flat), out=flat)
        return out, steps
    values, step_splits = column.ragged(spec.dtype)
    record_splits = np.concatenate([[0], np.cumsum(np.maximum(steps, 0))]).astype(np.int64)
    return Ragged(Ragged(values, step_splits, validate=False), record_splits, validate=False), None


def parse_sequence_example(
    serialized: Any,
    context_features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
    example_names: Sequence[str] | None = None,
    name: str | None = None,
) -> tuple[dict, dict, dict]:
    """Parse a batch of serialized SequenceExamples into ``(context, sequences, lengths)``:

    - context features as in :func:`parse_example`;
    - ``FixedLenSequenceFeature(shape)``: ``(batch, longest, *shape)`` padded (zeros, or
      ``default_value``), with the number of steps of each record in ``lengths[key]``;
    - ``VarLenFeature`` / ``RaggedFeature``: a :class:`Ragged` of records -> steps -> values.
    """
    records = as_records(serialized, "parse_sequence_example")
    batch = Batch(records)
    names = list(example_names) if example_names is not None else None
    context: dict = {}
    if context_features:
        plan = plan_for(context_features, "parse_sequence_example", CONTEXT_FEATURES)
        spans = plan.locate(batch, 1, "parse_sequence_example", "tf.train.SequenceExample")

        def where(item: int) -> str:
            return f"record {item}" + (f" ({names[item]!r})" if names and item < len(names) else "")

        columns = {
            k: Column(batch, spans[:, i], k, "parse_sequence_example", where) for k, i in plan.column.items()
        }
        context = {key: parse_column(columns, key, spec, (batch.size,)) for key, spec in plan.items}
    sequences: dict = {}
    lengths: dict = {}
    if sequence_features:
        plan = plan_for(sequence_features, "parse_sequence_example", SEQUENCE_FEATURES)
        for key, spec in plan.items:  # checked before any column is looked up by its key
            if isinstance(spec, RaggedFeature) and (spec.partitions or spec.value_key not in (None, key)):
                raise InvalidArgumentError(
                    f"parse_sequence_example: sequence feature {key!r}: RaggedFeature with value_key or "
                    "partitions is only supported for context features; read the feature list as "
                    f"RaggedFeature({dtype_name(spec.dtype)!r}) and split its steps afterwards"
                )
        spans = plan.locate(batch, 2, "parse_sequence_example", "tf.train.SequenceExample")
        for key, spec in plan.items:
            value, steps = _sequence_column(
                batch, spans[:, plan.column[key]], key, spec, "parse_sequence_example"
            )
            sequences[key] = value
            if steps is not None:
                lengths[key] = steps
    return context, sequences, lengths


def parse_single_sequence_example(
    serialized: bytes,
    context_features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
    example_name: str | None = None,
    name: str | None = None,
) -> tuple[dict, dict]:
    """Parse one serialized SequenceExample into ``(context, sequences)`` without the batch dimension:
    a FixedLenSequenceFeature gives ``(steps, *shape)``, a VarLenFeature a :class:`Ragged` of steps."""
    if not isinstance(serialized, (bytes, bytearray, memoryview, np.bytes_)):
        raise InvalidArgumentError(
            f"parse_single_sequence_example takes one serialized SequenceExample (bytes), got "
            f"{type(serialized).__name__}; for a batch use parse_sequence_example"
        )
    context, sequences, lengths = parse_sequence_example(
        [bytes(serialized)], context_features, sequence_features
    )
    single_context = {key: unbatch_one(value) for key, value in context.items()}
    single_sequences = {}
    for key, value in sequences.items():
        single_sequences[key] = value[0][: int(lengths[key][0])] if key in lengths else value[0]
    return single_context, single_sequences
