import copy
import pickle
import re
import types
import typing

import pytest

import headrace as hr
from headrace.core import options as options_module


def test_defaults_and_validation():
    options = hr.Options()
    assert options.deterministic is True and options.seed is None
    with pytest.raises(hr.InvalidArgumentError, match="deterministic='no'"):
        options.deterministic = "no"
    with pytest.raises(hr.InvalidArgumentError, match="seed=-1"):
        hr.Options(seed=-1)
    with pytest.raises(hr.InvalidArgumentError, match="no option 'determinism'.*deterministic"):
        options.determinism = True


def test_with_options_merges_nearest_output_wins():
    a, b = hr.Options(seed=1), hr.Options(seed=2, deterministic=False)
    ds = hr.Dataset.range(3).with_options(a).map(lambda x: x).with_options(b)
    assert ds.options().seed == 2 and ds.options().deterministic is False
    assert hr.Dataset.range(3).with_options(a).options().deterministic is True
    with pytest.raises(hr.InvalidArgumentError, match="Options object"):
        hr.Dataset.range(3).with_options({"seed": 1})


OPTION_CLASSES = [
    hr.Options,
    options_module.AutotuneOptions,
    options_module.OptimizationOptions,
    options_module.ThreadingOptions,
    options_module.DistributeOptions,
]


def _value_types(hint):
    """The runtime classes a declared value type allows (``int | None`` -> (int, NoneType))."""
    args = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    return tuple(typing.get_origin(arg) or arg for arg in args)


@pytest.mark.parametrize("kind", OPTION_CLASSES, ids=lambda kind: kind.__name__)
def test_every_option_is_a_declared_typed_field(kind):
    # Each field is a class attribute annotated Option[T], Group[G] or Alias[T] (what mypy reads), and
    # its default is a T (a group's type is its class).
    hints = typing.get_type_hints(kind)
    assert kind._fields, kind
    for name, field in kind._fields.items():
        declared = typing.get_origin(hints[name])
        (value_type,) = typing.get_args(hints[name])
        assert declared is type(field) and field.name == name, name
        if isinstance(field, options_module.Group):
            assert value_type is field.kind and issubclass(field.kind, options_module.OptionsBase)
            assert isinstance(getattr(kind(), name), field.kind)
        else:
            assert isinstance(field.default, _value_types(value_type)), name
            assert getattr(kind(), name) == field.default
    for alias, target in kind._aliases.items():
        assert typing.get_origin(hints[alias]) is options_module.Alias
        assert typing.get_args(hints[alias]) == typing.get_args(hints[target])
    declared = {
        n for n, v in vars(kind).items() if isinstance(v, (options_module._Field, options_module.Alias))
    }
    assert declared <= set(kind._fields) | set(kind._aliases)


@pytest.mark.parametrize("kind", OPTION_CLASSES, ids=lambda kind: kind.__name__)
def test_every_documented_option_is_declared(kind):
    # The docstring's bullets (``- ``name``: ...``) and Options' list of accepted tf.data names.
    doc = kind.__doc__
    names = re.findall(r"^\s*- ``(\w+)``", doc, re.M)
    if kind is hr.Options:
        accepted = doc[doc.index("tf.data's other names") : doc.index("An option that does not exist")]
        names += re.findall(r"``([\w.]+)``", accepted)
    for path in names:
        owner = kind()
        *groups, name = path.split(".")
        for group in groups:
            owner = getattr(owner, group)
        known = type(owner)._fields.keys() | type(owner)._aliases.keys()
        assert name in known, f"{kind.__name__} documents {path!r}, which is not declared"


def test_groups_aliases_merge_and_copies():
    options = hr.Options()
    options.autotune.cpu_budget = 2  # a group is made on first access
    options.experimental_threading.private_threadpool_size = 3  # tf.data's older name
    assert options.threading is options.experimental_threading and options.is_set("threading")
    assert (
        repr(options)
        == "Options(autotune=AutotuneOptions(cpu_budget=2), threading=ThreadingOptions(private_threadpool_size=3))"
    )
    other = hr.Options(seed=4)
    other.autotune.enabled = False
    merged = options.merge(other)
    assert (merged.seed, merged.autotune.cpu_budget, merged.autotune.enabled) == (4, 2, False)
    assert hr.Options().to_dict()["autotune"]["ram_budget_fraction"] == 0.5
    assert pickle.loads(pickle.dumps(merged)) == merged == copy.deepcopy(merged) != hr.Options()
    with pytest.raises(
        hr.InvalidArgumentError, match="Options.autotune=3 is not allowed: an AutotuneOptions"
    ):
        options.autotune = 3
    assert type(options_module.Options.seed) is options_module.Option  # the class holds the declaration
