"""``Dataset.zip``: combine datasets element by element into tuples or dicts, ending with the shortest."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import CheckpointError, InvalidArgumentError, attempt
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Access, Context, Fields, Node, NodeIterator
from ..core.state import Bool, Children, Field, StateFields
from ..core.structure import flatten, pack_as


def as_node_structure(datasets: Any, argument: str = "datasets") -> Any:
    """``datasets`` (a dataset, or tuples and dicts of them) with each dataset replaced by its Node.

    Datasets are recognised by their ``node`` attribute, so this module never imports the facade.
    """
    if isinstance(datasets, tuple):
        values = [as_node_structure(d, f"{argument}[{i}]") for i, d in enumerate(datasets)]
        return type(datasets)(*values) if hasattr(datasets, "_fields") else tuple(values)
    if isinstance(datasets, dict):
        return {key: as_node_structure(d, f"{argument}[{key!r}]") for key, d in datasets.items()}
    if isinstance(datasets, Node):
        return datasets
    if isinstance(getattr(datasets, "node", None), Node):
        return datasets.node
    if isinstance(datasets, list):
        raise InvalidArgumentError(
            f"{argument} is a list; zip takes datasets, or tuples and dicts of datasets: use a tuple"
        )
    raise InvalidArgumentError(f"{argument} must be a headrace Dataset, got {type(datasets).__name__}")


def _describe(structure: Any, counter: list) -> str:
    if isinstance(structure, tuple):
        inner = ", ".join(_describe(s, counter) for s in structure)
        return f"({inner}{',' if len(structure) == 1 else ''})"
    if isinstance(structure, dict):
        return "{" + ", ".join(f"{k!r}: {_describe(structure[k], counter)}" for k in sorted(structure)) + "}"
    counter[0] += 1
    return f"#{counter[0] - 1}"


class ZipNode(Node):
    """``zip(datasets)``: element ``i`` has the structure of ``datasets`` with each dataset's element ``i``.

    Ends as soon as any input ends (inputs are read in order, so the longer ones are read once past
    the shortest, as in tf.data).
    """

    op = "zip"
    fields = Fields("structure", "_flat_tuple")
    never_raises = True

    def __init__(self, datasets: Any, name: str | None = None):
        structure = as_node_structure(datasets)
        leaves = flatten(structure)
        if not leaves:
            raise InvalidArgumentError("datasets=() is not allowed: zip needs at least one dataset")
        super().__init__(*leaves)
        self.structure = structure
        self.name = name
        # A flat tuple is the common case: build it without pack_as.
        self._flat_tuple = type(structure) is tuple and all(isinstance(s, Node) for s in structure)

    def describe_args(self) -> str:
        return _describe(self.structure, [0])

    def compute_element_spec(self) -> Any:
        return self.pack([p.element_spec for p in self.parents])

    def cardinality(self) -> int:
        counts = [p.cardinality() for p in self.parents]
        if 0 in counts:
            return 0
        if UNKNOWN_CARDINALITY in counts:
            return UNKNOWN_CARDINALITY
        finite = [n for n in counts if n != INFINITE_CARDINALITY]
        return min(finite) if finite else INFINITE_CARDINALITY

    def random_access_length(self) -> int | None:
        lengths = [p.random_access_length() for p in self.parents]
        known = [n for n in lengths if n is not None]
        return min(known) if len(known) == len(lengths) else None

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        columns = [p.elements_at(indices, access) for p in self.parents]
        if self._flat_tuple:
            return list(zip(*columns))
        return [self.pack(list(row)) for row in zip(*columns)]

    def pack(self, values: list) -> Any:
        if self._flat_tuple:
            return tuple(values)
        return pack_as(self.structure, values)

    def iterator(self, ctx: Context) -> ZipIterator:
        return ZipIterator(self, [p.iterator(ctx) for p in self.parents])


class _Pulled(Field):
    """Per input, the elements pulled for a row an error cut short: always empty now (rows are built
    whole), kept for the format; a checkpoint from an older zip that holds some is refused."""

    def save(self, stage: Any) -> list:
        return [[] for _ in stage.inputs]

    def load(self, fields: StateFields, stage: Any, values: dict) -> None:
        if any(fields.list(self.name, length=len(stage.inputs))):
            raise CheckpointError(
                f"{stage.name}: this checkpoint holds elements zip had pulled before an error (saved by an "
                "older headrace, whose zip could misalign rows after an error); restore it with that "
                "version, or restart the epoch"
            )

    def restore(self, stage: Any, value: Any) -> None:
        pass


class ZipIterator(NodeIterator[ZipNode]):
    """Rows are built one at a time, each input asked for its element of the row, as tf.data does.

    An input that raises for row ``r`` loses that whole row: the other inputs' elements of row ``r``
    are taken and dropped (every input is asked, even after the error, as tf.data's zip does), so under
    ``ignore_errors`` the rows after it stay aligned: image ``k + 1`` never meets label ``k``.

    Chunks are pulled whenever at most one input can fail (``images.map(decode)`` beside labels):
    a chunk gives the elements before an error and raises it at the next call (the ``next_chunk``
    protocol, :meth:`NodeIterator.hold`), so the fallible input is pulled first, the
    others for exactly the rows it gave, and a raised error belongs to the next row. With two or more
    fallible inputs, rows are built one at a time. One difference from asking inputs in order: when
    an input before the fallible one ends, the fallible one has computed up to one chunk past that
    end (its errors there are never raised).
    """

    state_fields = (Children("inputs"), Bool("exhausted"), _Pulled("pulled"))

    def __init__(self, node: ZipNode, inputs: list[NodeIterator]):
        super().__init__(node, *inputs)
        self.exhausted = False
        # Inputs where no row can fail (ranges, tensor slices, shuffles of them...) are pulled in
        # whole chunks beside at most one that can: several times faster on cheap rows.
        fallible = [i for i, parent in enumerate(node.parents) if not parent.cannot_fail()]
        self.chunked = len(fallible) <= 1
        self.fallible: int | None = fallible[0] if fallible else None

    def _row(self) -> Any:
        inputs = self.inputs
        row: list = []
        try:
            # Each input asked in turn, in C; extend keeps what came before a failure, so len(row) is
            # the failing input. An input's StopIteration ends map() quietly: a short row.
            row.extend(map(next, inputs))
        except Exception:
            for it in inputs[len(row) + 1 :]:  # the rest give up their element of this row too
                taken, error = attempt(next, it)  # one error per row is reported: the first
                if not taken and isinstance(error, StopIteration):
                    self.exhausted = True
                    break
            raise
        if len(row) < len(inputs):  # as tf.data: the first input to end ends the zip
            self.exhausted = True
            raise StopIteration
        return tuple(row) if self.node._flat_tuple else self.node.pack(row)

    def __next__(self) -> Any:
        if self.exhausted:
            raise StopIteration
        row = self._row()
        self.produced += 1
        return row

    def next_chunk(self, n: int) -> list:
        if not self.chunked:
            return super().next_chunk(n)  # an error after some rows: those go out first, then it
        if self.exhausted:
            raise StopIteration
        return self._chunk(n)

    def _chunk(self, n: int) -> list:
        inputs = self.inputs
        columns: list = [None] * len(inputs)
        first = self.fallible
        if first is not None:
            try:
                columns[first] = inputs[first].next_chunk(n)  # may come short: the rows before an error
            except StopIteration:
                self.exhausted = True
                raise
            except Exception:
                self._drop_failed_row(first)
                raise
            n = len(columns[first])
        for i, it in enumerate(inputs):
            if i == first:
                continue
            column: list = []
            try:
                while len(column) < n:  # a chunk may come short: fill it to the rows asked
                    column.extend(it.next_chunk(n - len(column)))
            except StopIteration:
                self.exhausted = True  # the rows every input has are the last ones
                n = len(column)
            if n == 0:
                raise StopIteration
            columns[i] = column
        columns = [column[:n] for column in columns]
        node = self.node
        rows = list(zip(*columns)) if node._flat_tuple else [node.pack(list(row)) for row in zip(*columns)]
        self.produced += len(rows)
        return rows

    def _drop_failed_row(self, failed: int) -> None:
        """Input ``failed`` raised for the next row: take and drop the other inputs' elements of it
        (they cannot fail). As when inputs are asked in order, an input before the failing one that
        ends ends the zip without the error (it would not have been asked); one after it ends the
        zip after the error."""
        for i, it in enumerate(self.inputs):
            if i == failed:
                continue
            try:
                next(it)
            except StopIteration:
                self.exhausted = True
                if i < failed:
                    raise StopIteration from None
                return

    def seek_forward(self, n: int) -> int | None:
        if self.exhausted:
            return 0
        if self.owed:
            return None  # an error is owed first: let the caller read instead
        skipped = self.inputs[0].seek_forward(n)
        if skipped is None:
            return None
        for it in self.inputs[1:]:
            done = it.seek_forward(skipped)
            if done is None:  # this input cannot seek: read and drop instead
                done = 0
                try:
                    while done < skipped:
                        done += len(it.next_chunk(skipped - done))
                except StopIteration:
                    pass
            skipped = min(skipped, done)
        if skipped < n:
            self.exhausted = True
        return skipped

    def reset(self) -> None:
        for it in self.inputs:
            it.reset()
        self.exhausted = False
