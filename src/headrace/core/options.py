"""``Options``: pipeline-wide settings, validated when set (tf.data's ``tf.data.Options``)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, overload

from .args import boolean, integer, is_int, is_seed
from .errors import InvalidArgumentError


class UnknownOptionError(InvalidArgumentError, AttributeError):
    """Reading or setting an option that does not exist (an AttributeError, as in tf.data)."""


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_seed(value: Any) -> bool:
    return is_seed(value)


class AutoShardPolicy(enum.IntEnum):
    """tf.data's ``AutoShardPolicy`` (accepted for ``experimental_distribute``, not used)."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class AutotuneAlgorithm(enum.IntEnum):
    """tf.data's ``AutotuneAlgorithm`` (accepted, not used)."""

    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class ExternalStatePolicy(enum.IntEnum):
    """tf.data's ``ExternalStatePolicy`` (accepted, not used: checkpoints never hold functions)."""

    WARN = 0
    IGNORE = 1
    FAIL = 2


def _is_enum(kind: type[enum.Enum]) -> Callable[[Any], bool]:
    return lambda value: value is None or value in set(kind)


def _is_optional_bool(value: Any) -> bool:
    return value is None or isinstance(value, bool)


def _is_threads(value: Any) -> bool:
    return value is None or is_int(value, low=0)


_T = TypeVar("_T")
_G = TypeVar("_G", bound="OptionsBase")
_F = TypeVar("_F", bound="_Field[Any]")
_Options = TypeVar("_Options", bound="OptionsBase")


class _Field(Generic[_T]):
    """A declared option of an :class:`OptionsBase` (a data descriptor): instances read ``_T``,
    assignments are normalised (numpy scalars count as Python ones) and validated here, in one place.
    """

    name = ""

    def __init__(self, valid: Callable[[Any], bool], allowed: str) -> None:
        self.valid = valid
        self.allowed = allowed  # the error's words for what ``valid`` accepts

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self: _F, obj: None, owner: type | None = None) -> _F: ...
    @overload
    def __get__(self, obj: OptionsBase, owner: type | None = None) -> _T: ...
    def __get__(self, obj: OptionsBase | None, owner: type | None = None) -> Any:
        return self if obj is None else self.read(obj)

    def read(self, obj: OptionsBase) -> _T:
        raise NotImplementedError

    def __set__(self, obj: OptionsBase, value: object) -> None:
        value = boolean(integer(value))  # numpy scalars count as Python ones
        if not self.valid(value):
            raise InvalidArgumentError(
                f"{type(obj).__name__}.{self.name}={value!r} is not allowed: {self.allowed}"
            )
        obj._values[self.name] = value


class Option(_Field[_T]):
    """An option with a value: ``seed: Option[int | None] = Option(None, _is_seed, "None or an int")``.
    Unset, it reads ``default``."""

    def __init__(self, default: _T, valid: Callable[[Any], bool], allowed: str) -> None:
        super().__init__(valid, allowed)
        self.default = default

    def read(self, obj: OptionsBase) -> _T:
        value: _T = obj._values.get(self.name, self.default)
        return value


class Group(_Field[_G]):
    """A group of options (``options.autotune``): made on first access, so
    ``options.autotune.cpu_budget = 2`` works on a fresh ``Options``; assigning needs a ``kind``."""

    def __init__(self, kind: type[_G]) -> None:
        article = "an" if kind.__name__[0] in "AEIOU" else "a"
        super().__init__(lambda value: isinstance(value, kind), f"{article} {kind.__name__}")
        self.kind = kind

    def read(self, obj: OptionsBase) -> _G:
        group: _G | None = obj._values.get(self.name)
        if group is None:
            group = obj._values[self.name] = self.kind()
        return group


class Alias(Generic[_T]):
    """tf.data's other name for a field (``experimental_deterministic`` -> ``deterministic``): reads
    and assignments go to ``target``."""

    def __init__(self, target: _Field[_T]) -> None:
        self.target = target

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Alias[_T]: ...
    @overload
    def __get__(self, obj: OptionsBase, owner: type | None = None) -> _T: ...
    def __get__(self, obj: OptionsBase | None, owner: type | None = None) -> Any:
        return self if obj is None else self.target.read(obj)

    def __set__(self, obj: OptionsBase, value: object) -> None:
        self.target.__set__(obj, value)


