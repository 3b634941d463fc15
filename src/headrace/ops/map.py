"""``Dataset.map``: apply a user function to every element."""

from __future__ import annotations

import builtins
import inspect
import itertools
from collections.abc import Callable
from typing import Any

from ..core.args import boolean, integer, is_seed
from ..core.closures import freeze
from ..core.errors import InvalidArgumentError, check
from ..core.naming import describe, fused_name
from ..core.node import AUTOTUNE, Context, Fields, Node, NodeIterator, derived, note_stage
from ..core.results import CONVERTED, tf_result, tf_results
from ..core.state import OUTPUT, Child, Int, Owed
from ..runtime.calls import apply
from ..runtime.defaults import resolve_parallelism
from .map_and_filter import fused_run, probe_run
from .support.elementwise import ElementwiseIterator, owed_inputs
from .support.shared_list import SharedList


class MapNode(Node):
    """``map(map_func, num_parallel_calls=None, deterministic=None, *, executor=None, seed=None)``;
    tuple elements are unpacked into positional arguments.

    ``num_parallel_calls`` (an int or ``AUTOTUNE``) runs the function on ``executor`` ("thread",
    "process", or None to measure and choose) in the background; ``deterministic`` (default:
    ``Options.deterministic``) keeps the serial order. With ``seed``, the function also receives
    ``rng=``, a numpy Generator derived from (seed, epoch, element position): the same outputs for
    any parallelism and executor. A function without an ``rng`` parameter is called without it, and
    ``headrace.random.*`` inside it (``tf.random.uniform`` ported) draws from that stream. See
    ``docs/parallel.md``.
    """

    op = "map"
    fields = Fields("map_func", "seed", settings=("num_parallel_calls", "deterministic", "executor"))
    calls_user_function = True
    chooses_executor = True

    def __init__(
        self,
        parent: Node,
        map_func: Callable,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
        *,
        executor: str | None = None,
        seed: int | None = None,
    ):
        num_parallel_calls, seed = integer(num_parallel_calls), integer(seed)
        deterministic = boolean(deterministic)
        if not callable(map_func):
            raise InvalidArgumentError(
                f"map_func={map_func!r} is not callable: pass a function of the element"
            )
        check(
            num_parallel_calls is None
            or num_parallel_calls == AUTOTUNE
            or (isinstance(num_parallel_calls, int) and num_parallel_calls > 0),
            "num_parallel_calls",
            num_parallel_calls,
            "None, a positive int, or AUTOTUNE",
        )
        check(deterministic in (None, True, False), "deterministic", deterministic, "None, True or False")
        check(executor in (None, "thread", "process"), "executor", executor, 'None, "thread" or "process"')
        check(
            is_seed(seed),
            "seed",
            seed,
            "None or an int in [0, 2**63)",
        )
        if executor == "process":
            _check_picklable(map_func)
        super().__init__(parent)
        self.map_func = freeze(map_func)
        if seed is not None and not takes_rng(map_func):
            self.map_func = WithoutRng(self.map_func)
        self.num_parallel_calls = num_parallel_calls
        self.deterministic = deterministic
        self.name = name
        self.executor = executor
        self.seed = seed

    def describe_args(self) -> str:
        fn = self.map_func.fn if isinstance(self.map_func, WithoutRng) else self.map_func
        function = self.name or describe(fn)
        return function if self.seed is None else f"{function}, seed={self.seed}"

    def cardinality(self) -> int:
        return self.parents[0].cardinality()

    def _serial_unseeded(self) -> bool:
        return self.num_parallel_calls is None and self.executor is None and self.seed is None

    def fusable_step(self) -> tuple[bool, Callable, str] | None:
        if not self._serial_unseeded():
            return None
        cache = derived(self)  # asked once per stepping stone of a deep chain: describe() once
        if "fusable_step" not in cache:
            cache["fusable_step"] = (False, self.map_func, f"map({self.describe_args()})")
        return cache["fusable_step"]

    def fused_with(self, parent: Node) -> Node | None:
        # Two serial maps as one: one call of overhead per element. Parallel or seeded maps keep
        # their own stage (their workers and per-element generators are per stage). A long run of
        # maps and filters fuses too (fused_run).
        run = fused_run(self, parent)
        if run is not None:
            return run
        if not (isinstance(parent, MapNode) and self._serial_unseeded() and parent._serial_unseeded()):
            return None
        name = fused_name([*parent.describe_args().split(" -> "), self.describe_args()])
        return MapNode(parent.parents[0], FusedFunction(parent.map_func, self.map_func), name=name)

    def compute_element_spec(self) -> Any:
        # A run of serial maps and filters is probed as one stage: probing it stage by stage would
        # recurse once per stage (10,000 chained maps).
        run = probe_run(self) if self._serial_unseeded() else None
        return super().compute_element_spec() if run is None else run.element_spec

    def batch_safe(self) -> bool:
        return self.seed is None and is_batch_safe(self.map_func)

    def iterator(self, ctx: Context) -> NodeIterator:
        # The one place that picks the serial or the parallel iterator.
        parent = self.parents[0].iterator(ctx)
        iteration = ctx.iteration_of(self) if self.seed is not None else 0
        workers = resolve_parallelism(self.num_parallel_calls, self.executor)
        if workers is None or ctx.probe:  # probing for element_spec needs no workers
            return MapIterator(self, parent, iteration)
        return self.parallel_iterator(parent, workers, ctx, iteration)

    def parallel_iterator(
        self, parent: NodeIterator, workers: int, ctx: Context, iteration: int
    ) -> NodeIterator:
        """The map on ``workers`` threads or processes over ``parent`` (also where a vectorised map
        that falls back per element goes on: it calls ``start_at`` on the result)."""
        from .map_parallel import ParallelMapIterator  # noqa: PLC0415 (threads, processes: on demand)

        deterministic = ctx.options.deterministic if self.deterministic is None else self.deterministic
        return ParallelMapIterator(
            self,
            parent,
            workers=workers,
            deterministic=deterministic,
            executor=self.executor,
            iteration=iteration,
            run=ctx,
        )


