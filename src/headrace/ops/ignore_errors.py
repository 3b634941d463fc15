"""``Dataset.ignore_errors``: drop the elements whose computation raised, keep going."""

from __future__ import annotations

import logging
from typing import Any

from ..core.counters import StageCounters
from ..core.errors import CheckpointError, WorkerError, check
from ..core.node import Context, Fields, Node, NodeIterator
from ..core.state import Child, Int
from .support.elementwise import ElementwiseIterator

logger = logging.getLogger("headrace.ignore_errors")

#: errors that say the pipeline itself is broken, not one element: retrying would not move on.
NOT_IGNORED = (CheckpointError, WorkerError)
#: with log_warning, every error up to this many is logged, then only the 2**k-th ones.
LOG_ALL_UP_TO = 10


def should_log(count: int) -> bool:
    """Rate limit for warnings: errors 1..10, then 16, 32, 64, ...

    >>> [n for n in range(1, 70) if should_log(n)]
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 32, 64]
    """
    return count <= LOG_ALL_UP_TO or count & (count - 1) == 0


class IgnoreErrorsNode(Node):
    """``ignore_errors(log_warning=False)``: an exception from the input skips that element.

    Stages that run user functions (map, filter, batch...) keep the rest of their work after an
    error, so exactly the failing elements disappear. Errors are counted (``errors_ignored`` in the
    stage's counters) and logged to the ``headrace.ignore_errors`` logger: at WARNING when
    ``log_warning`` (rate-limited: the first 10, then the 16th, 32nd, ...), else at DEBUG.
    ``CheckpointError`` and ``WorkerError`` are not element errors and still raise, as do
    ``KeyboardInterrupt`` and other non-``Exception`` errors.
    """

    op = "ignore_errors"
    fields = Fields("log_warning")

    def __init__(self, parent: Node, log_warning: bool = False, name: str | None = None):
        check(isinstance(log_warning, bool), "log_warning", log_warning, "True or False")
        super().__init__(parent)
        self.log_warning = log_warning
        self.name = name

    def describe_args(self) -> str:
        return "log_warning=True" if self.log_warning else ""

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def iterator(self, ctx: Context) -> IgnoreErrorsIterator:
        return IgnoreErrorsIterator(self, self.parents[0].iterator(ctx))


class IgnoreErrorsIterator(ElementwiseIterator[IgnoreErrorsNode]):
    state_fields = (Child("parent"), Int("errors_ignored"))

    def __init__(self, node: IgnoreErrorsNode, parent: NodeIterator):
        super().__init__(node, parent)
        self.errors_ignored = 0

    def input_failed(self, exc: Exception) -> bool:
        # Skipping failed elements is this stage's job; worker deaths and bad checkpoints are not
        # element errors.
        if isinstance(exc, NOT_IGNORED):
            return False
        self.errors_ignored += 1
        count = self.errors_ignored
        notes = " | ".join(getattr(exc, "__notes__", ()))
        detail = f"{type(exc).__name__}: {exc}" + (f" ({notes})" if notes else "")
        if self.node.log_warning:
            if should_log(count):
                logger.warning("%s: ignored error %d: %s", self.name, count, detail)
        else:
            logger.debug("%s: ignored error %d: %s", self.name, count, detail)
        return True

    def counters(self) -> StageCounters:
        return {**super().counters(), "errors_ignored": self.errors_ignored}
