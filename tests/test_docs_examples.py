"""Every code block of README.md and docs/*.md runs, as a reader would run it, and shows what it says.

Each page runs in a fresh Python process in an empty folder: its ``python`` and ``sh`` blocks in
order, sharing one namespace (tests/helpers/docs_blocks.py turns the page into that script, keeping
the page's line numbers in tracebacks). Outputs a page shows are checked: ``>>>`` examples, lines
``EXPR  # -> VALUE`` and ``output`` blocks. What a page leaves to the reader (their files, their
model, their training step) is made here: the files by ``DATA``, the names by ``SETUP``, both as
small as will do. ``AFTER`` iterates pipelines that a page builds but does not iterate, so their
functions run too.

A block that cannot run here is marked on the page, visibly, by ``<!-- skip-ci: REASON -->`` on
the line before it; ``SKIPPED`` below lists them all, and a marker not listed fails.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import socket
import subprocess
import sys

import numpy as np
import pytest

import headrace as hr
from tests.helpers.docs_blocks import LANGUAGES, parse_page, script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md"] + sorted(
    os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md"))
)

# (page, the first 60 characters of the block) -> why it does not run here. Keep this short.
SKIPPED = {
    ("README.md", "make demo   # creates .venv on first use; writes JPEG TFReco"): (
        "make test is the suite this test is part of, and both install packages into a new .venv"
    ),
    ("docs/remote_storage.md", "pip install 'headrace[s3]'        # fsspec + s3fs"): (
        "installs packages from the network"
    ),
    ("docs/tensorflow.md", "python3 -m venv /path/to/tf-venv"): "installs TensorFlow from the network",
}

# Modules a page needs; the `test` extra installs all but TensorFlow, so in `make test` only
# docs/tensorflow.md is skipped (it runs where TensorFlow is installed).
NEEDS = {
    "README.md": ["simplejpeg"],
    "docs/distributed.md": ["ray", "simplejpeg"],
    "docs/distributed_training.md": ["torch"],
    "docs/image.md": ["simplejpeg"],
    "docs/jax.md": ["jax"],
    "docs/keras.md": ["keras", "jax"],
    "docs/remote_storage.md": ["s3fs", "moto", "boto3"],
    "docs/tensorflow.md": ["tensorflow"],
    "docs/torch.md": ["torch", "torchdata"],
}

# Environment beyond the test's own, per page.
ENV = {
    "docs/jax.md": {"XLA_FLAGS": "--xla_force_host_platform_device_count=2"},
}


# Fixed ports a page names: the page is skipped while something else holds them.
PORTS = {"docs/remote_storage.md": 9000}


# --- the reader's files ----------------------------------------------------------------------------
def _examples(count: int, width: int = 16, tags: bool = False, label: str = "label") -> list[bytes]:
    rng = np.random.default_rng(0)
    records = []
    for i in range(count):
        features = {"x": rng.normal(size=width).astype(np.float32), label: i % 3}
        if tags:
            features["tags"] = np.arange(i % 4, dtype=np.int64)
        records.append(hr.io.serialize_example(features))
    return records


def _jpegs(count: int, height: int, width: int) -> tuple[list[bytes], list[int]]:
    jpegs, labels = [], []
    for i in range(count):
        pixels, label = hr.image.synthetic_image(i, 4, height, width)
        jpegs.append(hr.image.encode_jpeg(pixels))
        labels.append(label)
    return jpegs, labels


def data_readme(folder: str) -> None:
    from headrace.demo import write_dataset

    write_dataset(os.path.join(folder, "data"), num_images=300, num_shards=4)


def data_io(folder: str) -> None:
    hr.io.write_shards(_examples(512), os.path.join(folder, "train"), num_shards=2)
    jpegs, labels = _jpegs(6, 32, 32)
    for i, (jpeg, label) in enumerate(zip(jpegs, labels)):
        os.makedirs(os.path.join(folder, "images", f"class{label}"), exist_ok=True)
        with open(os.path.join(folder, "images", f"class{label}", f"{i}.jpg"), "wb") as f:
            f.write(jpeg)


def data_sources(folder: str) -> None:
    def text(name: str, content: str) -> None:
        os.makedirs(os.path.dirname(os.path.join(folder, name)) or folder, exist_ok=True)
        with open(os.path.join(folder, name), "w") as f:
            f.write(content)

    text("train.tsv", "".join(f"{i % 2}\tline {i}\n" for i in range(10)))
    hr.io.write_shards(_examples(40, label="y"), os.path.join(folder, "data", "train"), num_shards=2)
    os.makedirs(os.path.join(folder, "extra"))
    text("a.txt", "one\ntwo\n")
    text("b.txt", "three\r\nfour\n")
    with open(os.path.join(folder, "cifar.bin"), "wb") as f:
        f.write(bytes(range(256)) * 12 + bytes(3073 * 4 - 256 * 12))
    text("t.csv", "n,x,s\n1,0.5,a\n2,,b\n")
    text("data/part-0.csv", "a,b,y\n" + "".join(f"{i},{i / 2},{i % 2}\n" for i in range(50)))


def data_state(folder: str) -> None:
    hr.io.write_shards(_examples(300), os.path.join(folder, "train"), num_shards=3)


def data_parallel(folder: str) -> None:
    hr.io.write_shards(_examples(200), os.path.join(folder, "train"), num_shards=4)


def data_distributed(folder: str) -> None:
    hr.io.write_shards(_examples(60, tags=True), os.path.join(folder, "data", "train"), num_shards=3)
    jpegs, labels = _jpegs(6, 32, 32)  # for `headrace convert images/ ... --ray`
    for i, (jpeg, label) in enumerate(zip(jpegs, labels)):
        os.makedirs(os.path.join(folder, "images", f"class{label}"), exist_ok=True)
        with open(os.path.join(folder, "images", f"class{label}", f"{i}.jpg"), "wb") as f:
            f.write(jpeg)


DATA = {
    "README.md": data_readme,
    "docs/io.md": data_io,
    "docs/sources_and_ops_a.md": data_sources,
    "docs/state.md": data_state,
    "docs/parallel.md": data_parallel,
    "docs/porting.md": data_state,
    "docs/profile_and_tune.md": data_state,
    "docs/distributed.md": data_distributed,
}

# --- the reader's names: run before the page's first block --------------------------------------------
RECORDS = """
import glob
import headrace as hr
paths = sorted(glob.glob("train-*.tfrecord"))
spec = {"x": hr.io.FixedLenFeature([16], "float32"), "label": hr.io.FixedLenFeature([], "int64")}
steps = []
def train_step(batch):
    steps.append(batch)
