"""Vectorised maps: ``map(f).batch(n)`` as ``batch(n)`` plus one call of ``f`` traced over the batch.

``f`` is traced once, as ``tf.function`` traces: called on :class:`Tracer` values that stand for a
batch of elements and record each op (``headrace.cast``, ``headrace.io.parse_single_example``, numpy
operators ...) with its batching rule (``parse_single_example`` becomes ``parse_example``, an axis
moves past the batch dimension, a random op draws from each element's own stream). Anything the
tracer cannot follow (Python control flow on a value, ``.numpy()``, an op without a rule, any error)
leaves the map per element; :func:`trace_map` says why, and ``Dataset.explain()`` shows it.

At run time the stage keeps the per-element stages' iterators (``batch`` over ``map``) for their
state, so checkpoints are those of the per-element pipeline, and runs them for any batch the traced
call cannot take (inputs of another shape, an element whose op fails: the per-element run then
raises the same error naming the element). The first batch is also computed per element and
compared; a difference leaves the map per element for good, with one warning naming the op.

Image decoders decode a batch in one call; images whose sizes differ within a batch are :class:`Rows`,
and the ops after them run row by row until one gives one size again (``random_crop``, ``resize``).
A map read by ``shuffle`` then ``batch`` (or by other stages that pass chunks on, ``CHUNK_PASSING``)
is a :class:`ChunkVectorizedMapNode`: its own iterator (same state and streams) computes each chunk
of input it is asked for with one traced call.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import types
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from ..core.counters import StageCounters
from ..core.element_random import ELEMENT_RNG
from ..core.errors import attempt, attempt_all, user_stacklevel
from ..core.node import Context, Node, NodeIterator, derived
from ..core.results import CONVERTED, tf_result
from ..core.state import ERROR, NO_INPUT
from ..core.structure import flatten, pack_as
from ..core.trace_hook import TRACING, VECTORIZERS
from ..io.codec.features import FixedLenFeature
from ..runtime.calls import apply, element_rng
from ..runtime.defaults import resolve_parallelism
from .batch import BatchIterator, BatchNode
from .map import FusedFunction, MapIterator, MapNode
from .support.batching import stack
from .support.elementwise import owed_inputs

logger = logging.getLogger("headrace.vectorize")


class Unsupported(Exception):
    """The function cannot be traced into one batched call; the message says why."""


class NotThisBatch(Unsupported):
    """A batch whose values the trace does not cover (images of other ranks, sizes an ``ensure_shape``
    refuses, outputs of several shapes): it runs per element, the map stays vectorised."""


class VectorizationWarning(RuntimeWarning):
    """A vectorised map gave another result than the per-element map on its first batch."""


class _RngStandIn:
    """Stands for the element's generator while tracing (``rng=`` and ``ELEMENT_RNG``)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # protocol probes (hasattr(x, "__wrapped__"), copy, pickle): not here
            raise AttributeError(name)
        raise Unsupported(f"rng.{name} (a numpy Generator method) has no batching rule")

    def __repr__(self) -> str:
        return "<traced rng>"


RNG = _RngStandIn()


# --- the graph --------------------------------------------------------------------------------------
@dataclass
class Step:
    name: str
    fn: Callable  # fn(run, *values) -> batched value
    args: tuple[int, ...]


