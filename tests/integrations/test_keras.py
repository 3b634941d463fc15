import importlib.util
import json
import os
import subprocess
import sys

import pytest

if importlib.util.find_spec("keras") is None:  # not imported here: each test picks a backend in its process
    pytest.skip("keras is not installed", allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BACKENDS = {"jax": "jax", "torch": "torch", "tensorflow": "tensorflow"}


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_fit_evaluate_predict_take_a_headrace_dataset(backend, tmp_path):
    if importlib.util.find_spec(BACKENDS[backend]) is None:
        pytest.skip(f"{BACKENDS[backend]} is not installed")
    out = tmp_path / "keras.json"
    env = dict(
        os.environ,
        KERAS_BACKEND=backend,
        JAX_PLATFORMS="cpu",
        CUDA_VISIBLE_DEVICES="",
        PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "src"), os.environ.get("PYTHONPATH", "")]),
    )
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "keras_worker.py"), str(out)],
        env=env,
        capture_output=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    result = json.loads(out.read_text())
    assert result["backend"] == backend
    assert result["batches"][:4] == [7, 7, 7, 7]  # epochs end at the cardinality: no steps_per_epoch
    assert result["batches"][4:] == [3, 3]  # an infinite dataset with steps_per_epoch
    assert len(result["loss"]) == len(result["val_loss"]) == 4
    assert result["loss"][-1] < result["loss"][0]
    assert result["predict_shape"] == [50, 1]
    assert result["evaluate"] == pytest.approx(result["val_loss"][-1], rel=1e-4)
    assert result["from_iterator"] == pytest.approx(result["same_model"], rel=1e-4)
    assert result["endless_epochs"] == 2
    assert "headrace Dataset" in result["refused"] and "`y`" in result["refused"]
