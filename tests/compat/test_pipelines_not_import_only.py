"""The ported public pipelines listed as NOT import-only (``NOT_IMPORT_ONLY`` in the modules of
tests/helpers/tf_math_modules.py) keep their sources' code; this checks the list stays honest: each entry
is a pipeline of its module, none is also counted in ``PIPELINES``, and each still fails on headrace where
its reason says (so one that starts to run is moved into ``PIPELINES`` and recorded)."""

from __future__ import annotations

import importlib
import re

import pytest

from tests.helpers.tf_math_modules import MODULES

_MODULES = {name: importlib.import_module(name) for name in MODULES}
LISTED = [
    (module, pipeline) for module, mod in _MODULES.items() for pipeline in getattr(mod, "NOT_IMPORT_ONLY", {})
]


def test_not_import_only_pipelines_are_named_with_a_reason_and_not_counted():
    for module, pipeline in LISTED:
        mod = _MODULES[module]
        assert callable(getattr(mod, pipeline)) and pipeline not in mod.PIPELINES
        assert len(mod.NOT_IMPORT_ONLY[pipeline]) > 20  # says what is missing


@pytest.mark.parametrize(("module", "pipeline"), LISTED, ids=[p for _, p in LISTED])
def test_not_import_only_pipelines_still_fail_on_headrace(tmp_path, module, pipeline):
    mod = _MODULES[module]
    try:
        out = getattr(mod, pipeline)(str(tmp_path))
    except AttributeError as error:  # the missing name or tf.Tensor method, which the reason names
        missing = error.name or re.search(r"attribute '(\w+)'", str(error)).group(1)
        assert missing in mod.NOT_IMPORT_ONLY[pipeline], f"{pipeline} fails on {missing!r}: {error}"
        return
    except ImportError as error:  # another library the source uses, which the reason names
        assert error.name and error.name in mod.NOT_IMPORT_ONLY[pipeline], f"{pipeline}: {error}"
        return
    differs = getattr(mod, "STILL_DIFFERS", {}).get(pipeline)
    if differs is not None:  # runs, with other values than tf.data's: the reason's difference holds
        assert differs(out), f"{pipeline} no longer differs as its reason says: re-check it against TF"
        return
    # under ignore_errors() the failure drops every element instead of raising
    assert out == [], f"{pipeline} now runs on headrace: record it and move it into PIPELINES"
