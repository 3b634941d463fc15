"""``Dataset.bucket_by_sequence_length``: batch elements of similar length together, padded per batch."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.closures import freeze
from ..core.errors import InvalidArgumentError, check
from ..core.naming import describe
from ..core.node import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Context,
    Fields,
    Node,
    NodeIterator,
    call_noted,
)
from ..core.state import ERROR, Bool, Child, Field, Int, Owed, StateFields, encode_element
from ..core.structure import flatten, map_structure
from .support.batching import stack
from .support.elementwise import owed_inputs
from .support.padding import (
    check_padded_shapes,
    check_padding_values,
    padded_spec,
    padded_stack,
    resolve_padded_shapes,
    resolve_padding_values,
)


def _int_list(value: Any, argument: str, minimum: int) -> list[int]:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= minimum for v in value
    ):
        raise InvalidArgumentError(f"{argument}={value!r} is not allowed: use a list of ints >= {minimum}")
    return [int(v) for v in value]


class BucketBySequenceLengthNode(Node):
    """``bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
    padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False, no_padding=False,
    drop_remainder=False)``.

    Bucket ``i`` holds elements whose length ``element_length_func(element)`` lies in
    ``[bucket_boundaries[i-1], bucket_boundaries[i])`` (open-ended at both ends); a bucket is
    batched as soon as it holds ``bucket_batch_sizes[i]`` elements, and at the end of the input the
    partial buckets are batched in bucket order, unless ``drop_remainder``. This is tf.data's
    group_by_window + padded_batch composition, run as one stage.

    Padding is ``padded_batch``'s. With ``pad_to_bucket_boundary`` the unknown sizes are padded to
    ``boundary - 1`` of the bucket: those that ``padded_shapes`` leaves None, or, without
    ``padded_shapes``, those unknown in the input's ``element_spec``.
    """

    op = "bucket_by_sequence_length"
    fields = Fields(
        "element_length_func",
        "bucket_boundaries",
        "bucket_batch_sizes",
        "padded_shapes",
        "padding_values",
        "pad_to_bucket_boundary",
        "no_padding",
        "drop_remainder",
    )

    def __init__(
        self,
        parent: Node,
        element_length_func: Callable,
        bucket_boundaries: Any,
        bucket_batch_sizes: Any,
        padded_shapes: Any = None,
        padding_values: Any = None,
        pad_to_bucket_boundary: bool = False,
        no_padding: bool = False,
        drop_remainder: bool = False,
        name: str | None = None,
    ):
        if not callable(element_length_func):
            raise InvalidArgumentError(
                f"element_length_func={element_length_func!r} is not callable: pass a function returning "
                "the element's length"
            )
        boundaries = _int_list(bucket_boundaries, "bucket_boundaries", minimum=-(2**63))
        sizes = _int_list(bucket_batch_sizes, "bucket_batch_sizes", minimum=1)
        check(
            all(a < b for a, b in zip(boundaries, boundaries[1:])),
            "bucket_boundaries",
            bucket_boundaries,
            "boundaries must increase strictly",
        )
        if len(sizes) != len(boundaries) + 1:
            raise InvalidArgumentError(
                f"len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1: got {len(sizes)} batch sizes "
                f"for {len(boundaries)} boundaries ({len(boundaries) + 1} buckets)"
            )
        for argument, value in (
            ("pad_to_bucket_boundary", pad_to_bucket_boundary),
            ("no_padding", no_padding),
            ("drop_remainder", drop_remainder),
        ):
            check(isinstance(value, bool), argument, value, "True or False")
        check_padded_shapes(padded_shapes)
        check_padding_values(padding_values)
        super().__init__(parent)
        self.element_length_func = freeze(element_length_func)
        self.bucket_boundaries = boundaries
        self.bucket_batch_sizes = sizes
        self.padded_shapes = padded_shapes
        self.padding_values = padding_values
        self.pad_to_bucket_boundary = pad_to_bucket_boundary
        self.no_padding = no_padding
        self.drop_remainder = drop_remainder
        self.name = name

    def cardinality(self) -> int:
        # As tf.data: an infinite input gives an infinite output; otherwise it depends on the lengths.
        n = self.parents[0].cardinality()
        return n if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def describe_args(self) -> str:
        extra = "".join(
            f", {flag}=True"
            for flag in ("pad_to_bucket_boundary", "no_padding", "drop_remainder")
            if getattr(self, flag)
        )
        if self.padded_shapes is not None:
            extra += f", padded_shapes={self.padded_shapes!r}"
        if self.padding_values is not None:
            extra += f", padding_values={self.padding_values!r}"
        return (
            f"{self.name or describe(self.element_length_func)}, {self.bucket_boundaries}, "
            f"{self.bucket_batch_sizes}{extra}"
        )

    def compute_element_spec(self) -> Any:
        spec = self.parents[0].element_spec
        if self.no_padding:
            return map_structure(lambda leaf: leaf.with_leading(None), spec)
        return padded_spec(spec, self.padded_shapes, None, self.op)

    def iterator(self, ctx: Context) -> BucketIterator:
        return BucketIterator(self, self.parents[0].iterator(ctx))


class Buckets(Field):
    """The elements waiting in each bucket: fewer than its batch size (a full bucket is batched)."""

    def save(self, stage: Any) -> list:
        return [[encode_element(e) for e in bucket] for bucket in stage.buckets]

    def load(self, fields: StateFields, stage: Any, values: dict) -> list:
        sizes = stage.node.bucket_batch_sizes
        buckets = []
        for i, bucket in enumerate(fields.list(self.name, length=len(sizes))):
            if not isinstance(bucket, list) or len(bucket) >= sizes[i]:
                raise fields.fail(f"{self.name}[{i}]", bucket, f"a list of fewer than {sizes[i]} elements")
            buckets.append([fields.check_element(e, f"{self.name}[{i}][{j}]") for j, e in enumerate(bucket)])
        return buckets


class BucketIterator(NodeIterator[BucketBySequenceLengthNode]):
    # owed: inputs pulled but not yet bucketed
    state_fields = (Child("parent"), Int("position"), Bool("end_of_input"), Owed(), Buckets("buckets"))

    def __init__(self, node: BucketBySequenceLengthNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.parent = parent
        self.position = 0  # inputs taken from the parent so far
        self.end_of_input = False
        self.buckets: list[list] = [[] for _ in node.bucket_batch_sizes]
        self._base_shapes: list | None = None  # per-leaf shapes whose None sizes go to the boundary

    def _bucket_of(self, element: Any, position: int) -> int:
        node = self.node
        length = call_noted(node.element_length_func, element, self.name, position)
        if isinstance(length, np.ndarray) and length.shape == () and length.dtype.kind in "iu":
            length = int(length)
        if not isinstance(length, (int, np.integer)) or isinstance(length, (bool, np.bool_)):
            raise InvalidArgumentError(
                f"{self.name}: element_length_func must return a scalar integer, got "
                f"{type(length).__name__} {getattr(length, 'shape', '')} for input element {position}"
            )
        bucket = bisect.bisect_right(node.bucket_boundaries, int(length))
        if node.pad_to_bucket_boundary and bucket == len(node.bucket_boundaries):
            limit = node.bucket_boundaries[-1] if node.bucket_boundaries else "none"
            raise InvalidArgumentError(
                f"{self.name}: input element {position} has length {int(length)}, but with "
                f"pad_to_bucket_boundary=True elements must be shorter than max(bucket_boundaries) "
                f"({limit}); raise the last boundary or filter out longer elements"
            )
        return bucket

    def _shapes(self, bucket: int, first: Any) -> list:
        node = self.node
        if not node.pad_to_bucket_boundary:
            return resolve_padded_shapes(node.padded_shapes, first, self.name)
        if self._base_shapes is None:
            if node.padded_shapes is not None:
                self._base_shapes = resolve_padded_shapes(node.padded_shapes, first, self.name)
            else:
                spec = self.node.parents[0].element_spec
                self._base_shapes = [leaf.shape for leaf in flatten(spec)]
                if not any(s is None or None in s for s in self._base_shapes):
                    raise InvalidArgumentError(
                        f"{self.name}: pad_to_bucket_boundary=True pads the sizes the input's element_spec "
                        f"leaves unknown, but {spec} has none (headrace infers a spec from the first element "
                        "after a Python function); pass padded_shapes with None for the length dimension, "
                        "e.g. padded_shapes=[None]"
                    )
        filler = node.bucket_boundaries[bucket] - 1
        return [
            None if s is None else tuple(filler if d is None else d for d in s) for s in self._base_shapes
        ]

    def _batch(self, bucket: int) -> Any:
        elements, self.buckets[bucket] = self.buckets[bucket], []
        node = self.node
        if node.no_padding:
            out = stack(elements)
        else:
            first = elements[0]
            out = padded_stack(
                elements,
                self._shapes(bucket, first),
                resolve_padding_values(node.padding_values, first, self.name),
                self.name,
            )
        self.produced += 1
        return out

    def __next__(self) -> Any:
        node = self.node
        sizes = node.bucket_batch_sizes
        owed = self.owed
        while not self.end_of_input or owed:
            if not owed:
                # At most the emptiest bucket's room: a chunk then fills at most one bucket, at its end.
                want = min(size - len(bucket) for size, bucket in zip(sizes, self.buckets))
                try:
                    chunk = self.parent.next_chunk(want)
                except StopIteration:
                    self.end_of_input = True
                    break
                owed.extend(owed_inputs(chunk, self.position))
                self.position += len(chunk)
            while owed:
                position, kind, element = owed.popleft()
                if kind == ERROR:
                    raise element[0]
                bucket = self._bucket_of(element, position)
                self.buckets[bucket].append(element)
                if len(self.buckets[bucket]) == sizes[bucket]:
                    return self._batch(bucket)
        for bucket, elements in enumerate(self.buckets):
            if elements:
                if node.drop_remainder:
                    self.buckets[bucket] = []
                    continue
                return self._batch(bucket)
        raise StopIteration

    def reset(self) -> None:
        self.parent.reset()
        self.position = 0
        self.end_of_input = False
        self.buckets = [[] for _ in self.node.bucket_batch_sizes]
