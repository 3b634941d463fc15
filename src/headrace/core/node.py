"""The node and iterator protocol every stage implements.

A :class:`Node` is an immutable description of one stage (an op and its arguments, with parent
nodes). Iterating builds a tree of :class:`NodeIterator` objects that hold all mutable state.

Iterator protocol, in order of importance:

- ``__next__()``: the next element, or ``StopIteration`` at the end of the epoch (and again after).
- ``next_chunk(n)``: a list of 1..n elements, ``StopIteration`` at the end. A chunk never pulls more
  from its parent than it returns, so a chunked pipeline holds no hidden buffers and its state stays
  exact; it only amortises Python's per-call cost over many elements (batch pulls chunks). An error
  after some elements of a chunk never loses them: they are returned and the error is raised by the
  next call. What a stage owes (outputs, inputs not computed yet, one held error) waits in one
  queue, ``owed``, served first (see :meth:`NodeIterator.hold`).
- ``reset()``: rewind to the start of the next epoch (``repeat`` uses it; shuffles reseed).
- ``get_state()`` / ``set_state(state)``: small JSON-serialisable dicts; restoring into a fresh
  iterator of the same pipeline continues exactly where the saved one stopped.
- ``close()``: release threads, processes, files. Idempotent.
- counters: ``produced`` (elements out). Stage time is measured by the base class (every
  ``__next__``/``next_chunk`` is wrapped by ``core.counters.timed``); ops never time themselves.
"""

from __future__ import annotations

import enum
import functools
import secrets
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from .counters import Probe, StageCounters, element_sizes, exclusive_ns, timed
from .counters import perf_ns as perf_ns  # the stage clock, re-exported: runtime/ imports it from here
from .errors import InvalidArgumentError, UserStopIteration, add_note, attempt, attempt_all, on_failure
from .naming import without_locations
from .run import Run, SeedCounter, Session
from .state import ERROR, NO_INPUT, OUTPUT, Field, StateFields, restore_fields, save_fields
from .trace_hook import VECTORIZERS

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
AUTOTUNE = -1


#: Attributes of a node that are not its arguments: its parents, the counter random stages draw each
#: iteration's number from (``core.run.SeedCounter``), and the cache of values derived from it (see
#: :func:`derived`). Each is set once; iterating never replaces any of them.
NOT_ARGUMENTS = frozenset({"parents", "_seeds", "_derived"})


class Role(enum.Enum):
    """What a node's argument is to its identity (see :class:`Fields`)."""

    #: decides what the stage yields: in cache fingerprints and in checkpoint keys
    IDENTITY = "identity"
    #: decides how the stage runs (parallelism, executor, order, its name; distribute's rank): in
    #: cache fingerprints, not in checkpoint keys, so a checkpoint moves between settings
    SETTING = "setting"
    #: how this process reaches the data (a store, credentials) or a seed drawn when the node was
    #: built: in neither key, so rotating a credential keeps caches and checkpoints
    RESOURCE = "resource"


class Fields:
    """The arguments a node class declares, each with its :class:`Role`; a subclass adds to its
    base's. Repr-independent identity, pickling, ``arguments()``, cache fingerprints and checkpoint
    keys read it, and a node that sets an attribute it does not declare fails at construction (an
    undeclared attribute would silently change those keys).

    >>> Fields("batch_size", settings=("num_parallel_calls",)).roles["num_parallel_calls"].value
    'setting'
    """

    __slots__ = ("roles",)

    def __init__(self, *identity: str, settings: tuple[str, ...] = (), resources: tuple[str, ...] = ()):
        self.roles: dict[str, Role] = {}
        for names, role in ((identity, Role.IDENTITY), (settings, Role.SETTING), (resources, Role.RESOURCE)):
            for name in names:
                if name in self.roles or name in NOT_ARGUMENTS:
                    raise TypeError(
                        f"Fields: {name!r} is declared twice or is reserved ({sorted(NOT_ARGUMENTS)})"
                    )
                self.roles[name] = role

    def __repr__(self) -> str:
        return f"Fields({', '.join(f'{name}={role.value}' for name, role in self.roles.items())})"

    def named(self, *roles: Role) -> frozenset[str]:
        return frozenset(name for name, role in self.roles.items() if role in roles)


