"""tf.TensorArray, eagerly: a list of same-dtype tensors that ``write`` fills and ``stack`` joins."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.spec import TensorShape
from ._tensor import as_tensor, dtype_arg, is_tensor, out, python_as, tf_name


class TensorArray:
    """``write`` returns the array itself (TensorFlow returns a new handle; ``ta = ta.write(i, x)``
    works either way). Reading an index never written gives zeros when the element shape is known."""

    def __init__(
        self,
        dtype: Any,
        size: Any = None,
        dynamic_size: Any = None,
        clear_after_read: Any = None,
        tensor_array_name: Any = None,
        handle: Any = None,
        flow: Any = None,
        infer_shape: bool = True,
        element_shape: Any = None,
        colocate_with_first_write_call: bool = True,
        name: Any = None,
    ):
        self._dtype = dtype_arg(dtype)
        if size is None and not dynamic_size:
            raise ValueError("Size must be provided if handle is not provided")
        self._size = 0 if size is None else int(np.asarray(size))
        if self._size < 0:
            raise InvalidArgumentError(f"TensorArray: size must be >= 0, got {self._size}")
        self._dynamic = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._element_shape = TensorShape(None) if element_shape is None else TensorShape(element_shape)
        self._items: list[Any] = [None] * self._size

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic

    def size(self, name: Any = None) -> np.int32:
        return np.int32(len(self._items))

    def _value(self, value: Any) -> np.ndarray:
        array = as_tensor(value) if is_tensor(value) else python_as(value, self._dtype)
        if array.dtype != self._dtype:
            raise InvalidArgumentError(
                f"TensorArray dtype is {tf_name(self._dtype)} but Op is trying to write dtype {tf_name(array.dtype)}"
            )
        shape = TensorShape(list(array.shape))
        if self._infer_shape:
            if not self._element_shape.is_compatible_with(shape):
                raise InvalidArgumentError(
                    f"Could not write to TensorArray: shape {list(array.shape)} is not compatible with the "
                    f"element shape {self._element_shape}"
                )
            self._element_shape = self._element_shape.merge_with(shape)
        return array

    def write(self, index: Any, value: Any, name: Any = None) -> TensorArray:
        i = int(np.asarray(index))
        if i < 0:
            raise InvalidArgumentError(f"Tried to write to index {i} but array size is: {len(self._items)}")
        if i >= len(self._items):
            if not self._dynamic:
                raise InvalidArgumentError(
                    f"Tried to write to index {i} but array is not resizeable and size is: {len(self._items)}"
                )
            self._items.extend([None] * (i + 1 - len(self._items)))
        self._items[i] = self._value(value)
        return self

    def _zeros(self) -> np.ndarray:
        if not self._element_shape.is_fully_defined():
            raise InvalidArgumentError(
                "TensorArray: reading an element never written needs a fully defined element_shape"
            )
        return np.zeros(self._element_shape.as_list(), dtype=self._dtype)

    def read(self, index: Any, name: Any = None) -> Any:
        i = int(np.asarray(index))
        if not 0 <= i < len(self._items):
            raise InvalidArgumentError(f"Tried to read from index {i} but array size is: {len(self._items)}")
        item = self._items[i]
        return out(self._zeros() if item is None else item)

    def stack(self, name: Any = None) -> np.ndarray:
        if not self._items:
            if self._element_shape.rank is None:
                return np.zeros((0,), dtype=self._dtype)
            return np.zeros([0, *(d or 0 for d in self._element_shape.as_list())], dtype=self._dtype)
        items = [self._zeros() if item is None else item for item in self._items]
        shapes = {item.shape for item in items}
        if len(shapes) > 1:
            raise InvalidArgumentError(f"TensorArray has inconsistent shapes: {sorted(shapes)}")
        return np.stack(items)

    def gather(self, indices: Any, name: Any = None) -> np.ndarray:
        picks = [self.read(i) for i in np.asarray(indices).reshape(-1)]
        return np.stack([np.asarray(p) for p in picks]) if picks else np.zeros((0,), self._dtype)

    def concat(self, name: Any = None) -> np.ndarray:
        items = [item for item in self._items if item is not None]
        if not items:
            return np.zeros((0,), dtype=self._dtype)
        if any(item.ndim == 0 for item in items):
            raise InvalidArgumentError("Concat saw a scalar shape: concat needs elements of rank >= 1")
        return np.concatenate(items)

    def unstack(self, value: Any, name: Any = None) -> TensorArray:
        array = as_tensor(value) if is_tensor(value) else python_as(value, self._dtype)
        if array.ndim == 0:
            raise InvalidArgumentError("TensorArray.unstack needs a tensor of rank >= 1")
        if not self._dynamic and len(array) > len(self._items):
            raise InvalidArgumentError(
                f"Tried to write {len(array)} elements to an array of size {len(self._items)} that is not resizeable"
            )
        for i, item in enumerate(array):
            self.write(i, item)
        return self

    def scatter(self, indices: Any, value: Any, name: Any = None) -> TensorArray:
        array = as_tensor(value) if is_tensor(value) else python_as(value, self._dtype)
        for i, item in zip(np.asarray(indices).reshape(-1).tolist(), array):
            self.write(i, item)
        return self

    def split(self, value: Any, lengths: Any, name: Any = None) -> TensorArray:
        array = as_tensor(value) if is_tensor(value) else python_as(value, self._dtype)
        bounds = np.cumsum(np.asarray(lengths).reshape(-1))
        if bounds.size and bounds[-1] != len(array):
            raise InvalidArgumentError(
                f"TensorArray.split: lengths sum to {bounds[-1]} but value has {len(array)} rows"
            )
        for i, piece in enumerate(np.split(array, bounds[:-1])):
            self.write(i, piece)
        return self

    def identity(self) -> TensorArray:
        return self

    def close(self, name: Any = None) -> None:
        self._items = []

    def mark_used(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"TensorArray(dtype={tf_name(self._dtype)}, size={len(self._items)})"
