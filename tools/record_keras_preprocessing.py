"""Record what Keras 3 (on TensorFlow) gives for the preprocessing headrace covers on numpy
(``headrace.tfops.keras_preprocessing``: StringLookup, IntegerLookup, applications' preprocess_input)
into tests/data/tfops_fixtures/keras_preprocessing.json; tests/tfops/test_keras_preprocessing.py
replays the cases without Keras or TensorFlow.

Run with a Python that has TensorFlow and Keras 3, from the repository root:
``PYTHONPATH=src:. python tools/record_keras_preprocessing.py``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "tests" / "data" / "tfops_fixtures" / "keras_preprocessing.json"


def main() -> int:
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras
    import tensorflow as tf
    from tests.helpers.keras_preprocessing_cases import APPLICATION_CASES, LOOKUP_CASES

    records = []
    for case in LOOKUP_CASES:
        layer = getattr(keras.layers, case["layer"])(**case["args"])
        value = np.asarray(layer(tf.constant(case["input"])))
        if value.dtype == object:
            value = value.astype(bytes).astype(object)
            out = {"dtype": "string", "values": [v.decode() for v in value.reshape(-1).tolist()]}
        else:
            out = {"dtype": str(value.dtype), "values": value.reshape(-1).tolist()}
        out["shape"] = list(value.shape)
        out["vocabulary"] = [v if isinstance(v, str) else int(v) for v in layer.get_vocabulary()]
        records.append(out)
    applications = []
    for case in APPLICATION_CASES:
        module = getattr(keras.applications, case["model"])
        value = np.asarray(module.preprocess_input(np.asarray(case["input"], case["dtype"]), **case["args"]))
        applications.append(
            {"dtype": str(value.dtype), "shape": list(value.shape), "values": value.reshape(-1).tolist()}
        )
    payload = {"keras": keras.__version__, "lookups": records, "applications": applications}
    OUT.write_text(json.dumps(payload, sort_keys=True, separators=(",", ":")) + "\n")
    print(
        f"{len(records)} lookup and {len(applications)} preprocess_input cases recorded with Keras {keras.__version__}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