"""

SETUP = {
    "docs/io.md": RECORDS
    + """
dataset_or_iterable_of_bytes = [b"record %d" % i for i in range(20_000)]
""",
    "docs/state.md": RECORDS
    + """
ds = hr.TFRecordDataset(paths).shuffle(64, seed=1).batch(32)
model = "the model"
def save(model, state):  # the reader's storage; the page reads it back as saved_state
    globals()["saved_state"] = state
pattern, seed, num_files, buffer_size = "train-*.tfrecord", 1, len(paths), 100
""",
    "docs/sources_and_ops_a.md": """
import glob
import headrace as hr
web, books, code = (hr.Dataset.from_tensor_slices([name] * 10) for name in (b"web", b"books", b"code"))
feature_spec = {"x": hr.io.FixedLenFeature([16], "float32"), "y": hr.io.FixedLenFeature([], "int64")}
""",
    "docs/parallel.md": RECORDS
    + """
filenames = paths
read_records = hr.TFRecordDataset
def decode_and_augment(record, rng):
    return hr.io.parse_single_example(record, spec)["x"] + rng.normal()
""",
    "docs/porting.md": RECORDS + "files = paths\n",
    "docs/profile_and_tune.md": RECORDS
    + """
ds = hr.TFRecordDataset(paths).map(lambda r: hr.io.parse_single_example(r, spec)).batch(32).prefetch(2)
""",
    "docs/remote_storage.md": """
import logging
import boto3
from moto.server import ThreadedMotoServer
import headrace as hr
logging.getLogger("werkzeug").setLevel(logging.ERROR)
_server = ThreadedMotoServer(ip_address="127.0.0.1", port=9000, verbose=False)  # the page's endpoint
_server.start()
_s3 = boto3.client(
    "s3", endpoint_url="http://127.0.0.1:9000", region_name="us-east-1",
    aws_access_key_id="...", aws_secret_access_key="...",
)
_s3.create_bucket(Bucket="bucket", ACL="public-read")  # public: the page's CLI line reads with anon=true
_options = {"key": "...", "secret": "...", "client_kwargs": {"endpoint_url": "http://127.0.0.1:9000"}}
for _shard in range(2):  # two shards of a set of 64
    _name = f"train-{_shard:05d}-of-00064.tfrecord"
    with hr.io.TFRecordWriter(f"s3://bucket/{_name}", storage_options=_options) as _writer:
        for _i in range(_shard, 8, 2):
            _writer.write(b"%d" % _i)
    _s3.put_object_acl(Bucket="bucket", Key=_name, ACL="public-read")
