"""``Options``: pipeline-wide settings, validated when set (tf.data's ``tf.data.Options``)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from .args import boolean, integer
from .errors import InvalidArgumentError


class UnknownOptionError(InvalidArgumentError, AttributeError):
    """Reading or setting an option that does not exist (an AttributeError, as in tf.data)."""


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_seed(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63)


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
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


_TF_ONLY_OPTIMIZATIONS = (
    "apply_default_optimizations",
    "filter_fusion",
    "filter_parallelization",
    "map_and_batch_fusion",
    "map_and_filter_fusion",
    "map_parallelization",
    "parallel_batch",
    "seq_interleave_prefetch",
    "shuffle_and_repeat_fusion",
)


_Options = TypeVar("_Options", bound="OptionsBase")


class OptionsBase:
    """Settings object whose fields are declared in ``_fields`` as name -> (default, validator, allowed).

    Unset fields report their default; ``merge`` lets fields set on the right win.
    """

    _fields: ClassVar[dict[str, tuple[Any, Callable[[Any], bool], str]]] = {}
    #: tf.data's other names for a field (``experimental_deterministic`` -> ``deterministic``).
    _aliases: ClassVar[dict[str, str]] = {}

    def __init__(self, **kwargs: Any):
        object.__setattr__(self, "_values", {})
        for name, value in kwargs.items():
            setattr(self, name, value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy/pickle probe dunders: plain AttributeError
            raise AttributeError(name)
        fields = type(self)._fields
        name = type(self)._aliases.get(name, name)
        if name in fields:
            default = fields[name][0]
            if isinstance(default, type) and issubclass(default, OptionsBase):
                # A group of options (``options.autotune.cpu_budget = 2``): made on first access.
                return self._values.setdefault(name, default())
            return self._values.get(name, default)
        raise UnknownOptionError(
            f"{type(self).__name__} has no option {name!r}; known: {', '.join(sorted(fields))}"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        fields = type(self)._fields
        name = type(self)._aliases.get(name, name)
        if name not in fields:
            raise UnknownOptionError(
                f"{type(self).__name__} has no option {name!r}; known: {', '.join(sorted(fields))}"
            )
        value = boolean(integer(value))  # numpy scalars count as Python ones
        _, valid, allowed = fields[name]
        if not valid(value):
            raise InvalidArgumentError(f"{type(self).__name__}.{name}={value!r} is not allowed: {allowed}")
        self._values[name] = value

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
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0)


def _is_fraction(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1


def _is_config(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, dict) for k, v in value.items())
    )


def _is_sub(kind: type) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, kind)


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

    _fields: ClassVar[dict[str, tuple[Any, Callable[[Any], bool], str]]] = {
        "enabled": (True, _is_bool, "True or False"),
        "cpu_budget": (None, _is_budget, "None or a positive int"),
        "ram_budget": (None, _is_budget, "None or a positive int (bytes)"),
        "ram_budget_fraction": (0.5, _is_fraction, "a number in (0, 1]"),
        "tuned_config": (None, _is_config, "None or the dict from Stats.tuned_config()"),
        # tf.data's; accepted, not used (headrace's tuner is one algorithm).
        "autotune_algorithm": (None, _is_enum(AutotuneAlgorithm), "None or an AutotuneAlgorithm"),
        "initial_parallelism": (None, _is_threads, "None or an int >= 0"),
        "min_parallelism": (None, _is_threads, "None or an int >= 0"),
    }


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

    _fields: ClassVar[dict[str, tuple[Any, Callable[[Any], bool], str]]] = {
        "map_fusion": (True, _is_bool, "True or False"),
        "map_batch_vectorization": (True, _is_bool, "True or False"),
        "map_vectorization": (True, _is_bool, "True or False"),
        "noop_elimination": (True, _is_bool, "True or False"),
        "inject_prefetch": (False, _is_bool, "True or False"),
        # tf.data's graph rewrites that have no counterpart here: accepted, not used (see docs/porting.md).
        **{name: (None, _is_optional_bool, "None, True or False") for name in _TF_ONLY_OPTIMIZATIONS},
    }


class ThreadingOptions(OptionsBase):
    """``options.threading`` (tf.data's; ``experimental_threading`` is the older name).

    - ``private_threadpool_size`` (None): mapped. When set and ``autotune.cpu_budget`` is not, it
      becomes the CPU budget of the pipeline's parallel stages.
    - ``max_intra_op_parallelism`` (None): accepted, not used (headrace runs no TensorFlow ops).
    """

    _fields: ClassVar[dict[str, tuple[Any, Callable[[Any], bool], str]]] = {
        "private_threadpool_size": (None, _is_threads, "None, 0 (the default) or a positive int"),
        "max_intra_op_parallelism": (None, _is_threads, "None, 0 or a positive int"),
    }


class DistributeOptions(OptionsBase):
    """``options.experimental_distribute``: accepted, not used. headrace has no tf.distribute; shard
    explicitly with ``Dataset.shard(num_workers, worker_index)``."""

    _fields: ClassVar[dict[str, tuple[Any, Callable[[Any], bool], str]]] = {
        "auto_shard_policy": (
            AutoShardPolicy.AUTO,
            _is_enum(AutoShardPolicy),
            "an AutoShardPolicy (OFF, AUTO, FILE, DATA, HINT)",
        ),
        "num_devices": (None, _is_threads, "None or a positive int"),
    }


class Options(OptionsBase):
    """Pipeline-wide settings, attached with ``Dataset.with_options``.

    - ``deterministic`` (default True): parallel stages keep the serial order. Stages given
      ``deterministic=`` explicitly override it.
    - ``seed`` (default None): seed for random stages that were given no seed of their own, so a whole
      pipeline becomes reproducible with one number (TensorFlow's global seed).
    - ``autotune``: :class:`AutotuneOptions` (CPU and RAM budgets, frozen configurations).
    - ``experimental_optimization``: :class:`OptimizationOptions` (static rewrites).
    - ``threading``: :class:`ThreadingOptions` (``private_threadpool_size`` sets the CPU budget).

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

    _fields: ClassVar[dict[str, tuple[Any, Callable[[Any], bool], str]]] = {
        "deterministic": (True, _is_bool, "True or False"),
        "seed": (None, _is_seed, "None or an int in [0, 2**63)"),
        "autotune": (AutotuneOptions, _is_sub(AutotuneOptions), "an AutotuneOptions"),
        "experimental_optimization": (
            OptimizationOptions,
            _is_sub(OptimizationOptions),
            "an OptimizationOptions",
        ),
        "threading": (ThreadingOptions, _is_sub(ThreadingOptions), "a ThreadingOptions"),
        "experimental_distribute": (DistributeOptions, _is_sub(DistributeOptions), "a DistributeOptions"),
        "experimental_slack": (None, _is_optional_bool, "None, True or False"),
        "experimental_external_state_policy": (
            None,
            _is_enum(ExternalStatePolicy),
            "None or an ExternalStatePolicy",
        ),
        "experimental_symbolic_checkpoint": (None, _is_optional_bool, "None, True or False"),
        "experimental_warm_start": (None, _is_optional_bool, "None, True or False"),
        "experimental_service": (
            None,
            lambda v: v is None or hasattr(v, "__dict__"),
            "None or a ServiceOptions",
        ),
        "dataset_name": (None, lambda v: v is None or isinstance(v, str), "None or a str"),
        "framework_type": (
            None,
            lambda v: v is None or isinstance(v, (list, tuple)),
            "None or a list of str",
        ),
    }
    _aliases: ClassVar[dict[str, str]] = {
        "experimental_deterministic": "deterministic",
        "experimental_threading": "threading",
    }

    def merge(self, other: OptionsBase) -> Options:
        merged = super().merge(other)
        threads = merged._values.get("threading")
        size = None if threads is None else threads.private_threadpool_size
        if size and not merged.autotune.is_set("cpu_budget"):
            merged.autotune.cpu_budget = size  # tf.data's thread pool size is headrace's CPU budget
        return merged
