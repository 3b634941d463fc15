import os
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


def test_quick_demo_trains_and_resumes(tmp_path):
    # As a user runs it; TMPDIR shows what it leaves behind: the profile folder it names, no data.
    env = dict(os.environ, TMPDIR=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "headrace", "demo", "--quick"],
        env=env,
        capture_output=True,
        text=True,
        timeout=500,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "images/s" in out and "training loop waited" in out and "speed-up" in out
    assert "Bottleneck:" in out
    assert "equals an uninterrupted one: True" in out
    assert "PyTorch loop fed through headrace.torch.to_torch" in out or "PyTorch is not installed" in out
    assert "state_dict resumes exactly: False" not in out
    left = sorted(name for name in os.listdir(tmp_path) if name.startswith("headrace"))
    assert len(left) == 1 and left[0].startswith("headrace-demo-profile-"), left
    profile = tmp_path / left[0]
    assert str(profile / "optimised.html") in out
    assert sorted(os.listdir(profile)) == [
        "batch_first.html",
        "batch_first.trace.json",
        "naive.html",
        "naive.trace.json",
        "optimised.html",
        "optimised.trace.json",
        "tensorboard",
    ]


def test_demo_out_folder_is_the_users(tmp_path, monkeypatch):
    import headrace.demo  # noqa: PLC0415

    seen = {}
    monkeypatch.setattr(headrace.demo, "run_demo", lambda quick, out: seen.update(quick=quick, out=out) or 0)
    assert main(["demo", "--quick", "--out", str(tmp_path / "p")]) == 0
    assert seen == {"quick": True, "out": str(tmp_path / "p")}
