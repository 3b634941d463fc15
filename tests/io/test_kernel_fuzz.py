"""One fuzz target per compiled kernel, run by tools/fuzz.py with numba's bounds checks on.

The runner executes the targets in a child process with ``NUMBA_BOUNDSCHECK=1`` (and the raw
unaligned loads of crc_kernels replaced by checked ones), so an out-of-bounds access shows as an
IndexError (a failure), and a SIGSEGV or a hang is caught and counted by the parent.
"""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUZZ = os.path.join(ROOT, "tools", "fuzz.py")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import fuzz  # noqa: E402

INPUTS = 100


def run_fuzz(*args: str, env: dict | None = None) -> dict:
    completed = subprocess.run(
        [sys.executable, FUZZ, "--json", *args],
        capture_output=True,
        text=True,
        timeout=540,
        env={**os.environ, **(env or {})},
    )
    assert completed.stdout, completed.stderr[-3000:]
    return json.loads(completed.stdout)


@pytest.fixture(scope="module")
def report() -> dict:
    return run_fuzz("--inputs", str(INPUTS), "--boundscheck", "--seed", "11")


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("target", sorted(fuzz.TARGETS))
def test_kernel_fuzz_target_with_boundscheck(report, target):
    assert report["boundscheck"]
    row = report["targets"][target]
    assert row["inputs"] >= INPUTS
    assert (row["crashes"], row["hangs"], row["failures"]) == (0, 0, 0), report["examples"]


def test_every_compiled_kernel_has_a_target():
    from headrace.io.codec import example_kernels
    from headrace.io.records import crc_kernels, framing_kernels

    kernels = set()
    for module, public in (
        (
            example_kernels,
            (
                "locate_features",
                "inspect_features",
                "fill_numeric",
                "fill_bytes",
                "fill_fixed",
                "explode_feature_lists",
            ),
        ),
        (framing_kernels, ("frame_records", "find_frame", "frames_at")),
        (crc_kernels, ("crc32c_span",)),
    ):
        for name in public:
            assert hasattr(module, name)
            kernels.add(name)
    assert kernels <= {target.kernel for target in fuzz.TARGETS.values()}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_runner_counts_crashes_and_hangs_and_keeps_their_inputs(tmp_path):
    out = tmp_path / "findings"
    report = run_fuzz(
        "--inputs",
        "12",
        "--target",
        "_selftest",
        "--hang-seconds",
        "2",
        "--out",
        str(out),
        env={"HEADRACE_FUZZ_SELFTEST": "1"},
    )
    row = report["targets"]["_selftest"]
    assert row["inputs"] == 12 and row["crashes"] > 0 and row["hangs"] > 0
    saved = sorted(p.name.split("-")[0] for p in out.iterdir() if p.suffix == ".bin")
    assert "crash" in saved and "hang" in saved
    crash = next(p for p in out.iterdir() if p.name.startswith("crash"))
    assert crash.read_bytes() == b"\x01"


def test_the_over_long_varint_example_is_an_error_not_a_crash():
    # issue 11: a 25-byte Example whose packed int64 varint is longer than 10 bytes wrote past the
    # output array (SIGSEGV). Run in a child so a regression fails this test instead of the suite.
    code = (
        "from headrace.io import parse_example, VarLenFeature, FixedLenFeature, ExampleParseError\n"
        "vl = b'\\x0a\\x0c' + b'\\xff' * 11 + b'\\x01'\n"
        "feat = b'\\x1a' + bytes([len(vl)]) + vl\n"
        "entry = b'\\x0a\\x01v\\x12' + bytes([len(feat)]) + feat\n"
        "m = b'\\x0a' + bytes([len(entry)]) + entry\n"
        "ex = b'\\x0a' + bytes([len(m)]) + m\n"
        "for spec in (VarLenFeature('int64'), FixedLenFeature([1], 'int64')):\n"
        "    try:\n"
        "        parse_example([ex], {'v': spec})\n"
        "    except ExampleParseError as e:\n"
        "        print(len(ex), e)\n"
        "assert len(ex) == 25\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    lines = completed.stdout.splitlines()
    assert len(lines) == 2
    assert all("feature 'v' of record 0 is not a valid serialized Feature" in line for line in lines)


def test_boundscheck_mode_checks_the_raw_loads_too(tmp_path):
    # The fuzz targets only find out-of-bounds reads if the unaligned loads are checked as well.
    code = (
        "import numpy as np\n"
        "from headrace.io.records import crc_kernels\n"
        "buf = np.arange(10, dtype=np.uint8)\n"
        "assert crc_kernels.crc32c_span(buf, 0, 10) == crc_kernels.crc32c_span(buf.copy(), 0, 10)\n"
        "try:\n"
        "    crc_kernels.crc32c_span(buf, 5, 10)\n"
        "except IndexError as e:\n"
        "    print('IndexError', e)\n"
    )
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path)}
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.startswith("IndexError load_u")