""",
    "docs/image.md": """
import headrace as hr
jpeg_bytes, labels = [], []
for i in range(8):
    pixels, label = hr.image.synthetic_image(i, 4, 240, 320)
    jpeg_bytes.append(hr.image.encode_jpeg(pixels))
    labels.append(label)
jpegs = jpeg_bytes
""",
}

# Run after the page's last block: pipelines the page builds without iterating them.
AFTER = {
    "docs/image.md": """
images, batch_labels = next(iter(ds))
assert images.shape == (8, 224, 224, 3) and images.dtype == np.float32, (images.shape, images.dtype)
image, label = train_preprocess(jpegs[0], labels[0])
assert image.shape == (224, 224, 3), image.shape
""",
    "docs/remote_storage.md": """
# the S3 block's pipeline (its name, records, is taken by a later block)
s3_records = files.interleave(lambda f: hr.TFRecordDataset(f, storage_options=options), cycle_length=8)
assert sorted(int(r) for r in s3_records) == list(range(8))
""",
    "docs/porting.md": "assert [len(b['label']) for b in ds] == [256]  # 300 records, drop_remainder\n",
    "docs/sources_and_ops_a.md": """
assert [int(e["label"]) for e in hr.Dataset.load("out/")] == [i % 2 for i in range(10)]  # train.tsv's
assert sorted(set(bytes(x) for x in mix)) == [b"books", b"code", b"web"]
""",
    "docs/state.md": """
assert len(steps) == 10 and len(list(it)) == 9  # restored after the first of 10 batches
# the global shuffle block's pipeline: every record once
assert sorted(bytes(r) for b in ds for r in b) == sorted(bytes(r) for r in hr.TFRecordDataset(paths))
""",
    "docs/io.md": "assert sorted(ds.global_shuffle(seed=1)) == sorted(dataset_or_iterable_of_bytes)\n",
}


def free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def page_blocks():
    return {page: parse_page(ROOT, page) for page in PAGES}


# --- the pages are well-formed -------------------------------------------------------------------------
def test_every_block_is_labelled_and_every_skip_is_listed():
    skipped = {}
    for page, blocks in page_blocks().items():
        for block in blocks:
            assert block.language in LANGUAGES, (
                f"{block.where}: label the fence with one of {LANGUAGES} (text: not code)"
            )
            if block.skip:
                skipped[(page, block.code.split("\n")[0][:60].rstrip())] = block.skip
    assert skipped == SKIPPED, "the skip-ci markers on the pages and SKIPPED here must agree"


RUN_PAGES = [
    page
    for page in PAGES
    if any(b.language in ("python", "sh") and not b.skip for b in parse_page(ROOT, page))
]


def test_every_page_becomes_a_script_that_compiles():
    for page in PAGES:
        source = script(parse_page(ROOT, page), _line_count(os.path.join(ROOT, page)), SETUP.get(page, ""))
        compile(source, page, "exec")  # a SyntaxError names the page and its line


# --- running a page ------------------------------------------------------------------------------------
def _line_count(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        return f.read().count("\n") + 1


def run_page(root: str, page: str, tmp_path, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``page``'s blocks in a fresh process in an empty folder holding the page's DATA."""
    work = tmp_path / "work"
    work.mkdir()
    if page in DATA:
        DATA[page](str(work))
    source = script(parse_page(root, page), _line_count(os.path.join(root, page)), SETUP.get(page, ""))
    if page in AFTER:
        source += f"exec(compile({AFTER[page]!r}, '<after {page}>', 'exec'))\n"
    runner = tmp_path / "scripts" / (os.path.basename(page) + ".py")
    runner.parent.mkdir()
    runner.write_text(source)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "headrace"  # this tree's command line, whatever is installed
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m headrace "$@"\n')
    shim.chmod(0o755)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "src"), os.environ.get("PYTHONPATH", "")]),
        PATH=os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]),
        JAX_PLATFORMS="cpu",
        CUDA_VISIBLE_DEVICES="",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=free_port(),
        PYTHONUNBUFFERED="1",
        **(extra_env or {}),
    )
    return subprocess.run(
        [sys.executable, str(runner)], cwd=work, env=env, capture_output=True, text=True, timeout=280
    )