class OptionsBase:
    """Settings object whose fields are declared as class attributes (:class:`Option`,
    :class:`Group`, :class:`Alias`), so each reads as its declared type.

    Unset fields report their default; ``merge`` lets fields set on the right win. Reading or
    setting a name that is not declared raises :class:`UnknownOptionError`.
    """

    #: name -> declared field, in declaration order (collected by ``__init_subclass__``).
    _fields: ClassVar[dict[str, _Field[Any]]] = {}
    #: tf.data's other names for a field (``experimental_deterministic`` -> ``deterministic``).
    _aliases: ClassVar[dict[str, str]] = {}
    _values: dict[str, Any]  # the fields that were set (groups once made)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: dict[str, _Field[Any]] = {}
        aliases: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            for name, attr in vars(klass).items():
                if isinstance(attr, _Field):
                    fields[name] = attr
                elif isinstance(attr, Alias):
                    aliases[name] = attr.target.name
        cls._fields, cls._aliases = fields, aliases

    def __init__(self, **kwargs: Any):
        object.__setattr__(self, "_values", {})
        for name, value in kwargs.items():
            setattr(self, name, value)

    def _unknown(self, name: str) -> UnknownOptionError:
        return UnknownOptionError(
            f"{type(self).__name__} has no option {name!r}; known: {', '.join(sorted(type(self)._fields))}"
        )

    if not TYPE_CHECKING:  # hidden from mypy, so that a misspelt option is a type error there too

        def __getattr__(self, name: str) -> Any:  # only names that are not declared get here
            if name.startswith("__"):  # copy/pickle probe dunders: plain AttributeError
                raise AttributeError(name)
            raise self._unknown(name)

        def __setattr__(self, name: str, value: Any) -> None:
            if name not in type(self)._fields and name not in type(self)._aliases:
                raise self._unknown(name)
            object.__setattr__(self, name, value)  # the field's descriptor validates

    def is_set(self, name: str) -> bool:
        return type(self)._aliases.get(name, name) in self._values

    def merge(self: _Options, other: OptionsBase) -> _Options:
        merged = type(self)()
        for source in (self, other):
            for name, value in source._values.items():
                mine = merged._values.get(name)
                merged._values[name] = mine.merge(value) if isinstance(mine, OptionsBase) else value
        return merged

    def to_dict(self) -> dict[str, Any]:
        out = {}
        for name in type(self)._fields:
            value = getattr(self, name)
            out[name] = value.to_dict() if isinstance(value, OptionsBase) else value
        return out

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        set_values = ", ".join(
            f"{k}={v!r}"
            for k, v in sorted(self._values.items())
            if not (isinstance(v, OptionsBase) and not v._values)
        )
        return f"{type(self).__name__}({set_values})"


def _is_budget(value: Any) -> bool:
    return value is None or is_int(value, low=1)


def _is_fraction(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1


def _is_config(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, dict) for k, v in value.items())
    )


def _tf_only() -> Option[bool | None]:
    return Option(None, _is_optional_bool, "None, True or False")


class AutotuneOptions(OptionsBase):
    """``options.autotune``: what ``AUTOTUNE`` may use, and a frozen configuration.

    - ``enabled`` (True): tune ``AUTOTUNE`` knobs while the pipeline runs; False keeps their defaults.
    - ``cpu_budget`` (None: the CPUs this process may use, honouring affinity and cgroup quotas).
    - ``ram_budget`` (None: ``ram_budget_fraction`` of the memory available, honouring cgroup limits),
      in bytes, for the buffers the tuner sizes.
    - ``ram_budget_fraction`` (0.5).
    - ``tuned_config`` (None): a configuration exported by ``it.stats().tuned_config()``; applied as is
      and never changed, so a tuned pipeline can be frozen.
    """

    enabled: Option[bool] = Option(True, _is_bool, "True or False")
    cpu_budget: Option[int | None] = Option(None, _is_budget, "None or a positive int")
    ram_budget: Option[int | None] = Option(None, _is_budget, "None or a positive int (bytes)")
    ram_budget_fraction: Option[float] = Option(0.5, _is_fraction, "a number in (0, 1]")
    tuned_config: Option[dict[str, dict[str, Any]] | None] = Option(
        None, _is_config, "None or the dict from Stats.tuned_config()"
    )
    # tf.data's; accepted, not used (headrace's tuner is one algorithm). Held as given: an IntEnum
    # member is kept as its int.
    autotune_algorithm: Option[int | None] = Option(
        None, _is_enum(AutotuneAlgorithm), "None or an AutotuneAlgorithm"
    )
    initial_parallelism: Option[int | None] = Option(None, _is_threads, "None or an int >= 0")
    min_parallelism: Option[int | None] = Option(None, _is_threads, "None or an int >= 0")


