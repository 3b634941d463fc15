"""``Dataset.zip``: combine datasets element by element into tuples or dicts, ending with the shortest."""

from __future__ import annotations

from typing import Any

from ..core.errors import InvalidArgumentError
from ..core.node import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Context, Node, NodeIterator
from ..core.state import encode_element
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

    def elements_at(self, indices, access) -> list:
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


class ZipIterator(NodeIterator[ZipNode]):
    state_keys = ("inputs", "exhausted", "pulled")

    def __init__(self, node: ZipNode, inputs: list[NodeIterator]):
        super().__init__(node, *inputs)
        self.exhausted = False
        # Elements pulled from each input but not yet zipped: only non-empty after an input raised
        # mid-chunk, so an error loses nothing but the failing element (as in map).
        self.pulled: list[list] = [[] for _ in inputs]

    def next_chunk(self, n: int) -> list:
        if self.exhausted:
            raise StopIteration
        pulled = self.pulled
        inputs = self.inputs
        target = n
        for i, it in enumerate(inputs):
            column = pulled[i]
            if i == 0 and column:
                target = min(n, len(column))
            try:
                while len(column) < target:
                    column.extend(it.next_chunk(target - len(column)))
            except StopIteration:
                target = len(column)
                self.exhausted = True
            if target == 0:
                break
        if target == 0:
            self.pulled = [[] for _ in inputs]
            raise StopIteration
        columns = [column[:target] for column in pulled]
        if self.exhausted:
            self.pulled = [[] for _ in inputs]
        else:
            for column in pulled:
                del column[:target]
        node = self.node
        if node._flat_tuple:
            out = list(zip(*columns))
        else:
            out = [node.pack(list(row)) for row in zip(*columns)]
        self.produced += len(out)
        return out

    def __next__(self):
        return self.next_chunk(1)[0]

    def seek_forward(self, n: int) -> int | None:
        if self.exhausted:
            return 0
        if any(self.pulled):
            return None  # rare (after an error): let the caller read instead
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
        self.pulled = [[] for _ in self.inputs]

    def get_state(self) -> dict:
        return {
            "inputs": [it.get_state() for it in self.inputs],
            "exhausted": self.exhausted,
            "pulled": [[encode_element(e) for e in column] for column in self.pulled],
        }

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        count = len(self.inputs)
        inputs = fields.list("inputs", length=count)
        exhausted = fields.bool("exhausted")
        columns = fields.list("pulled", length=count)
        pulled = []
        for i, column in enumerate(columns):
            if not isinstance(column, list):
                raise fields.fail(f"pulled[{i}]", column, "a list of elements")
            pulled.append([fields.check_element(e, f"pulled[{i}][{j}]") for j, e in enumerate(column)])
        for i, (it, sub) in enumerate(zip(self.inputs, inputs)):
            if not isinstance(sub, dict):
                raise fields.fail(f"inputs[{i}]", sub, "a dict (a stage's state)")
            it.set_state(sub)
        self.exhausted = exhausted
        self.pulled = pulled