def check_run(done: subprocess.CompletedProcess, blocks, page: str) -> None:
    """Fail naming the block that failed, with its traceback; or pass if every block ran to its end."""
    started = re.findall(r"^\[docs\] running (.*)$", done.stderr, flags=re.M)
    passed = re.findall(r"^\[docs\] passed (.*) in [0-9.]+ s$", done.stderr, flags=re.M)
    if done.returncode != 0:
        failing = started[-1] if started else f"the setup of {page}"
        pytest.fail(f"{failing} failed (exit code {done.returncode}):\n{done.stderr[-6000:]}", pytrace=False)
    print("\n".join(line for line in done.stderr.splitlines() if line.startswith("[docs] passed")))
    expected = [b.where for b in blocks if b.language in ("python", "sh") and not b.skip]
    assert passed == expected, f"blocks that did not finish: {sorted(set(expected) - set(passed))}"


# --- the pages run ---------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("page", RUN_PAGES)
def test_page_runs(page, tmp_path):
    for module in NEEDS.get(page, []):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    if page in PORTS:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", PORTS[page])) == 0:
                pytest.skip(f"port {PORTS[page]}, which {page} names, is in use")
    done = run_page(ROOT, page, tmp_path, ENV.get(page))
    check_run(done, parse_page(ROOT, page), page)


# --- the checker itself: a page that is right passes, each kind of wrong page fails where it is wrong ---
GOOD_PAGE = """# A page

```python
import headrace as hr
ds = hr.Dataset.range(4)
ds.map(lambda x: x * 2)  # -> 0, 2, 4, 6
ds.batch(3)  # -> [0, 1, 2], [3]  # a remark after the value
```

<!-- skip-ci: shows that a marked block does not run -->
```python
raise SystemExit("a skipped block ran")
```

```python
>>> int(ds.reduce(0, lambda a, x: a + x))
6
```

```python
print("total", sum(int(x) for x in ds))
```

```output
total 6
```

```sh
echo hello > hello.txt && test -s hello.txt
```

```text
not code
```
"""

BAD_PAGES = {
    "a wrong arrow value": (
        "```python\nimport headrace as hr\n```\n\n```python\nhr.Dataset.range(3)  # -> 0, 1, 3\n```\n",
        "block 2 (line 5)",
        "the page shows 0, 1, 3 but the code gives [0, 1, 2]",
    ),
    "a wrong doctest": (
        "```python\n>>> 1 + 1\n3\n```\n",
        "block 1 (line 1)",
        "Expected:\n    3\nGot:\n    2",
    ),
    "a wrong output block": (
        "```python\nprint('hello')\n```\n\n```output\ngoodbye\n```\n",
        "block 1 (line 1)",
        "but its output block shows\ngoodbye",
    ),
    "a failing shell block": ("```sh\nfalse\n```\n", "block 1 (line 1)", "exited with 1"),
    "an exception": (
        "Text.\n\n```python\nx = 1\n\n1 / 0\n```\n",
        "block 1 (line 3)",
        'page.md.py", line 6, in <module>\n    1 / 0',
    ),
}


def _write_page(tmp_path, text: str) -> str:
    root = tmp_path / "root"
    root.mkdir()
    (root / "page.md").write_text(text)
    return str(root)


def test_the_checker_passes_a_right_page_and_skips_what_is_marked(tmp_path):
    root = _write_page(tmp_path, GOOD_PAGE)
    blocks = parse_page(root, "page.md")
    assert [b.language for b in blocks] == ["python", "python", "python", "python", "sh", "text"]
    assert [b.checks for b in blocks] == [2, 0, 1, 1, 0, 0] and blocks[1].skip
    done = run_page(root, "page.md", tmp_path)
    check_run(done, blocks, "page.md")
    assert "total 6" in done.stdout and (tmp_path / "work" / "hello.txt").exists()


@pytest.mark.parametrize("case", sorted(BAD_PAGES))
def test_the_checker_fails_a_wrong_page_naming_the_block(case, tmp_path):
    text, where, message = BAD_PAGES[case]
    root = _write_page(tmp_path, text)
    with pytest.raises(pytest.fail.Exception) as failure:
        check_run(run_page(root, "page.md", tmp_path), parse_page(root, "page.md"), "page.md")
    assert f"page.md {where} failed" in str(failure.value) and message in str(failure.value), failure.value
