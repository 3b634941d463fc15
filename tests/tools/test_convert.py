import json
import os

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError
from headrace.io import FixedLenFeature, VarLenFeature, parse_example, tf_record_iterator
from headrace.io.records.index import check_index
from headrace.io.storage.publish import ShardSetError, manifest_path, read_manifest
from headrace.tools import convert as convert_module
from headrace.tools.convert import convert, settings_path
from tests.io.storage.test_publication import dead_temporary


def records_of(paths, compression=""):
    return [r for p in paths for r in tf_record_iterator(p, compression)]


@pytest.fixture
def image_folder(tmp_path):
    root = tmp_path / "images"
    for label, name in enumerate(["cat", "dog"]):
        (root / name).mkdir(parents=True)
        for i in range(3):
            (root / name / f"{i}.jpg").write_bytes(b"\xff\xd8 fake jpeg %d %d" % (label, i))
        (root / name / "notes.txt").write_bytes(b"ignored")
    return root


def test_image_folder(image_folder, tmp_path):
    progress = []
    paths = convert(
        image_folder,
        tmp_path / "out" / "img",
        num_shards=2,
        workers=1,
        index=True,
        progress=lambda done, total: progress.append((done, total)),
    )
    assert [os.path.basename(p) for p in paths] == [
        "img-00000-of-00002.tfrecord",
        "img-00001-of-00002.tfrecord",
    ]
    parsed = parse_example(
        records_of(paths),
        {
            "image/encoded": FixedLenFeature([], "string"),
            "image/class/label": FixedLenFeature([], "int64"),
            "image/class/text": FixedLenFeature([], "string"),
            "image/filename": FixedLenFeature([], "string"),
            "image/format": FixedLenFeature([], "string"),
        },
    )
    assert parsed["image/class/label"].tolist() == [0, 0, 0, 1, 1, 1]
    assert parsed["image/class/text"].tolist() == [b"cat"] * 3 + [b"dog"] * 3
    assert parsed["image/encoded"][4] == b"\xff\xd8 fake jpeg 1 1" and parsed["image/format"][0] == b"jpeg"
    assert parsed["image/filename"][0] == os.path.join("cat", "0.jpg").encode()
    assert progress[0] == (0, 6) and progress[-1] == (6, 6)
    assert all(check_index(p)[1] == "fresh" for p in paths)


def test_arrays_csv_and_compression(tmp_path):
    np.save(tmp_path / "features.npy", np.arange(12, dtype=np.float32).reshape(6, 2))
    np.savez(tmp_path / "pair.npz", x=np.arange(8).reshape(4, 2), name=np.array(["a", "b", "c", "d"]))
    (tmp_path / "t.csv").write_text("id,score,word\n1,0.5,hi\n2,,yo\n3,7,\n")
    npy = convert(tmp_path / "features.npy", tmp_path / "npy", workers=1, compression_type="GZIP")
    parsed = parse_example(records_of(npy, "GZIP"), {"features": FixedLenFeature([2], "float32")})
    assert parsed["features"].tolist() == np.arange(12).reshape(6, 2).tolist()
    npz = convert(tmp_path / "pair.npz", tmp_path / "npz", workers=1)
    parsed = parse_example(
        records_of(npz), {"x": FixedLenFeature([2], "int64"), "name": FixedLenFeature([], "string")}
    )
    assert parsed["x"].tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]] and parsed["name"].tolist() == [
        b"a",
        b"b",
        b"c",
        b"d",
    ]
    table = convert(tmp_path / "t.csv", tmp_path / "csv", workers=1)
    parsed = parse_example(
        records_of(table),
        {
            "id": FixedLenFeature([], "int64"),
            "score": VarLenFeature("float32"),
            "word": VarLenFeature("string"),
        },
    )
    assert parsed["id"].tolist() == [1, 2, 3]
    assert parsed["score"].to_list() == [[0.5], [], [7.0]] and parsed["word"].to_list() == [
        [b"hi"],
        [b"yo"],
        [],
    ]


def test_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": [1, 2], "b": ["x", "y"], "c": [[1.5], [2.5, 3.5]]}), tmp_path / "t.parquet")
    paths = convert(tmp_path / "t.parquet", tmp_path / "pq", workers=1)
    parsed = parse_example(
        records_of(paths),
        {
            "a": FixedLenFeature([], "int64"),
            "b": FixedLenFeature([], "string"),
            "c": VarLenFeature("float32"),
        },
    )
    assert parsed["a"].tolist() == [1, 2] and parsed["b"].tolist() == [b"x", b"y"]
    assert parsed["c"].to_list() == [[1.5], [2.5, 3.5]]