def _checks_fields(init: Any) -> Any:
    """Wrap a node class's ``__init__``: once the outermost one returns, every attribute set must be
    declared in the class's :class:`Fields`."""

    @functools.wraps(init)
    def wrapper(self: Node, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if type(self).__init__ is wrapper:
            self.check_fields()

    return wrapper


def derived(node: Node) -> dict:
    """The cache of values derived from ``node`` (element spec, fingerprints, optimised plans).

    It is the one place for state computed after construction, so a node's arguments stay exactly
    what it was built with: the cache is never hashed into identities, pickled or copied by rewrites.
    (It lives in one reserved attribute rather than a global weak table, whose values, e.g. a plan
    holding the node, would keep their node alive forever.)
    """
    cache = node.__dict__.get("_derived")
    if cache is None:
        cache = node.__dict__["_derived"] = {}
    return cache


def known_specs(nodes: Iterable[Node]) -> list | None:
    """The nodes' element specs, or None when finding one fails: it can mean running user code (an
    empty or failing map), so a stage that checks its inputs' specs when built checks them when
    asked instead, and the error comes from there (any error: the user's code raised it)."""
    found, specs = attempt(_element_specs, nodes)
    return specs if found else None


def _element_specs(nodes: Iterable[Node]) -> list:
    return [node.element_spec for node in nodes]


def session_of(root: Node) -> Session:
    """The memory of the pipeline ending at ``root`` across its iterations (``core.run.Session``):
    kept with its derived values, so it goes away with the pipeline."""
    cache = derived(root)
    session = cache.get("session")
    if session is None:
        session = cache.setdefault("session", Session())
    return session


#: Pipelines may be 10,000 stages deep (a loop of ``concatenate``): whatever walks them is iterative,
#: and what each op computes from its parents' results (cardinality, element_spec, iterators) is
#: computed bottom up in steps of this many stages, so no call recurses deeper than one step.
STEP = 64


def post_order(root: Node) -> list[Node]:
    """``root`` and every ancestor, each once, parents before their children (iteratively)."""
    out: list[Node] = []
    done: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in done:
            continue
        if expanded:
            done.add(id(node))
            out.append(node)
        else:
            stack.append((node, True))
            stack.extend((p, False) for p in reversed(node.parents) if id(p) not in done)
    return out


def height(node: Node) -> int:
    """The longest path from ``node`` to a source (0 for a source); kept on the node."""
    cached = derived(node).get("height")
    if cached is not None:
        return cached
    for n in post_order(node):
        cache = derived(n)
        if "height" not in cache:
            cache["height"] = 1 + max((derived(p)["height"] for p in n.parents), default=-1)
    return derived(node)["height"]


def tree_lines(root: Node) -> list[str]:
    """The pipeline as text, one stage per line indented by its distance from ``root``, inputs first
    (``describe`` and ``explain``); iterative, so any depth works.

    >>> import headrace as hr
    >>> tree_lines(hr.Dataset.range(2).map(abs).node)
    ['  range(0, 2, 1)', 'map(abs)']
    """
    lines: list[str] = []
    stack: list[tuple[Node, int, bool]] = [(root, 0, False)]
    while stack:
        node, depth, expanded = stack.pop()
        if expanded:
            # Past 40 levels the depth is written as a number: 10,000 levels of spaces would be 100 MB.
            indent = "  " * depth if depth <= 40 else "  " * 40 + f"[depth {depth}] "
            lines.append(indent + repr(node))
        else:
            stack.append((node, depth, True))
            stack.extend((p, depth + 1, False) for p in reversed(node.parents))
    return lines


def stepping_stones(node: Node, building: bool = False) -> list[Node]:
    """The ancestors of ``node`` whose height is a multiple of :data:`STEP`, lowest first: computing
    a recursive value at each of them in turn bounds the recursion to one step. ``building``
    iterators, a node that builds a chain of its kind as one stage (``builds_flat``: concatenate) is
    none: an inner node of a chain gets no iterator, and a chain's last node is reached from the
    stone above it."""
    stones = [
        n
        for n in post_order(node)
        if n is not node
        and height(n)
        and height(n) % STEP == 0
        and not (building and getattr(n, "builds_flat", False))
    ]
    stones.sort(key=height)
    return stones


def _warm(stones: list[Node], compute: Callable[[Node], Any]) -> None:
    """``compute`` each stepping stone in turn, lowest first, so a deep pipeline's value is computed
    one step at a time. A stone's error is dropped here: the real call raises it again where it
    matters (a user function's error, e.g., can be anything)."""
    for stone in stones:
        attempt(compute, stone)


#: per thread: the values being computed bottom up, by method (see :func:`_bottom_up`)
_scope = threading.local()


def _bottom_up(method: Any) -> Any:
    """Wrap a node method computed from its parents' (``cardinality``): on a deep pipeline, compute
    it at the stepping stones first and remember every node's result until the outer call returns."""
    if getattr(method, "_headrace_bottom_up", False):
        return method
    name = method.__name__

    @functools.wraps(method)
    def wrapper(self: Node) -> Any:
        memo = getattr(_scope, name, None)
        if memo is not None:
            key = (id(self), wrapper)
            if key not in memo:
                memo[key] = method(self)
            return memo[key]
        if height(self) < STEP:
            return method(self)
        memo = {}
        setattr(_scope, name, memo)
        try:
            _warm(stepping_stones(self), lambda stone: getattr(stone, name)())
            return method(self)
        finally:
            setattr(_scope, name, None)

    wrapper._headrace_bottom_up = True  # type: ignore[attr-defined]
    return wrapper


def _built_bottom_up(method: Any) -> Any:
    """Wrap ``Node.iterator``: building a deep pipeline's iterators recurses once per stage (each
    op builds its parent's first), so the stepping stones' iterators are built first, lowest first,
    and handed to the stage that asks for them. One no stage asked for (a stage that reads its
    input lazily) is closed when the outer call returns."""
    if getattr(method, "_headrace_bottom_up", False):
        return method

    @functools.wraps(method)
    def wrapper(self: Node, ctx: Context) -> NodeIterator:
        built = getattr(_scope, "iterators", None)
        if built is not None:  # inside an outer build: take a stone's iterator built for it
            ready = built.get((id(self), id(ctx)))
            return ready.pop() if ready else method(self, ctx)
        if height(self) < STEP:
            return method(self, ctx)
        built = _scope.iterators = {}
        try:
            for stone in stepping_stones(self, building=True):  # each one takes the one below it
                built[(id(stone), id(ctx))] = [stone.iterator(ctx)]
            return method(self, ctx)
        finally:
            _scope.iterators = None
            for unused in built.values():
                for iterator in unused:
                    iterator.close()

    wrapper._headrace_bottom_up = True  # type: ignore[attr-defined]
    return wrapper


#: The per-iteration object every ``Node.iterator`` receives (``core.run.Run``), under the name the
#: ops know it by.
Context = Run


class Access:
    """Where random reads happen: the options, and the iteration/epoch that seeded stages derive
    their per-element randomness from (the same numbers a sequential iterator would use)."""

    __slots__ = ("ctx", "iteration", "epoch")

    def __init__(self, ctx: Context, iteration: int = 0, epoch: int = 0):
        self.ctx, self.iteration, self.epoch = ctx, iteration, epoch


class Node:
    """Immutable description of a stage. Subclasses set ``op`` and implement ``iterator``."""

    op: ClassVar[str] = "node"
    #: Traits the profiler's advice reads (instead of lists of op names): the stage runs a function
    #: the user passed; it puts elements in a random order; it reads data from outside the pipeline.
    calls_user_function: ClassVar[bool] = False
    reorders: ClassVar[bool] = False
    reads_input: ClassVar[bool] = False
    #: the stage runs its user function on threads or processes and, given no ``executor=``, picks
    #: one by measuring (``runtime/choose.py``); ``explain()`` says which and why.
    chooses_executor: ClassVar[bool] = False
    #: the stage raises no per-element error of its own (no user function, nothing read from outside,
    #: no data-dependent check): zip pulls whole chunks from inputs made only of such stages, since no
    #: row of a chunk can fail there (see ops/zip.py).
    never_raises: ClassVar[bool] = False
    #: random stages draw a fresh seed per iteration from this counter (see ``Run.iteration_of``);
    #: set at construction, never replaced (a copy of the pipeline elsewhere passes ``run.Seeds``)
    _seeds: SeedCounter
    #: the arguments a node class sets, each with its role: a subclass declares its own (see
    #: :class:`Fields`); ``name`` is an execution setting of every stage that takes one
    fields: ClassVar[Fields] = Fields(settings=("name",))
    #: the class's name in cache fingerprints and checkpoint keys when it is not ``module.qualname``
    #: (a class that moved keeps the keys made before)
    key_name: ClassVar[str] = ""
    #: every argument's role, the base classes' declarations included (made by ``__init_subclass__``)
    _roles: ClassVar[dict[str, Role]] = {"name": Role.SETTING}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        roles: dict[str, Role] = {}
        for base in reversed(cls.__mro__[1:]):
            roles.update(base.__dict__.get("_roles", {}))
        own = cls.__dict__.get("fields")
        if own is not None:
            for name, role in own.roles.items():
                if roles.get(name, role) is not role:
                    raise TypeError(f"{cls.__qualname__}: {name!r} is a {roles[name].value} of a base class")
                roles[name] = role
        cls._roles = roles
        if "__init__" in cls.__dict__:
            cls.__init__ = _checks_fields(cls.__dict__["__init__"])  # type: ignore[method-assign]
        # Deep pipelines (see STEP): each op computes these from its parents' results recursively.
        for method in ("cardinality", "random_access_length"):
            if method in cls.__dict__:
                setattr(cls, method, _bottom_up(cls.__dict__[method]))
        if "iterator" in cls.__dict__:
            cls.iterator = _built_bottom_up(cls.__dict__["iterator"])  # type: ignore[method-assign]

    def __init__(self, *parents: Node):
        self.parents = parents
        self._seeds = SeedCounter()

    # --- what a subclass provides -------------------------------------------------------------
    def iterator(self, ctx: Context) -> NodeIterator:
        raise NotImplementedError

    def describe_args(self) -> str:
        """Arguments shown in the stage's name, e.g. ``256, drop_remainder=True``."""
        return ""

    def compute_element_spec(self) -> Any:
        """Spec structure of the elements. Default: look at the first element (user functions
        cannot be traced without running them)."""
        from .spec import spec_of  # noqa: PLC0415  (kept local: only needed on this slow path)

        it = self.iterator(Context(probe=True))
        try:
            first = next(it)
        except StopIteration:
            raise TypeError(
                f"{self!r}: element_spec is unknown because the dataset is empty and its elements "
                "come from a user function"
            ) from None
        finally:
            it.close()
        return spec_of(first)

    def cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    # --- random access (optional): what global_shuffle and O(1) skip build on -----------------------
    def random_access_length(self) -> int | None:
        """The number of elements when they can be read by index (``elements_at``), else None."""
        return None

    def elements_at(self, indices: np.ndarray, access: Access) -> list:
        """The elements at ``indices`` (int64 array, any order), computed as sequential iteration would."""
        raise NotImplementedError(f"{self!r} cannot read elements by index")

    def not_random_access(self) -> Node | None:
        """The stage nearest the output that prevents random access, or None."""
        if self.random_access_length() is not None:
            return None
        node = self
        while True:  # down the first parent (in order) that prevents it
            culprit = next((p for p in node.parents if p.random_access_length() is None), None)
            if culprit is None:
                return node
            if type(culprit).not_random_access is not Node.not_random_access:
                return culprit.not_random_access()  # a stage that answers for itself
            node = culprit

    # --- static rewrites (tune/rewrite.py asks; each op answers for itself) ---------------------------
    # The optimiser knows no op by name or class: an op that can be dropped, fused or moved says so
    # here, so adding a rewritable op never means editing the optimiser.
    def is_noop(self) -> bool:
        """True when the stage passes its input through unchanged (``take(-1)``, ``repeat(1)``)."""
        return False

    def fused_with(self, parent: Node) -> Node | None:
        """One stage computing ``parent`` followed by this stage (reading ``parent``'s input), or
        None when the two cannot run as one (default)."""
        return None

    def fusable_step(self) -> tuple[bool, Callable, str] | None:
        """``(is_filter, function, label)`` when this stage is one step of an element-by-element run
        that may fuse into one stage (a serial map or a filter; see ops/map_and_filter.py), else None."""
        return None

    def batch_safe(self) -> bool:
        """True when this stage gives the same result on a stacked batch as on each element, so a
        batch after it may move before it (a map of a ``@batch_safe`` function)."""
        return False

    def vectorized_with(self, parent: Node) -> Node | str | None:
        """This stage with ``parent`` as one stage that may run vectorised (``map(f).batch(n)`` with
        ``f`` traced at the first batch); a line for ``explain()`` saying why ``parent`` stays per
        element; or None (default; see ``core/trace_hook.VECTORIZERS``)."""
        rule = VECTORIZERS.get(self.op)
        return None if rule is None else rule(self, parent)

    def vectorises(self) -> Node | None:
        """The map this stage runs vectorised, once its first input decided so; else None (default).
        ``explain()`` then says the map runs in the consumer's thread, whatever its executor."""
        return None

    def explain_line(self) -> str | None:
        """What ``explain()`` says about how this stage runs, decided at iteration (a vectorised map),
        or None (default)."""
        return None

    def swapped_with(self, parent: Node) -> Node | None:
        """``parent`` moved after this stage (``map(f).batch(n)`` as ``batch(n).map(f)``) when that
        keeps every element, else None (default)."""
        return None

    # --- shared behaviour ------------------------------------------------------------------------
    @property
    def element_spec(self) -> Any:
        cache = derived(self)
        cached = cache.get("element_spec")
        if cached is None:
            if height(self) >= STEP and not getattr(_scope, "element_spec", False):
                _scope.element_spec = True  # computed once per node, so kept on each stone
                try:
                    _warm(stepping_stones(self), lambda stone: stone.element_spec)  # computes and keeps it
                finally:
                    _scope.element_spec = False
            cached = self.compute_element_spec()
            cache["element_spec"] = cached
        return cached

    def __repr__(self) -> str:
        return f"{self.op}({self.describe_args()})"

    def signature(self) -> str:
        """Text naming every stage of the pipeline; checkpoints are only restored into an equal one."""
        pieces: list[str] = []
        stack: list[Node | str] = [self]  # what is left to write, last first
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                pieces.append(item)
                continue
            pieces.append(repr(item))
            if item.parents:
                tail: list[Node | str] = ["<-["]
                for i, parent in enumerate(item.parents):
                    tail += [", ", parent] if i else [parent]
                stack.extend(reversed([*tail, "]"]))
        return "".join(pieces)

    def cannot_fail(self) -> bool:
        """No stage of this pipeline can raise a per-element error (``never_raises`` all the way
        down): a consumer may pull whole chunks and still know which element an error belongs to."""
        return all(node.never_raises for node in self.walk())

    def walk(self) -> Iterator[Node]:
        """This node and every ancestor, depth first, each once."""
        seen: set[int] = set()
        stack = [self]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            yield node
            stack.extend(reversed(node.parents))

    def arguments(self) -> dict:
        """What the node was built with: its declared fields (see :class:`Fields`)."""
        self.check_fields()
        roles = self._roles
        return {key: value for key, value in self.__dict__.items() if key in roles}

    @classmethod
    def roles(cls) -> dict[str, Role]:
        """Every declared argument of this node class and its role."""
        return dict(cls._roles)

    def check_fields(self) -> None:
        """Raise TypeError naming any attribute the node class does not declare."""
        roles = self._roles
        undeclared = [key for key in self.__dict__ if key not in roles and key not in NOT_ARGUMENTS]
        if undeclared:
            kind = type(self)
            raise TypeError(
                f"{kind.__module__}.{kind.__qualname__} sets {', '.join(map(repr, undeclared))}, which its "
                "`fields = Fields(...)` declaration does not list: declare each attribute with its role "
                "(identity, settings= or resources=), since cache fingerprints and checkpoint keys read it"
            )

    def with_parents(self, *parents: Node) -> Node:
        """A copy of this stage reading from ``parents`` (for plan rewrites). The copy shares the
        iteration counter, so random stages keep their sequence of seeds across rewritten plans."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.__dict__.pop("_derived", None)
        copy.parents = tuple(parents)
        return copy

    def __getstate__(self) -> dict:
        # The parents and the declared fields: counters and derived values stay in this process.
        self.check_fields()
        roles = self._roles
        return {key: value for key, value in self.__dict__.items() if key in roles or key == "parents"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._seeds = SeedCounter()


#: the node type an iterator class iterates (``class TakeIterator(NodeIterator[TakeNode])``).
NodeT = TypeVar("NodeT", bound=Node)


def _put_back(owed: deque, kept: list) -> None:
    owed.clear()
    owed.extend(kept)


def _forgets_owed(method: Any) -> Any:
    """Wrap ``reset``/``set_state``: what a stage owed (elements, a held error) belongs to the position
    it leaves, not to the next epoch or a restored one (a declared state then restores its own)."""
    if getattr(method, "_headrace_forgets", False):
        return method

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any) -> Any:
        owed = self.__dict__.get("owed")
        if not owed:
            return method(self, *args)
        kept = list(owed)
        owed.clear()
        with on_failure(_put_back, owed, kept):  # a refused state (or a failed rewind) moves nothing
            return method(self, *args)

    wrapper._headrace_forgets = True  # type: ignore[attr-defined]
    return wrapper


class NodeIterator(Generic[NodeT]):
    """Base class of the iterators a node builds; holds the counters every stage keeps.

    Generic in its node, so ``self.node`` has the subclass's node type: a subclass declares it as
    ``class TakeIterator(NodeIterator[TakeNode])``; a bare ``NodeIterator`` is any stage.
    """

    #: the stage's saved state, declared once (``core.state.Field``s): ``get_state``, ``set_state``
    #: and ``state_keys`` are derived from it. Empty: the stage writes its own pair (or has no state).
    state_fields: ClassVar[tuple[Field, ...]] = ()
    #: name of the keys a subclass stores in its state, checked on restore.
    state_keys: ClassVar[tuple[str, ...]] = ()
    #: the stage calls its inputs from a thread of its own (prefetch): the consumer's sampled timing
    #: (``core.counters.sampled_stages``) stops there and times every call below it.
    inputs_on_other_threads: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The timing template: every stage's next/next_chunk is timed by one wrapper, so ops do not
        # time themselves.
        super().__init_subclass__(**kwargs)
        for method in ("__next__", "next_chunk"):
            if method in cls.__dict__:
                setattr(cls, method, timed(cls.__dict__[method]))
        for method in ("reset", "set_state"):
            if method in cls.__dict__:
                setattr(cls, method, _forgets_owed(cls.__dict__[method]))
        if "state_fields" in cls.__dict__:
            cls.state_keys = tuple(field.name for field in cls.state_fields)

    def __init__(self, node: NodeT, *inputs: NodeIterator):
        self.node: NodeT = node
        self.inputs = list(inputs)
        self.produced = 0
        #: what the profiler measures of this stage (the timing template's books, element sizes, the
        #: trace's link): one object, ``core.counters.Probe``
        self.probe = Probe()
        self.closed = False
        #: What the stage owes its consumer, in element order, served before anything new: entries
        #: ``(position, kind, value)`` of kind OUTPUT (computed, not yet returned), INPUT (taken from
        #: the input, not yet computed) or ERROR (``value`` is ``(exception, failing input or
        #: NO_INPUT)``: raised when it reaches the head, so an error keeps its place among the
        #: elements). Filled by :meth:`hold`, served by :meth:`serve_owed`, saved by ``Owed()`` in
        #: ``state_fields``, emptied by ``reset``/``set_state``.
        self.owed: deque[tuple[int, int, Any]] = deque()

    def __iter__(self) -> NodeIterator:
        return self

    def __next__(self) -> Any:
        raise NotImplementedError

    @timed
    def next_chunk(self, n: int) -> list:
        """The default: up to ``n`` elements from ``__next__``. An error after some of them returns
        those first and is raised at the next call (:meth:`hold`), so nothing already taken from the
        input is lost (raising at once dropped them: scan over a failing map lost the elements before
        the error in each chunk)."""
        owed = self.owed
        if owed and owed[0][1] == ERROR:
            raise owed.popleft()[2][0]
        out = []
        try:
            for _ in range(n):
                out.append(self.__next__())
        except StopIteration:
            if not out:
                raise
        except Exception as exc:
            return self.hold(out, exc)
        return out

    def compute(self, inputs: list, first: int) -> list:
        """The outputs of ``inputs``, taken at positions ``first``, ``first + 1``, ...: what an
        element-wise op implements (``ops/support/elementwise.py``). On a failure at input ``i``,
        return ``self.hold(outputs so far, exc, first + i, inputs[i], rest)``."""
        raise NotImplementedError(f"{self.name} computes no owed inputs")

    def hold(
        self,
        out: list,
        exc: BaseException,
        position: int = -1,
        failing: Any = NO_INPUT,
        rest: list | tuple = (),
    ) -> list:
        """Return ``out``, the elements a chunk made before ``exc``, and owe the rest: ``exc`` (with
        its ``failing`` input, kept so that a state saved meanwhile computes it again) then ``rest``
        (``owed`` entries: inputs not computed yet, outputs computed past the failure), ahead of
        anything owed already. With no elements made, ``exc`` is raised now and its input dropped.
        The error is thus raised at its place in element order, as ``__next__`` would, and a
        consumer (zip, the iterator's read-ahead) can tell which element failed."""
        owed = self.owed
        if rest:
            owed.extendleft(reversed(rest))
        if not out:
            raise exc
        owed.appendleft((position, ERROR, (exc, failing)))
        return out

    def interrupted(self, out: list, exc: BaseException) -> list:
        """``out``, the elements a chunk gathered before reading its inputs raised ``exc``, counted as
        produced: an error is held after them (:meth:`hold`); an interrupt (KeyboardInterrupt) is
        raised now and ``out`` owed first. Nothing already taken is lost either way."""
        if isinstance(exc, Exception):
            self.produced += len(out)
            return self.hold(out, exc)
        self.owed.extend((0, OUTPUT, e) for e in out)
        raise exc

    def serve_owed(self, n: int) -> list:
        """Serve the head of ``owed``: up to ``n`` outputs, or raise the held error, or compute up to
        ``n`` inputs (:meth:`compute`). Call only when ``owed`` is not empty."""
        owed = self.owed
        position, kind, value = owed[0]
        if kind == ERROR:
            owed.popleft()
            raise value[0]
        values: list = []
        while owed and owed[0][1] == kind and len(values) < n:
            values.append(owed.popleft()[2])
        return values if kind == OUTPUT else self.compute(values, position)

    def reset(self) -> None:
        raise NotImplementedError(f"{self.node!r} cannot be rewound")

    def seek_forward(self, n: int) -> int | None:
        """Skip up to ``n`` elements without computing them and return how many were skipped, or
        return None when this stage cannot skip without reading (the default)."""
        return None

    def state_owner(self) -> NodeIterator | None:
        """The stage whose state is this stage's, for a stage that handed its work to another (a
        vectorised map gone per element): ``get_state`` and ``set_state`` go there. None: the stage
        saves its own ``state_fields``."""
        return None

    def get_state(self) -> dict:
        owner = self.state_owner()
        if owner is not None:
            return owner.get_state()
        if not self.state_fields:
            raise NotImplementedError(f"{self.name} cannot save its state")
        return save_fields(self, self.state_fields)

    @_forgets_owed  # as a subclass's own pair: the owed queue goes, and comes back if the state is refused
    def set_state(self, state: dict) -> None:
        owner = self.state_owner()
        if owner is None and not self.state_fields:
            raise NotImplementedError(f"{self.name} cannot restore a state")
        if owner is not None:
            owner.set_state(state)
        else:
            restore_fields(self, self.state_fields, self.upgraded_state(state))
        if owner is not None:
            self.produced = owner.produced
        else:
            self.restored()

    def upgraded_state(self, state: Any) -> Any:
        """``state`` in the declared format: a stage whose saved format changed turns an older
        checkpoint's state into the current one here (left as it is when it cannot tell)."""
        return state

    def restored(self) -> None:
        """Called after a declared state was restored: rebuild what is derived from it."""

    def tunable_knobs(self) -> dict[str, tuple[int, int]]:
        """Knobs the autotuner may set, name -> (current value, maximum); none by default."""
        return {}

    def set_knob(self, name: str, value: int) -> None:
        """Set one of :meth:`tunable_knobs` (the autotuner calls this)."""
        raise InvalidArgumentError(
            f"{self.name} has no tunable knob {name!r}; its knobs are {sorted(self.tunable_knobs())}"
        )

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        # Iteratively, a pipeline may be 10,000 stages deep: a close inside another one leaves its
        # inputs to the outermost close's loop.
        pending = getattr(_scope, "closing", None)
        if pending is not None:
            pending.extend(reversed(self.inputs))
            return
        pending = _scope.closing = list(reversed(self.inputs))
        error: BaseException | None = None
        try:
            while pending:
                closed, raised = attempt_all(pending.pop().close)  # close the rest, then raise the first
                if not closed and error is None:
                    error = raised
        finally:
            _scope.closing = None
        if error is not None:
            raise error

    @property
    def name(self) -> str:
        return repr(self.node)

    def counters(self) -> StageCounters:
        """Counters for the profiler, keys as in :class:`~headrace.core.counters.StageCounters`
        (subclasses add theirs, e.g. ``busy_seconds`` of workers, ``buffered``, plus free-form extras)."""
        return {
            "name": self.name,
            "op": self.node.op,
            "produced": self.produced,
            "inclusive_seconds": self.probe.inclusive_ns / 1e9,
            "exclusive_seconds": exclusive_ns(self) / 1e9,
            "first_call_seconds": self.probe.first_call_ns / 1e9,
            "first_call_produced": self.probe.first_call_produced,
            "calls_user_function": self.node.calls_user_function,
            "reorders": self.node.reorders,
            "reads_input": self.node.reads_input or not self.inputs,
            **element_sizes(self),
        }

    def _check_state(self, state: Any) -> StateFields:
        """The state's fields, to be read with checks (``fields.int("position", high=n)`` ...); a state
        that is not a dict with ``state_keys`` raises CheckpointError here."""
        return StateFields(state, self.name, self.state_keys)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def call(fn: Callable[..., Any], element: Any) -> Any:
    """Call a user function on an element, unpacking tuples into positional arguments (as tf.data)."""
    if type(element) is tuple:
        return fn(*element)
    return fn(element)


def call_noted(fn: Callable[..., Any], element: Any, stage: str, position: int) -> Any:
    """:func:`call`, for a stage that calls a user function outside its element-wise fast paths: an
    error the call raises carries the stage's note (:func:`note_stage`) and goes on."""
    try:
        return call(fn, element)
    except Exception as exc:
        note_stage(exc, stage, position)
        raise


#: Added to numpy's "assignment destination is read-only" / "output array is read-only" raised in a stage.
READ_ONLY_HINT = (
    "headrace: elements of from_tensor_slices, from_tensors and an in-memory cache() are read-only numpy "
    "arrays, shared between epochs rather than copied: copy with np.array(x) to edit one in place, or "
    "compute a new array (x = x / 255 rather than x /= 255)"
)


def note_stage(exc: BaseException, stage: str, position: int) -> None:
    """Add the stage name and element position to a user's exception, once per stage."""
    note = f"headrace: raised in stage {stage} on input element {position}"
    notes = getattr(exc, "__notes__", ())
    if note not in notes:
        add_note(exc, note)
    if isinstance(exc, ValueError) and READ_ONLY_HINT not in notes and "read-only" in str(exc):
        add_note(exc, READ_ONLY_HINT)  # numpy's own message cannot say why an element is read-only
    if isinstance(exc, StopIteration):
        # Re-raised as it is, it would end the dataset silently; tf.data reports it as an error.
        raise UserStopIteration(
            f"{stage}: the function raised StopIteration on input element {position}; that is an error, "
            "not the end of the dataset (return a value, or drop elements with filter)"
        ) from exc


def dataset_node(result: Any, stage: str, function: str, where: str) -> Node:
    """The node of a Dataset a user function returned (flat_map, interleave, group_by_window)."""
    node = getattr(result, "node", result)
    if not isinstance(node, Node):
        raise InvalidArgumentError(
            f"{stage}: {function} must return a headrace Dataset, got {type(result).__name__} for {where}; "
            "wrap values with Dataset.from_tensors or from_tensor_slices"
        )
    return node


def open_user_dataset(
    stage: NodeIterator, fn: Any, element: Any, position: int, ctx: Context
) -> NodeIterator:
    """Call a user function that returns a Dataset (flat_map, interleave) and start iterating it;
    its errors carry the stage's note (its time is the calling stage's own, as it runs inside it)."""
    result = call_noted(fn, element, stage.name, position)
    node = getattr(result, "node", result)
    if not isinstance(node, Node):  # the stage's name only for the error: it costs a describe() per call
        node = dataset_node(result, stage.name, "map_func", f"input element {position}")
    return node.iterator(ctx)


def predicate_bool(value: Any, stage: str, position: int) -> bool:
    """A predicate's result as a bool; only Python/numpy scalar bools are accepted (as tf.data)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype == bool:
        return bool(value)
    raise InvalidArgumentError(
        f"{stage}: the predicate must return a scalar bool, got {type(value).__name__} "
        f"{getattr(value, 'shape', '')} for input element {position}"
    )


def fresh_seed() -> int:
    return secrets.randbits(63)


def resolve_seed(seed: int | None, ctx: Context, node: Node, fallback: int) -> int:
    """The seed a random stage uses: its own, else derived from ``Options.seed``, else ``fallback``
    (drawn once when the node was built, so reshuffle_each_iteration=False repeats its order)."""
    if seed is not None:
        return int(seed)
    if ctx.options.seed is not None:
        # Stable per stage: derived from the global seed and the stage's description.
        # Not the functions' file:line, so an edit elsewhere in the file keeps every seed.
        key = without_locations(node.signature()).encode()
        digest = np.random.SeedSequence([ctx.options.seed, *key]).generate_state(2)
        return int(digest[0]) << 31 ^ int(digest[1])
    return fallback
