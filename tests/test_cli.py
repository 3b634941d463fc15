import subprocess
import sys

import headrace
from headrace.cli import main


def test_version(capsys):
    try:
        main(["--version"])
    except SystemExit as exit_:
        assert exit_.code == 0
    assert capsys.readouterr().out.strip() == f"headrace {headrace.__version__}"


def test_python_dash_m_and_no_command():
    result = subprocess.run([sys.executable, "-m", "headrace"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "demo" in result.stdout


def test_quick_demo_trains_and_resumes(capsys):
    assert main(["demo", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "images/s" in out and "training loop waited" in out and "speed-up" in out
    assert "Bottleneck:" in out
    assert "equals an uninterrupted one: True" in out
    assert "PyTorch loop fed through headrace.torch.to_torch" in out or "PyTorch is not installed" in out
    assert "state_dict resumes exactly: False" not in out
