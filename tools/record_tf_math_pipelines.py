"""Record what tf.data yields for the ported public pipelines whose TF math runs unchanged on headrace
(the modules listed in tests/helpers/tf_math_modules.py) into their fixture files in
tests/data/tfops_fixtures/; tests/compat/test_pipelines_tf_math.py replays them on headrace without
TensorFlow.

Run with a Python that has TensorFlow, numpy, Pillow and headrace's dependencies, from the repository root:
``PYTHONPATH=src:. python tools/record_tf_math_pipelines.py [FIXTURE.json ...]`` (no argument: every
fixture file). The pipeline modules are written with ``import headrace as tf`` or ``import
headrace.compat.eager as tf`` (``import headrace.compat.v1 as tf``, ``headrace.compat.eager_v1``); this
script rebinds their ``tf`` to TensorFlow (``tensorflow.compat.v1``), which is the unported source.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "data" / "tfops_fixtures"


def main(only: list[str]) -> int:
    import tensorflow as tf
    from tests.helpers.tf_math_modules import MODULES
    from tests.helpers.tf_math_pipelines import fixture_form

    tf.config.set_visible_devices([], "GPU")
    if not hasattr(tf.compat.v1, "contrib"):
        # TF 2 dropped tf.contrib; in TF 1.13-1.15 tf.contrib.data.X were the deprecated aliases of
        # tf.data.experimental.X, which TF1 sources (BERT's run_pretraining.py ...) call
        tf.compat.v1.contrib = types.SimpleNamespace(data=tf.data.experimental)
    files: dict[str, dict] = {}
    for name, (binding, fixture) in MODULES.items():
        if only and fixture not in only:
            continue
        module = importlib.import_module(name)
        module.tf = tf if binding in ("tf", "eager") else tf.compat.v1
        records = files.setdefault(fixture, {})
        # and the ported pipelines that run on headrace with other values, to check they still differ
        differ = {name: getattr(module, name) for name in getattr(module, "STILL_DIFFERS", {})}
        for pipeline_name, pipeline in {**module.PIPELINES, **differ}.items():
            with tempfile.TemporaryDirectory() as tmp:
                records[pipeline_name] = fixture_form(pipeline(os.path.realpath(tmp)))
    for fixture, records in files.items():
        out = FIXTURES / fixture
        out.parent.mkdir(parents=True, exist_ok=True)
        payload = {"tensorflow": tf.__version__, "pipelines": records}
        out.write_text(json.dumps(payload, sort_keys=True, separators=(",", ":")) + "\n")
        print(f"{len(records)} pipelines recorded with TensorFlow {tf.__version__} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