class OptimizationOptions(OptionsBase):
    """``options.experimental_optimization``: static rewrites applied when iteration starts, shown by
    ``Dataset.explain()``.

    - ``map_fusion``: consecutive serial maps become one stage (one call of overhead per element); a
      run of at least 64 serial maps and filters becomes one ``map_and_filter`` stage (no recursion
      per stage: ``ops/map_and_filter.py``).
    - ``map_batch_vectorization``: ``map(f).batch(n)`` becomes ``batch(n).map(f)`` when ``f`` is
      declared batch-safe (``@headrace.batch_safe``): one call per batch instead of per element.
    - ``map_vectorization``: ``map(f).batch(n)`` runs as ``batch(n)`` plus one call of ``f`` traced over
      the batch when ``f`` is built from ops with batching rules (``docs/parallel.md``); the results,
      random draws and checkpoints are the per-element ones (the first batch is checked).
    - ``noop_elimination``: drops ``take(-1)``, ``skip(0)``, ``repeat(1)``, ``prefetch(0)``, ``shard(1, 0)``.
    - ``inject_prefetch`` (off by default, unlike tf.data): adds ``prefetch(AUTOTUNE)`` at the end of a
      pipeline that runs parallel stages and has no prefetch. Off because it runs user functions ahead
      of consumption, which surprises code that counts calls or expects an error at the element it
      asked for; the bottleneck report says when a final prefetch would help.
    """

    map_fusion: Option[bool] = Option(True, _is_bool, "True or False")
    map_batch_vectorization: Option[bool] = Option(True, _is_bool, "True or False")
    map_vectorization: Option[bool] = Option(True, _is_bool, "True or False")
    noop_elimination: Option[bool] = Option(True, _is_bool, "True or False")
    inject_prefetch: Option[bool] = Option(False, _is_bool, "True or False")
    # tf.data's graph rewrites that have no counterpart here: accepted, not used (see docs/porting.md).
    apply_default_optimizations: Option[bool | None] = _tf_only()
    filter_fusion: Option[bool | None] = _tf_only()
    filter_parallelization: Option[bool | None] = _tf_only()
    map_and_batch_fusion: Option[bool | None] = _tf_only()
    map_and_filter_fusion: Option[bool | None] = _tf_only()
    map_parallelization: Option[bool | None] = _tf_only()
    parallel_batch: Option[bool | None] = _tf_only()
    seq_interleave_prefetch: Option[bool | None] = _tf_only()
    shuffle_and_repeat_fusion: Option[bool | None] = _tf_only()


class ThreadingOptions(OptionsBase):
    """``options.threading`` (tf.data's; ``experimental_threading`` is the older name).

    - ``private_threadpool_size`` (None): mapped. When set and ``autotune.cpu_budget`` is not, it
      becomes the CPU budget of the pipeline's parallel stages.
    - ``max_intra_op_parallelism`` (None): accepted, not used (headrace runs no TensorFlow ops).
    """

    private_threadpool_size: Option[int | None] = Option(
        None, _is_threads, "None, 0 (the default) or a positive int"
    )
    max_intra_op_parallelism: Option[int | None] = Option(None, _is_threads, "None, 0 or a positive int")


class DistributeOptions(OptionsBase):
    """``options.experimental_distribute``: accepted, not used. headrace has no tf.distribute; shard
    explicitly with ``Dataset.shard(num_workers, worker_index)``."""

    # Held as given: an AutoShardPolicy assigned is kept as its int (the default is the member).
    auto_shard_policy: Option[int] = Option(
        AutoShardPolicy.AUTO, _is_enum(AutoShardPolicy), "an AutoShardPolicy (OFF, AUTO, FILE, DATA, HINT)"
    )
    num_devices: Option[int | None] = Option(None, _is_threads, "None or a positive int")


