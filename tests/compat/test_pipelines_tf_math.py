"""Ported public pipelines whose TensorFlow math runs UNCHANGED (issue 23): the map functions of
tensorflow/tpu, google-research/simclr, t5, big_vision and tensorflow/docs tutorials, as their sources
write them, under ``import headrace as tf`` (TF1 sources: ``import headrace.compat.v1 as tf``). Each is
compared with what tf.data yields, recorded with TensorFlow by tools/record_tf_math_pipelines.py into
the fixture files in tests/data/tfops_fixtures/, so this runs without TensorFlow. The pipelines are in
modules listed in tests/helpers/tf_math_modules.py (sources named there)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import tf_math_pipelines
from tests.helpers.tf_fixtures import assert_matches
from tests.helpers.tf_math_modules import BINDINGS, MODULES

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "tfops_fixtures"
_MODULES = {name: importlib.import_module(name) for name in MODULES}
RECORDED: dict[str, dict] = {}
PIPELINES: dict = {}
TOLERANCE: dict[str, float] = {}
for _name, (_binding, _fixture) in MODULES.items():
    _recorded = json.loads((FIXTURES / _fixture).read_text())["pipelines"]
    for _pipeline, _fn in _MODULES[_name].PIPELINES.items():
        assert _pipeline not in PIPELINES, f"two ported pipelines are named {_pipeline}"
        PIPELINES[_pipeline] = _fn
        if _pipeline in _recorded:
            RECORDED[_pipeline] = _recorded[_pipeline]
    TOLERANCE.update(getattr(_MODULES[_name], "TOLERANCE", {}))


@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_pipeline_modules_run_on_headrace_not_tensorflow(name):
    # the recorder rebinds `tf`; in the tests it must be headrace itself, or nothing is being tested
    assert _MODULES[name].tf is importlib.import_module(BINDINGS[MODULES[name][0]])


def test_every_pipeline_is_recorded():
    assert sorted(RECORDED) == sorted(PIPELINES)
    assert len(PIPELINES) >= 10


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_ported_pipeline_yields_what_tf_data_yields(tmp_path, name):
    ours = tf_math_pipelines.fixture_form(PIPELINES[name](str(tmp_path)))
    assert_matches(ours, RECORDED[name], TOLERANCE.get(name, 0.0), name)


def test_fixture_form_keeps_small_arrays_and_samples_large_ones():
    small = tf_math_pipelines.fixture_form(np.arange(6, dtype=np.int32))
    assert small == {"dtype": "int32", "shape": [6], "values": [0, 1, 2, 3, 4, 5]}
    large = tf_math_pipelines.fixture_form(np.arange(5000, dtype=np.int64).reshape(50, 100))
    assert large["shape"] == [50, 100] and large["stride"] == 10 and large["values"][:3] == [0, 10, 20]
