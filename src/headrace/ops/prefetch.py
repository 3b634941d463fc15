"""``Dataset.prefetch``: produce elements in a background thread while the consumer works."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.args import integer, is_int
from ..core.errors import check
from ..core.node import AUTOTUNE, Access, Context, Fields, Node, NodeIterator
from ..runtime.defaults import resolve_prefetch_buffer
from ..runtime.producer import BufferedIterator


class PrefetchNode(Node):
    """``prefetch(buffer_size)``: a background thread runs the input pipeline up to ``buffer_size``
    elements ahead (``AUTOTUNE``: ``runtime.defaults.AUTOTUNE_PREFETCH_BUFFER``; 0: no prefetch).

    A consumer step of T ms fed by a producer of P ms per element then takes max(T, P), not T + P.
    Checkpoints stay exact: the state is that of the last element handed out, never of elements
    produced ahead.
    """

    op = "prefetch"
    fields = Fields("buffer_size")
    never_raises = True

    def __init__(self, parent: Node, buffer_size: int, name: str | None = None):
        # tf.data: None means AUTOTUNE.
        buffer_size = AUTOTUNE if buffer_size is None else integer(buffer_size)
        check(
            buffer_size == AUTOTUNE or is_int(buffer_size, low=0),
            "buffer_size",
            buffer_size,
            "an int >= 0 or AUTOTUNE",
        )
        super().__init__(parent)
        self.buffer_size = buffer_size
        self.name = name

    def is_noop(self) -> bool:
        return self.buffer_size == 0

    def describe_args(self) -> str:
        return "AUTOTUNE" if self.buffer_size == AUTOTUNE else str(self.buffer_size)

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def cardinality(self) -> int:
        return self.parents[0].cardinality()

    # Prefetching changes no element, so global_shuffle and O(1) skip see through it (as tf.data).
    def random_access_length(self) -> int | None:
        return self.parents[0].random_access_length()

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        return self.parents[0].elements_at(indices, access)

    def iterator(self, ctx: Context) -> NodeIterator:
        parent = self.parents[0].iterator(ctx)
        capacity = resolve_prefetch_buffer(self.buffer_size)
        if capacity == 0 or ctx.probe:
            return parent  # nothing to run ahead: no thread, no stage
        return PrefetchIterator(self, parent, capacity)


class PrefetchIterator(BufferedIterator):
    """The background thread and bounded buffer of ``prefetch`` (see ``runtime.producer``)."""

    def tunable_knobs(self) -> dict[str, tuple[int, int]]:
        """``prefetch(AUTOTUNE)`` lets the autotuner size the buffer; a given size is left alone."""
        if self.node.buffer_size != AUTOTUNE:
            return {}
        return {"buffer_size": (self.capacity, 64)}

    def set_knob(self, name: str, value: int) -> None:
        self.resize(value)
