"""``headrace`` command errors: the user's mistakes give one line naming the file and exit code 1;
a full disk names the path and leaves nothing behind; convert workers die with their parent."""

import errno
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from headrace.cli import error_line, main
from headrace.core.errors import InvalidArgumentError
from headrace.io.records import writer as writer_module
from headrace.io.records.writer import write_shards
from headrace.tools import convert as convert_module
from tests.helpers.processes import children_of, gone

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def headrace(*args: str, prelude: str = "") -> subprocess.CompletedProcess:
    """Run the ``headrace`` command in a fresh interpreter (as a user would)."""
    code = prelude + "\nimport sys\nfrom headrace.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")},
    )


def one_line_naming(result: subprocess.CompletedProcess, path: str) -> str:
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert str(path) in lines[0], lines[0]
    return lines[0]


def test_object_dtype_npy_is_one_line(tmp_path):
    source = tmp_path / "objects.npy"
    np.save(source, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    line = one_line_naming(headrace("convert", str(source), str(tmp_path / "out")), source)
    assert "dtype=object" in line and "does not unpickle" in line
    assert not [n for n in os.listdir(tmp_path) if n.startswith("out")]


def test_a_csv_field_over_the_limit_is_one_line(tmp_path):
    source = tmp_path / "big.csv"
    source.write_text("text,label\nshort,1\n" + "x" * 200_000 + ",2\n")
    line = one_line_naming(headrace("convert", str(source), str(tmp_path / "out")), source)
    assert "line 3" in line and "field larger than field limit" in line and ".npy" in line


def test_not_utf8_csv_and_a_broken_npy_are_one_line(tmp_path):
    source = tmp_path / "latin.csv"
    source.write_bytes(b"name\ncaf\xe9\n")
    assert "not UTF-8" in one_line_naming(headrace("convert", str(source), str(tmp_path / "o")), source)
    broken = tmp_path / "broken.npy"
    broken.write_bytes(b"\x93NUMPY garbage")
    assert "not a valid .npy" in one_line_naming(
        headrace("convert", str(broken), str(tmp_path / "o")), broken
    )


def test_missing_file_and_bad_values_are_one_line(tmp_path, capsys):
    missing = tmp_path / "absent.csv"
    assert main(["convert", str(missing), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(missing) in err and "does not exist" in err
    source = tmp_path / "x.npy"
    np.save(source, np.zeros((4, 2), np.float32))
    assert main(["convert", str(source), str(tmp_path / "out"), "--num-shards", "0"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "num_shards=0" in err
    with pytest.raises(SystemExit) as exit_info:  # a command line argparse cannot parse: its usage, code 2
        main(["convert", str(source), str(tmp_path / "out"), "--workers", "many"])
    assert exit_info.value.code == 2


def test_unwritable_destination_names_the_path(tmp_path):
    source = tmp_path / "x.npy"
    np.save(source, np.zeros((4, 2), np.float32))
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a directory")
    result = headrace("convert", str(source), str(blocker / "out"), "--num-shards", "1")
    one_line_naming(result, blocker)


def test_error_line():
    assert error_line(OSError(errno.ENOSPC, "No space left on device", "/data/x")) == (
        "/data/x: No space left on device"
    )
    assert error_line(InvalidArgumentError("bad\n  value")) == "bad value"
    assert error_line(KeyError()) == "KeyError"


def test_full_disk_in_write_shards_names_the_path_and_leaves_nothing(tmp_path, monkeypatch):
    real_write = writer_module._ChecksummedFile.write

    def write(self, data):
        if self.size + len(data) > 3000:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, data)

    monkeypatch.setattr(writer_module._ChecksummedFile, "write", write)
    prefix = tmp_path / "train"
    with pytest.raises(OSError) as info:
        write_shards([b"r" * 100] * 200, prefix, num_shards=2)
    assert info.value.errno == errno.ENOSPC
    assert str(prefix) + "-0000" in info.value.filename and "No space left" in str(info.value)
    assert "free some space" in str(info.value)
    assert os.listdir(tmp_path) == []


FILE_SIZE_LIMIT = """
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # over the limit, writes fail with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))
"""


@pytest.mark.parametrize("workers", ["1", "2"])
def test_full_disk_in_convert_names_the_path_and_leaves_no_temporary(tmp_path, workers):
    source = tmp_path / "x.npy"
    np.save(source, np.zeros((2000, 64), np.float32))
    prefix = tmp_path / "out" / "x"
    result = headrace(
        "convert",
        str(source),
        str(prefix),
        "--num-shards",
        "2",
        "--workers",
        workers,
        prelude=FILE_SIZE_LIMIT,
    )
    line = one_line_naming(result, str(prefix) + "-0000")
    assert "File too large" in line and "free some space" in line
    left = os.listdir(tmp_path / "out")
    assert not [n for n in left if "incomplete" in n or n.endswith(".tfrecord")], left
    assert main(["convert", str(source), str(prefix), "--num-shards", "2", "--workers", workers]) == 0


def slow_examples(self, start, stop):
    time.sleep(120)
    yield b""


def test_convert_workers_exit_when_their_parent_is_killed(tmp_path):
    source = tmp_path / "x.npy"
    np.save(source, np.zeros((100, 4), np.float32))
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child: a convert whose workers block)
        try:
            convert_module.ArrayFile.examples = slow_examples
            convert_module.convert(str(source), str(tmp_path / "out"), num_shards=2, workers=2)
        finally:
            os._exit(0)
    workers: list[int] = []
    deadline = time.monotonic() + 30
    while len(workers) < 2 and time.monotonic() < deadline:
        workers = children_of(pid)
        time.sleep(0.02)
    assert len(workers) == 2
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(map(gone, workers)):
        time.sleep(0.02)
    assert all(map(gone, workers)), "convert workers outlived their SIGKILLed parent"


def test_a_traceback_still_shows_for_a_bug(tmp_path):
    result = headrace(
        "convert",
        "a",
        "b",
        prelude=textwrap.dedent("""
        import headrace.tools.io_cli as cli
        def broken(args):
            raise RuntimeError("a bug")
        cli.run_convert = broken
    """),
    )
    assert result.returncode == 1 and "Traceback" in result.stderr and "a bug" in result.stderr