class ProfilingOptions(OptionsBase):
    """``options.profiling`` (headrace's own): what measuring the stages may cost.

    - ``sample_one_in`` (8): the consumer times every call of each stage while calls are slow or
      warming up, else about one call in ``sample_one_in + 1`` (the timed one counts for the calls
      untimed before it: ``core/counters.py``); 0 times every call, as a trace recording does.
    """

    sample_one_in: Option[int] = Option(
        8, lambda value: is_int(value, low=0), "an int >= 0 (0: time every call)"
    )


class Options(OptionsBase):
    """Pipeline-wide settings, attached with ``Dataset.with_options``.

    - ``deterministic`` (default True): parallel stages keep the serial order. Stages given
      ``deterministic=`` explicitly override it.
    - ``seed`` (default None): seed for random stages that were given no seed of their own, so a whole
      pipeline becomes reproducible with one number (TensorFlow's global seed).
    - ``autotune``: :class:`AutotuneOptions` (CPU and RAM budgets, frozen configurations).
    - ``experimental_optimization``: :class:`OptimizationOptions` (static rewrites).
    - ``threading``: :class:`ThreadingOptions` (``private_threadpool_size`` sets the CPU budget).
    - ``profiling``: :class:`ProfilingOptions` (headrace's own: how often the consumer times stages).

    tf.data's other names are accepted: ``experimental_deterministic`` is ``deterministic``,
    ``experimental_threading`` is ``threading``. Accepted and not used (documented in
    docs/porting.md): ``experimental_slack``, ``experimental_distribute``,
    ``experimental_external_state_policy``, ``experimental_symbolic_checkpoint``,
    ``experimental_warm_start``, ``experimental_service``, ``dataset_name``, ``framework_type``,
    ``autotune.autotune_algorithm``, ``autotune.initial_parallelism``, ``autotune.min_parallelism``.
    An option that does not exist raises ``UnknownOptionError`` (an ``AttributeError``) whether read
    or set.

    >>> options = Options()
    >>> options.deterministic
    True
    >>> options.seed = 7
    >>> options
    Options(seed=7)
    >>> options.deterministic = "yes"
    Traceback (most recent call last):
    ...
    headrace.core.errors.InvalidArgumentError: Options.deterministic='yes' is not allowed: True or False
    """

    deterministic: Option[bool] = Option(True, _is_bool, "True or False")
    seed: Option[int | None] = Option(None, _is_seed, "None or an int in [0, 2**63)")
    autotune: Group[AutotuneOptions] = Group(AutotuneOptions)
    experimental_optimization: Group[OptimizationOptions] = Group(OptimizationOptions)
    threading: Group[ThreadingOptions] = Group(ThreadingOptions)
    profiling: Group[ProfilingOptions] = Group(ProfilingOptions)
    experimental_distribute: Group[DistributeOptions] = Group(DistributeOptions)
    experimental_slack: Option[bool | None] = Option(None, _is_optional_bool, "None, True or False")
    experimental_external_state_policy: Option[int | None] = Option(
        None, _is_enum(ExternalStatePolicy), "None or an ExternalStatePolicy"
    )
    experimental_symbolic_checkpoint: Option[bool | None] = Option(
        None, _is_optional_bool, "None, True or False"
    )
    experimental_warm_start: Option[bool | None] = Option(None, _is_optional_bool, "None, True or False")
    experimental_service: Option[object] = Option(
        None, lambda v: v is None or hasattr(v, "__dict__"), "None or a ServiceOptions"
    )
    dataset_name: Option[str | None] = Option(
        None, lambda v: v is None or isinstance(v, str), "None or a str"
    )
    framework_type: Option[list[str] | tuple[str, ...] | None] = Option(
        None, lambda v: v is None or isinstance(v, (list, tuple)), "None or a list of str"
    )
    # tf.data's other names.
    experimental_deterministic: Alias[bool] = Alias(deterministic)
    experimental_threading: Alias[ThreadingOptions] = Alias(threading)

    def merge(self, other: OptionsBase) -> Options:
        merged = super().merge(other)
        threads = merged._values.get("threading")
        size = None if threads is None else threads.private_threadpool_size
        if size and not merged.autotune.is_set("cpu_budget"):
            merged.autotune.cpu_budget = size  # tf.data's thread pool size is headrace's CPU budget
        return merged
