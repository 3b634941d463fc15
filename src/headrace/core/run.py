"""Run-time memory, kept apart from the immutable nodes: per iteration (:class:`Run`) and per pipeline
(:class:`Session`).

A :class:`Run` is made by each ``iter()`` and handed down the iterator tree as it is built (every
``Node.iterator(run)``): the options, whether it only probes the first element, the executor choices
this iteration acts on, the process's runtime object (``core.process.PROCESS``), and, for a copy of
the pipeline in another process, the iteration it stands for
(:class:`Seeds`). Two iterations of one dataset, even at the same time, share no run.

What outlives one iteration has one home each:

- :class:`Session`: the executor each parallel stage chose, measured at the pipeline's first iteration
  and kept for the later ones (``runtime/choose.py``). One per pipeline, kept with its root node's
  derived values (``core.node.session_of``), so it goes away with the pipeline.
- :class:`SeedCounter`: how many times a random stage has been iterated, so each ``iter()`` reshuffles
  (tf.data's seed generator, a resource of the op: ``shuffled.take(3)`` twice gives two orders).
  Each random node gets one at construction and keeps it; copies made by plan rewrites share it.
  Nothing outside advances or replaces it: a copy of the pipeline that must iterate as the n-th
  iteration would passes ``Seeds(root, n)`` in its run instead.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import TYPE_CHECKING, Any

from .options import Options
from .process import PROCESS, ProcessRuntime

if TYPE_CHECKING:
    from .node import Node


class SeedCounter:
    """The iteration numbers a random stage draws, one per iteration: 0, 1, 2, ..."""

    __slots__ = ("_count", "__weakref__")

    def __init__(self) -> None:
        self._count = itertools.count()

    def __repr__(self) -> str:
        return "SeedCounter()"

    def draw(self) -> int:
        return next(self._count)  # atomic under the GIL: concurrent iter()s draw distinct numbers


class Seeds:
    """Iteration numbers counted from ``start`` for every stage of the pipeline under ``root``, in place
    of their own counters (which it leaves where they are): a pipeline copied into another process
    (a DataLoader worker, a ``parallelize`` worker) iterates as the ``start``-th iteration in one
    process would. Stages not under ``root`` (a dataset built inside a user function) draw from their
    own counters. Kept across iterations by whoever made it: the next iteration that passes the same
    ``Seeds`` draws ``start + 1``, as the counters would have moved.

    >>> import headrace as hr
    >>> node = hr.Dataset.range(3).shuffle(3, seed=1).node
    >>> seeds = Seeds(node, 5)
    >>> Run(seeds=seeds).iteration_of(node), Run(seeds=seeds).iteration_of(node), Run().iteration_of(node)
    (5, 6, 0)
    """

    __slots__ = ("_next", "_lock")

    def __init__(self, root: Node, start: int):
        self._next: dict[SeedCounter, int] = {node._seeds: int(start) for node in root.walk()}
        self._lock = threading.Lock()

    def draw(self, counter: SeedCounter) -> int | None:
        """The next number for ``counter``, or None when its stage is not under this pipeline."""
        with self._lock:
            number = self._next.get(counter)
            if number is not None:
                self._next[counter] = number + 1
            return number


class Session:
    """What one pipeline remembers across its iterations: the executor choice of each stage (any object;
    ``runtime/choose.Choice``). Weakly keyed by node: a stage built inside a user function, once per
    element, is forgotten with its node."""

    __slots__ = ("_choices", "_lock")

    def __init__(self) -> None:
        self._choices: weakref.WeakKeyDictionary[Node, Any] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Session({len(self._choices)} executor choices)"

    def choice(self, node: Node) -> Any | None:
        """The choice an earlier iteration made for ``node``, if any."""
        with self._lock:
            return self._choices.get(node)

    def remember(self, node: Node, choice: Any, *, revised: bool = False) -> None:
        """Keep ``choice`` for later iterations: the first one made, or, ``revised``, this one."""
        with self._lock:
            if revised:
                self._choices[node] = choice
            else:
                self._choices.setdefault(node, choice)


class Run:
    """One iteration of a pipeline: what its iterators need from around them.

    ``probe`` runs build iterators only to look at the first element (element_spec); they draw no
    iteration numbers, so probing never changes what a later real iteration yields.
    """

    __slots__ = ("options", "probe", "session", "seeds", "process", "_choices")

    def __init__(
        self,
        options: Options | None = None,
        probe: bool = False,
        *,
        session: Session | None = None,
        seeds: Seeds | None = None,
    ):
        self.options = options if options is not None else Options()
        self.probe = probe
        #: the pipeline's memory across iterations (a private one when none is given)
        self.session = session if session is not None else Session()
        #: iteration numbers for a copy of the pipeline (see :class:`Seeds`); None: the stages' own
        self.seeds = seeds
        #: what the process keeps across pipelines (the pool, executor verdicts, the recording): the
        #: ops reach it here; the hot paths of ``runtime/`` and the timing template by its name
        self.process: ProcessRuntime = PROCESS
        #: the executor choices this iteration acts on: the session's when the stage was built, or its
        #: own; another iteration revising its choice meanwhile does not change this one's
        self._choices: weakref.WeakKeyDictionary[Node, Any] = weakref.WeakKeyDictionary()

    def iteration_of(self, node: Node) -> int:
        """The how-many-th iteration of ``node`` this is (tf.data's seed generator)."""
        if self.probe:
            return 0
        if self.seeds is not None:
            number = self.seeds.draw(node._seeds)
            if number is not None:
                return number
        return node._seeds.draw()

    def choice(self, node: Node) -> Any | None:
        """The executor choice this iteration uses for ``node``: its own, else an earlier iteration's."""
        mine = self._choices.get(node)
        if mine is None:
            mine = self.session.choice(node)
            if mine is not None:
                self._choices[node] = mine
        return mine

    def remember(self, node: Node, choice: Any, *, revised: bool = False) -> None:
        """Use ``choice`` for ``node`` in this iteration and keep it for later ones (the first made, or,
        ``revised``, this one: see :meth:`Session.remember`)."""
        self._choices[node] = choice
        self.session.remember(node, choice, revised=revised)
