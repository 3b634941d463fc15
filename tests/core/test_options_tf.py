"""tf.data's option names: aliases, mapped options, documented no-ops, unknown names."""

import numpy as np
import pytest

import headrace as hr
from headrace.core.options import UnknownOptionError

E = hr.data.experimental


def test_experimental_deterministic_is_deterministic():
    options = hr.Options()
    options.experimental_deterministic = False
    assert options.deterministic is False and options.experimental_deterministic is False
    assert options.is_set("experimental_deterministic")


def test_private_threadpool_size_becomes_the_cpu_budget():
    options = hr.Options()
    options.threading.private_threadpool_size = 3
    assert hr.Dataset.range(2).with_options(options).options().autotune.cpu_budget == 3
    options.autotune.cpu_budget = 5  # an explicit budget wins
    assert hr.Dataset.range(2).with_options(options).options().autotune.cpu_budget == 5
    older = hr.Options()
    older.experimental_threading.max_intra_op_parallelism = 1
    assert older.threading.max_intra_op_parallelism == 1


def test_accepted_no_op_options():
    options = hr.Options()
    options.experimental_slack = True
    options.experimental_optimization.map_parallelization = True
    options.experimental_optimization.apply_default_optimizations = False
    options.experimental_distribute.auto_shard_policy = E.AutoShardPolicy.DATA
    options.experimental_external_state_policy = E.ExternalStatePolicy.WARN
    options.autotune.autotune_algorithm = E.AutotuneAlgorithm.HILL_CLIMB
    assert [int(x) for x in hr.Dataset.range(3).with_options(options)] == [0, 1, 2]
    with pytest.raises(hr.InvalidArgumentError, match="auto_shard_policy"):
        options.experimental_distribute.auto_shard_policy = 7


def test_unknown_options_raise_attribute_error_both_ways():
    options = hr.Options()
    with pytest.raises(AttributeError, match="no option 'experimental_nope'"):
        options.experimental_nope  # noqa: B018
    with pytest.raises(AttributeError, match="no option 'experimental_nope'"):
        options.experimental_nope = True
    with pytest.raises(UnknownOptionError):
        options.threading.nope = 1
    assert issubclass(UnknownOptionError, hr.InvalidArgumentError)


def test_numpy_values_are_accepted():
    options = hr.Options()
    options.seed = np.int64(3)
    options.deterministic = np.bool_(False)
    assert options.seed == 3 and type(options.seed) is int and options.deterministic is False
