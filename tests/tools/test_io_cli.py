import json
import os
import shutil

import numpy as np

from headrace.cli import main
from headrace.io.records.index import check_index
from headrace.tools.io_cli import ProgressBar, _size


def test_inspect_reports_counts_schema_and_samples(golden_dir, capsys):
    assert main(["inspect", os.path.join(golden_dir, "examples_gzip.tfrecord"), "--samples", "1"]) == 0
    out = capsys.readouterr().out
    assert "compression: GZIP" in out and "records: 120" in out and "kind: Example" in out
    assert "'fixed_f': FixedLenFeature(shape=(3,), dtype=float32" in out
    assert "'var_s': VarLenFeature(dtype=string)" in out and "record 0:" in out and "tok29" in out


def test_inspect_json_and_damage(golden_dir, capsys):
    files = [os.path.join(golden_dir, n) for n in ("sequence.tfrecord", "truncated.tfrecord", "raw.tfrecord")]
    assert (
        main(["inspect", *files, "--json"]) == 1
    )  # the truncated file is reported, and the exit code says so
    reports = json.loads(capsys.readouterr().out)
    assert [r["kind"] for r in reports] == ["SequenceExample", "Example", "raw"]
    assert reports[1]["records"] == 37 and "truncated record at record 37" in reports[1]["error"]
    assert reports[2]["largest"] == 1048576 and reports[2]["smallest"] == 0


def test_inspect_a_file_that_is_not_a_tfrecord(tmp_path, capsys):
    (tmp_path / "x.txt").write_text("hello, this is text")
    assert main(["inspect", str(tmp_path / "x.txt")]) == 1
    assert "not a TFRecord file" in capsys.readouterr().out


def test_index_command(golden_dir, tmp_path, capsys):
    for name in ("examples.tfrecord", "examples_zlib.tfrecord", "corrupt_data_crc.tfrecord"):
        shutil.copy(os.path.join(golden_dir, name), tmp_path / name)
    paths = [str(tmp_path / n) for n in ("examples.tfrecord", "examples_zlib.tfrecord")]
    assert main(["index", *paths]) == 0
    out = capsys.readouterr().out
    assert out.count("indexed 120 records") == 2
    assert check_index(paths[1], "ZLIB")[1] == "fresh"
    assert main(["index", paths[0]]) == 0 and "fresh (120 records)" in capsys.readouterr().out
    assert main(["index", str(tmp_path / "corrupt_data_crc.tfrecord")]) == 1
    assert "data CRC mismatch at record 37" in capsys.readouterr().err


def test_convert_command(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((10, 3), dtype=np.float32))
    assert (
        main(
            ["convert", str(tmp_path / "x.npy"), str(tmp_path / "out"), "--num-shards", "2", "--workers", "1"]
        )
        == 0
    )
    assert "2 shards" in capsys.readouterr().out
    assert main(["convert", str(tmp_path / "x.npy"), str(tmp_path / "out"), "--num-shards", "3"]) == 1
    assert "other settings" in capsys.readouterr().err


def test_progress_bar_and_sizes():
    class Terminal:
        def __init__(self):
            self.text = ""

        def isatty(self):
            return True

        def write(self, text):
            self.text += text

        def flush(self):
            pass

    terminal = Terminal()
    bar = ProgressBar("job", 2000, stream=terminal)
    bar.update(1000)
    bar.close()
    assert "\rjob [############            ]  50.0%" in terminal.text and terminal.text.endswith("\n")
    assert _size("64MB") == 64_000_000 and _size("1GiB") == 1 << 30 and _size("512") == 512
