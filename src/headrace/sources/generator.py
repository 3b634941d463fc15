"""``Dataset.from_generator``: elements from a Python generator, checked against a signature.

Checkpoints hold only how many elements the generator has yielded this epoch. Restoring calls the
generator again and skips that many (a replay), so the generator must yield the same sequence each
time it is called with the same ``args``: read a file, seed its random numbers, and so on.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import CheckpointError, InvalidArgumentError, StructureError
from ..core.naming import describe
from ..core.node import Context, Fields, Node, NodeIterator, call_noted, note_stage
from ..core.spec import TensorShape, TensorSpec, string, to_array
from ..core.state import Bool, Int, Owed
from ..core.structure import describe_structure


def _signature_from_types(output_types: Any, output_shapes: Any, path: str = "") -> Any:
    """tf.data's ``output_types``/``output_shapes`` pair as a structure of TensorSpec."""
    if isinstance(output_types, tuple):
        if output_shapes is not None and (
            not isinstance(output_shapes, (tuple, list)) or len(output_shapes) != len(output_types)
        ):
            raise InvalidArgumentError(
                f"output_shapes{path}={output_shapes!r} does not match output_types{path}={output_types!r}: "
                "give one shape per component"
            )
        specs = [
            _signature_from_types(t, None if output_shapes is None else output_shapes[i], f"{path}[{i}]")
            for i, t in enumerate(output_types)
        ]
        return type(output_types)(*specs) if hasattr(output_types, "_fields") else tuple(specs)
    if isinstance(output_types, dict):
        if output_shapes is not None and (
            not isinstance(output_shapes, dict) or set(output_shapes) != set(output_types)
        ):
            raise InvalidArgumentError(
                f"output_shapes{path}={output_shapes!r} does not match output_types{path}={output_types!r}: "
                "give a dict with the same keys"
            )
        return {
            k: _signature_from_types(t, None if output_shapes is None else output_shapes[k], f"{path}[{k!r}]")
            for k, t in output_types.items()
        }
    if output_shapes is not None and not isinstance(output_shapes, (tuple, list, TensorShape)):
        raise InvalidArgumentError(
            f"output_shapes{path}={output_shapes!r} is not a shape: use a tuple of ints and None, or None"
        )
    return TensorSpec(output_shapes, output_types)


def _check_signature(signature: Any, path: str = "") -> None:
    if isinstance(signature, tuple):
        for i, s in enumerate(signature):
            _check_signature(s, f"{path}[{i}]")
    elif isinstance(signature, dict):
        for k, s in signature.items():
            _check_signature(s, f"{path}[{k!r}]")
    elif not isinstance(signature, TensorSpec):
        raise InvalidArgumentError(
            f"output_signature{path}={signature!r} is not a TensorSpec: give a TensorSpec, or tuples and "
            "dicts of them"
        )


def _argument(value: Any) -> Any:
    """An ``args`` entry as tf.data passes it: a numpy array, or a numpy scalar / bytes for scalars."""
    array = to_array(value)
    return array[()] if array.ndim == 0 else array


def _encode_strings(array: np.ndarray) -> np.ndarray:
    def encode(item: Any) -> bytes:
        if isinstance(item, bytes):  # np.bytes_ too
            return bytes(item)
        if isinstance(item, str):
            return item.encode()
        raise TypeError(f"{type(item).__name__} is not a string")

    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        out[index] = encode(item)
    return out


