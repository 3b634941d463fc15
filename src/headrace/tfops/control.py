"""TensorFlow's control flow and function wrappers, run eagerly: ``cond``, ``case``, ``switch_case``,
``while_loop``, ``map_fn``, ``function``, ``py_function``, ``numpy_function``, ``name_scope``, ``print``.

Functions run as Python (as in TensorFlow's eager mode): nothing is traced, so ``tf.function``'s
options are accepted and have no effect.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.spec import TensorSpec, as_dtype
from ..core.trace_hook import traceable
from . import nest
from ._tensor import STRING, DTypeError, EagerTensor, as_tensor, infer, is_tensor, out, python_as, tf_name
from .array import stack


def _predicate(pred: Any, op: str) -> bool:
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    array = as_tensor(pred) if is_tensor(pred) else infer(pred)
    if array.dtype != np.bool_:
        raise DTypeError(f"{op}: pred must be a bool tensor, got {tf_name(array.dtype)}")
    if array.ndim != 0:
        raise InvalidArgumentError(f"{op}: pred must be a scalar, got shape {list(array.shape)}")
    return bool(array)


@traceable("cond")
def cond(
    pred: Any, true_fn: Callable | None = None, false_fn: Callable | None = None, name: str | None = None
) -> Any:
    """``true_fn()`` when ``pred`` (a scalar bool) holds, else ``false_fn()``."""
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    # eager tf.cond takes any value with one element as its truth (an int, a [1] bool tensor ...)
    value = pred if isinstance(pred, (bool, np.bool_)) else np.asarray(pred)
    if not isinstance(value, (bool, np.bool_)) and value.size != 1:
        raise InvalidArgumentError(f"cond: pred must hold one value, got shape {list(value.shape)}")
    return true_fn() if bool(value) else false_fn()


def case(
    pred_fn_pairs: Any,
    default: Callable | None = None,
    exclusive: bool = False,
    strict: bool = False,
    name: str = "case",
) -> Any:
    """The function of the first true predicate; ``default`` (or the last pair's function) otherwise;
    with ``exclusive``, two true predicates are an error."""
    if isinstance(pred_fn_pairs, dict):
        pairs = list(pred_fn_pairs.items())
    else:
        pairs = list(pred_fn_pairs)
    if not pairs:
        if default is None:
            raise ValueError("pred_fn_pairs must not be empty when default is None")
        return default()
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and callable(pair[1])):
            raise TypeError(
                f"Each entry in pred_fn_pairs must be a 2-tuple of a predicate and a callable, got {pair!r}"
            )
    truths = [_predicate(pred, "case") for pred, _ in pairs]
    if exclusive and sum(truths) > 1:
        raise InvalidArgumentError(
            f"case: more than one condition evaluated as True but exclusive=True: {truths}"
        )
    for truth, (_, fn) in zip(truths, pairs):
        if truth:
            return fn()
    return default() if default is not None else pairs[-1][1]()


def switch_case(
    branch_index: Any, branch_fns: Any, default: Callable | None = None, name: str = "switch_case"
) -> Any:
    """``branch_fns[branch_index]()``; an index out of range runs ``default`` (or the last branch)."""
    index = as_tensor(branch_index) if is_tensor(branch_index) else infer(branch_index)
    if index.dtype != np.int32 and index.dtype != np.int64:
        raise DTypeError(f"branch_index must be an int32 scalar, got {tf_name(index.dtype)}")
    fns = dict(branch_fns) if isinstance(branch_fns, dict) else dict(enumerate(branch_fns))
    chosen = fns.get(int(index))
    if chosen is None:
        chosen = default if default is not None else fns[builtins.max(fns)]
    return chosen()


def while_loop(
    cond: Callable,
    body: Callable,
    loop_vars: Any,
    shape_invariants: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    maximum_iterations: Any = None,
    name: str | None = None,
) -> Any:
    """Run ``body`` while ``cond`` holds; the loop variables keep their structure (a list or tuple is
    passed as positional arguments)."""
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    packed = isinstance(loop_vars, (list, tuple)) and not hasattr(loop_vars, "_fields")
    if packed and not loop_vars:
        raise ValueError("'loop_vars' must be provided.")
    limit = None if maximum_iterations is None else int(np.asarray(maximum_iterations))
    values = loop_vars
    steps = 0
    while (limit is None or steps < limit) and _predicate(
        cond(*values) if packed else cond(values), "while_loop"
    ):
        result = body(*values) if packed else body(values)
        if packed and len(values) == 1 and not isinstance(result, (list, tuple)):
            result = [result]
        try:
            nest.assert_same_structure(values, result, check_types=False)
        except (ValueError, TypeError) as exc:
            raise ValueError(
                f"while_loop: body returned {result!r}, whose structure differs from loop_vars: {exc}"
            ) from None
        values = type(loop_vars)(result) if packed else result
        steps += 1
    return values


def _signature_dtype(signature: Any) -> Any:
    if isinstance(signature, TensorSpec):
        return signature.dtype
    return as_dtype(signature)


def map_fn(
    fn: Callable,
    elems: Any,
    dtype: Any = None,
    parallel_iterations: Any = None,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    name: str | None = None,
    fn_output_signature: Any = None,
) -> Any:
    """``fn`` on each slice of ``elems`` along the first dimension (a structure of tensors is sliced
    together), the results stacked; ``fn_output_signature`` (or ``dtype``) gives their dtypes."""
    if not callable(fn):
        raise TypeError(f"fn={fn!r} is not callable.")
    leaves = [as_tensor(leaf) if is_tensor(leaf) else infer(leaf) for leaf in nest.flatten(elems)]
    if not leaves:
        raise ValueError("elems must be a Tensor or (possibly nested) sequence of Tensors. Got []")
    for leaf in leaves:
        if leaf.ndim == 0:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    n = leaves[0].shape[0]
    if any(leaf.shape[0] != n for leaf in leaves):
        raise InvalidArgumentError(
            f"map_fn: all elems must have the same first dimension, got {[leaf.shape[0] for leaf in leaves]}"
        )
    signature = fn_output_signature if fn_output_signature is not None else dtype
    results = [fn(nest.pack_sequence_as(elems, [leaf[i] for leaf in leaves])) for i in builtins.range(n)]
    if signature is None:
        template: Any = elems if not results else results[0]
        specs = None
    else:
        template = signature
        specs = nest.flatten(signature)
    if not results:
        out_leaves = []
        for index in builtins.range(len(nest.flatten(template))):
            if specs is not None:
                spec = specs[index]
                shape = (
                    ()
                    if not isinstance(spec, TensorSpec) or spec.shape is None
                    else tuple(d or 0 for d in spec.shape)
                )
                out_leaves.append(np.zeros((0, *shape), dtype=_signature_dtype(spec)))
            else:
                out_leaves.append(np.zeros((0, *leaves[index].shape[1:]), dtype=leaves[index].dtype))
        return nest.pack_sequence_as(template, out_leaves)
    flat_results = [nest.flatten(r) for r in results]
    width = len(flat_results[0])
    if specs is not None and len(specs) != width:
        raise ValueError(
            f"map_fn: fn returned {width} tensors but fn_output_signature describes {len(specs)}"
        )
    columns = []
    for index in builtins.range(width):
        column = []
        for row in flat_results:
            value = row[index]
            if specs is not None:
                target = _signature_dtype(specs[index])
                array = as_tensor(value) if is_tensor(value) else python_as(value, target)
                if array.dtype != target:
                    raise InvalidArgumentError(
                        f"map_fn: fn returned a {tf_name(array.dtype)} tensor where fn_output_signature says "
                        f"{tf_name(target)}"
                    )
                column.append(array)
            else:
                column.append(value)
        columns.append(stack(column))
    return nest.pack_sequence_as(results[0] if signature is None else signature, columns)


def vectorized_map(fn: Callable, elems: Any, fallback_to_while_loop: bool = True, warn: bool = True) -> Any:
    return map_fn(fn, elems)


def function(
    func: Callable | None = None,
    input_signature: Any = None,
    autograph: bool = True,
    jit_compile: Any = None,
    reduce_retracing: bool = False,
    experimental_implements: Any = None,
    experimental_autograph_options: Any = None,
    experimental_attributes: Any = None,
    experimental_relax_shapes: Any = None,
    experimental_compile: Any = None,
    experimental_follow_type_hints: Any = None,
) -> Any:
    """tf.function: the function itself (nothing is traced); works as ``@function`` and ``@function(...)``."""
    if func is None:
        return functools.partial(
            function,
            input_signature=input_signature,
            autograph=autograph,
            jit_compile=jit_compile,
            reduce_retracing=reduce_retracing,
        )
    if not callable(func):
        raise TypeError(f"function: {func!r} is not callable")
    return func


def _eager(value: Any) -> Any:
    if value is None:
        return None
    array = as_tensor(value) if is_tensor(value) else infer(value)
    return np.asarray(array).view(EagerTensor)


def _compatible(array: np.ndarray, target: np.dtype) -> bool:
    source, kind = array.dtype.kind, target.kind
    if target == STRING:
        return array.dtype == STRING
    return (
        (kind in "iu" and source in "iu")
        or (kind == "f" and source in "iuf")
        or (kind == "c" and source in "iufc")
        or (kind == "b" and source == "b")
    )


def _outputs(values: Any, tout: Any, op: str, strict: bool) -> Any:
    if tout is None:
        return None
    single = not isinstance(tout, (list, tuple))
    types = [tout] if single else list(tout)
    if single:
        items = [values]
    elif values is None:  # TensorFlow: a function returning None has no outputs
        items = []
    else:
        items = list(values) if isinstance(values, (list, tuple)) else [values]
    if len(items) != len(types):
        raise InvalidArgumentError(
            f"{op}: the function returned {len(items)} values but Tout lists {len(types)} dtypes"
        )
    converted = []
    for index, (value, dtype) in enumerate(zip(items, types)):
        target = as_dtype(dtype)
        if isinstance(value, EagerTensor):
            array = np.asarray(value.view(np.ndarray))
            if array.dtype != target:
                raise InvalidArgumentError(
                    f"{op}: {index}-th value returned is {tf_name(array.dtype)}, but expects {tf_name(target)}"
                )
        elif strict or is_tensor(value):
            array = np.asarray(value)
            if array.dtype.kind in "US":
                array = as_tensor(array)
            if array.dtype != target and (strict or not _compatible(array, target)):
                raise InvalidArgumentError(
                    f"{op}: {index}-th value returned is {tf_name(array.dtype)}, but expects {tf_name(target)}"
                )
            array = array.astype(target)
        else:
            array = python_as(value, target)
        converted.append(out(array))
    return converted[0] if single else converted


def py_function(
    func: Callable | None = None,
    inp: Any = None,
    Tout: Any = None,  # noqa: N803 (tf's name)
    name: str | None = None,
) -> Any:
    """``func(*inp)`` with tensors that have ``.numpy()``; results converted to ``Tout`` (one dtype: one
    result; a list: a list, where a function returning None gives ``[]`` for an empty list). Without
    ``func``, a decorator, as TensorFlow's: ``@tf.py_function(Tout=...)`` makes ``f(*args)`` call
    ``py_function(f, args, Tout)``."""
    if func is None:

        def decorator(fn: Callable) -> Callable:
            @functools.wraps(fn)
            def wrapper(*args: Any) -> Any:
                return py_function(fn, list(args), Tout, name)

            return wrapper

        return decorator
    if not callable(func):
        raise TypeError(f"func={func!r} is not callable")
    args = [_eager(v) for v in (inp or [])]
    return _outputs(func(*args), Tout, "py_function", strict=False)


eager_py_func = py_function


def numpy_function(
    func: Callable, inp: Any, Tout: Any, stateful: bool = True, name: str | None = None
) -> Any:  # noqa: N803
    """``func(*inp)`` on numpy values; each result must already have its ``Tout`` dtype (a Python
    float is float64, as numpy makes it)."""
    if not callable(func):
        raise TypeError(f"func={func!r} is not callable")
    args = [out(as_tensor(v) if is_tensor(v) else infer(v)) for v in inp]
    return _outputs(func(*args), Tout, "numpy_function", strict=True)


class name_scope(contextlib.AbstractContextManager):  # noqa: N801 (tf's name)
    """tf.name_scope: names nothing here (there is no graph); ``with`` gives the scope's name."""

    def __init__(self, name: str, *args: Any, **kwargs: Any):
        if not isinstance(name, str) and name is not None:
            raise ValueError(f"name for name_scope must be a string, got {name!r}")
        self.name = name

    def __enter__(self) -> str:
        return f"{self.name}/" if self.name else ""

    def __exit__(self, *exc: Any) -> None:
        return None


@contextlib.contextmanager
def control_dependencies(control_inputs: Any) -> Iterator[None]:
    """Eager code runs in order already."""
    yield


@contextlib.contextmanager
def device(device_name: Any) -> Iterator[None]:
    """There is one device: the CPU running the pipeline."""
    yield


def executing_eagerly() -> bool:
    return True


def no_op(name: str | None = None) -> None:
    return None


def group(*inputs: Any, **kwargs: Any) -> None:
    return None


def stop_gradient(input: Any, name: str | None = None) -> Any:  # noqa: A002
    return input


def _format(value: Any, summarize: int) -> str:
    if isinstance(value, (str, bytes)):
        return value.decode(errors="replace") if isinstance(value, bytes) else value
    if not is_tensor(value):
        return str(value)
    array = np.asarray(value)
    if array.dtype == STRING:
        array = np.vectorize(
            lambda s: s.decode(errors="replace") if isinstance(s, bytes) else s, otypes=[object]
        )(array)
        return np.array2string(
            array,
            separator=" ",
            threshold=summarize * 2 if summarize > 0 else sys.maxsize,
            edgeitems=builtins.max(summarize, 1),
            formatter={"all": lambda s: f'"{s}"'},
        )
    if array.ndim == 0:
        return str(array[()]).lower() if array.dtype == np.bool_ else str(array[()])
    text = np.array2string(
        array,
        separator=" ",
        threshold=summarize * 2 if summarize > 0 else sys.maxsize,
        edgeitems=builtins.max(summarize, 1),
    )
    return text.replace("True", "1").replace("False", "0") if array.dtype == np.bool_ else text


def print(
    *inputs: Any,
    output_stream: Any = sys.stderr,
    summarize: int = 3,
    sep: str = " ",
    end: str = "\n",
    name: str | None = None,
) -> None:  # noqa: A001
    """tf.print: values as TensorFlow prints them (arrays summarised to ``summarize`` items per end)."""
    stream = output_stream
    if isinstance(stream, str):
        stream = sys.stdout if stream.endswith("stdout") else sys.stderr
    builtins.print(sep.join(_format(v, summarize) for v in inputs), end=end, file=stream)


def Assert(condition: Any, data: Any, summarize: Any = None, name: str | None = None) -> None:  # noqa: N802 (tf's name)
    """Raise InvalidArgumentError listing ``data`` when ``condition`` is false."""
    if not _predicate(condition, "Assert"):
        shown = ", ".join(_format(d, summarize or 3) for d in data)
        raise InvalidArgumentError(f"assertion failed: [{shown}]")


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """Code here already runs eagerly, outside any graph."""
    yield


def _slices(elems: Any, op: str) -> tuple[list, int]:
    leaves = [as_tensor(leaf) if is_tensor(leaf) else infer(leaf) for leaf in nest.flatten(elems)]
    if not leaves or any(leaf.ndim == 0 for leaf in leaves):
        raise ValueError(f"{op}: elems must be 1+ dimensional tensors")
    n = leaves[0].shape[0]
    if any(leaf.shape[0] != n for leaf in leaves):
        raise InvalidArgumentError(f"{op}: all elems must have the same first dimension")
    return [nest.pack_sequence_as(elems, [leaf[i] for leaf in leaves]) for i in builtins.range(n)], n


def _fold(fn: Callable, elems: Any, initializer: Any, reverse: bool, op: str) -> Any:
    items, n = _slices(elems, op)
    if reverse:
        items = items[::-1]
    if initializer is None:
        if not n:
            raise ValueError(f"{op}: elems must not be empty when there is no initializer")
        acc, items = items[0], items[1:]
    else:
        acc = initializer
    for item in items:
        acc = fn(acc, item)
    return acc


def foldl(
    fn: Callable,
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """``fn(fn(initializer, elems[0]), elems[1]) ...`` (the first slice starts it without an initializer)."""
    return _fold(fn, elems, initializer, False, "foldl")


def foldr(
    fn: Callable,
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """foldl from the last slice to the first."""
    return _fold(fn, elems, initializer, True, "foldr")


def scan(
    fn: Callable,
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    reverse: bool = False,
    name: str | None = None,
) -> Any:
    """Every intermediate accumulator of a fold, stacked (``reverse`` scans from the last slice; the
    results stay in the order of ``elems``)."""
    items, n = _slices(elems, "scan")
    order = items[::-1] if reverse else items
    if initializer is None:
        if not n:
            raise ValueError("scan: elems must not be empty when there is no initializer")
        acc, rest, results = order[0], order[1:], [order[0]]
    else:
        acc, rest, results = initializer, order, []
    for item in rest:
        acc = fn(acc, item)
        results.append(acc)
    if reverse:
        results = results[::-1]
    if not results:
        return nest.map_structure(lambda a: np.zeros((0, *np.shape(a)), np.asarray(a).dtype), initializer)
    flat = [nest.flatten(r) for r in results]
    columns = [stack([row[i] for row in flat]) for i in builtins.range(len(flat[0]))]
    return nest.pack_sequence_as(results[0], columns)
