"""Record what tf.data yields for the ported public pipelines whose TF math runs unchanged on headrace
(tests/helpers/tf_math_pipelines.py, tests/helpers/tf1_math_pipelines.py) into
tests/data/tfops_fixtures/pipelines.json; tests/compat/test_pipelines_tf_math.py replays them on headrace
without TensorFlow.

Run with a Python that has TensorFlow, numpy, Pillow and headrace's dependencies, from the repository root:
``PYTHONPATH=src:. python tools/record_tf_math_pipelines.py``. The pipeline modules are written with
``import headrace as tf`` (``import headrace.compat.v1 as tf``); this script rebinds their ``tf`` to
TensorFlow (``tensorflow.compat.v1``), which is the unported source.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "tests" / "data" / "tfops_fixtures" / "pipelines.json"


def main() -> int:
    import tensorflow as tf
    from tests.helpers import tf1_math_pipelines, tf_math_pipelines

    tf.config.set_visible_devices([], "GPU")
    tf_math_pipelines.tf = tf
    tf1_math_pipelines.tf = tf.compat.v1
    records = {}
    for module in (tf_math_pipelines, tf1_math_pipelines):
        for name, pipeline in module.PIPELINES.items():
            with tempfile.TemporaryDirectory() as tmp:
                records[name] = tf_math_pipelines.fixture_form(pipeline(os.path.realpath(tmp)))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {"tensorflow": tf.__version__, "pipelines": records}, sort_keys=True, separators=(",", ":")
        )
        + "\n"
    )
    print(f"{len(records)} pipelines recorded with TensorFlow {tf.__version__} in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