_BATCH_SAFE = "__headrace_batch_safe__"


def batch_safe(fn: Callable) -> Callable:
    """Declare that ``fn`` gives the same result on a batch as on each element, stacked (it is
    vectorised), so ``map(fn).batch(n)`` may run as ``batch(n).map(fn)``: one call per batch.

    >>> import numpy as np, headrace as hr
    >>> @hr.batch_safe
    ... def scale(x):
    ...     return x * 2
    >>> ds = hr.Dataset.range(4).map(scale).batch(2)
    >>> [b.tolist() for b in ds]
    [[0, 2], [4, 6]]
    >>> print(ds.explain().splitlines()[-1])
    - map(scale at <doctest headrace.ops.map.batch_safe[1]>:1) moved after batch(2, drop_remainder=False): one call per batch (declared batch_safe)
    """
    setattr(fn, _BATCH_SAFE, True)
    return fn


def is_batch_safe(fn: Callable) -> bool:
    return bool(getattr(fn, _BATCH_SAFE, False))


class FusedFunction:
    """``f_n(...f_2(f_1(x)))`` with tf.data's unpacking of tuples at each step; picklable.

    Fusing a fused function keeps one flat :class:`SharedList`, so a chain of 10,000 maps calls its
    functions in a loop, and fusing it one map at a time costs linear time, not quadratic.
    """

    steps: SharedList

    def __init__(self, first: Callable, second: Callable):
        head = first.steps if isinstance(first, FusedFunction) else SharedList([first])
        self.steps = head.plus(second.functions if isinstance(second, FusedFunction) else (second,))

    @staticmethod
    def of(functions: list[Callable]) -> FusedFunction:
        """The functions applied in order, fused functions among them flattened."""
        fused = object.__new__(FusedFunction)
        fused.steps = SharedList(
            [g for fn in functions for g in (fn.functions if isinstance(fn, FusedFunction) else (fn,))]
        )
        return fused

    @property
    def functions(self) -> tuple[Callable, ...]:
        return self.steps.items

    def __call__(self, *args: Any) -> Any:
        first, *rest = self.steps.items
        value = first(*args)
        for fn in rest:
            if type(value) in CONVERTED:  # the unfused map would have yielded tf_result(value)
                value = tf_result(value)
            value = fn(*value) if type(value) is tuple else fn(value)
        return value

    def __repr__(self) -> str:
        return fused_name([describe(fn) for fn in self.functions])


