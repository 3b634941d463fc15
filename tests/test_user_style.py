"""The README's example, run the way a new user runs it: copied into a script with no
``if __name__ == "__main__":`` guard, or piped into ``python -``, over TFRecord files written with
headrace's own writer. Generic scripts of this kind (and DataLoader workers) are covered in
tests/runtime/test_processes.py; these tests hold the README itself to the same bar, so an edit that
breaks its example fails here."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import headrace as hr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.timeout(240)

# Replaces the loop body ``...`` so that a run prints what it read: equal digests mean equal data.
DIGEST_BODY = "        digest.update(images.tobytes() + labels.tobytes())\n"
DIGEST_END = "print('digest', digest.hexdigest())\n"


def readme_example() -> str:
    with open(os.path.join(ROOT, "README.md")) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)
    assert blocks, "README.md has no python example"
    return blocks[0]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A folder holding data/train-*.tfrecord as the README expects: JPEG images and labels."""
    pytest.importorskip("simplejpeg")
    folder = tmp_path_factory.mktemp("user")
    rng = np.random.default_rng(0)
    records = [
        hr.io.serialize_example(
            {
                "image": hr.image.encode_jpeg(rng.integers(0, 255, (40, 48, 3), dtype=np.uint8)),
                "label": i % 10,
            }
        )
        for i in range(600)
    ]
    hr.io.write_shards(records, str(folder / "data" / "train"), num_shards=4)
    return folder


def run(workdir, script: str, *, stdin: bool = False) -> subprocess.CompletedProcess:
    path = workdir / "example.py"
    path.write_text(script)
    args, text = ([sys.executable, "-"], script) if stdin else ([sys.executable, str(path)], None)
    done = subprocess.run(args, input=text, cwd=workdir, capture_output=True, text=True, timeout=200)
    assert done.returncode == 0, f"the script failed (stdin={stdin}):\n{done.stderr[-4000:]}"
    return done


def with_digest(script: str) -> str:
    body = "        ...\n"
    assert script.count(body) == 1, "the README example's loop body changed: update DIGEST_BODY"
    return "import hashlib\ndigest = hashlib.sha256()\n" + script.replace(body, DIGEST_BODY) + DIGEST_END


def forced(script: str, executor: str) -> str:
    """The README example with its map on ``executor``, run per element (not vectorised, which needs
    no workers), so the workers really compute it."""
    call = "num_parallel_calls=hr.AUTOTUNE, seed=1)"
    assert script.count(call) == 1, "the README example's map call changed: update forced()"
    script = script.replace(call, f"num_parallel_calls=hr.AUTOTUNE, seed=1, executor={executor!r})")
    assert script.count("    .prefetch(hr.AUTOTUNE)\n)") == 1, (
        "the README example's end changed: update forced()"
    )
    return script.replace(
        "    .prefetch(hr.AUTOTUNE)\n)",
        "    .prefetch(hr.AUTOTUNE)\n)\n_options = hr.Options()\n"
        "_options.experimental_optimization.map_vectorization = False\nds = ds.with_options(_options)",
        1,
    )


@pytest.mark.slow
def test_the_readme_example_runs_as_an_unguarded_script(workdir):
    done = run(workdir, readme_example())
    # one report per epoch, each naming the map stage of the user's script
    assert done.stdout.count("headrace pipeline report") == 3, done.stdout[-2000:]
    assert "map(decode at example.py:" in done.stdout


@pytest.mark.slow
def test_the_readme_example_runs_on_stdin(workdir):
    done = run(workdir, readme_example(), stdin=True)
    assert done.stdout.count("headrace pipeline report") == 3, done.stdout[-2000:]


@pytest.mark.slow
def test_the_readme_example_reads_the_same_data_on_threads_and_on_processes(workdir):
    # process workers run decode (defined in the unguarded __main__) with the same per-element rng
    outputs = {
        executor: run(workdir, with_digest(forced(readme_example(), executor))).stdout
        for executor in ("thread", "process")
    }
    assert "process: executor='process' was given" in outputs["process"], outputs["process"][-2000:]
    digests = {executor: out.split()[-1] for executor, out in outputs.items()}
    assert digests["thread"] == digests["process"], digests


@pytest.mark.slow
def test_the_readme_example_under_headrace_profile_names_the_map(tmp_path):
    # The shape a first user tried: 2,000 records, 8 batches an epoch. Epoch 1 (with the executor
    # probe and the compile in it) and the whole-run summary both name the user's map.
    pytest.importorskip("simplejpeg")
    rng = np.random.default_rng(0)
    records = [
        hr.io.serialize_example(
            {
                "image": hr.image.encode_jpeg(rng.integers(0, 255, (40, 48, 3), dtype=np.uint8)),
                "label": i % 10,
            }
        )
        for i in range(2_000)
    ]
    hr.io.write_shards(records, str(tmp_path / "data" / "train"), num_shards=4)
    (tmp_path / "example.py").write_text(readme_example())
    done = subprocess.run(
        [sys.executable, "-m", "headrace", "profile", "example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=200,
        env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src")),
    )
    assert done.returncode == 0, done.stderr[-4000:]
    reports = done.stdout.split("headrace pipeline report")[1:]
    assert len(reports) == 4, done.stdout[-3000:]  # one per epoch, then the whole run
    assert reports[0].startswith(": 8 elements"), reports[0]
    assert reports[-1].startswith(" over 3 runs (epochs, each an iter(ds)): 24 elements"), reports[-1]
    for report in (reports[0], reports[-1]):  # run vectorised, inside the batch stage
        assert "Bottleneck: map(decode at example.py:" in report, report
    assert (tmp_path / "headrace-profile" / "pipeline1.html").exists()


# A project as users lay it out: a helper module beside the script, data files named relative to
# the folder they run from. Process workers start in "/", so without the parent's folder and import
# path a stdin script cannot import its helper and relative names point elsewhere.
HELPER = """
def read_label(x):
    with open("labels.txt") as f:  # relative to the folder the user runs from
        return int(f.read()) + int(x)
"""

PROJECT_SCRIPT = """
import headrace as hr
from helper import read_label

ds = hr.Dataset.range(6).map(read_label, num_parallel_calls=2, executor="process")
print(sorted(int(v) for v in ds))
ds = hr.Dataset.range(6).map(read_label).parallelize(2)
print(sorted(int(v) for v in ds))
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "helper.py").write_text(HELPER)
    (tmp_path / "labels.txt").write_text("100")
    return tmp_path


@pytest.mark.parametrize("stdin", [False, True], ids=["script", "stdin"])
def test_process_workers_see_the_users_folder_and_modules(project, stdin):
    done = run(project, PROJECT_SCRIPT, stdin=stdin)
    expected = str([100 + i for i in range(6)])
    assert done.stdout.split("\n")[:2] == [expected, expected], done.stdout
