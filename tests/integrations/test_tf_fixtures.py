"""headrace.tf's contract without TensorFlow: ``to_tf`` runs against a recorder of the few TensorFlow
calls it makes (TensorShape, TensorSpec, as_dtype, from_generator, assert_cardinality), and what it
hands TensorFlow is compared with what real TensorFlow produced from the same pipelines
(tests/data/tf_fixtures/to_tf.json, tools/record_tf_fixtures.py): the element_spec, the cardinality
and the values. test_tf.py runs the same contract live where TensorFlow is installed."""

from __future__ import annotations

import importlib
import itertools
import json
import sys
import types

import numpy as np
import pytest

import headrace
from tests.helpers.tf_fixtures import canon, load_json, to_tf_cases

RECORDED = load_json("to_tf.json")


class DType:
    def __init__(self, name: str):
        self.name = name


class TensorShape:
    def __init__(self, dims):
        self.dims = None if dims is None else list(dims)

    @property
    def rank(self):
        return None if self.dims is None else len(self.dims)

    def as_list(self):
        return list(self.dims)


class TensorSpec:
    def __init__(self, shape, dtype, name=None):
        self.shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
        self.dtype, self.name = dtype, name


class GeneratorDataset:
    """What tf.data.Dataset.from_generator received; ``apply`` records assert_cardinality."""

    def __init__(self, generator, output_signature):
        self.generator, self.output_signature, self.asserted_cardinality = generator, output_signature, None

    def apply(self, transformation):
        return transformation(self)


def assert_cardinality(n):
    def apply(ds):
        ds.asserted_cardinality = int(n)
        return ds

    return apply


def fake_tensorflow() -> types.ModuleType:
    tf = types.ModuleType("tensorflow")
    tf.TensorShape, tf.TensorSpec, tf.string = TensorShape, TensorSpec, DType("string")
    tf.as_dtype = lambda dtype: DType(np.dtype(dtype).name)
    tf.data = types.SimpleNamespace(
        Dataset=types.SimpleNamespace(from_generator=GeneratorDataset),
        experimental=types.SimpleNamespace(assert_cardinality=assert_cardinality),
        INFINITE_CARDINALITY=-1,
        UNKNOWN_CARDINALITY=-2,
    )
    return tf


@pytest.fixture
def to_tf(monkeypatch):
    """headrace.tf imported against the recorder; the real module (if any) is back afterwards."""
    saved_module, saved_attr = sys.modules.get("headrace.tf"), headrace.__dict__.get("tf")
    monkeypatch.setitem(sys.modules, "tensorflow", fake_tensorflow())
    sys.modules.pop("headrace.tf", None)
    try:
        yield importlib.import_module("headrace.tf").to_tf
    finally:
        sys.modules.pop("headrace.tf", None)
        headrace.__dict__.pop("tf", None)
        if saved_module is not None:
            sys.modules["headrace.tf"] = saved_module
        if saved_attr is not None:
            headrace.tf = saved_attr


def spec_json(spec):
    if isinstance(spec, dict):
        return {"dict": {k: spec_json(v) for k, v in spec.items()}}
    if isinstance(spec, tuple):
        return {"tuple": [spec_json(v) for v in spec]}
    return {"shape": spec.shape.dims, "dtype": spec.dtype.name, "name": spec.name}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_to_tf_hands_tensorflow_what_it_recorded(to_tf, name):
    dataset, kwargs, take, ordered = to_tf_cases()[name]
    recorded = RECORDED[name]
    handed = to_tf(dataset, **kwargs)
    assert spec_json(handed.output_signature) == recorded["element_spec"]
    cardinality = recorded["cardinality"]
    # tf.data reports UNKNOWN (-2) when nothing was asserted: to_tf asserts known and infinite counts only
    assert (handed.asserted_cardinality if handed.asserted_cardinality is not None else -2) == cardinality
    values = [canon(x) for x in itertools.islice(handed.generator(), take)]
    assert (values if ordered else sorted(values, key=json.dumps)) == recorded["values"]


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(to_tf_cases())


def test_a_non_dataset_is_refused(to_tf):
    with pytest.raises(headrace.InvalidArgumentError, match="headrace Dataset"):
        to_tf([1, 2])
