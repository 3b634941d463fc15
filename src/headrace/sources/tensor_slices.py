"""``Dataset.from_tensor_slices`` and ``Dataset.from_tensors``: in-memory sources."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.node import Context, Fields, Node, NodeIterator
from ..core.spec import TensorSpec, encode_strings, to_array
from ..core.state import Bool, Int
from ..core.structure import flatten, map_structure, pack_as


def _read_only(leaf: Any) -> np.ndarray:
    # Elements are views of these arrays: read-only, so writing to an element cannot change what later
    # epochs see. A writable array of the caller's is copied first, as tf.data copies it into a
    # tensor: changing it afterwards does not change the dataset. Read-only arrays and memory maps
    # (np.load(mmap_mode=...)) are used in place, without reading them into memory.
    try:
        array = to_array(leaf)
    except ValueError as exc:
        raise InvalidArgumentError(
            f"from_tensor_slices/from_tensors: cannot make one array of {str(leaf)[:60]} ({exc}); ragged "
            "lists need padding first, or from_generator"
        ) from None
    if array.dtype == object:  # str items become bytes, as tf.string holds them (built once, not per element)
        array = encode_strings(array)
    mapped = isinstance(array, np.memmap) or isinstance(getattr(array, "base", None), np.memmap)
    if array.flags.writeable and not mapped and _shares(array, leaf):
        view = array.copy()
    else:
        view = array.view()
    view.flags.writeable = False
    return view


def _shares(array: np.ndarray, leaf: Any) -> bool:
    """Whether ``array`` may be memory the caller can still write (not a fresh conversion)."""
    if isinstance(leaf, np.ndarray):
        return np.may_share_memory(array, leaf)
    # Python values were converted into a new array; other array-likes (torch tensors, buffers) may
    # have been wrapped without a copy.
    return not isinstance(leaf, (list, tuple, int, float, complex, bool, bytes, str, np.generic))


def _as_arrays(tensors: Any) -> Any:
    if isinstance(tensors, (tuple, dict)):
        return map_structure(_read_only, tensors)
    return _read_only(tensors)


class TensorSlicesNode(Node):
    """Yields ``tensors[i]`` (leaf-wise) for each row ``i`` of the leading dimension."""

    op = "from_tensor_slices"
    fields = Fields("tensors", "length", "_leaves")
    never_raises = True

    def __init__(self, tensors: Any):
        super().__init__()
        self.tensors = _as_arrays(tensors)
        leaves = flatten(self.tensors)
        for leaf in leaves:
            if leaf.ndim == 0:
                raise InvalidArgumentError(
                    f"from_tensor_slices needs arrays with a leading dimension to slice, got a scalar {leaf!r}; "
                    "use from_tensors for a single element"
                )
        sizes = {leaf.shape[0] for leaf in leaves}
        if len(sizes) != 1:
            raise InvalidArgumentError(
                f"from_tensor_slices: all components must have the same leading dimension, got {sorted(sizes)}"
            )
        self.length = sizes.pop()
        self._leaves = leaves

    def describe_args(self) -> str:
        return f"{self.length} rows"

    def compute_element_spec(self):
        return map_structure(lambda a: TensorSpec(a.shape[1:], a.dtype), self.tensors)

    def cardinality(self) -> int:
        return self.length

    def element_at(self, index: int) -> Any:
        leaves = [leaf[index] for leaf in self._leaves]
        if not isinstance(self.tensors, (tuple, dict)):
            return leaves[0]
        return pack_as(self.tensors, leaves)

    def random_access_length(self) -> int:
        return self.length

    def elements_at(self, indices, access) -> list:
        indices = np.asarray(indices, dtype=np.int64)
        if not isinstance(self.tensors, (tuple, dict)):
            return list(self.tensors[indices])
        columns = [list(leaf[indices]) for leaf in self._leaves]
        return [pack_as(self.tensors, list(row)) for row in zip(*columns)]

    def iterator(self, ctx: Context) -> TensorSlicesIterator:
        return TensorSlicesIterator(self)


class TensorSlicesIterator(NodeIterator[TensorSlicesNode]):
    state_fields = (Int("index", high=lambda it, values: it.node.length),)

    def __init__(self, node: TensorSlicesNode):
        super().__init__(node)
        self.index = 0

    def __next__(self):
        node = self.node
        if self.index >= node.length:
            raise StopIteration
        element = node.element_at(self.index)
        self.index += 1
        self.produced += 1
        return element

    def next_chunk(self, n: int) -> list:
        node = self.node
        stop = min(self.index + n, node.length)
        if stop <= self.index:
            raise StopIteration
        if not isinstance(node.tensors, (tuple, dict)):
            # One C-level slice and split instead of n Python-level indexing calls.
            out = list(node.tensors[self.index : stop])
        else:
            columns = [list(leaf[self.index : stop]) for leaf in node._leaves]
            out = [pack_as(node.tensors, list(row)) for row in zip(*columns)]
        self.produced += stop - self.index
        self.index = stop
        return out

    def reset(self) -> None:
        self.index = 0

    def seek_forward(self, n: int) -> int:
        """O(1) skip; returns how many were skipped."""
        count = max(0, min(n, self.node.length - self.index))
        self.index += count
        return count


class TensorsNode(Node):
    """Yields ``tensors`` once, as a single element."""

    op = "from_tensors"
    fields = Fields("tensors")
    never_raises = True

    def __init__(self, tensors: Any):
        super().__init__()
        self.tensors = _as_arrays(tensors)

    def describe_args(self) -> str:
        return "1 element"

    def compute_element_spec(self):
        return map_structure(TensorSpec.from_value, self.tensors)

    def cardinality(self) -> int:
        return 1

    def iterator(self, ctx: Context) -> TensorsIterator:
        return TensorsIterator(self)


class TensorsIterator(NodeIterator[TensorsNode]):
    state_fields = (Bool("done"),)

    def __init__(self, node: TensorsNode):
        super().__init__(node)
        self.done = False

    def __next__(self):
        if self.done:
            raise StopIteration
        self.done = True
        self.produced += 1
        value = self.node.tensors
        # Scalars come back as numpy scalars, as tf.data's as_numpy_iterator gives them.
        return map_structure(lambda a: a[()] if isinstance(a, np.ndarray) and a.ndim == 0 else a, value)

    def reset(self) -> None:
        self.done = False