@dataclass
class Graph:
    """The ops recorded while tracing, in program order; values are numbered (inputs first)."""

    seeded: bool
    n_inputs: int = 0
    tf_ops: int = 0  # calls of headrace's TF ops (numpy operators on values are not counted)
    steps: list[Step] = field(default_factory=list)
    random: bool = False

    def value(
        self,
        name: str,
        fn: Callable,
        args: tuple[Tracer, ...],
        example: Any,
        varies: Any = ...,
    ) -> Tracer:
        """A new value, ``fn(run, *args)``. ``varies``: which of its dimensions may differ between
        elements (None: none); by default every one when an argument's size varies (a decoded image)."""
        for arg in args:
            if arg.graph is not self:
                raise Unsupported("a traced value from another trace (a value kept between calls)")
        if varies is ...:
            varies = (True,) * np.ndim(example) if any(arg.varies for arg in args) else None
        self.steps.append(Step(name, fn, tuple(arg.index for arg in args)))
        tracer = Tracer(self, self.n_inputs + len(self.steps) - 1, example, name)
        tracer.varies = varies if varies is not None and any(varies) else None
        return tracer

    def call(self, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        rule = RULES.get(name)
        if rule is None:
            raise Unsupported(f"{name} has no batching rule")
        self.tf_ops += 1
        return rule(self, name, fn, args, kwargs)

    @property
    def op_names(self) -> list[str]:
        return [step.name for step in self.steps]


class Run:
    """One batched call: its size, for random ops each element's generator (made on demand), and the
    threads an op that releases the GIL may use (the map's ``num_parallel_calls``; 1 when serial)."""

    def __init__(self, n: int, keys: list[tuple[int, int, int, int]] | None, workers: int = 1):
        self.n, self.keys, self.workers = n, keys, workers
        self._rngs: list[np.random.Generator] | None = None

    def rngs(self) -> list[np.random.Generator]:
        if self._rngs is None:
            if self.keys is None:
                raise Unsupported("random op without per-element streams")
            self._rngs = [element_rng(*key) for key in self.keys]
        return self._rngs

    def row(self, i: int) -> Run:
        """Element ``i`` alone, drawing from the same generator (its stream goes on across steps)."""
        return _RowRun(self, i)


class _RowRun(Run):
    def __init__(self, parent: Run, i: int):
        super().__init__(1, None if parent.keys is None else parent.keys[i : i + 1])
        self.parent, self.i = parent, i

    def rngs(self) -> list[np.random.Generator]:
        return [self.parent.rngs()[self.i]]


class Rows(list):
    """A batch whose elements differ in shape (decoded images of several sizes), one array a row:
    the ops that follow run row by row until their results agree in shape again (then they stack)."""


def _per_row(step: Step, run: Run, values: list) -> Any:
    """``step`` on a batch holding :class:`Rows`: its batched call on each row alone."""
    outs = []
    for i in range(run.n):
        row = [v[i][None] if isinstance(v, Rows) else v[i : i + 1] for v in values]
        out = step.fn(run.row(i), *row)
        if not isinstance(out, np.ndarray) or out.shape[:1] != (1,):
            raise Unsupported(f"{step.name} row by row gave a {type(out).__name__}, not one row")
        outs.append(out[0])
    return _stack_rows(outs)


def _stack_rows(outs: list) -> Any:
    first = outs[0]
    if all(o.shape == first.shape and o.dtype == first.dtype for o in outs):
        return np.stack(outs)
    return Rows(outs)


def untraced(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn`` run for real (on example values) while a trace is recorded."""
    token = TRACING.set(None)
    try:
        return fn(*args, **kwargs)
    finally:
        TRACING.reset(token)


def _refuse(what: str) -> Callable:
    def method(self: Tracer, *args: Any, **kwargs: Any) -> Any:
        raise Unsupported(f"{what} of a traced value (Python control flow or numpy on a tensor)")

    return method


class Tracer:
    """A value of the function being traced: stands for a batch of per-element values.

    ``shape``, ``dtype`` and ``ndim`` are the per-element ones (static, as in ``tf.function``); using
    a value in Python (``bool``, ``int``, ``len``, iteration, ``.numpy()``, numpy functions) stops the
    trace, and the map runs per element.
    """

    __slots__ = ("example", "graph", "index", "op", "varies")
    __array_ufunc__ = None  # numpy operators defer to ours; numpy ufuncs on a tracer raise
    __hash__ = object.__hash__

    def __init__(self, graph: Graph, index: int, example: Any, op: str):
        self.graph, self.index, self.example, self.op = graph, index, example, op
        self.varies: tuple[bool, ...] | None = None  # dimensions whose size differs between elements

    @property
    def shape(self) -> tuple[int, ...]:
        if self.varies:
            raise Unsupported(
                f"the shape of {self.op}'s result, whose size differs between elements (as TF's static "
                "shape has None there)"
            )
        return np.shape(self.example)

    @property
    def ndim(self) -> int:
        return np.ndim(self.example)

    @property
    def dtype(self) -> np.dtype:
        dtype = getattr(self.example, "dtype", None)
        if dtype is None:
            raise Unsupported(f"dtype of a {type(self.example).__name__} value")
        return dtype

    __bool__ = _refuse("bool()")
    __int__ = _refuse("int()")
    __float__ = _refuse("float()")
    __index__ = _refuse("an index")
    __len__ = _refuse("len()")
    __iter__ = _refuse("iteration")
    __array__ = _refuse("numpy conversion")
    __complex__ = _refuse("complex()")
    numpy = _refuse(".numpy()")
    item = _refuse(".item()")
    tolist = _refuse(".tolist()")

    def __repr__(self) -> str:
        return f"<Tracer {self.op}: per-element shape {np.shape(self.example)}>"

    def astype(self, dtype: Any) -> Tracer:
        return elementwise(self.graph, "astype", lambda x: x.astype(dtype), (self,), {})

    def reshape(self, *shape: Any) -> Tracer:
        target = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return _reshape(self.graph, "reshape", lambda x, s: x.reshape(s), self, target)

    def __getitem__(self, key: Any) -> Tracer:
        parts = key if isinstance(key, tuple) else (key,)
        for part in parts:
            ok = part is None or part is Ellipsis or type(part) in (int, np.int64, np.int32)
            if isinstance(part, slice):
                ok = all(
                    b is None or type(b) in (int, np.int64, np.int32)
                    for b in (part.start, part.stop, part.step)
                )
            if not ok:
                raise Unsupported(f"indexing with {type(part).__name__}")
        example = untraced(lambda x: x[key], self.example)
        batched_key = (slice(None),) + tuple(parts)
        return self.graph.value("getitem", lambda run, x: x[batched_key], (self,), example)


def _operator(ufunc: Callable, name: str, reflected: bool = False) -> Callable:
    def method(self: Tracer, other: Any) -> Any:
        if isinstance(other, (list, dict, set, str)):
            return NotImplemented
        args = (other, self) if reflected else (self, other)
        return elementwise(self.graph, name, ufunc, args, {})

    return method


for _name, _ufunc in {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "pow": np.power,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}.items():
    setattr(Tracer, f"__{_name}__", _operator(_ufunc, _name))
    setattr(Tracer, f"__r{_name}__", _operator(_ufunc, _name, reflected=True))
for _name, _ufunc in {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}.items():
    setattr(Tracer, f"__{_name}__", _operator(_ufunc, _name))
for _name, _unary in {
    "neg": np.negative,
    "pos": np.positive,
    "abs": np.absolute,
    "invert": np.invert,
}.items():
    setattr(
        Tracer, f"__{_name}__", lambda self, _u=_unary, _n=_name: elementwise(self.graph, _n, _u, (self,), {})
    )


# --- batching rules ----------------------------------------------------------------------------------
_SIGNATURES: dict[Callable, inspect.Signature] = {}


def _bind(fn: Callable, args: tuple, kwargs: dict) -> dict[str, Any]:
    signature = _SIGNATURES.get(fn)
    if signature is None:
        signature = _SIGNATURES[fn] = inspect.signature(fn)
    return dict(signature.bind(*args, **kwargs).arguments)


def _no_tracers(name: str, values: Any) -> None:
    stack_ = [values]
    while stack_:
        value = stack_.pop()
        if isinstance(value, Tracer):
            raise Unsupported(f"{name} with a traced value in an argument that must be fixed")
        if isinstance(value, (list, tuple)):
            stack_.extend(value)
        elif isinstance(value, dict):
            stack_.extend(value.values())


def _ndim(value: Any) -> int:
    """The rank an operand broadcasts with: a dtype argument (``np.float32``, a class, whose ``ndim``
    is a descriptor) has none."""
    if isinstance(value, Tracer):
        return np.ndim(value.example)
    if isinstance(value, (type, np.dtype)):
        return 0
    return np.ndim(value)


def elementwise(
    graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict, fast: Callable | None = None
) -> Tracer:
    """An op applied elementwise (with broadcasting): the batched operands, their per-element
    dimensions aligned (a missing one inserted after the batch dimension), run the op as they are
    (or ``fast``, the numpy kernel the op runs, when the trace showed it applies)."""
    _no_tracers(name, kwargs)
    traced = [i for i, a in enumerate(args) if isinstance(a, Tracer)]
    for i, a in enumerate(args):
        if i not in traced:
            _no_tracers(name, a)
    example = untraced(fn, *[a.example if isinstance(a, Tracer) else a for a in args], **kwargs)
    rank = max(_ndim(a) for a in args)
    pads = [(None,) * (rank - args[i].ndim) for i in traced]
    fixed = list(args)
    if len(traced) == 1 and np.shape(example) == np.shape(args[traced[0]].example):
        varies = args[traced[0]].varies  # x op scalar: x's sizes
    else:
        varies = ...

    if fast is not None and len(traced) == 1 and not pads[0] and not kwargs:
        position = traced[0]
        if len(args) == 1:
            return graph.value(name, lambda run, v: fast(v), (args[0],), example, varies)
        if len(args) == 2:
            other = args[1 - position]
            if position == 0:
                return graph.value(name, lambda run, v: fast(v, other), (args[0],), example, varies)
            return graph.value(name, lambda run, v: fast(other, v), (args[1],), example, varies)

    def run(_run: Run, *values: Any) -> Any:
        call = fixed.copy()
        for i, pad, value in zip(traced, pads, values):
            call[i] = value[(slice(None),) + pad] if pad else value
        return fn(*call, **kwargs)

    return graph.value(name, run, tuple(args[i] for i in traced), example, varies)


def _elementwise_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    bound = _bind(fn, args, kwargs)
    names = list(bound)
    traced_names = [k for k in names if isinstance(bound[k], Tracer)]
    if not traced_names:
        raise Unsupported(f"{name} of fixed values only")
    values = tuple(bound[k] for k in names)

    def positional(*values: Any) -> Any:
        return fn(**dict(zip(names, values)))

    if name == "cast" and len(values) == 2:
        return _cast(graph, name, positional, values)
    if name == "clip_by_value" and len(values) == 3:
        return _clip(graph, name, positional, values)
    return elementwise(graph, name, positional, values, {}, _fast_kernel(name, values))


def _cast(graph: Graph, name: str, op: Callable, values: tuple) -> Tracer:
    x, dtype = values
    result = elementwise(graph, name, op, values, {})
    source = getattr(x.example, "dtype", None) if isinstance(x, Tracer) else None
    target = getattr(result.example, "dtype", None)
    # Numbers to floats: tf.cast is astype there (floats to ints are not).
    if source is not None and target is not None and source.kind in "iuf" and target.kind == "f":
        graph.steps[-1].fn = lambda run, v: v.astype(target)
    return result


def _clip(graph: Graph, name: str, op: Callable, values: tuple) -> Tracer:
    x, low, high = values
    result = elementwise(graph, name, op, values, {})
    if (
        isinstance(x, Tracer)
        and getattr(x.example, "dtype", np.dtype(object)).kind == "f"
        and type(low) in (int, float)
        and type(high) in (int, float)
    ):
        # The op computes max(min(x, high), low) with the bounds converted as it converts them: its
        # result on (-inf, inf) gives those values.
        bounds = untraced(op, np.array([-np.inf, np.inf], x.example.dtype), low, high)
        lo, hi = bounds[0], bounds[1]
        graph.steps[-1].fn = lambda run, v: np.maximum(np.minimum(v, hi), lo)
    return result


# The numpy kernel each of these tf ops runs on floats of one dtype with Python-number operands (the op
# converts those to the tensor's dtype, as numpy does): the batched call skips the op's argument checks,
# which the trace already made on the same dtypes and per-element shapes.
_FLOAT_KERNELS: dict[str, Callable] = {
    name: ufunc
    for name, ufunc in {
        "add": np.add,
        "subtract": np.subtract,
        "multiply": np.multiply,
        "truediv": np.true_divide,
        "divide": np.true_divide,
        "sqrt": np.sqrt,
        "square": np.square,
        "exp": np.exp,
        "log": np.log,
        "log1p": np.log1p,
        "tanh": np.tanh,
        "negative": np.negative,
        "floor": np.floor,
        "ceil": np.ceil,
    }.items()
}


def _fast_kernel(name: str, values: tuple) -> Callable | None:
    kernel = _FLOAT_KERNELS.get(name)
    if kernel is None or len(values) > 2 or (len(values) == 2 and values[1] is None):
        return None
    traced = [v for v in values if isinstance(v, Tracer)]
    if len(traced) != 1 or not isinstance(traced[0].example, (np.ndarray, np.generic)):
        return None
    dtype = traced[0].example.dtype
    if dtype.kind != "f" or not all(_exact_number(v) for v in values if not isinstance(v, Tracer)):
        return None
    return kernel


def _exact_number(value: Any) -> bool:
    """A Python number that every conversion the ops make (to the tensor's dtype, or through float32
    first) leaves unchanged, so numpy's own conversion of it gives the op's value."""
    if type(value) is int:
        return abs(value) <= 2**24
    return type(value) is float and np.isfinite(value) and float(np.float32(value)) == value


def _single_input(
    graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict
) -> tuple[Tracer, dict, str]:
    bound = _bind(fn, args, kwargs)
    first = next(iter(bound))
    x = bound.pop(first)
    if not isinstance(x, Tracer):
        raise Unsupported(f"{name} of a fixed value")
    _no_tracers(name, bound)
    return x, bound, first


def _per_element_axes(axis: Any, rank: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(rank))
    axes = np.asarray(axis).reshape(-1).tolist()
    return tuple(int(a) % rank if rank else int(a) for a in axes)


def _reduce_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    x, rest, first = _single_input(graph, name, fn, args, kwargs)
    example = untraced(fn, x.example, **rest)
    axes = _per_element_axes(rest.get("axis"), x.ndim)
    if not axes:
        raise Unsupported(f"{name} over no axis")
    batched = {**rest, "axis": [a + 1 for a in axes]}
    dtype = getattr(x.example, "dtype", None)
    if name == "reduce_sum" and not rest.get("keepdims") and dtype is not None and dtype.kind == "f":
        # The op is np.sum(..., dtype=x.dtype) over the sorted axes.
        shifted = tuple(sorted(a + 1 for a in set(axes)))
        return graph.value(name, lambda run, v: np.sum(v, axis=shifted, dtype=dtype), (x,), example)
    return graph.value(name, lambda run, v: fn(v, **batched), (x,), example)


def _reshape(graph: Graph, name: str, fn: Callable, x: Tracer, shape: Any) -> Tracer:
    _no_tracers(name, shape)
    target = [int(s) for s in np.asarray(shape).reshape(-1).tolist()]
    example = untraced(fn, x.example, target)
    if x.varies:
        raise Unsupported(f"{name} of {x.op}'s result, whose size differs between elements")
    if isinstance(x.example, (np.ndarray, np.generic)):
        # The op's checks passed on the example, whose shape every row has: numpy's reshape.
        shape = tuple(np.shape(example))
        return graph.value(name, lambda run, v: v.reshape((run.n, *shape)), (x,), example)
    return graph.value(name, lambda run, v: fn(v, [run.n, *target]), (x,), example)


def _reshape_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    return _reshape(graph, name, lambda v, s: fn(v, s), x, rest["shape"])


def _expand_dims_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    example = untraced(fn, x.example, **rest)
    axis = int(rest["axis"])
    axis = axis + x.ndim + 1 if axis < 0 else axis
    return graph.value(name, lambda run, v: fn(v, axis + 1), (x,), example)


def _squeeze_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    example = untraced(fn, x.example, **rest)
    axis = rest.get("axis")
    if axis is None and x.varies:
        raise Unsupported(f"{name} without axis of {x.op}'s result, whose size differs between elements")
    axes = (
        [i for i, s in enumerate(x.shape) if s == 1]
        if axis is None
        else list(_per_element_axes(axis, x.ndim))
    )
    batched = [a + 1 for a in axes]
    return graph.value(name, lambda run, v: fn(v, batched) if batched else v, (x,), example)


def _join_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    bound = _bind(fn, args, kwargs)
    values = bound.pop("values")
    _no_tracers(name, bound)
    if not isinstance(values, (list, tuple)) or not any(isinstance(v, Tracer) for v in values):
        raise Unsupported(f"{name} of values that are not a list holding traced values")
    items = list(values)
    example = untraced(fn, [v.example if isinstance(v, Tracer) else v for v in items], **bound)
    rank = np.ndim(example)
    axis = int(bound.get("axis", 0))
    axis = axis % rank
    traced = [i for i, v in enumerate(items) if isinstance(v, Tracer)]
    rest = {k: v for k, v in bound.items() if k != "axis"}

    dtypes = {getattr(v.example, "dtype", None) for v in items if isinstance(v, Tracer)}
    if name == "concat" and len(traced) == len(items) > 1 and len(dtypes) == 1 and None not in dtypes:
        # Tensors of one dtype whose shapes the op accepted: numpy's concatenate, as the op runs.
        return graph.value(
            name, lambda run_, *batched: np.concatenate(batched, axis=axis + 1), tuple(items), example
        )

    def run(run_: Run, *batched: Any) -> Any:
        call = [
            None if i in traced else np.broadcast_to(v, (run_.n, *np.shape(v))) for i, v in enumerate(items)
        ]
        for i, value in zip(traced, batched):
            call[i] = value
        return fn(call, axis + 1, **rest)

    return graph.value(name, run, tuple(items[i] for i in traced), example)


def _one_hot_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    example = untraced(fn, x.example, **rest)
    axis = rest.get("axis")
    batched = dict(rest)
    if axis is not None and int(axis) != -1:
        batched["axis"] = int(axis) + 1
    plain = {k: v for k, v in rest.items() if v is not None and k != "name"}
    if set(plain) == {"depth"} and type(plain["depth"]) is int and axis in (None, -1):
        # Defaults: float32 ones where the index equals the position, zeros elsewhere (as the op).
        positions = np.arange(plain["depth"])
        return graph.value(name, lambda run, v: (v[..., None] == positions).astype(np.float32), (x,), example)
    return graph.value(name, lambda run, v: fn(v, **batched), (x,), example)


def _shape_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
    # Per-element shapes are static in a trace (each batch's input shapes are checked against it).
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    if x.varies:
        raise Unsupported(f"{name} of {x.op}'s result, whose size differs between elements")
    return untraced(fn, x.example, **rest)


def _image_varies(name: str, x: Tracer, rest: dict) -> Any:
    """Which of an image op's output dimensions may differ between elements, from its input's."""
    varies = x.varies
    if not varies:
        return None
    height, width, channels = varies
    if name in (
        "image.resize_with_crop_or_pad",
        "image.crop_to_bounding_box",
        "image.pad_to_bounding_box",
        "image.resize_with_pad",
    ):
        return (False, False, channels)  # one size whatever the input's
    if name == "image.grayscale_to_rgb":
        return (height, width, False)
    if name == "image.rgb_to_grayscale":
        return (height, width, False)
    if name == "image.transpose" or (name == "image.rot90" and int(rest.get("k", 1)) % 2):
        return (width, height, channels)
    return varies


def _per_image_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """An image op that takes a batch and treats each image alone (flips, crops to a centre or a
    size, rotations, brightness, contrast, grey, standardisation): one call on the batch."""
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    if x.ndim != 3:
        raise Unsupported(f"{name} of a value of rank {x.ndim} (an image of rank 3 is vectorised)")
    example = untraced(fn, x.example, **rest)
    return graph.value(name, lambda run, v: fn(v, **rest), (x,), example, _image_varies(name, x, rest))


def _random_adjust_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """``random_brightness`` / ``random_contrast`` / ``random_hue`` / ``random_saturation``: each element
    draws its value from its own stream,
    as the per-element op draws it (one uniform number), then one ``adjust_*`` call takes the batch
    with a value per image."""
    from ..image import color, hsv  # noqa: PLC0415 (loaded by then: fn is its op)

    bound = _bind(fn, args, kwargs)
    image = bound.pop("image")
    if not graph.seeded or bound.pop("rng", None) not in (RNG, None) or bound.pop("seed", None) is not None:
        raise Unsupported(f"{name} with seed= or another rng than the map's, or in a map without seed=")
    if not isinstance(image, Tracer) or image.ndim != 3:
        raise Unsupported(f"{name} of a value that is not one traced image")
    _no_tracers(name, bound)
    example = untraced(fn, image.example, **bound, rng=np.random.default_rng(0))  # checks the arguments
    adjust: Callable[[np.ndarray, np.ndarray], np.ndarray]
    if name == "image.random_brightness":
        low, high, adjust = -bound["max_delta"], bound["max_delta"], color.adjust_brightness
    elif name == "image.random_hue":
        low, high, adjust = -bound["max_delta"], bound["max_delta"], hsv.adjust_hue
    elif name == "image.random_saturation":
        low, high, adjust = bound["lower"], bound["upper"], hsv.adjust_saturation
    else:
        low, high, adjust = bound["lower"], bound["upper"], color.adjust_contrast
    graph.random = True

    def run(run_: Run, batch: np.ndarray) -> np.ndarray:
        values = np.array([rng.uniform(low, high) for rng in run_.rngs()])
        return adjust(batch, values)

    return graph.value(name, run, (image,), example, image.varies)


def _resize_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """``resize`` of one image per element: the op resizes a batch image by image (same kernels)."""
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    if x.ndim != 3:
        raise Unsupported(f"{name} of a value of rank {x.ndim} (an image of rank 3 is vectorised)")
    example = untraced(fn, x.example, **rest)
    channels = bool(x.varies and x.varies[-1])
    varies = (True, True, channels) if rest.get("preserve_aspect_ratio") else (False, False, channels)
    return graph.value(name, lambda run, v: fn(v, **rest), (x,), example, varies)


_DECODE_OPTIONS = {  # the options under which decode_batch's direct JPEG path gives the op's pixels
    "io.decode_jpeg": {
        "ratio": 1,
        "fancy_upscaling": True,
        "try_recover_truncated": False,
        "acceptable_fraction": ...,
        "dct_method": "",
        "name": ...,
    },
    "io.decode_image": {"dtype": np.uint8, "name": ..., "expand_animations": ...},
}


def _decode_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """An image decoder on each element's bytes: one call decodes the batch (JPEGs of one size straight
    into the stacked output through libjpeg-turbo; anything else element by element, with the op). The
    images' sizes differ between elements: when they differ within a batch it is :class:`Rows`, and
    the ops that follow run row by row until a crop or resize makes the sizes agree."""
    from ..image import decode as decoders  # noqa: PLC0415 (loaded by then: fn is its op)

    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    if x.ndim != 0:
        raise Unsupported(f"{name} of a value of rank {x.ndim} (one encoded image per element)")
    example = untraced(fn, x.example, **rest)
    rank = np.ndim(example)
    channels = rest.get("channels", 0) or 0
    wanted = _DECODE_OPTIONS.get(name)
    direct = (
        wanted is not None
        and decoders.simplejpeg is not None
        and type(channels) is int
        and channels in (0, 3)
        and all(
            wanted[k] is ... or (rest[k] == wanted[k] and type(rest[k]) is type(wanted[k]))
            if k != "dtype"
            else np.dtype(rest[k]) == np.uint8
            for k in rest
            if k in wanted
        )
        and not (set(rest) - set(wanted) - {"channels"})
    )

    def one(data: Any) -> np.ndarray:
        image = fn(data, **rest)
        if np.ndim(image) != rank:  # an animated GIF among still images: the per-element run batches it
            raise NotThisBatch(f"{name} gave an image of rank {np.ndim(image)}, not {rank}")
        return image

    def run(run_: Run, batch: np.ndarray) -> Any:
        items = list(batch.reshape(-1))
        if direct and all(type(d) is bytes for d in items):
            out = _decode_jpegs_into_one(decoders, items, channels, run_.workers)
            if out is not None:
                return out
        return _stack_rows([one(d) for d in items])

    return graph.value(name, run, (x,), example, (True, True, channels == 0)[:rank] if rank == 3 else None)


def _decode_jpegs_into_one(
    decoders: Any, items: list[bytes], channels: int, workers: int = 1
) -> np.ndarray | None:
    """JPEGs of one size whose per-element decode is libjpeg-turbo to RGB with the fast DCT (the
    op's usual path), decoded into one ``(N, H, W, 3)`` array; None when any is not. With ``workers``
    > 1 (a map given ``num_parallel_calls``), parts of the batch decode in threads: the decoder
    releases the GIL."""
    simplejpeg, jpeg = decoders.simplejpeg, decoders._JPEG
    size = None
    for data in items:
        if data[:3] != jpeg:
            return None
        try:
            height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data)
        except ValueError:
            return None
        if not (colorspace == "YCbCr" or (channels == 3 and colorspace in ("RGB", "Gray"))):
            return None
        if size is None:
            size = (height, width)
            if height * width > decoders._pixel_budget():
                return None
        elif (height, width) != size:
            return None
    assert size is not None
    out = np.empty((len(items), *size, 3), np.uint8)

    def part(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            simplejpeg.decode_jpeg(items[i], "RGB", True, buffer=out[i])

    parts = min(workers, len(items) // _PER_THREAD)
    try:
        if parts > 1:
            bounds = np.linspace(0, len(items), parts + 1).astype(int).tolist()
            _in_threads(part, list(zip(bounds[:-1], bounds[1:])))
        else:
            part(0, len(items))
    except ValueError:
        return None  # the op, element by element, says what is wrong
    return out


def _in_threads(part: Callable[[int, int], None], ranges: list[tuple[int, int]]) -> None:
    """``part`` over each range, the first here and the others in threads started for this call (a
    batch of JPEGs takes milliseconds; a thread starts in ~0.1 ms), so no thread outlives the batch
    (a process-wide pool stayed behind after every pipeline). The first error is raised."""
    errors: list[BaseException] = []

    def run(lo: int, hi: int) -> None:
        done, error = attempt_all(part, lo, hi)  # raised in the caller's thread, below
        if not done:
            errors.append(error)

    threads = [
        threading.Thread(target=run, args=bounds, name="headrace decode", daemon=True)
        for bounds in ranges[1:]
    ]
    for thread in threads:
        thread.start()
    try:
        run(*ranges[0])
    finally:
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]


_PER_THREAD = 8  # the fewest images a decoding thread takes (fewer: the hand-off costs more)


def _ensure_shape_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """``ensure_shape``: checked on the traced element; on a value whose size differs between elements,
    checked on each batch (an element that fails raises, per element, the op's error), and the sizes it
    names are known from here on (as ``set_shape`` makes them known in TF)."""
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    example = untraced(fn, x.example, **rest)
    if not x.varies:
        return graph.value(name, lambda run, v: v, (x,), example, None)
    from ..core.spec import TensorShape  # noqa: PLC0415 (the op's own reading of the shape)

    target = TensorShape(rest["shape"])
    if target.rank is None:
        return graph.value(name, lambda run, v: v, (x,), example, x.varies)
    dims = target.as_list()
    if len(dims) != x.ndim:
        raise Unsupported(f"{name} to a shape of rank {len(dims)} of a value of rank {x.ndim}")
    varies = tuple(bool(v) and d is None for v, d in zip(x.varies, dims))

    def run(run_: Run, v: np.ndarray) -> np.ndarray:
        if any(d is not None and d != size for d, size in zip(dims, v.shape[1:])):
            raise NotThisBatch(f"{name}: a batch of shape {v.shape} is not compatible with {dims}")
        return v

    return graph.value(name, run, (x,), example, varies)


def _scalar_bytes_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    if x.ndim != 0:
        raise Unsupported(f"{name} of a value of rank {x.ndim}")
    example = untraced(fn, x.example, **rest)
    return graph.value(name, lambda run, v: fn(v, **rest), (x,), example)


def _parse_single_example_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
    from ..io.codec.example import parse_example  # noqa: PLC0415 (io is loaded by then: fn is its op)

    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    features = rest["features"]
    if rest.get("example_names") is not None:
        raise Unsupported(f"{name} with example_names")
    if not isinstance(features, dict) or not all(type(s) is FixedLenFeature for s in features.values()):
        raise Unsupported(f"{name} with features other than FixedLenFeature (their values vary in length)")
    if x.ndim != 0:
        raise Unsupported(f"{name} of a value of rank {x.ndim}")
    example = untraced(fn, x.example, features)
    parsed = graph.value(name, lambda run, v: parse_example(v, features), (x,), example)
    return {key: graph.value(name, lambda run, d, k=key: d[k], (parsed,), example[key]) for key in example}


def _random_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """A random op: each element draws from its own generator, in program order (per row, as the
    per-element run draws), so the values are the per-element ones."""
    if not graph.seeded:
        raise Unsupported(f"{name} in a map without seed= (its draws would be ordered across elements)")
    bound = _bind(fn, args, kwargs)
    if bound.get("seed") is not None:
        raise Unsupported(f"{name} with seed= inside a seeded map")
    uses_rng = bound.get("rng") is RNG
    traced = [k for k, v in bound.items() if isinstance(v, Tracer)]
    if len(traced) > 1:
        raise Unsupported(f"{name} with more than one traced argument")
    for k, v in bound.items():
        if k not in traced and k != "rng":
            _no_tracers(name, v)
    key = traced[0] if traced else None
    stand_in = np.random.default_rng(0)

    def one(rng: np.random.Generator, value: Any) -> Any:
        call = dict(bound)
        if key is not None:
            call[key] = value
        if uses_rng:
            call["rng"] = rng
            return fn(**call)
        token = ELEMENT_RNG.set(rng)
        try:
            return fn(**call)
        finally:
            ELEMENT_RNG.reset(token)

    example = untraced(one, stand_in, bound[key].example if key is not None else None)
    graph.random = True

    if key is None:

        def run(run_: Run) -> Any:
            return np.stack([one(rng, None) for rng in run_.rngs()])

        return graph.value(name, run, (), example)

    def run_rows(run_: Run, batched: Any) -> Any:
        return np.stack([one(rng, row) for rng, row in zip(run_.rngs(), batched)])

    return graph.value(name, run_rows, (bound[key],), example)


def _random_crop_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """``random_crop`` row by row from each element's stream; a fixed ``size`` fixes the result's size
    (a batch of decoded images of several sizes stacks again here)."""
    bound = _bind(fn, args, kwargs)
    if bound.get("rng") not in (RNG, None) or bound.get("seed") is not None:
        raise Unsupported(f"{name} with seed= or another rng than the map's (map(f, seed=S) passes one)")
    out = _random_rule(graph, name, fn, args, kwargs)
    value, size = bound.get("value"), bound.get("size")
    if isinstance(value, Tracer) and value.varies and isinstance(size, (list, tuple)):
        if all(type(s) is int for s in size) and len(size) == value.ndim:
            out.varies = None
        elif len(size) == 2 and value.ndim == 3 and all(type(s) is int for s in size):
            out.varies = (False, False, True) if value.varies[-1] else None
    return out


def _random_flip_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    bound = _bind(fn, args, kwargs)
    image = bound.get("image")
    if not graph.seeded or bound.get("rng") not in (RNG, None) or bound.get("seed") is not None:
        raise Unsupported(f"{name} with seed= or another rng than the map's, or in a map without seed=")
    if not isinstance(image, Tracer) or image.ndim != 3:
        raise Unsupported(f"{name} of a value that is not one traced image")
    example = untraced(fn, image.example, rng=np.random.default_rng(0))
    graph.random = True
    varies = image.varies

    up_down = name == "image.random_flip_up_down"
    from ..image.flip import flip_rows  # noqa: PLC0415 (loaded by then: fn is its op)

    def run(run_: Run, batch: np.ndarray) -> np.ndarray:
        # The per-element op draws one random() per image: the same draw from each element's stream.
        return flip_rows(batch, [rng.random() < 0.5 for rng in run_.rngs()], up_down)

    return graph.value(name, run, (image,), example, varies)


def _elementwise_in_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """An op elementwise in its one traced argument (the keys of ``table.lookup``, the strings of
    ``tf.strings.lower`` or ``to_hash_bucket_fast``), every other argument fixed (a regex pattern
    taken from the element is not): the batch in one call."""
    bound = _bind(fn, args, kwargs)
    traced = [k for k, v in bound.items() if isinstance(v, Tracer)]
    if len(traced) != 1:
        raise Unsupported(f"{name} of {len(traced)} traced values")
    key = traced[0]
    value = bound[key]
    _no_tracers(name, [v for k, v in bound.items() if k != key])
    example = untraced(fn, **{**bound, key: value.example})

    def run(_run: Run, batch: Any) -> Any:
        return fn(**{**bound, key: batch})

    return graph.value(name, run, (value,), example, value.varies)


def _transpose_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """``transpose(x, perm)``: the batch dimension stays first, the element's dimensions move."""
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    example = untraced(fn, x.example, **rest)  # checks perm
    perm = rest.get("perm")
    order = list(range(x.ndim))[::-1] if perm is None else [int(p) for p in np.asarray(perm).reshape(-1)]
    batched = {**rest, "perm": [0] + [p + 1 for p in order]}
    varies = tuple(x.varies[p] for p in order) if x.varies else None
    return graph.value(name, lambda run, v: fn(v, **batched), (x,), example, varies)


def _pad_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """``pad(x, paddings)``: the batch dimension gets no padding."""
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    example = untraced(fn, x.example, **rest)  # checks the paddings and the mode against x
    widths = np.asarray(rest["paddings"])
    batched = {**rest, "paddings": np.concatenate([np.zeros((1, 2), widths.dtype), widths])}
    return graph.value(name, lambda run, v: fn(v, **batched), (x,), example, x.varies)


def _like_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """``zeros_like`` / ``ones_like``: the batch's shape, filled."""
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    example = untraced(fn, x.example, **rest)
    return graph.value(name, lambda run, v: fn(v, **rest), (x,), example, x.varies)


def _where_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """``where(condition, x, y)`` is elementwise; ``where(condition)`` gives the coordinates of the
    true entries, whose number differs between elements."""
    bound = _bind(fn, args, kwargs)
    if bound.get("x") is None or bound.get("y") is None:
        raise Unsupported(
            f"{name} without x and y (the coordinates of the true entries: their number differs)"
        )
    return _elementwise_rule(graph, name, fn, args, kwargs)


def _shifted(axis: Any) -> Any:
    """A per-element axis (or list of them) as an axis of the batch: negative ones count from the end
    either way."""
    if np.ndim(axis) == 0:
        a = int(axis)
        return a + 1 if a >= 0 else a
    return [_shifted(a) for a in np.asarray(axis).reshape(-1).tolist()]


def _axis_rule(param: str, default: Any = 0, keeps_shape: bool = True) -> Callable:
    """Ops whose argument ``param`` names per-element axes (roll, reverse, cumsum, argmax ...): one call
    on the batch with the axes moved past the batch dimension."""

    def rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
        x, rest, _ = _single_input(graph, name, fn, args, kwargs)
        example = untraced(fn, x.example, **rest)  # checks the axes against one element
        axis = rest.get(param)
        batched = {**rest, param: _shifted(default if axis is None else axis)}
        return graph.value(
            name, lambda run, v: fn(v, **batched), (x,), example, x.varies if keeps_shape else ...
        )

    return rule


def _normalize_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """``l2_normalize(x, axis)``: over the element's axes (all of them by default) moved past the batch
    dimension; the shape is the input's."""
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    example = untraced(fn, x.example, **rest)  # checks the axes against one element
    axis = rest.pop("dim", None) if rest.get("axis") is None else rest.get("axis")
    batched = {**rest, "axis": [a + 1 for a in _per_element_axes(axis, x.ndim)]}
    return graph.value(name, lambda run, v: fn(v, **batched), (x,), example, x.varies)


def _gather_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """``gather(params, indices, axis)``: traced params with fixed indices gather along the shifted
    axis; fixed params (a table) with traced indices, along axis 0, give each element's rows."""
    bound = _bind(fn, args, kwargs)
    params, indices = bound.pop("params"), bound.pop("indices")
    _no_tracers(name, bound)
    if bound.get("batch_dims", 0):
        raise Unsupported(f"{name} with batch_dims")
    axis = bound.pop("axis", None)
    if isinstance(params, Tracer) and not isinstance(indices, Tracer):
        _no_tracers(name, indices)
        example = untraced(fn, params.example, indices, axis=axis, **bound)
        shifted = _shifted(0 if axis is None else axis)
        return graph.value(name, lambda run, v: fn(v, indices, axis=shifted, **bound), (params,), example)
    if isinstance(indices, Tracer) and not isinstance(params, Tracer) and axis in (None, 0):
        _no_tracers(name, params)
        example = untraced(fn, params, indices.example, axis=axis, **bound)
        return graph.value(name, lambda run, v: fn(params, v, axis=axis, **bound), (indices,), example)
    raise Unsupported(f"{name} of traced params and indices, or of a table along an axis other than 0")


def _tile_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    example = untraced(fn, x.example, **rest)
    batched = {**rest, "multiples": [1, *np.asarray(rest["multiples"]).reshape(-1).tolist()]}
    return graph.value(name, lambda run, v: fn(v, **batched), (x,), example)


def _slice_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    if x.varies:
        raise Unsupported(f"{name} of {x.op}'s result, whose size differs between elements")
    example = untraced(fn, x.example, **rest)
    begin = [0, *np.asarray(rest["begin"]).reshape(-1).tolist()]
    size = [-1, *np.asarray(rest["size"]).reshape(-1).tolist()]
    batched = {**rest, "begin": begin, "size": size}
    return graph.value(name, lambda run, v: fn(v, **batched), (x,), example)


def _size_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Tracer:
    """``size(x)``: one number for every element, unless x's size differs between elements."""
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    if x.varies:
        raise Unsupported(f"{name} of {x.op}'s result, whose size differs between elements")
    example = untraced(fn, x.example, **rest)
    return graph.value(name, lambda run, v: np.full(run.n, example, example.dtype), (x,), example)


def _parts_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> list[Tracer]:
    """``unstack`` / ``split`` along a per-element axis: one call on the batch, then one value per part
    (each with the batch dimension first)."""
    x, rest, _ = _single_input(graph, name, fn, args, kwargs)
    if x.varies:
        raise Unsupported(f"{name} of {x.op}'s result, whose size differs between elements")
    example = untraced(fn, x.example, **rest)  # checks the axis and the sizes against one element
    batched = {**rest, "axis": _shifted(rest.get("axis", 0))}
    parts = graph.value(name, lambda run, v: fn(v, **batched), (x,), example, None)
    return [
        graph.value(name, lambda run, whole, i=i: whole[i], (parts,), part, None)
        for i, part in enumerate(example)
    ]


def _cond_rule(graph: Graph, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """``cond(pred, true_fn, false_fn)`` on a traced predicate: both branches traced and computed for
    the batch, each element taking its own branch's values (TF's vectorised_map turns a cond into a
    select the same way). Refused when a branch draws random numbers (the per-element run draws only
    in the branch taken) or the branches' values differ in structure, dtype or shape. A branch that
    fails on elements it was not taken for makes the batch fail, and the map then runs per element."""
    bound = _bind(fn, args, kwargs)
    pred = bound.get("pred")
    if not isinstance(pred, Tracer):
        return fn(*args, **kwargs)  # a fixed predicate: the branch taken is traced as it runs
    if pred.varies or np.size(pred.example) != 1 or np.asarray(pred.example).dtype.kind not in "biuf":
        raise Unsupported(f"{name} on a predicate that is not one number or bool per element")
    true_fn, false_fn = bound.get("true_fn"), bound.get("false_fn")
    if not (callable(true_fn) and callable(false_fn)):
        return fn(*args, **kwargs)  # the op says what is wrong
    random, graph.random = graph.random, False
    try:
        taken, other = true_fn(), false_fn()
        if graph.random:
            raise Unsupported(f"{name} whose branches draw random numbers (each element draws in one)")
    finally:
        graph.random = graph.random or random
    leaves_t, leaves_f = flatten(taken), flatten(other)
    numbered = list(range(len(leaves_t)))
    if len(leaves_t) != len(leaves_f) or pack_as(taken, numbered) != pack_as(other, numbered):
        raise Unsupported(f"{name} whose branches return different structures")
    chosen = bool(np.asarray(pred.example).reshape(()))
    out = []
    for a, b in zip(leaves_t, leaves_f):
        examples = [v.example if isinstance(v, Tracer) else v for v in (a, b)]
        if not all(isinstance(e, (np.ndarray, np.generic)) for e in examples) or any(
            isinstance(v, Tracer) and v.varies for v in (a, b)
        ):
            raise Unsupported(f"{name} whose branches return values other than tensors of one size")
        if examples[0].shape != examples[1].shape or examples[0].dtype != examples[1].dtype:
            raise Unsupported(f"{name} whose branches return values of different shapes or dtypes")
        traced = [v for v in (a, b) if isinstance(v, Tracer)]
        rank = np.ndim(examples[0])

        def run(run_: Run, p: np.ndarray, *values: Any, a: Any = a, b: Any = b, rank: int = rank) -> Any:
            given = iter(values)
            when_true = next(given) if isinstance(a, Tracer) else a
            when_false = next(given) if isinstance(b, Tracer) else b
            mask = np.asarray(p).reshape((run_.n,) + (1,) * rank).astype(bool)
            return np.where(mask, when_true, when_false)

        out.append(graph.value(name, run, (pred, *traced), examples[0] if chosen else examples[1], None))
    return pack_as(taken, out)


_ELEMENTWISE = (
    "add subtract multiply truediv divide floordiv floormod pow maximum minimum squared_difference equal "
    "not_equal less less_equal greater greater_equal logical_and logical_or logical_xor logical_not abs "
    "negative sign square sqrt rsqrt exp log log1p tanh sigmoid floor ceil round rint cast clip_by_value "
    "image.convert_image_dtype nn.relu nn.relu6 nn.leaky_relu nn.elu nn.selu nn.softplus nn.softsign nn.silu"
)
_REDUCE = (
    "reduce_sum reduce_prod reduce_mean reduce_max reduce_min reduce_any reduce_all reduce_variance reduce_std "
    "reduce_logsumexp"
)

RULES: dict[str, Callable[[Graph, str, Callable, tuple, dict], Any]] = {
    **dict.fromkeys(_ELEMENTWISE.split(), _elementwise_rule),
    **dict.fromkeys(_REDUCE.split(), _reduce_rule),
    "reshape": _reshape_rule,
    "transpose": _transpose_rule,
    "pad": _pad_rule,
    "zeros_like": _like_rule,
    "ones_like": _like_rule,
    "where": _where_rule,
    "cond": _cond_rule,
    "roll": _axis_rule("axis"),
    "reverse": _axis_rule("axis"),
    "cumsum": _axis_rule("axis"),
    "cumprod": _axis_rule("axis"),
    "argmax": _axis_rule("axis", keeps_shape=False),
    "argmin": _axis_rule("axis", keeps_shape=False),
    "gather": _gather_rule,
    "tile": _tile_rule,
    "slice": _slice_rule,
    "size": _size_rule,
    "unstack": _parts_rule,
    "sort": _axis_rule("axis", default=-1),
    "nn.softmax": _axis_rule("axis", default=-1),
    "nn.log_softmax": _axis_rule("axis", default=-1),
    "nn.l2_normalize": _normalize_rule,
    "argsort": _axis_rule("axis", default=-1),
    "split": _parts_rule,
    "expand_dims": _expand_dims_rule,
    "squeeze": _squeeze_rule,
    "concat": _join_rule,
    "stack": _join_rule,
    "one_hot": _one_hot_rule,
    "ensure_shape": _ensure_shape_rule,
    "shape": _shape_rule,
    "io.parse_single_example": _parse_single_example_rule,
    "io.decode_raw": _scalar_bytes_rule,
    "image.random_flip_left_right": _random_flip_rule,
    "image.random_flip_up_down": _random_flip_rule,
    "image.random_brightness": _random_adjust_rule,
    "image.random_contrast": _random_adjust_rule,
    "image.random_hue": _random_adjust_rule,
    "image.random_saturation": _random_adjust_rule,
    **dict.fromkeys(
        (
            "image.flip_left_right image.flip_up_down image.transpose image.rot90 image.central_crop image.resize_with_crop_or_pad "
            "image.crop_to_bounding_box image.pad_to_bounding_box image.resize_with_pad image.adjust_saturation "
            "image.adjust_hue image.grayscale_to_rgb image.adjust_gamma "
            "image.adjust_brightness image.adjust_contrast image.rgb_to_grayscale "
            "image.per_image_standardization"
        ).split(),
        _per_image_rule,
    ),
    "image.random_crop": _random_crop_rule,
    "image.resize": _resize_rule,
    "io.decode_jpeg": _decode_rule,
    "io.decode_png": _decode_rule,
    "io.decode_image": _decode_rule,
    "random.uniform": _random_rule,
    "random.normal": _random_rule,
    **dict.fromkeys(
        (
            "lookup.lookup strings.to_hash_bucket_fast strings.to_hash_bucket strings.to_hash_bucket_strong "
            "strings.lower strings.upper strings.length strings.strip strings.regex_replace "
            "strings.regex_full_match strings.to_number strings.as_string"
        ).split(),
        _elementwise_in_rule,
    ),
}
"""Each traced op's batching rule, by the name its ``@traceable`` gives."""


# --- tracing a map function -------------------------------------------------------------------------
def _leaf_signature(leaf: Any) -> tuple:
    if type(leaf) is bytes:
        return ("bytes", ())
    if isinstance(leaf, (np.ndarray, np.generic)) and leaf.dtype.kind not in "OUSV":
        return (leaf.dtype.str, leaf.shape)
    raise Unsupported(f"an input component of type {type(leaf).__name__}")


def _batched_signature(leaf: Any) -> tuple | None:
    if not isinstance(leaf, np.ndarray) or leaf.ndim == 0:
        return None
    if leaf.dtype == object:
        return ("bytes", leaf.shape[1:])
    return (leaf.dtype.str, leaf.shape[1:])


@dataclass
class Traced:
    """``fn`` traced on one element's structure: the graph, and how to run it on a stacked batch."""

    graph: Graph
    structure: Any  # the element, for packing inputs
    signature: list[tuple]
    outputs: Any  # the output structure with value numbers at its leaves
    failed: str | None = None  # set when the first-batch check found a difference
    checked: bool = False  # the first batch was compared with the per-element results
    row_batches: int = 0  # batches whose values differed in shape somewhere (run row by row there)

    def run(
        self, batched: Any, keys: list[tuple[int, int, int, int]] | None, rows: bool = False, workers: int = 1
    ) -> Any:
        """The outputs for the stacked inputs ``batched``; ``rows``: an output whose elements differ in
        shape is given as :class:`Rows` (a chunk's elements go on one by one), else it fails."""
        leaves = flatten(batched)
        n = len(leaves[0])
        env = list(leaves)
        run = Run(n, keys, workers)
        step = None
        by_rows = False
        try:
            with np.errstate(all="ignore"):  # the tf ops compute so (numpy kernels run bare here)
                for step in self.graph.steps:
                    values = [env[i] for i in step.args]
                    if any(type(v) is Rows for v in values):
                        by_rows = True
                        env.append(_per_row(step, run, values))
                    else:
                        env.append(step.fn(run, *values))
        except Exception as exc:
            # On the error itself, not on the shared trace: lanes run several batches at once.
            exc.headrace_failed_op = step.name if step else "?"  # type: ignore[attr-defined]
            raise
        if by_rows or any(type(v) is Rows for v in env):
            self.row_batches += 1
        out: list[Any] = []
        for index in flatten(self.outputs):
            value = env[index]
            if type(value) is Rows:  # elements of several shapes: batch refuses them (per element)
                if rows:
                    out.append(value)
                    continue
                raise NotThisBatch(f"{self.op_of(index)}: an output whose elements differ in shape")
            if not isinstance(value, np.ndarray) or value.shape[:1] != (n,):
                raise Unsupported(f"an output that is not a batch of {n} values")
            out.append(np.ascontiguousarray(value))
        return pack_as(self.outputs, out) if isinstance(self.outputs, (tuple, dict)) else out[0]

    def accepts(self, batched: Any) -> bool:
        leaves = flatten(batched)
        return len(leaves) == len(self.signature) and all(
            _batched_signature(leaf) == sig for leaf, sig in zip(leaves, self.signature)
        )

    def op_of(self, index: int) -> str:
        return "input" if index < self.graph.n_inputs else self.graph.steps[index - self.graph.n_inputs].name


def trace(fn: Callable, element: Any, seeded: bool) -> Traced:
    """Trace ``fn`` on ``element``'s structure (``element`` gives the per-element shapes and the
    example values ops are run on to learn theirs); raises :class:`Unsupported` saying why not."""
    leaves = flatten(element)
    if not leaves:
        raise Unsupported("an element without components")
    if not isinstance(element, (tuple, dict)) and len(leaves) != 1:
        raise Unsupported(f"an element of type {type(element).__name__}")
    signature = [_leaf_signature(leaf) for leaf in leaves]
    graph = Graph(seeded, n_inputs=len(leaves))
    inputs = [Tracer(graph, i, leaf, "input") for i, leaf in enumerate(leaves)]
    packed = pack_as(element, inputs) if isinstance(element, (tuple, dict)) else inputs[0]
    token = TRACING.set(graph)
    rng_token = ELEMENT_RNG.set(RNG) if seeded else None  # type: ignore[arg-type]
    try:
        if seeded:
            out = fn(*packed, rng=RNG) if type(packed) is tuple else fn(packed, rng=RNG)
        else:
            out = fn(*packed) if type(packed) is tuple else fn(packed)
    except Unsupported as exc:
        op = _library_op(exc.__traceback__)
        if op is not None and "no batching rule" not in str(exc):
            raise Unsupported(f"{op} has no batching rule ({exc})") from exc
        raise
    except Exception as exc:
        raise Unsupported(f"tracing raised {type(exc).__name__}: {exc}") from exc
    finally:
        if rng_token is not None:
            ELEMENT_RNG.reset(rng_token)
        TRACING.reset(token)
    if type(out) in CONVERTED:
        raise Unsupported(f"the function returns a {type(out).__name__}")
    if not isinstance(out, (tuple, dict, Tracer)) or (isinstance(out, tuple) and hasattr(out, "_fields")):
        raise Unsupported(f"the function returns a {type(out).__name__}, not traced values")
    out_leaves = flatten(out)
    for leaf in out_leaves:
        if not isinstance(leaf, Tracer) or leaf.graph is not graph:
            raise Unsupported(f"an output of type {type(leaf).__name__} (not computed from the element)")
    if not graph.tf_ops:
        # Code written for tf.data calls TF ops, and runs its Python once, at the trace. A function with
        # none (numpy operators at most) is headrace's own per-element Python, whose side effects (a
        # sleep, a counter, a read) must run for every element: it stays per element.
        raise Unsupported("the function calls no TF op (headrace.cast, headrace.io.parse_single_example ...)")
    numbers = [leaf.index for leaf in out_leaves]
    outputs = pack_as(out, numbers) if isinstance(out, (tuple, dict)) else numbers[0]
    batched_signature = [(s[0], s[1]) if s[0] != "bytes" else ("bytes", ()) for s in signature]
    return Traced(graph, element, batched_signature, outputs)


_PACKAGE = str(Path(__file__).parent.parent)
_OWN = (  # the tracer's and the map's own frames (a seeded map's wrapper, runtime.calls.apply)
    __file__,
    str(Path(__file__).parent.parent / "core" / "trace_hook.py"),
    str(Path(__file__).parent / "map.py"),
    str(Path(__file__).parent.parent / "runtime" / "calls.py"),
)


def _library_op(tb: Any) -> str | None:
    """The headrace function the user's code called when a tracer was refused (e.g. ``tile``)."""
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.startswith(_PACKAGE) and code.co_filename not in _OWN:
            return code.co_name
        tb = tb.tb_next
    return None


def trace_map(map_node: MapNode, element: Any) -> Traced | str:
    """``map_node``'s function traced on ``element``'s structure, or why its map stays per element."""
    try:
        return trace(map_node.map_func, element, map_node.seed is not None)
    except Unsupported as exc:
        logger.debug("%r stays per element: %s", map_node, exc)
        return str(exc)


# --- comparing results ------------------------------------------------------------------------------
def difference(vectorised: Any, reference: Any, path: str = "") -> str | None:
    """Where ``vectorised`` differs from ``reference`` (structure, dtype, shape or values), or None."""
    if isinstance(reference, (tuple, dict)) or isinstance(vectorised, (tuple, dict)):
        if type(vectorised) is not type(reference):
            return (
                f"{path or 'the element'} is a {type(vectorised).__name__}, not a {type(reference).__name__}"
            )
        if isinstance(reference, dict):
            if list(vectorised) != list(reference):
                return f"{path or 'the element'} has keys {list(vectorised)}, not {list(reference)}"
            pairs = [(f"{path}[{k!r}]", vectorised[k], reference[k]) for k in reference]
        else:
            if len(vectorised) != len(reference):
                return f"{path or 'the element'} has {len(vectorised)} components, not {len(reference)}"
            pairs = [(f"{path}[{i}]", v, r) for i, (v, r) in enumerate(zip(vectorised, reference))]
        for where, v, r in pairs:
            found = difference(v, r, where)
            if found:
                return found
        return None
    where = path or "the element"
    if not isinstance(vectorised, np.ndarray) or not isinstance(reference, np.ndarray):
        return f"{where} is a {type(vectorised).__name__}, not a {type(reference).__name__}"
    if vectorised.dtype != reference.dtype:
        return f"{where} has dtype {vectorised.dtype}, not {reference.dtype}"
    if vectorised.shape != reference.shape:
        return f"{where} has shape {vectorised.shape}, not {reference.shape}"
    equal_nan = vectorised.dtype.kind in "fc"
    if not np.array_equal(vectorised, reference, equal_nan=equal_nan):
        return f"{where} has other values"
    return None


def _first_differing_output(traced: Traced, vectorised: Any, reference: Any) -> tuple[str, str]:
    message = difference(vectorised, reference) or "the element differs"
    numbers = flatten(traced.outputs)
    values, expected = flatten(vectorised), flatten(reference)
    op = "the output"
    for number, v, r in zip(numbers, values, expected):
        if difference(v, r):
            op = traced.op_of(number)
            break
    return op, message


# --- the stage ---------------------------------------------------------------------------------------
class Decides:
    """The decision of a stage that may run a map vectorised: made once, at its first input, and kept
    on the node (so every later iteration of the pipeline runs the same way)."""

    def traced_map(self) -> MapNode:
        """The map whose function is traced."""
        raise NotImplementedError

    def decision(self) -> Traced | str | None:
        """The traced function, why the map stays per element, or None before the first input."""
        return derived(cast(Node, self)).get("vectorized")

    def decide(self, element: Any) -> Traced | str:
        cache = derived(cast(Node, self))
        if "vectorized" not in cache:
            cache["vectorized"] = trace_map(self.traced_map(), element)
        return cache["vectorized"]

    def runs_per_element(self) -> bool:
        decision = self.decision()
        return isinstance(decision, str) or (decision is not None and decision.failed is not None)

    def vectorises(self) -> Node | None:
        decision = self.decision()
        return self.traced_map() if isinstance(decision, Traced) and decision.failed is None else None


class VectorizedBatchNode(Decides, BatchNode):
    """``batch(n)`` after a ``map`` whose function may trace: decided at the first batch, it runs as one
    call of the traced function per batch. The plan keeps ``batch`` over ``map`` (its signature and
    checkpoints are the per-element pipeline's)."""

    def traced_map(self) -> MapNode:
        return cast(MapNode, self.parents[0])

    def iterator(self, ctx: Context) -> NodeIterator:  # type: ignore[override]
        map_node = self.parents[0]
        if ctx.probe or not isinstance(map_node, MapNode) or self.runs_per_element():
            return super().iterator(ctx)
        parent = map_node.parents[0].iterator(ctx)
        iteration = ctx.iteration_of(map_node) if map_node.seed is not None else 0
        map_iterator = MapIterator(map_node, parent, iteration)
        return VectorizedMapIterator(self, ctx, map_iterator, BatchIterator(self, map_iterator))

    def explain_line(self) -> str:
        decision = self.decision()
        line = _decision_line(self.parents[0], decision, "batch", "batch")
        map_node = self.parents[0]
        if isinstance(decision, Traced) and decision.failed is None and isinstance(map_node, MapNode):
            count, threads = lanes(resolve_parallelism(map_node.num_parallel_calls, map_node.executor) or 1)
            if count > 1:
                line += (
                    f", up to {count} batches at once (a thread each; decoders: {threads} thread(s) a batch)"
                )
        if not isinstance(decision, (str, type(None))) and decision.failed is None and decision.row_batches:
            line += (
                f"; {decision.row_batches} batch(es) held values of several sizes (decoded images): the ops "
                "from there to the first fixed-size result (random_crop, resize) ran row by row"
            )
        return line


def _decision_line(map_node: Node, decision: Any, first: str, unit: str) -> str:
    """``explain()``'s line for a map that may run vectorised: undecided, per element (why), or the
    traced ops, one call per ``unit``; ``first`` names what the first-result check compared."""
    if decision is None:
        return f"- {map_node!r}: vectorised over each {unit} if its function traces (decided at the first {first})"
    if isinstance(decision, str):
        return f"- {map_node!r}: per element, {decision}"
    if decision.failed is not None:
        return f"- {map_node!r}: per element, its first {first} differed at {decision.failed}"
    ops = ", ".join(dict.fromkeys(decision.graph.op_names)) or "no op"
    return f"- {map_node!r}: vectorised, one traced call per {unit} ({ops})"


#: Ops between a map and a ``batch`` under which the map runs as a :class:`ChunkVectorizedMapNode`:
#: each asks its input for chunks (the batch's size, a shuffle's fill) and leaves the map's elements
#: as they are, so the map's chunks are worth one traced call each. The map's values, positions, draws
#: and checkpoints do not depend on them (its chunks are computed as the per-element map computes them).
CHUNK_PASSING = frozenset(
    {"shuffle", "repeat", "cache", "filter", "take", "skip", "shard", "ignore_errors"}
)  # not prefetch: its producer pulls one element at a time


def vectorize_batch(batch: BatchNode, parent: Node) -> Node | str | None:
    """``batch`` of the map ``parent`` as a stage that runs it vectorised when its function traces;
    ``batch`` of ``shuffle`` of a map, the map as one that computes each chunk of its input with one
    traced call (:class:`ChunkVectorizedMapNode`). Only functions that may call an op with a batching
    rule are candidates (:func:`may_call_ops`): a plain Python or numpy function keeps its map and
    batch stages as written. Stages of :data:`CHUNK_PASSING` between the shuffle and the batch, or in
    place of the shuffle (``map -> shuffle -> repeat -> batch``, ``map -> cache -> shuffle -> batch``,
    ``map -> filter -> batch``), keep the map chunk-vectorised."""
    between: list[Node] = []  # the stages from the batch's parent down to the map, if all pass chunks
    below = parent
    while below.op in CHUNK_PASSING and len(below.parents) == 1:
        between.append(below)
        below = below.parents[0]
    if between and isinstance(below, MapNode):
        chunked = vectorize_chunks(below)
        if not isinstance(chunked, Node):
            return chunked
        rebuilt = chunked
        for stage in reversed(between):
            rebuilt = stage.with_parents(rebuilt)
        out = batch.with_parents(rebuilt)
        stages = " -> ".join(repr(stage) for stage in reversed(between))
        out.rewrite_note = (  # type: ignore[attr-defined]
            f"- {chunked!r} before {stages} and {batch!r} may run vectorised: one traced call of the "
            "function per chunk of its input (see vectorised maps)"
        )
        return out
    if not isinstance(parent, MapNode) or parent.batch_safe():
        return None
    if not may_call_ops(parent.map_func):
        return f"- {parent!r}: per element, its function refers to no headrace op (nothing to trace)"
    node = object.__new__(VectorizedBatchNode)
    node.__dict__.update(batch.__dict__)
    node.__dict__.pop("_derived", None)
    node.parents = (parent,)
    return node


def may_call_ops(fn: Any, depth: int = 3) -> bool:
    """Whether ``fn`` refers to headrace (a module of it, or an op with a batching rule), directly or
    through the functions it refers to (``depth`` deep): by global name, closure cell or default. A
    cheap, conservative look at the code, before any element: tracing decides the rest."""
    seen: set[int] = set()
    todo: list[tuple[Any, int]] = [(fn, depth)]
    while todo:
        obj, left = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if getattr(obj, "__traced_op__", None) is not None:
            return True
        if isinstance(obj, types.ModuleType):
            if obj.__name__ == "headrace" or obj.__name__.startswith("headrace."):
                return True
            continue
        if isinstance(obj, functools.partial):
            todo.append((obj.func, left))
            continue
        if isinstance(obj, FusedFunction):  # fused maps: each function of the chain
            todo.extend((step, left) for step in obj.functions)
            continue
        if isinstance(obj, types.MethodType):  # a bound method (``map(table.lookup)``): its object too
            todo.extend([(obj.__func__, left), (obj.__self__, left)])
            continue
        inner = getattr(obj, "fn", None)  # the map's own wrappers (WithoutRng) keep the function as .fn
        if inner is not None and not isinstance(obj, types.FunctionType):
            todo.append((inner, left))
        if not isinstance(obj, types.FunctionType):
            call = vars(type(obj)).get("__call__")  # a callable object: its class's method
            if isinstance(call, types.FunctionType) and left > 0:
                todo.append((call, left - 1))
            continue
        if left < 0:
            continue
        names: set[str] = set()
        codes = [obj.__code__]
        while codes:
            code = codes.pop()
            names.update(code.co_names)
            codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        referred = [obj.__globals__[name] for name in names if name in obj.__globals__]
        referred += [cell.cell_contents for cell in obj.__closure__ or () if _filled(cell)]
        referred += list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
        for value in referred:
            if isinstance(value, (types.ModuleType, functools.partial)) or hasattr(value, "__traced_op__"):
                todo.append((value, left))
            elif callable(value) and left > 0:
                todo.append((value, left - 1))
    return False


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty cell raises)
    except ValueError:
        return False
    return True


VECTORIZERS["batch"] = vectorize_batch


def vectorize_chunks(map_node: MapNode) -> Node | str | None:
    """``map_node`` as a :class:`ChunkVectorizedMapNode` when its function is a candidate."""
    if map_node.batch_safe():
        return None
    if not may_call_ops(map_node.map_func):
        return f"- {map_node!r}: per element, its function refers to no headrace op (nothing to trace)"
    node = object.__new__(ChunkVectorizedMapNode)
    node.__dict__.update(map_node.__dict__)  # as with_parents: the iteration counter is shared
    node.__dict__.pop("_derived", None)
    return node


#: The most inputs one traced call of a chunk-vectorised map takes (a shuffle's first fill asks for its
#: whole buffer), and the fewest (fewer run per element: a traced call costs more than one call).
CHUNK, MIN_CHUNK = 256, 4


class ChunkVectorizedMapNode(Decides, MapNode):
    """A map read by ``shuffle`` then ``batch`` (``map(parse).shuffle(n).batch(b)``; or other
    :data:`CHUNK_PASSING` stages before the batch): decided at its
    first input, it computes each chunk of inputs its consumer asks for (the batch's size, the
    shuffle's first fill) with one call of the traced function, and hands the elements on one by one.
    Positions, per-element random streams and checkpoints are the per-element map's."""

    def traced_map(self) -> MapNode:
        return self

    def iterator(self, ctx: Context) -> NodeIterator:
        if ctx.probe or self.runs_per_element():
            return super().iterator(ctx)
        parent = self.parents[0].iterator(ctx)
        iteration = ctx.iteration_of(self) if self.seed is not None else 0
        return ChunkMapIterator(self, parent, iteration, ctx)

    def explain_line(self) -> str:
        return _decision_line(self, self.decision(), "chunk", "chunk of its input")


class ChunkMapIterator(MapIterator):
    """The map's own iterator (same state, same positions and keys) whose chunks run as one traced call;
    anything the traced call cannot take runs per element (:meth:`MapIterator.compute`), which raises or
    holds a failing element's error as the per-element map does. Once the map runs per element for good
    it goes on with the workers it asked for (``num_parallel_calls``)."""

    def __init__(self, node: ChunkVectorizedMapNode, parent: NodeIterator, iteration: int, ctx: Context):
        super().__init__(node, parent, iteration)
        self.ctx = ctx
        self.workers = resolve_parallelism(node.num_parallel_calls, node.executor) or 1  # decoders' threads
        self.delegate: NodeIterator | None = None
        self._switch = False

    def next_chunk(self, n: int) -> list:
        if self.delegate is not None:
            out = self.delegate.next_chunk(n)
            self.produced = self.delegate.produced
            return out
        out = super().next_chunk(n)
        if self._switch and not self.owed:
            self._go_per_element()
        return out

    def __next__(self) -> Any:
        return self.next_chunk(1)[0]

    def _go_per_element(self) -> None:
        node = cast(MapNode, self.node)
        self._switch = False
        workers = resolve_parallelism(node.num_parallel_calls, node.executor)
        if workers is None:
            return
        parallel = cast(Any, node.parallel_iterator(self.parent, workers, self.ctx, self.iteration))
        parallel.start_at(self.position, self.epoch, self.produced)
        self.inputs = [parallel]
        self.delegate = parallel

    def compute(self, inputs: list, first: int) -> list:
        node = cast(ChunkVectorizedMapNode, self.node)
        traced = node.decide(inputs[0])
        if isinstance(traced, str) or traced.failed is not None:
            self._switch = True
            return super().compute(inputs, first)
        if len(inputs) < MIN_CHUNK:
            return super().compute(inputs, first)
        out: list = []
        for start in range(0, len(inputs), CHUNK):
            piece = inputs[start : start + CHUNK]
            computed = self._vectorised(traced, piece, first + start)
            if computed is None:  # per element: from here on, exactly as the map computes a chunk
                if not out:
                    return super().compute(inputs[start:], first + start)
                done, rest = attempt(super().compute, inputs[start:], first + start)
                if done:
                    return out + rest
                # raised at its first input: the rest is owed, the pieces before go on
                return self.hold(out, rest, first + start, inputs[start])
            out.extend(computed)
        return out

    def _vectorised(self, traced: Traced, inputs: list, first: int) -> list | None:
        """The outputs of ``inputs`` by one traced call, or None where it cannot or must not say."""
        keys = None
        if self.seed is not None:
            keys = [(self.seed, self.iteration, self.epoch, first + i) for i in range(len(inputs))]
        stacked, batched = attempt(stack, inputs)  # inputs of different shapes: per element
        if not stacked or not traced.accepts(batched):
            return None
        done, out = attempt(traced.run, batched, keys, rows=True, workers=self.workers)
        if not done:
            logger.debug("%r: a chunk computed per element (%s)", self.node, out)
            if isinstance(out, NotThisBatch) or not attempt(_reference, self.fn, inputs, keys)[0]:
                return None  # the per-element run raises (or holds) its error, naming the element
            self._differs(traced, _failed_op(out), f"it raised {type(out).__name__}: {out}")
            return None
        elements = _unstack(out, len(inputs))
        if not traced.checked:  # once per pipeline, as a trace is made once
            traced.checked = True
            done, reference = attempt(_reference, self.fn, inputs, keys)
            if not done:
                return None
            for i, (got, expected) in enumerate(zip(elements, reference)):
                message = difference(_arrays(got), _arrays(expected), f"element {first + i}")
                if message is not None:
                    numbers = flatten(traced.outputs)
                    leaves, wanted = flatten(_arrays(got)), flatten(_arrays(expected))
                    op = next(
                        (traced.op_of(k) for k, v, r in zip(numbers, leaves, wanted) if difference(v, r)),
                        "the output",
                    )
                    self._differs(traced, op, message)
                    return None
        return elements

    def _differs(self, traced: Traced, op: str, message: str) -> None:
        if traced.failed is None:
            traced.failed = f"op {op} ({message})"
            warnings.warn(
                f"{self.node!r} runs per element: its vectorised call differs from the per-element one at "
                f"op {op} ({message}); Options().experimental_optimization.map_vectorization = False "
                "silences this",
                VectorizationWarning,
                stacklevel=user_stacklevel(),
            )
        self._switch = True

    def state_owner(self) -> NodeIterator | None:
        return self.delegate  # None while vectorised: the map's own declared state

    def reset(self) -> None:
        if self.delegate is not None:
            self.delegate.reset()
            return
        super().reset()

    def seek_forward(self, n: int) -> int | None:
        if self.delegate is None:
            return super().seek_forward(n)
        skipped = self.delegate.seek_forward(n)
        self.produced = self.delegate.produced
        return skipped


def _reference(fn: Callable, inputs: list, keys: list | None) -> list:
    """The per-element outputs of ``inputs`` (the map's function called on each)."""
    outs = []
    for i, element in enumerate(inputs):
        value = apply(fn, element, keys[i] if keys is not None else None)
        outs.append(tf_result(value) if type(value) in CONVERTED else value)
    return outs


def _arrays(element: Any) -> Any:
    """``element`` with its leaves as arrays (a scalar row and a 0-d result compare alike)."""
    if isinstance(element, (tuple, dict)):
        return pack_as(element, [np.asarray(leaf) for leaf in flatten(element)])
    return np.asarray(element)


def _unstack(out: Any, n: int) -> list:
    """A traced call's batched outputs as ``n`` elements; rows are copied (a view would keep the whole
    chunk alive while one of its elements waits in a shuffle buffer)."""
    leaves = flatten(out)
    columns = [
        list(leaf) if type(leaf) is Rows or leaf.ndim == 1 else [row.copy() for row in leaf]
        for leaf in leaves
    ]
    if not isinstance(out, (tuple, dict)):
        return columns[0]
    if type(out) is tuple and all(isinstance(v, (np.ndarray, Rows)) for v in out):  # flat, the usual
        return list(zip(*columns))
    return [pack_as(out, [column[i] for column in columns]) for i in range(n)]


def _failed_op(exc: BaseException) -> str:
    """The op a failed traced call stopped at, which its error carries (``Traced.run``)."""
    return str(getattr(exc, "headrace_failed_op", "the output"))


#: batches a vectorised map computes at once, at most (each in its own thread)
MAX_LANES = 4


def lanes(workers: int) -> tuple[int, int]:
    """``(batches computed at once, threads each batch's decoder may use)`` for a vectorised map with
    ``workers`` (its ``num_parallel_calls``). One batch at a time leaves cores idle while the ops after
    a decoder (crops, flips, casts) run in one thread; with 4 workers or more, several batches run at
    once (half the workers, at most :data:`MAX_LANES`) and share the workers for decoding. With 2,
    one batch decoding in 2 threads measured 2-6% faster than two batches at once (2-core box, JPEG
    per-element benchmark): the second batch's Python work contends for the GIL with the first's.

    >>> lanes(1), lanes(2), lanes(4), lanes(16)
    ((1, 1), (1, 2), (2, 2), (4, 4))
    """
    count = 1 if workers < 4 else min(workers // 2, MAX_LANES)
    return count, max(1, workers // count)


class _Lane:
    """One batch computed in a thread of its own (started per batch, as the decoders' threads: no
    thread outlives its batch, and an iterator dropped mid-batch leaves nothing behind). ``entries``:
    its inputs as the map's ``owed`` entries, which hold them until the batch is handed out."""

    def __init__(self, traced: Traced, entries: list, batched: Any, keys: list | None, threads: int):
        self.entries = entries
        self.value: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(
            target=self._run,
            args=(traced, batched, keys, threads),
            name="headrace vectorised map",
            daemon=True,
        )
        self.thread.start()

    def _run(self, traced: Traced, batched: Any, keys: list | None, threads: int) -> None:
        done, value = attempt_all(traced.run, batched, keys, workers=threads)  # raised by result()
        if done:
            self.value = value
        else:
            self.error = value

    def result(self) -> Any:
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.value


class VectorizedMapIterator(NodeIterator):
    """``batch`` over ``map``, run as batch plus one traced call; the per-element iterators keep the
    state (checkpoints are theirs) and compute any batch the traced call cannot take."""

    def __init__(self, node: VectorizedBatchNode, ctx: Context, map_iterator: Any, batch_iterator: Any):
        # The map's iterator is this stage's input (counters and close walk it); the batch iterator over
        # it is this stage's own per-element path.
        super().__init__(node, map_iterator)
        self.ctx = ctx
        map_node = cast(MapNode, node.parents[0])
        self.workers = resolve_parallelism(map_node.num_parallel_calls, map_node.executor) or 1
        self.map_iterator, self.batch_iterator = map_iterator, batch_iterator
        self.delegate: NodeIterator | None = None  # the per-element stages, once the map runs per element
        self.lanes, self.lane_threads = lanes(self.workers)
        # Batches taken and being computed, oldest first. Their inputs stay in the map's owed queue until
        # they are handed out, so a state saved meanwhile holds them; a reset, a restore or a skip
        # replaces that queue, which leaves the window stale (dropped at the next call).
        self.inflight: deque[_Lane] = deque()
        self.windowed: Traced | None = None  # the checked trace, once batches may be computed at once

    def counters(self) -> StageCounters:
        out = super().counters()
        if self.delegate is None and self.node.vectorises() is not None:
            # The map's work is this stage's time: the report's advice says so instead of "stacking".
            out["vectorised_map"] = repr(self.node.parents[0])
        return out

    def _per_element(self, elements: list, error: BaseException | None = None) -> Any:
        # The inputs go back to the map as pending (as after an error inside a chunk), so the
        # per-element stages compute them: same values, same errors naming the element.
        self._owe(elements)
        if error is not None:
            raise error
        out = next(self.batch_iterator)
        self.produced = self.batch_iterator.produced
        return out

    def _go_per_element(self, elements: list | None = None) -> None:
        """From now on ``batch`` over the map as it runs unvectorised (parallel when it is); ``elements``,
        the inputs just taken, are computed first."""
        b, m = self.batch_iterator, self.map_iterator
        node = self.node.parents[0]
        workers = resolve_parallelism(node.num_parallel_calls, node.executor)
        if workers is None or m.owed or b.owed:
            self._owe(elements or [])
            self.delegate = b
            return
        parallel = cast(Any, node.parallel_iterator(m.parent, workers, self.ctx, m.iteration))
        first = m.position - len(elements or ())
        parallel.start_at(m.position, m.epoch, m.produced, list(enumerate(elements or (), start=first)))
        batch = BatchIterator(self.node, parallel)
        batch.produced = b.produced
        self.inputs = [parallel]
        self.delegate = batch

    def __next__(self) -> Any:
        if self.delegate is not None:
            out = next(self.delegate)
            self.produced = self.delegate.produced
            return out
        b, m = self.batch_iterator, self.map_iterator
        if self.inflight and not (m.owed and m.owed[0] is self.inflight[0].entries[0]):
            self._drop_window()  # the owed queue was replaced (reset, restore, skip): the window is stale
        if not self.inflight and (b.owed or m.owed):
            # a batch gathered in part, inputs or an error held back: per element
            out = next(b)
            self.produced = b.produced
            return out
        if self.windowed is not None:
            return self._next_windowed(self.windowed)
        size = self.node.batch_size
        elements, error = self._take_inputs()
        if error is not None:
            if elements:
                self._per_element(elements, error)
            raise error
        if not elements:
            raise StopIteration
        traced = self.node.decide(elements[0])
        if isinstance(traced, str) or traced.failed is not None:
            self._go_per_element(elements)
            return next(self)
        if self.node.drop_remainder and len(elements) < size:
            return self._per_element(elements)  # the map computes them and batch drops them, as per element
        first = m.position - len(elements)
        keys = None
        if m.seed is not None:
            keys = [(m.seed, m.iteration, m.epoch, first + i) for i in range(len(elements))]
        # Inputs of different shapes, or of other shapes than the traced ones: the per-element run
        # batches (or refuses) them.
        stacked, batched = attempt(stack, elements)
        if not stacked or not traced.accepts(batched):
            return self._per_element(elements)
        done, out = attempt(traced.run, batched, keys, workers=self.workers)
        if not done:
            # An element the op refuses: the per-element run raises its error, naming the element.
            exc = out
            logger.debug("%r: a batch computed per element (%s)", self.node, exc)
            out = self._per_element(elements)
            if not isinstance(exc, NotThisBatch):
                # It did not raise: the vectorised call is wrong where the per-element one is not.
                self._differs(traced, _failed_op(exc), f"it raised {type(exc).__name__}: {exc}")
            return out
        if not traced.checked:  # once per pipeline, as a trace is made once
            traced.checked = True
            done, reference = attempt(self._reference, elements, keys, b.produced * size)
            if not done:
                return self._per_element(elements)
            if difference(out, reference) is not None:
                op, message = _first_differing_output(traced, out, reference)
                m.produced += len(elements)
                b.produced += 1
                self.produced = b.produced
                self._differs(traced, op, message)
                return reference
        if self.lanes > 1:  # checked: from the next batch on, several at once
            self.windowed = traced
        m.produced += len(elements)
        b.produced += 1
        self.produced = b.produced
        return out

    def _next_windowed(self, traced: Traced) -> Any:
        """The next batch with up to ``lanes`` batches computed at once, each in its own thread: the
        window is filled with the next batches' inputs (taken in order, positions and random keys as
        one at a time, owed to the map until handed out), then the oldest is waited for. Inputs the
        window cannot take (before an input error, a last batch that ``drop_remainder`` drops, inputs
        of other shapes) are owed behind it, with the error: once the batches before them are out, the
        per-element stages compute them, with the values, errors and positions of a run one element
        at a time."""
        b, m = self.batch_iterator, self.map_iterator
        size = self.node.batch_size
        # Fill while everything owed is the window's (anything behind it waits for the window to drain).
        while len(self.inflight) < self.lanes and len(m.owed) == sum(len(x.entries) for x in self.inflight):
            elements, error = self._take_inputs()
            if isinstance(error, Exception):
                self._owe(elements, error)
                break
            if error is not None:  # an interrupt: raised now, every input taken owed (none lost)
                self._owe(elements)
                raise error
            if not elements:
                break
            first = m.position - len(elements)
            # A last batch that drop_remainder drops, inputs of different shapes (the per-element run
            # batches or refuses them), or of other shapes than the traced ones: per element.
            stacked, batched = False, None
            if not (self.node.drop_remainder and len(elements) < size):
                stacked, batched = attempt(stack, elements)
            if not stacked or not traced.accepts(batched):
                self._owe(elements)
                break
            keys = None
            if m.seed is not None:
                keys = [(m.seed, m.iteration, m.epoch, first + i) for i in range(len(elements))]
            entries = owed_inputs(elements, first)
            m.owed.extend(entries)
            self.inflight.append(_Lane(traced, entries, batched, keys, self.lane_threads))
            if len(elements) < size:
                break  # the input ended
        if not self.inflight:
            if not m.owed:
                raise StopIteration
            out = next(b)  # what the window could not take, per element
            self.produced = b.produced
            return out
        lane = self.inflight[0]
        done, out = attempt(lane.result)
        if not done:
            # An element the op refuses: the per-element run raises its error, naming the element. The
            # window's inputs are owed already: the per-element stages compute them.
            exc = out
            logger.debug("%r: a batch computed per element (%s)", self.node, exc)
            self._drop_window()
            if not isinstance(exc, NotThisBatch):
                self._differs(traced, _failed_op(exc), f"it raised {type(exc).__name__}: {exc}")
            out = next(b)
            self.produced = b.produced
            return out
        self.inflight.popleft()
        for _ in lane.entries:
            m.owed.popleft()
        m.produced += len(lane.entries)
        b.produced += 1
        self.produced = b.produced
        return out

    def _take_inputs(self) -> tuple[list, BaseException | None]:
        """Up to a batch of the map's next inputs (fewer at the end of its input), positions counted as
        they are taken, and the error that stopped the reading early (None if none did)."""
        elements: list = []
        done, error = attempt_all(self._take_into, elements)  # the caller owes the inputs, then raises it
        return elements, None if done or isinstance(error, StopIteration) else error

    def _take_into(self, elements: list) -> None:
        m = self.map_iterator
        size = self.node.batch_size
        while len(elements) < size:
            chunk = m.parent.next_chunk(size - len(elements))
            m.position += len(chunk)
            elements.extend(chunk)

    def _owe(self, elements: list, error: BaseException | None = None) -> None:
        """``elements`` (the inputs taken last, not computed) and then ``error`` (raised taking more) owed
        to the map, behind anything owed already (a window's batches): the per-element stages compute
        them, with the values and errors of a run one element at a time."""
        m = self.map_iterator
        m.owed.extend(owed_inputs(elements, m.position - len(elements)))
        if error is not None:
            if not m.owed:
                raise error
            m.owed.append((m.position, ERROR, (error, NO_INPUT)))  # after the inputs taken before it

    def _drop_window(self) -> None:
        for lane in self.inflight:
            lane.thread.join()  # its batch's threads finish before the window's inputs are reused
        self.inflight.clear()

    def _differs(self, traced: Traced, op: str, message: str) -> None:
        """The vectorised call differs from the per-element one: per element from now on, one warning."""
        if traced.failed is None:
            traced.failed = f"op {op} ({message})"
            warnings.warn(
                f"{self.node.parents[0]!r} runs per element: its vectorised call differs from the "
                f"per-element one at op {op} ({message}); "
                "Options().experimental_optimization.map_vectorization = False silences this",
                VectorizationWarning,
                stacklevel=user_stacklevel(),
            )
        self._go_per_element()

    def _reference(self, elements: list, keys: list | None, first_index: int) -> Any:
        fn = self.map_iterator.fn
        outs = []
        for i, element in enumerate(elements):
            value = apply(fn, element, keys[i] if keys is not None else None)
            outs.append(tf_result(value) if type(value) in CONVERTED else value)
        return stack(outs, first_index=first_index)

    def _current(self) -> Any:
        return self.delegate if self.delegate is not None else self.batch_iterator

    def seek_forward(self, n: int) -> int | None:
        current = self._current()
        skipped = current.seek_forward(n)  # the window's inputs are owed: skipped first
        self.produced = current.produced
        return skipped

    def reset(self) -> None:
        self._drop_window()
        self._current().reset()

    def state_owner(self) -> NodeIterator:
        return self._current()

    def close(self) -> None:
        self._drop_window()  # no batch thread outlives the iterator's close
        super().close()
