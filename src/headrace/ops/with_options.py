"""``Dataset.with_options``: attach pipeline-wide :class:`Options`."""

from __future__ import annotations

from typing import Any

from ..core.errors import InvalidArgumentError
from ..core.node import Context, Fields, Node, NodeIterator
from ..core.options import Options


class OptionsNode(Node):
    """Carries options; the pipeline merges every OptionsNode, the one nearest the output winning."""

    op = "with_options"
    fields = Fields("options")

    def __init__(self, parent: Node, options: Options):
        if not isinstance(options, Options):
            raise InvalidArgumentError(f"with_options needs an Options object, got {type(options).__name__}")
        super().__init__(parent)
        self.options = options

    def describe_args(self) -> str:
        return repr(self.options)

    def compute_element_spec(self) -> Any:
        return self.parents[0].element_spec

    def cardinality(self) -> int:
        return self.parents[0].cardinality()

    def iterator(self, ctx: Context) -> NodeIterator:
        # Options are read when the pipeline is built (see effective_options); no stage is needed.
        return self.parents[0].iterator(ctx)


def effective_options(root: Node) -> Options:
    """Merge the options of every OptionsNode above ``root``; nearer the output wins."""
    found = [node.options for node in root.walk() if isinstance(node, OptionsNode)]
    merged = Options()
    for options in reversed(found):
        merged = merged.merge(options)
    return merged
