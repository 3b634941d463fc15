"""setup.py's build hook (it compiles the kernels into the wheel)."""

import os
import runpy
from pathlib import Path

import setuptools

SETUP = Path(__file__).resolve().parents[1] / "setup.py"


def _hook(monkeypatch) -> dict:
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)  # load it without building
    return runpy.run_path(str(SETUP))


def test_the_warmup_keeps_the_build_environments_path(monkeypatch):
    # pip's isolated build reaches numpy and numba through PYTHONPATH while the target venv is still
    # empty: the warm-up replaced it, failed to import numpy, and the wheel shipped no kernels.
    warmup_env = _hook(monkeypatch)["warmup_env"]
    env = warmup_env({"PYTHONPATH": "/pip-build-env/site", "NUMBA_CACHE_DIR": "/x", "HOME": "/h"}, "/b/lib")
    assert env["PYTHONPATH"].split(os.pathsep) == ["/b/lib", "/pip-build-env/site"]
    assert "NUMBA_CACHE_DIR" not in env and env["HOME"] == "/h"
    assert warmup_env({}, "/b/lib")["PYTHONPATH"] == "/b/lib"
