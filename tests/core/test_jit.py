"""The kernel cache: shared by processes (compiled once), never a crash when nothing is writable."""

import os
import subprocess
import sys
import textwrap

import pytest

from headrace.core import jit

KERNEL = textwrap.dedent(
    """
    import numpy as np
    from headrace.io.records import crc_kernels
    data = np.frombuffer(b"headrace" * 10, dtype=np.uint8)
    print("crc", int(crc_kernels.masked_crc32c_span(data, 0, len(data))))
    """
)


def _run(code: str, env: dict, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


@pytest.mark.slow
def test_processes_starting_together_compile_a_kernel_once(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path), "NUMBA_DEBUG_CACHE": "1"}
    children = [_run(KERNEL, env) for _ in range(3)]
    outputs = [child.communicate(timeout=300) for child in children]
    assert all(child.returncode == 0 for child in children), outputs
    crcs = {line for out, _ in outputs for line in out.splitlines() if line.startswith("crc")}
    assert len(crcs) == 1  # the same checksum everywhere
    logs = "".join(out for out, _ in outputs)
    saved = [line for line in logs.splitlines() if "data saved" in line and "masked_crc32c_span" in line]
    loaded = [line for line in logs.splitlines() if "data loaded" in line and "masked_crc32c_span" in line]
    assert len(saved) == 1, saved  # one process compiled it...
    assert len(loaded) == 2, loaded  # ...the two others waited for the lock and loaded its result


@pytest.mark.slow
def test_nothing_writable_compiles_in_memory_with_one_warning(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code = textwrap.dedent(
        f"""
        import tempfile, warnings
        import headrace.core.jit as jit
        jit.PACKAGED = {str(blocker / "pkg")!r}     # the package folder: read-only
        tempfile.tempdir = {str(blocker / "tmp")!r}  # and the temporary folder
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as caught:
            import headrace as hr
            path = {str(tmp_path / "x.tfrecord")!r}
            with hr.io.TFRecordWriter(path) as w:
                w.write(b"abc")
            print(list(hr.data.TFRecordDataset(path).as_numpy_iterator()))
        print("warnings", len([w for w in caught if "cannot save its compiled kernels" in str(w.message)]))
        print("writable", jit.writable_dir())
        """
    )
    env = {"XDG_CACHE_HOME": str(blocker / "home"), "HOME": str(blocker / "home")}
    env.pop("NUMBA_CACHE_DIR", None)
    child = _run(code, env)
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    assert "[b'abc']" in out
    assert "warnings 1" in out
    assert "writable None" in out


def test_read_dirs_skip_the_packaged_builds_when_numba_cache_dir_is_set(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(jit, "_writable", False)
    try:
        assert jit.read_dirs() == [str(tmp_path / "headrace")]
    finally:
        monkeypatch.setattr(jit, "_writable", False)


def test_the_compile_lock_is_reentrant():
    with jit.compile_lock():
        with jit.compile_lock():  # compiling a kernel compiles the kernels it calls
            pass


def test_warmup_reports_ready_kernels():
    from headrace import warmup

    result = warmup.run(verbose=False)
    assert result["signatures"] > 0


@pytest.mark.slow
def test_a_compiled_kernel_survives_new_file_times(tmp_path):
    # An installed wheel gives every source file a new mtime: the kernels compiled into it must
    # still be found (numba 0.68 stamps a cache with the source's digest, older ones with the mtime).
    import shutil
    from pathlib import Path

    import headrace

    package = tmp_path / "pkg" / "headrace"
    shutil.copytree(Path(headrace.__file__).parent, package, ignore=shutil.ignore_patterns("_kernel_cache"))
    env = {
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
        "NUMBA_DEBUG_CACHE": "1",
        "PYTHONPATH": str(package.parent),
    }

    def run() -> str:
        child = _run(KERNEL, env)
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        return out

    first = run()
    assert any("data saved" in line and "masked_crc32c_span" in line for line in first.splitlines())
    later = os.stat(package / "io" / "records" / "crc_kernels.py").st_mtime + 1000
    for path in package.rglob("*.py"):
        os.utime(path, (later, later))
    second = run()
    lines = second.splitlines()
    assert any("data loaded" in line and "masked_crc32c_span" in line for line in lines), second
    assert not any("data saved" in line and "masked_crc32c_span" in line for line in lines), second
