"""A new user's first hour, run as they run it: scripts with no main guard in a subprocess, and the
``headrace`` command on real files. Each test is one trap a first user fell into (issue 24)."""

from __future__ import annotations

import importlib.util
import os
import pty
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import headrace as hr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.timeout(300)


def env(**extra: str) -> dict:
    paths = [os.path.join(ROOT, "src"), os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p), **extra)


def run_script(folder, source: str, *, ok: bool = True, **extra: str) -> subprocess.CompletedProcess:
    path = folder / "script.py"
    path.write_text(textwrap.dedent(source))
    done = subprocess.run(
        [sys.executable, str(path)], cwd=folder, env=env(**extra), capture_output=True, text=True, timeout=280
    )
    if ok:
        assert done.returncode == 0, done.stderr[-4000:]
    return done


def headrace_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "headrace", *args], env=env(), capture_output=True, text=True, timeout=280
    )


# 1. inspect: bytes features summarised, progress on a terminal for big files


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inspect")
    rng = np.random.default_rng(0)
    jpeg = hr.image.encode_jpeg(rng.integers(0, 255, (160, 160, 3), dtype=np.uint8))
    examples = [
        hr.io.serialize_example({"image": jpeg, "label": i, "name": f"img{i}.jpg", "caption": "a cat " * 30})
        for i in range(4)
    ]
    hr.io.write_shards(examples, str(folder / "jpeg"), num_shards=1)
    blobs = [hr.io.serialize_example({"blob": rng.bytes(1 << 20)}) for _ in range(3)]
    hr.io.write_shards(blobs, str(folder / "big"), num_shards=1)
    return {name: str(folder / f"{name}-00000-of-00001.tfrecord") for name in ("jpeg", "big")}


def test_inspect_summarises_bytes_features(shards):
    done = headrace_command("inspect", shards["jpeg"], shards["big"])
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # Before: 185 KB (the JPEG as hex, three times) and 6.3 MB (1 MB records as hex).
    assert len(out) < 3000, len(out)
    assert "image: bytes: [<JPEG, " in out and "bytes: ffd8ffe0" in out
    assert "name: bytes: ['img0.jpg']" in out  # short text stays as it is
    assert "caption: bytes: [<UTF-8 text, 180 bytes: 'a cat a cat" in out
    assert out.count("blob: bytes: [<1,048,576 bytes: ") == 3
    assert done.stderr == ""  # not a terminal: no progress line

    full = headrace_command("inspect", "--full", "--samples", "1", shards["jpeg"])
    jpeg = hr.io.parse_single_example(
        next(iter(hr.TFRecordDataset(shards["jpeg"]))), {"image": hr.io.FixedLenFeature([], hr.string)}
    )["image"]
    assert jpeg.hex() in full.stdout and "'" + "a cat " * 30 + "'" in full.stdout


def test_inspect_shows_progress_on_a_terminal_for_a_big_file(tmp_path):
    path = str(tmp_path / "large.tfrecord")
    with hr.io.TFRecordWriter(path) as writer:
        block = np.random.default_rng(1).bytes(1 << 20)
        for _ in range(66):  # 66 MB: above the size where a scan shows its progress
            writer.write(block)
    parent, child = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "headrace", "inspect", path],
            env=env(),
            stdout=subprocess.PIPE,
            stderr=child,
            text=True,
            timeout=280,
        )
        os.close(child)
        child = -1
        shown = b""
        while True:
            try:
                data = os.read(parent, 65536)
            except OSError:  # the terminal closed
                break
            if not data:
                break
            shown += data
    finally:
        if child >= 0:
            os.close(child)
        os.close(parent)
    assert done.returncode == 0
    assert b"inspect " + path.encode() in shown and b"MB" in shown
    assert shown.endswith(b"\r\x1b[K")  # the progress line is erased before the report
    assert "records: 66" in done.stdout and "<1,048,576 bytes: " in done.stdout


# 2. Keras takes headrace Datasets after a plain `import headrace`, in either import order

KERAS_FIT = """
    import numpy as np
    x = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    ds = hr.Dataset.from_tensor_slices((x, x.sum(axis=1, keepdims=True))).batch(16)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(ds, epochs=2, verbose=0)
    print("epochs", len(history.history["loss"]), "loader", type(keras.__spec__.loader).__name__)
"""


@pytest.mark.slow
@pytest.mark.parametrize("first", ["headrace", "keras"])
def test_keras_fit_needs_only_import_headrace(tmp_path, first):
    if importlib.util.find_spec("keras") is None or importlib.util.find_spec("jax") is None:
        pytest.skip("keras and jax are not installed")
    imports = "import headrace as hr\nimport keras\n"
    if first == "keras":
        imports = "import keras\nimport headrace as hr\n"
    done = run_script(
        tmp_path, imports + textwrap.dedent(KERAS_FIT), KERAS_BACKEND="jax", JAX_PLATFORMS="cpu"
    )
    # Keras's module keeps its own loader: the hook leaves nothing of itself behind.
    assert "epochs 2 loader SourceFileLoader" in done.stdout


def test_import_headrace_imports_no_keras(tmp_path):
    done = run_script(
        tmp_path,
        """
        import sys
        import headrace
        loaded = [m for m in sys.modules if m.split(".")[0] == "keras" or m == "headrace.keras"]
        hooks = [type(f).__name__ for f in sys.meta_path if type(f).__module__ == "headrace.keras_hook"]
        print("loaded", loaded, "hooks", hooks)
        """,
    )
    assert "loaded [] hooks ['_KerasFinder']" in done.stdout