def test_parquet_without_pyarrow_is_a_clean_error(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError("no pyarrow here")
        return real_import(name, *args, **kwargs)

    (tmp_path / "t.parquet").write_bytes(b"PAR1")
    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(InvalidArgumentError, match=r"needs pyarrow: pip install 'headrace\[parquet\]'"):
        convert(tmp_path / "t.parquet", tmp_path / "pq", workers=1)


def test_resume_after_an_interruption(image_folder, tmp_path):
    prefix = tmp_path / "run" / "img"
    paths = convert(image_folder, prefix, num_shards=3, workers=1)
    expected = records_of(paths)
    stamps = {p: os.stat(p).st_mtime_ns for p in paths}
    os.remove(paths[1])  # as if the run had stopped before this shard was renamed into place
    stale = dead_temporary(str(tmp_path / "run" / "img-00001-of-00003.tfrecord"))
    open(stale, "wb").write(b"half")  # what the killed run left
    again = convert(image_folder, prefix, num_shards=3, workers=1)
    assert again == paths and records_of(again) == expected
    assert not os.path.exists(stale)
    assert (
        os.stat(paths[0]).st_mtime_ns == stamps[paths[0]]
        and os.stat(paths[2]).st_mtime_ns == stamps[paths[2]]
    )
    with open(settings_path(str(prefix))) as f:
        assert json.load(f)["num_shards"] == 3
    with pytest.raises(InvalidArgumentError, match="other settings.*num_shards"):
        convert(image_folder, prefix, num_shards=2, workers=1)


def test_parallel_workers(image_folder, tmp_path):
    paths = convert(image_folder, tmp_path / "par" / "img", num_shards=3, workers=2)
    assert len(records_of(paths)) == 6
    assert not [n for n in os.listdir(tmp_path / "par") if "incomplete" in n]


def test_bad_sources(tmp_path):
    with pytest.raises(InvalidArgumentError, match="does not exist"):
        convert(tmp_path / "nothing.csv", tmp_path / "x")
    (tmp_path / "data.bin").write_bytes(b"")
    with pytest.raises(InvalidArgumentError, match="cannot tell how to read"):
        convert(tmp_path / "data.bin", tmp_path / "x")
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(InvalidArgumentError, match="no images"):
        convert(tmp_path / "empty_dir", tmp_path / "x")
    (tmp_path / "ragged.csv").write_text("a,b\n1\n")
    with pytest.raises(InvalidArgumentError, match="line 2 has 1 cells"):
        convert(tmp_path / "ragged.csv", tmp_path / "x")
    np.savez(tmp_path / "mismatch.npz", a=np.zeros(3), b=np.zeros(4))
    with pytest.raises(InvalidArgumentError, match="share their first dimension"):
        convert(tmp_path / "mismatch.npz", tmp_path / "x")


def test_a_finished_conversion_is_published_with_a_manifest_and_a_rerun_leaves_it_alone(
    image_folder, tmp_path
):
    prefix = str(tmp_path / "img")
    paths = convert(image_folder, prefix, num_shards=2, workers=1)
    manifest = read_manifest(manifest_path(prefix))
    assert manifest["state"] == "complete" and manifest["tool"] == "headrace convert"
    assert [s["records"] for s in manifest["shards"]] == [3, 3]
    assert [s["bytes"] for s in manifest["shards"]] == [os.path.getsize(p) for p in paths]
    stamp = os.stat(manifest_path(prefix)).st_mtime_ns
    assert convert(image_folder, prefix, num_shards=2, workers=1) == paths
    assert os.stat(manifest_path(prefix)).st_mtime_ns == stamp  # no "publishing" window for readers


def test_an_interrupted_conversion_is_refused_by_readers_until_resumed(image_folder, tmp_path, monkeypatch):
    prefix = str(tmp_path / "img")
    real = convert_module.publish_file
    calls = []

    def interrupt_second(temporary, final):
        calls.append(final)
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C after the first shard is in place
        real(temporary, final)

    monkeypatch.setattr(convert_module, "publish_file", interrupt_second)
    with pytest.raises(KeyboardInterrupt):
        convert(image_folder, prefix, num_shards=3, workers=1)
    assert not [n for n in os.listdir(tmp_path) if "incomplete" in n]
    with pytest.raises(ShardSetError, match=r"incomplete: headrace convert .* 1 of 3 shards in place"):
        hr.Dataset.list_files(prefix + "-*")
    monkeypatch.setattr(convert_module, "publish_file", real)
    paths = convert(image_folder, prefix, num_shards=3, workers=1)
    assert len(records_of([os.fsdecode(n) for n in hr.Dataset.list_files(prefix + "-*", shuffle=False)])) == 6
    assert len(paths) == 3


def test_a_damaged_settings_file_is_a_clear_error(image_folder, tmp_path):
    prefix = tmp_path / "img"
    (tmp_path / ".img.convert.json").write_text('{"num_sha')
    with pytest.raises(InvalidArgumentError, match=r"img.convert.json is damaged .*delete it"):
        convert(image_folder, prefix, num_shards=2, workers=1)


def test_ray_address_false_means_local_processes_and_other_values_are_refused(tmp_path):
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.int64))
    paths = convert(tmp_path / "x.npy", tmp_path / "out", workers=1, ray_address=False)
    assert len(paths) == 1 and sum(1 for _ in tf_record_iterator(paths[0])) == 6
    with pytest.raises(InvalidArgumentError, match="ray_address=3 is not allowed"):
        convert(tmp_path / "x.npy", tmp_path / "out2", workers=1, ray_address=3)
