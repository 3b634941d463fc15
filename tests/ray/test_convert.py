from __future__ import annotations

import os

import numpy as np
import pytest

import headrace as hr
from headrace.io import FixedLenFeature
from headrace.tools.convert import convert

pytestmark = pytest.mark.slow
pytest.importorskip("ray")

SPEC = {"values": FixedLenFeature([3], "int64")}


def _read(paths) -> list[list[int]]:
    ds = hr.TFRecordDataset(paths).map(lambda r: hr.io.parse_single_example(r, SPEC))
    return [e["values"].tolist() for e in ds]


def test_convert_on_ray_writes_every_shard_and_reports_progress(cluster, tmp_path):
    src = tmp_path / "values.npy"
    np.save(src, np.arange(120).reshape(40, 3))
    seen = []
    paths = convert(
        str(src),
        str(tmp_path / "out" / "train"),
        num_shards=4,
        ray_address=True,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert len(paths) == 4 and all(os.path.exists(p) for p in paths)
    assert _read(paths) == np.arange(120).reshape(40, 3).tolist()
    assert seen[0] == (0, 40) and seen[-1] == (40, 40)


def test_convert_on_ray_resumes_only_missing_shards(cluster, tmp_path):
    src = tmp_path / "values.npy"
    np.save(src, np.arange(60).reshape(20, 3))
    prefix = str(tmp_path / "out" / "train")
    paths = convert(str(src), prefix, num_shards=3, ray_address=True)
    before = {p: os.stat(p).st_mtime_ns for p in paths}
    os.unlink(paths[1])
    seen = []
    again = convert(str(src), prefix, num_shards=3, ray_address=True, progress=lambda d, t: seen.append(d))
    assert again == paths
    assert seen[0] == 20 - 7  # shards 0 and 2 were already there
    assert os.stat(paths[0]).st_mtime_ns == before[paths[0]]
    assert _read(paths) == np.arange(60).reshape(20, 3).tolist()


def test_cli_convert_with_ray(cluster, tmp_path, capsys):
    from headrace.cli import main

    src = tmp_path / "values.npy"
    np.save(src, np.arange(30).reshape(10, 3))
    assert main(["convert", str(src), str(tmp_path / "o" / "t"), "--num-shards", "2", "--ray"]) == 0
    assert "2 shards" in capsys.readouterr().out
