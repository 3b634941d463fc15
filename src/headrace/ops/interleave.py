"""``Dataset.interleave``: map elements to datasets and cycle through several of them at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.args import boolean, integer
from ..core.closures import freeze
from ..core.cpus import interleave_cycle_length
from ..core.errors import CheckpointError, InvalidArgumentError, check
from ..core.naming import describe
from ..core.node import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Context,
    Node,
    NodeIterator,
    open_user_dataset,
)
from ..core.state import encode_element


def default_cycle_length(num_parallel_calls: int | None = None) -> int:
    """tf.data's choice for ``cycle_length=None`` or ``AUTOTUNE``, which depends on
    ``num_parallel_calls`` (see ``core.cpus.interleave_cycle_length``), so the order is tf.data's."""
    return interleave_cycle_length(num_parallel_calls)


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


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


class InterleaveIterator(NodeIterator[InterleaveNode]):
    """tf.data's serial interleave: slots of open sub-iterators, visited round robin in blocks."""

    state_keys = ("parent", "position", "cycle_index", "block_index", "end_of_input", "slots")

    def __init__(self, node: InterleaveNode, parent: NodeIterator, ctx: Context):
        super().__init__(node, parent)
        self.parent = parent
        self.ctx = ctx
        self.position = 0  # inputs taken from the parent so far
        self.cycle_index = 0
        self.block_index = 0  # elements taken from the current slot in this block
        self.end_of_input = False
        # Per slot: None, or (input element, its position, the sub-iterator made from it).
        self.slots: list[tuple[Any, int, NodeIterator] | None] = [None] * node.cycle_length
        self.open_count = 0

    def _open(self, element: Any, position: int) -> NodeIterator:
        return open_user_dataset(self, self.node.map_func, element, position, self.ctx)

    def _advance_cycle(self) -> None:
        self.block_index = 0
        self.cycle_index = (self.cycle_index + 1) % self.node.cycle_length

    def _close_slot(self, index: int) -> None:
        slot = self.slots[index]
        if slot is not None:
            slot[2].close()
            self.slots[index] = None
            self.open_count -= 1

    def _current(self) -> NodeIterator | None:
        """The open sub-iterator of the current slot (opening one from the next input element if the
        slot is free), or None when every input is used up and every slot closed."""
        while not self.end_of_input or self.open_count > 0:
            slot = self.slots[self.cycle_index]
            if slot is not None:
                return slot[2]
            if self.end_of_input:
                self._advance_cycle()
                continue
            try:
                element = next(self.parent)
            except StopIteration:
                self.end_of_input = True
                continue
            self.position += 1
            sub = self._open(element, self.position - 1)
            self.slots[self.cycle_index] = (element, self.position - 1, sub)
            self.open_count += 1
        return None

    def _ended(self) -> None:
        # tf.data: a finished sub-dataset frees its slot and the cycle moves on at once.
        self._close_slot(self.cycle_index)
        self._advance_cycle()

    def _took(self, count: int) -> None:
        self.block_index += count
        if self.block_index == self.node.block_length:
            self._advance_cycle()
        self.produced += count

    def __next__(self):
        while True:
            slot = self.slots[self.cycle_index]
            sub = slot[2] if slot is not None else self._current()  # the common case skips a call
            if sub is None:
                raise StopIteration
            try:
                element = next(sub)
            except StopIteration:
                self._ended()
                continue
            self.block_index += 1
            if self.block_index == self.node.block_length:
                self._advance_cycle()
            self.produced += 1
            return element

    def next_chunk(self, n: int) -> list:
        while True:
            sub = self._current()
            if sub is None:
                raise StopIteration
            try:
                chunk = sub.next_chunk(min(n, self.node.block_length - self.block_index))
            except StopIteration:
                self._ended()
                continue
            self._took(len(chunk))
            return chunk

    def reset(self) -> None:
        for index in range(len(self.slots)):
            self._close_slot(index)
        self.parent.reset()
        self.position = 0
        self.cycle_index = 0
        self.block_index = 0
        self.end_of_input = False

    def close(self) -> None:
        for index in range(len(self.slots)):
            self._close_slot(index)
        super().close()

    def get_state(self) -> dict:
        return {
            "parent": self.parent.get_state(),
            "position": self.position,
            "cycle_index": self.cycle_index,
            "block_index": self.block_index,
            "end_of_input": self.end_of_input,
            "slots": [
                None
                if slot is None
                else {"input": encode_element(slot[0]), "position": slot[1], "state": slot[2].get_state()}
                for slot in self.slots
            ],
        }

    def set_state(self, state: dict) -> None:
        fields = self._check_state(state)
        node = self.node
        if isinstance(state["slots"], list) and len(state["slots"]) != node.cycle_length:
            raise CheckpointError(
                f"{self.name}: the checkpoint has {len(state['slots'])} cycle slots but this pipeline has "
                f"cycle_length={node.cycle_length}"
            )
        saved_slots = fields.list("slots", length=node.cycle_length)
        position = fields.int("position")
        cycle_index = fields.int("cycle_index", high=node.cycle_length - 1)
        block_index = fields.int("block_index", high=node.block_length - 1)
        end_of_input = fields.bool("end_of_input")
        slots = [
            None if saved is None else fields.record(saved, f"slots[{index}]", ("input", "position", "state"))
            for index, saved in enumerate(saved_slots)
        ]
        for slot in slots:
            if slot is not None:
                slot.int("position", high=position - 1)
                slot.dict("state")
        for index in range(len(self.slots)):
            self._close_slot(index)
        self.parent.set_state(fields.dict("parent"))
        self.position, self.cycle_index, self.block_index = position, cycle_index, block_index
        self.end_of_input = end_of_input
        for index, saved in enumerate(slots):
            if saved is None:
                continue
            # Sub-datasets are rebuilt by calling map_func again on the saved input element.
            element = saved.element("input")
            position = saved.int("position")
            sub = self._open(element, position)
            sub.set_state(saved.dict("state"))
            self.slots[index] = (element, position, sub)
            self.open_count += 1
