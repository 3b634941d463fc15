"""The complete example of every framework page runs (each in its own process, on the CPU)."""

import importlib.util
import os
import re
import socket
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DOCS = os.path.join(ROOT, "docs")

# (page, block index, modules it needs, extra environment)
CASES = [
    ("torch.md", 0, ["torch"], {}),
    ("torch.md", 1, ["torch", "torchdata"], {}),
    ("jax.md", 0, ["jax"], {"XLA_FLAGS": "--xla_force_host_platform_device_count=2"}),
    ("keras.md", 0, ["keras", "jax"], {"KERAS_BACKEND": "jax"}),
    ("keras.md", 0, ["keras", "torch"], {"KERAS_BACKEND": "torch"}),
    ("tensorflow.md", 0, ["tensorflow"], {}),
    ("distributed_training.md", 0, ["torch"], {}),
]


def blocks(page: str) -> list[str]:
    with open(os.path.join(DOCS, page)) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)


def free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("page", "index", "needs", "extra"), CASES, ids=lambda v: str(v) if isinstance(v, (str, int)) else ""
)
def test_page_example_runs(page, index, needs, extra, tmp_path):
    for module in needs:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    script = tmp_path / "example.py"
    script.write_text(blocks(page)[index])
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "src"), os.environ.get("PYTHONPATH", "")]),
        JAX_PLATFORMS="cpu",
        CUDA_VISIBLE_DEVICES="",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=free_port(),
        **extra,
    )
    proc = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, timeout=240, cwd=tmp_path
    )
    if proc.returncode != 0 and b"terminate called without an active exception" in proc.stderr:
        # Known, not fixed: a gloo rank of the DDP example sometimes aborts in C++ as it exits, after
        # its work (about 1 run in 3 under load). Once more, on a new port; a second abort fails.
        env["MASTER_PORT"] = free_port()
        proc = subprocess.run(
            [sys.executable, str(script)], env=env, capture_output=True, timeout=240, cwd=tmp_path
        )
    assert proc.returncode == 0, f"{page} example {index} failed:\n{proc.stderr.decode()[-3000:]}"


def test_every_page_has_its_example():
    for page in {case[0] for case in CASES}:
        assert blocks(page), f"docs/{page} has no python example"
