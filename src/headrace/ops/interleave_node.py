"""The ``interleave`` op's node: its arguments, and the choice of iterator (the serial cycle in
:mod:`.interleave`, the parallel one in :mod:`.interleave_parallel`). Kept apart from both so that
neither iterator module imports the other's chooser (no import cycle)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.args import boolean, integer, is_int
from ..core.closures import freeze
from ..core.errors import InvalidArgumentError, check
from ..core.naming import describe
from ..core.node import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Context,
    Fields,
    Node,
    NodeIterator,
)
from .interleave import InterleaveIterator, default_cycle_length


def _positive_int(value: Any) -> bool:
    return is_int(value, low=1)


class InterleaveNode(Node):
    """``interleave(map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
    deterministic=None)``.

    Opens ``cycle_length`` sub-datasets (``map_func`` of consecutive input elements) and takes
    ``block_length`` elements from each in turn. A sub-dataset that ends frees its slot, and the
    cycle moves on at once; the free slot takes the next input element when the cycle comes back to
    it. This is tf.data's order exactly. ``cycle_length=None`` (or ``AUTOTUNE``) means the number of
    CPUs this process may use, fixed when the node is built (it shows in the stage's name, so a
    checkpoint only restores on a pipeline with the same cycle); ``block_length=None`` means 1.

    ``num_parallel_calls`` and ``deterministic`` are validated and kept for the parallel runtime;
    the serial iterator yields the deterministic order.
    """

    op = "interleave"
    key_name = (
        "headrace.ops.interleave.InterleaveNode"  # where it was: caches and checkpoints keep their keys
    )
    fields = Fields(
        "map_func", "cycle_length", "block_length", settings=("num_parallel_calls", "deterministic")
    )
    calls_user_function = True

    def __init__(
        self,
        parent: Node,
        map_func: Callable,
        cycle_length: int | None = None,
        block_length: int | None = None,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ):
        cycle_length, block_length = integer(cycle_length), integer(block_length)
        num_parallel_calls, deterministic = integer(num_parallel_calls), boolean(deterministic)
        if not callable(map_func):
            raise InvalidArgumentError(
                f"map_func={map_func!r} is not callable: pass a function returning a Dataset"
            )
        check(
            cycle_length is None or cycle_length == AUTOTUNE or _positive_int(cycle_length),
            "cycle_length",
            cycle_length,
            "None, AUTOTUNE or a positive int",
        )
        check(
            block_length is None or _positive_int(block_length),
            "block_length",
            block_length,
            "None or a positive int",
        )
        check(
            num_parallel_calls is None or num_parallel_calls == AUTOTUNE or _positive_int(num_parallel_calls),
            "num_parallel_calls",
            num_parallel_calls,
            "None, a positive int, or AUTOTUNE",
        )
        check(deterministic in (None, True, False), "deterministic", deterministic, "None, True or False")
        defaulted = cycle_length in (None, AUTOTUNE)
        resolved_cycle = default_cycle_length(num_parallel_calls) if defaulted else cycle_length
        if num_parallel_calls not in (None, AUTOTUNE) and num_parallel_calls > resolved_cycle:
            raise InvalidArgumentError(
                f"num_parallel_calls={num_parallel_calls} is not allowed: it must be <= cycle_length "
                f"({resolved_cycle}); raise cycle_length or lower num_parallel_calls"
            )
        super().__init__(parent)
        self.map_func = freeze(map_func)
        self.cycle_length = resolved_cycle
        self.block_length = 1 if block_length is None else block_length
        self.num_parallel_calls = num_parallel_calls
        self.deterministic = deterministic
        self.name = name

    def describe_args(self) -> str:
        function = self.name or describe(self.map_func)
        return f"{function}, cycle_length={self.cycle_length}, block_length={self.block_length}"

    def cardinality(self) -> int:
        # tf.data: a parallel interleave (num_parallel_calls given) over an endless input is endless;
        # anything else is unknown (the sub-datasets' sizes are not known before they are opened).
        if self.num_parallel_calls is not None and self.parents[0].cardinality() == INFINITE_CARDINALITY:
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY

    def iterator(self, ctx: Context) -> NodeIterator:
        # The one place that chooses how the cycle is run.
        calls = self.cycle_length if self.num_parallel_calls == AUTOTUNE else self.num_parallel_calls
        if calls is None or calls <= 1 or ctx.probe:
            return InterleaveIterator(self, self.parents[0].iterator(ctx), ctx)
        from .interleave_parallel import ParallelInterleaveIterator  # noqa: PLC0415 (threads on demand)

        deterministic = ctx.options.deterministic if self.deterministic is None else self.deterministic
        return ParallelInterleaveIterator(
            self, self.parents[0].iterator(ctx), ctx, parallelism=calls, deterministic=deterministic
        )
