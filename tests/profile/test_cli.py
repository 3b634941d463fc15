import json
import os
import sys

from headrace.cli import main

SCRIPT = """
import time
import headrace as hr

def decode(x):
    time.sleep(0.001)
    return x

for _ in hr.Dataset.range(50).map(decode).batch(5):
    pass
print("script ran with", __import__("sys").argv[1:])
"""


def test_profile_runs_a_script_and_reports(tmp_path, capsys, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    assert main(["profile", "--out", str(tmp_path / "out"), str(script), "--lr", "3"]) == 0
    out = capsys.readouterr().out
    assert "script ran with ['--lr', '3']" in out
    assert "Bottleneck: map(decode at train.py:" in out
    assert os.path.exists(tmp_path / "out" / "pipeline1.html")
    assert os.path.exists(tmp_path / "out" / "pipeline1.trace.json")
    trace = json.load(open(tmp_path / "out" / "pipeline1.trace.json"))
    batches = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"].startswith("batch(")]
    assert len(batches) >= 10  # calls were recorded while the script ran: one slice per batch
    profile_dir = tmp_path / "out" / "tensorboard" / "plugins" / "profile" / "pipeline1"
    assert [name for name in os.listdir(profile_dir) if name.endswith(".trace.json.gz")]
    assert "tensorboard --logdir" in out and "ui.perfetto.dev" in out


STOPS = """
import os, signal
import headrace as hr

for i, _ in enumerate(hr.Dataset.range(1_000).map(lambda x: x * 2).batch(5)):
    if i == 50:
        {stop}
"""


def _profile_child(tmp_path, stop: str):
    import subprocess

    script = tmp_path / "train.py"
    script.write_text(STOPS.format(stop=stop))
    return subprocess.run(
        [sys.executable, "-m", "headrace", "profile", "--out", str(tmp_path / "out"), str(script)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_profile_reports_and_writes_its_files_after_ctrl_c(tmp_path):
    child = _profile_child(tmp_path, "os.kill(os.getpid(), signal.SIGINT)")
    assert child.returncode == 130, child.stderr[-2000:]
    assert "interrupted; reporting on what ran" in child.stderr
    assert (
        "Bottleneck:" in child.stdout
        or "Output-bound" in child.stdout
        or "headrace pipeline report" in child.stdout
    )
    assert os.path.exists(tmp_path / "out" / "pipeline1.html")
    assert os.path.exists(tmp_path / "out" / "pipeline1.trace.json")


def test_profile_reports_after_the_script_raises(tmp_path):
    child = _profile_child(tmp_path, "raise ValueError('boom in training')")
    assert child.returncode == 1
    assert "ValueError: boom in training" in child.stderr
    assert "headrace pipeline report" in child.stdout
    assert os.path.exists(tmp_path / "out" / "pipeline1.html")


EPOCHS = """
import headrace as hr

ds = hr.Dataset.range(50).map(lambda x: x * 2, name="double").batch(5)
for epoch in range(3):
    it = iter(ds)
    for _ in it:
        pass
"""


def test_profile_reports_over_the_whole_run_not_the_first_epoch(tmp_path, capsys, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text(EPOCHS)
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    assert main(["profile", "--out", str(tmp_path / "out"), str(script)]) == 0
    out = capsys.readouterr().out
    assert "=== pipeline 1 of 1: the whole run (3 x iter()) ===" in out
    assert "headrace pipeline report over 3 runs (epochs, each an iter(ds)): 30 elements in" in out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines() if line.strip().startswith("map(")}
    assert rows == {"map(double)": "150"}, out  # every epoch's calls count
    trace = json.load(open(tmp_path / "out" / "pipeline1.trace.json"))
    batches = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"].startswith("batch(")]
    # each epoch: ten batches and the call that found the end, the epochs one after another
    assert len(batches) == 33
    assert [e["ts"] for e in batches] == sorted(e["ts"] for e in batches)


def test_out_after_the_script_goes_to_the_script_and_says_so(tmp_path, capsys, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.chdir(tmp_path)
    assert main(["profile", str(script), "--out", "mine"]) == 0
    captured = capsys.readouterr()
    assert "script ran with ['--out', 'mine']" in captured.out
    assert "'--out' after the script is passed to the script" in captured.err
    assert "Writing to 'headrace-profile'" in captured.err
    assert os.path.exists(tmp_path / "headrace-profile" / "pipeline1.html")
    assert not os.path.exists(tmp_path / "mine")