def takes_rng(fn: Callable) -> bool:
    """Whether ``fn`` accepts ``rng=`` (a parameter of that name, or ``**kwargs``); True when unknown."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "rng" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


class WithoutRng:
    """A seeded map's function that takes no ``rng``: called without it (its ``headrace.random`` draws
    use the element's stream, set by ``runtime.calls.apply``); picklable."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def __call__(self, *args: Any, rng: Any = None) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return describe(self.fn)


def _check_picklable(map_func: Callable) -> None:
    from ..runtime.pickling import dumps  # noqa: PLC0415 (only process executors need it)

    try:
        dumps(map_func)
    except Exception as exc:
        raise InvalidArgumentError(
            f"map_func={describe(map_func)} cannot be pickled for executor='process' "
            f"({type(exc).__name__}: {exc}); capture only picklable values, or pass executor='thread'"
        ) from exc


class MapIterator(ElementwiseIterator[MapNode]):
    # "pending": the key the parallel map saves its owed elements under, so a state moves between
    # serial, thread and process maps.
    state_fields = (Child("parent"), Int("position"), Owed("pending"), Int("iteration"), Int("epoch"))

    def __init__(self, node: MapNode, parent: NodeIterator, iteration: int = 0):
        super().__init__(node, parent)
        self.fn = node.map_func
        self.seed = node.seed
        self.iteration = iteration  # which iter() of the dataset (seeded maps only)
        self.epoch = 0  # resets so far (repeat epochs)

    def _key(self, position: int) -> tuple[int, int, int, int]:
        return (self.seed, self.iteration, self.epoch, position)

    def __next__(self) -> Any:
        # The fast path of a map iterated element by element (the consumer's next(), prefetch).
        if self.owed:
            return self.next_chunk(1)[0]
        element = next(self.parent)
        position = self.position
        self.position = position + 1
        try:
            if self.seed is not None:
                out = apply(self.fn, element, self._key(position))
            elif type(element) is tuple:
                out = self.fn(*element)
            else:
                out = self.fn(element)
        except Exception as exc:
            note_stage(exc, self.name, position)
            raise
        self.produced += 1
        return tf_result(out) if type(out) in CONVERTED else out

    def compute(self, inputs: list, first: int) -> list:
        fn = self.fn
        out: list = []
        append = out.append
        try:
            if self.seed is not None:
                for offset, element in enumerate(inputs):
                    append(apply(fn, element, self._key(first + offset)))
            elif type(inputs[0]) is tuple:
                out.extend(itertools.starmap(fn, inputs))
            else:
                # The loop runs in C; a failure leaves the outputs before it in `out` (extend keeps them).
                out.extend(builtins.map(fn, inputs))
            if len(out) != len(inputs):  # map_func raised StopIteration, which ends extend() quietly
                raise StopIteration(f"map_func raised StopIteration on input element {first + len(out)}")
        except Exception as exc:
            # Nothing but the failing element is lost, none is computed twice.
            done = len(out)
            note_stage(exc, self.name, first + done)
            rest = owed_inputs(inputs, first, done + 1)
            return self.hold(tf_results(out), exc, first + done, inputs[done], rest)
        except KeyboardInterrupt:
            # Ctrl-C inside map_func: raised now; the outputs made are owed, and the interrupted input
            # and the rest are computed again on the next call (nothing taken is lost).
            done = len(out)
            made = [(first + i, OUTPUT, value) for i, value in enumerate(tf_results(out))]
            self.owed.extendleft(reversed(made + owed_inputs(inputs, first, done)))
            raise
        return tf_results(out)

    def restarted(self) -> None:
        self.epoch += 1