class GeneratorNode(Node):
    """``from_generator(generator, output_types=None, output_shapes=None, args=None,
    output_signature=None)``: ``generator(*args)`` is called once per epoch.

    Each yielded element must match ``output_signature`` in structure (tuples and dicts; a list is one
    component, as in tf.data) and in shape; values are converted to its dtypes with
    ``np.asarray(value, dtype)``, as tf.data does (so 1.7 yielded for int64 becomes 1).
    """

    op = "from_generator"
    fields = Fields("generator", "args", "output_signature")
    reads_input = True

    def __init__(
        self,
        generator: Callable,
        output_types: Any = None,
        output_shapes: Any = None,
        args: Any = None,
        output_signature: Any = None,
        name: str | None = None,
    ):
        if not callable(generator):
            raise InvalidArgumentError(
                f"generator={generator!r} is not callable: pass a function returning an iterator, e.g. a "
                "generator function (not a generator object)"
            )
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise InvalidArgumentError(
                    "output_types and output_shapes cannot be used together with output_signature: "
                    "give only output_signature"
                )
            _check_signature(output_signature)
        elif output_types is None:
            if output_shapes is not None:
                raise InvalidArgumentError("output_shapes needs output_types: prefer output_signature")
            raise InvalidArgumentError(
                "from_generator needs output_signature (a TensorSpec, or tuples and dicts of them) to know "
                "the elements' structure, shapes and dtypes"
            )
        else:
            output_signature = _signature_from_types(output_types, output_shapes)
        if args is not None and not isinstance(args, (tuple, list)):
            raise InvalidArgumentError(f"args={args!r} is not allowed: a tuple of arguments for generator")
        super().__init__()
        self.generator = generator
        self.args = tuple(_argument(a) for a in args) if args is not None else ()
        self.output_signature = output_signature
        self.name = name

    def describe_args(self) -> str:
        return self.name or describe(self.generator)

    def compute_element_spec(self) -> Any:
        return self.output_signature

    def iterator(self, ctx: Context) -> GeneratorIterator:
        return GeneratorIterator(self)

    # --- checking one element ---------------------------------------------------------------
    def convert(self, value: Any, index: int) -> Any:
        """``value`` converted to the signature's structure, dtypes and shapes, or StructureError."""
        signature = self.output_signature
        if isinstance(signature, TensorSpec):
            return self._leaf(value, signature, index, "")
        return self._structure(value, signature, index, "")

    def _structure(self, value: Any, signature: Any, index: int, path: str) -> Any:
        if isinstance(signature, tuple):
            if not isinstance(value, tuple) or len(value) != len(signature):
                self._mismatch(value, signature, index, path)
            items = [
                self._structure(v, s, index, f"{path}[{i}]") for i, (v, s) in enumerate(zip(value, signature))
            ]
            return type(signature)(*items) if hasattr(signature, "_fields") else tuple(items)
        if isinstance(signature, dict):
            if not isinstance(value, dict) or set(value) != set(signature):
                self._mismatch(value, signature, index, path)
            return {k: self._structure(value[k], signature[k], index, f"{path}[{k!r}]") for k in signature}
        return self._leaf(value, signature, index, path)

    def _mismatch(self, value: Any, signature: Any, index: int, path: str) -> None:
        got = describe_structure(value) if isinstance(value, (tuple, dict)) else type(value).__name__
        raise StructureError(
            f"{self!r}: element {index}{path} is {got} but output_signature{path} is "
            f"{describe_structure(signature)}; yield tuples and dicts shaped like output_signature "
            "(a list is a single component)"
        )

    def _leaf(self, value: Any, spec: TensorSpec, index: int, path: str) -> Any:
        try:
            if spec.dtype == string:
                array = value if isinstance(value, np.ndarray) else to_array(value)
                if array.dtype != object or any(type(v) is not bytes for v in array.flat):
                    array = _encode_strings(np.asarray(array))
            else:
                array = np.asarray(value, dtype=spec.dtype)
        except (TypeError, ValueError, OverflowError) as exc:
            raise StructureError(
                f"{self!r}: element {index}{path} is {str(value)[:60]!r}, which cannot be converted to "
                f"{spec!r} ({exc})"
            ) from None
        shape = spec.shape
        if shape is not None and (
            len(shape) != array.ndim or any(d is not None and d != a for d, a in zip(shape, array.shape))
        ):
            raise StructureError(
                f"{self!r}: element {index}{path} has shape {array.shape} but output_signature{path} is "
                f"{spec!r}"
            )
        return array[()] if array.ndim == 0 else array


def _started(node: GeneratorNode) -> Any:
    """A fresh iterator of the user's generator (its errors carry the stage's note: ``call_noted``)."""
    return iter(node.generator(*node.args))


class GeneratorIterator(NodeIterator[GeneratorNode]):
    state_fields = (
        Int("yielded", high=sys.maxsize),
        Bool("exhausted"),
        Owed(max_length=lambda it, values: values["yielded"]),
    )

    def __init__(self, node: GeneratorNode):
        super().__init__(node)
        self.yielded = 0  # elements taken from this epoch's generator
        self.exhausted = False
        self._source: Any = None  # the generator's iterator, made on first use
        self._replay = 0  # elements to skip once it is made (after set_state)

    def _open(self) -> Any:
        node = self.node
        source = call_noted(_started, node, self.name, self.yielded)
        if self._replay:
            skipped = sum(1 for _ in itertools.islice(source, self._replay))
            if skipped < self._replay:
                raise CheckpointError(
                    f"{self.name}: restoring replays the generator, but it yielded only {skipped} elements "
                    f"this time where the checkpoint had taken {self._replay}; from_generator checkpoints "
                    "need a generator that yields the same sequence on every call"
                )
            self._replay = 0
        self._source = source
        return source

    def next_chunk(self, n: int) -> list:
        if self.owed:  # an error held after the elements before it
            out = self.serve_owed(n)
            self.produced += len(out)
            return out
        if self.exhausted:
            raise StopIteration
        source = self._source if self._source is not None else self._open()
        convert = self.node.convert
        out = []
        try:
            for _ in range(n):
                value = next(source)
                self.yielded += 1
                out.append(convert(value, self.yielded - 1))
        except StopIteration:
            self.exhausted = True
            self._close_source()
            if not out:
                raise
        except Exception as exc:
            if not isinstance(exc, StructureError):
                note_stage(exc, self.name, self.yielded)
            self.produced += len(out)
            return self.hold(out, exc)  # an error loses only its own element
        self.produced += len(out)
        return out

    def __next__(self):
        return self.next_chunk(1)[0]

    def _close_source(self) -> None:
        close = getattr(self._source, "close", None)
        self._source = None
        if close is not None:
            close()

    def reset(self) -> None:
        self._close_source()
        self.yielded = 0
        self.exhausted = False
        self._replay = 0

    def restored(self) -> None:
        self._close_source()
        self._replay = 0 if self.exhausted else self.yielded

    def close(self) -> None:
        if not self.closed:
            self._close_source()
        super().close()