# 3. DataLoader's default batch_size=1 over batched elements


@pytest.mark.slow
def test_dataloader_default_batch_size_warns_once(tmp_path):
    pytest.importorskip("torch")
    done = run_script(
        tmp_path,
        """
        import torch
        import headrace as hr
        import headrace.torch

        batched = headrace.torch.IterableDataset(hr.Dataset.range(10).batch(4).map(lambda b: b * 2))
        print("default", [tuple(b.shape) for b in torch.utils.data.DataLoader(batched)], flush=True)
        print("none", [tuple(b.shape) for b in torch.utils.data.DataLoader(batched, batch_size=None)])
        rows = headrace.torch.IterableDataset(hr.Dataset.range(10))
        print("rows", [tuple(b.shape) for b in torch.utils.data.DataLoader(rows, batch_size=4)])
        workers = headrace.torch.IterableDataset(hr.Dataset.range(10).batch(4))
        loader = torch.utils.data.DataLoader(workers, num_workers=2)
        for epoch in range(2):  # fresh workers each epoch: still one warning
            print("workers", sorted(tuple(b.shape) for b in loader), flush=True)
        """,
    )
    assert "default [(1, 4), (1, 4), (1, 2)]" in done.stdout  # torch's behaviour, now with a warning
    assert "none [(4,), (4,), (2,)]" in done.stdout and "rows [(4,), (4,), (2,)]" in done.stdout
    assert done.stderr.count("Pass batch_size=None to the DataLoader") == 2, done.stderr  # two datasets


# 4. Read-only elements: numpy's message gets a note saying why and what to do


def test_in_place_edit_of_a_read_only_element_says_how_to_copy(tmp_path):
    done = run_script(
        tmp_path,
        """
        import numpy as np
        import headrace as hr

        images = np.zeros((4, 2, 2), np.float32)

        def scale(x):
            x /= 255
            return x

        for x in hr.Dataset.from_tensor_slices(images).map(scale):
            pass
        """,
        ok=False,
    )
    assert "ValueError: output array is read-only" in done.stderr
    assert "copy with np.array(x) to edit one in place" in done.stderr


# 5. Small traps: glob patterns given to readers


def test_a_pattern_given_as_a_file_name_says_to_expand_it(tmp_path):
    done = run_script(
        tmp_path,
        """
        import headrace as hr

        for name, make in [
            ("tfrecord", lambda: hr.TFRecordDataset("data/train-*.tfrecord")),
            ("text", lambda: list(hr.TextLineDataset("logs/day-?.txt"))),
            ("plain", lambda: hr.TFRecordDataset("data/train.tfrecord")),
        ]:
            try:
                make()
            except (hr.InvalidArgumentError, FileNotFoundError) as exc:
                print(name, "list_files" in str(exc) and "hr.io.matching_files" in str(exc))
        """,
    )
    assert done.stdout.split() == ["tfrecord", "True", "text", "True", "plain", "False"]


# 6. Closures and module globals are frozen when the transformation is created


def test_module_level_loop_and_global_dict_are_frozen_or_warned(tmp_path):
    done = run_script(
        tmp_path,
        """
        import warnings
        import headrace as hr

        labelled = []
        for i in range(3):
            labelled.append(hr.Dataset.range(2).map(lambda x: (x, i)))
        print("loop", [[int(label) for _, label in ds] for ds in labelled])

        SCALE = 2
        scaled = hr.Dataset.range(3).map(lambda x: x * SCALE, num_parallel_calls=2)
        SCALE = 100
        print("rebound", [int(x) for x in scaled])

        LABELS = {"cat": 0}
        named = hr.Dataset.from_tensor_slices([b"cat"]).map(lambda n: LABELS[n.decode()])
        LABELS["cat"] = 7
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            print("dict", [int(x) for x in named])
        print("warned", [w.category.__name__ for w in caught])

        calls = 0
        def count(x):
            global calls
            calls += 1
            return x
        print("counter", len(list(hr.Dataset.range(4).map(count))), calls)
        """,
    )
    lines = done.stdout.splitlines()
    assert lines[0] == "loop [[0, 0], [1, 1], [2, 2]]"  # tf.data's answer; late binding gave 2s
    assert lines[1] == "rebound [0, 2, 4]"
    assert lines[2] == "dict [7]" and lines[3] == "warned ['CapturedValueChanged']"
    assert lines[4] == "counter 4 4"  # a function that assigns a global keeps the module's


# The live progress line: the total and an ETA when the length is known, startup kept apart


def test_progress_line_shows_the_total_and_keeps_startup_apart(tmp_path):
    done = run_script(
        tmp_path,
        """
        import headrace as hr
        known = hr.Dataset.range(30).map(lambda x: x + 1).batch(3)           # cardinality 10
        unknown = hr.Dataset.range(60).filter(lambda x: x % 2 == 0).batch(3)  # unknown: 10
        for ds in (known, unknown, unknown):
            for batch in hr.profile.progress(ds, every_seconds=0):
                pass
        """,
    )
    runs = done.stderr.split("(whole run)\n")[:3]
    assert len(runs) == 3, done.stderr
    known, first, second = (run.splitlines() for run in runs)
    assert known[0].startswith("headrace: 1 of 10 elements, starting (")  # startup: no rate yet
    assert any("of 10 elements" in line and ", ETA " in line for line in known[1:-1]), known
    assert known[-1].startswith("headrace: 10 of 10 elements, ")
    assert not any(" of " in line for line in first)  # the length is not known yet
    assert second[-1].startswith("headrace: 10 of 10 elements, ")  # the first epoch's count
