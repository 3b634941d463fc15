"""``Dataset.interleave``: map elements to datasets and cycle through several of them at once.

The serial cycle; the node (arguments, choice of iterator) is in :mod:`.interleave_node`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ..core.cpus import interleave_cycle_length
from ..core.errors import CheckpointError
from ..core.node import (
    Context,
    NodeIterator,
    open_user_dataset,
)
from ..core.state import OUTPUT, Child, Elements, StateFields, encode_element
from .support.elementwise import ElementwiseIterator

if TYPE_CHECKING:
    from .interleave_node import InterleaveNode


#: Key of a slot state that carries elements a reader thread read ahead and did not hand out
#: (the parallel interleave's slots); the serial cycle restores those too, so checkpoints move
#: between the two.
OWED = "headrace_read_ahead"


def slot_state(state: dict, owed: Any) -> dict:
    """A slot's saved state: its sub-iterator's ``state``, carrying the elements ``owed`` before it
    (read ahead and not handed out) when there are any; the serial and parallel cycles write it."""
    return {OWED: [encode_element(v) for v in owed], "state": state} if owed else state


def split_slot_state(state: Any, name: str) -> tuple[dict, list]:
    """``(sub-iterator state, elements owed before it)`` of a saved slot state (:func:`slot_state`)."""
    if not isinstance(state, dict):
        raise CheckpointError(f"{name}: a slot state must be a dict, got {type(state).__name__}")
    if OWED not in state:
        return state, []
    fields = StateFields(state, name, (OWED, "state"))
    return fields.dict("state"), fields.elements(OWED)


def default_cycle_length(num_parallel_calls: int | None = None) -> int:
    """tf.data's choice for ``cycle_length=None`` or ``AUTOTUNE``, which depends on
    ``num_parallel_calls`` (see ``core.cpus.interleave_cycle_length``), so the order is tf.data's."""
    return interleave_cycle_length(num_parallel_calls)


class InterleaveIterator(NodeIterator["InterleaveNode"]):
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

    def _open_saved(self, element: Any, position: int) -> NodeIterator:
        """Open a slot a checkpoint saved (its state is restored next): as any slot here."""
        return self._open(element, position)

    def _restored(self, sub: NodeIterator, state: dict) -> NodeIterator:
        """``sub`` set to a saved slot state; one a reader saved with elements read ahead yields
        those first."""
        inner, values = split_slot_state(state, sub.name)
        sub.set_state(inner)
        return OwedFirst(sub, values) if values else sub

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

    #: Whether whole rounds may be taken at once (an owner that knows its sub-iterators sets it): each
    #: sub-iterator says how many elements its next calls give for sure (``ready_elements()``: no
    #: error, no end, no wait), and while every slot is open with a block or more ready, ``next_chunk``
    #: takes as many whole rounds as it may in one call per slot. The order is the cycle's.
    whole_rounds = False

    #: Whether each call begins with ``_step`` (the parallel cycle's trial, or taking an element ready
    #: elsewhere): one check here instead of a second layer of calls per element.
    stepping = False
    #: Whether a stepping cycle hands out one element per call, read as ``__next__`` reads it (a
    #: non-deterministic cycle looks for one ready elsewhere before each).
    one_at_a_time = False

    def _step(self) -> tuple[bool, Any]:
        """``(True, element)`` to hand out instead of the cycle's next, else ``(False, None)``."""
        return False, None

    def __next__(self) -> Any:
        if self.stepping:
            ready, value = self._step()
            if ready:
                self.produced += 1
                return value
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
        if self.stepping:
            if self.one_at_a_time:
                return [self.__next__()]  # which takes its own step
            ready, value = self._step()
            if ready:
                self.produced += 1
                return [value]
        if self.whole_rounds:
            rounds = self._ready_rounds(n)
            if rounds:
                return self._take_rounds(rounds)
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

    def _ready_rounds(self, n: int) -> int:
        """How many whole rounds (a block from each slot) up to ``n`` elements can be taken now: every
        slot open with that many blocks ready, the cycle at a block's start; 0 sends the caller
        through the cycle a block at a time (opening, filling, ending or failing)."""
        block = self.node.block_length
        rounds = n // (len(self.slots) * block)
        if not rounds or self.block_index:
            return 0
        for slot in self.slots:
            ready = None if slot is None else getattr(slot[2], "ready_elements", None)
            if ready is None:
                return 0
            rounds = min(rounds, ready() // block)
            if not rounds:
                return 0
        return rounds

    def _take_rounds(self, rounds: int) -> list:
        """``rounds`` whole rounds from the current slot on: what a block at a time gives, in the same
        order, one call per slot; the cycle ends where it began."""
        slots, at, block = self.slots, self.cycle_index, self.node.block_length
        length = len(slots)
        chunks = [cast(tuple, slots[(at + i) % length])[2].next_chunk(rounds * block) for i in range(length)]
        if any(len(chunk) != rounds * block for chunk in chunks):  # a broken promise would drop elements
            raise RuntimeError(f"{self.name}: a slot gave fewer elements than it said were ready")
        if block == 1:
            out = [element for group in zip(*chunks) for element in group]
        else:
            out = [e for r in range(rounds) for chunk in chunks for e in chunk[r * block : (r + 1) * block]]
        self.produced += len(out)
        return out

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
            sub = self._restored(self._open_saved(element, position), saved.dict("state"))
            self.slots[index] = (element, position, sub)
            self.open_count += 1


class _OwedValues(Elements):
    """The owed outputs, saved as the list of elements a reader's slot state carries."""

    def save(self, stage: Any) -> list:
        return [encode_element(value) for _, _, value in stage.owed]

    def restore(self, stage: Any, value: Any) -> None:
        stage.owed.clear()
        stage.owed.extend((0, OUTPUT, element) for element in value)


class OwedFirst(ElementwiseIterator):
    """A restored slot whose reader had read elements ahead: those elements first, then its
    sub-iterator. They are the stage's ``owed`` outputs, served first by the element-wise chunk
    loop. Its state is declared (``state_fields``) in a reader's slot format (:func:`slot_state`
    with elements owed), which it keeps, with an empty list, once they are all handed out;
    :func:`split_slot_state` reads either form."""

    state_fields = (_OwedValues(OWED), Child("state", "parent"))

    def __init__(self, inner: NodeIterator, values: list):
        super().__init__(inner.node, inner)
        self.inner = inner
        self.owed.extend((0, OUTPUT, value) for value in values)

    def ready_elements(self) -> int:
        """The elements owed (served first), else what the sub-iterator has ready (whole rounds)."""
        if self.owed:
            return len(self.owed)
        ready = getattr(self.inner, "ready_elements", None)
        return 0 if ready is None else int(ready())

    @property
    def values(self) -> list:
        """The elements still owed before the sub-iterator's."""
        return [value for _, _, value in self.owed]
