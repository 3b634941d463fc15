"""tensorflow/python/data/kernel_tests/list_files_test.py, translated."""

import os

import pytest

import headrace as hr
from headrace.core.errors import HeadraceError

from .support import plain, produces, verify_checkpoints

D = hr.Dataset


def touch(directory, names):
    for name in names:
        open(os.path.join(directory, name), "a").close()


def paths(directory, names):
    return [os.path.join(directory, n).encode() for n in names]


def test_empty_directory(tmp_path):
    # tf raises "No files matched" when the iterator is initialized.
    with pytest.raises((HeadraceError, ValueError), match="[Nn]o files matched"):
        list(D.list_files(str(tmp_path / "*")))


def test_simple_directory(tmp_path):
    touch(tmp_path, ["a", "b", "c"])
    produces(D.list_files(str(tmp_path / "*")), paths(tmp_path, ["a", "b", "c"]), items_equal=True)


def test_simple_directory_not_shuffled(tmp_path):
    touch(tmp_path, ["b", "c", "a"])
    produces(D.list_files(str(tmp_path / "*"), shuffle=False), paths(tmp_path, ["a", "b", "c"]))


def test_fixed_seed_results_in_repeatable_order(tmp_path):
    touch(tmp_path, ["a", "b", "c"])
    runs = [plain(D.list_files(str(tmp_path / "*"), shuffle=True, seed=37)) for _ in range(3)]
    assert sorted(runs[0]) == sorted(paths(tmp_path, ["a", "b", "c"]))
    assert runs[0] == runs[1] == runs[2]


@pytest.mark.parametrize(
    ("names", "pattern", "expected"),
    [
        (["a.txt", "b.py", "c.py", "d.pyc"], "*.py", ["b.py", "c.py"]),
        (["a.txt", "b.py", "c.pyc"], "*.py*", ["b.py", "c.pyc"]),
    ],
    ids=["file_suffixes", "file_middles"],
)
def test_file_patterns(tmp_path, names, pattern, expected):
    touch(tmp_path, names)
    produces(D.list_files(str(tmp_path / pattern)), paths(tmp_path, expected), items_equal=True)


def test_no_shuffle(tmp_path):
    touch(tmp_path, ["a", "b", "c"])
    out = plain(D.list_files(str(tmp_path / "*"), shuffle=False).repeat(2))
    assert sorted(out) == sorted(paths(tmp_path, ["a", "b", "c"]) * 2)
    assert out[:3] == out[3:]


@pytest.mark.parametrize("as_array", [False, True], ids=["list", "tensor"])
def test_multiple_patterns(tmp_path, as_array):
    import numpy as np

    touch(tmp_path, ["a.txt", "b.py", "c.py", "d.pyc"])
    patterns = [str(tmp_path / p) for p in ("*.py", "*.txt")]
    ds = D.list_files(np.array(patterns) if as_array else patterns)
    produces(ds, paths(tmp_path, ["a.txt", "b.py", "c.py"]), items_equal=True)


NAMES = list("abcdefghijk")


@pytest.mark.parametrize("repetitions", [1, 2])
@pytest.mark.parametrize("seed", [None, 42])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_global_shuffle(tmp_path, repetitions, seed, reshuffle):
    touch(tmp_path, NAMES)
    ds = D.list_files(str(tmp_path / "*"), shuffle=False).prefetch(hr.AUTOTUNE)
    if repetitions > 1:
        ds = ds.repeat(repetitions)
    ds = ds.global_shuffle(seed=seed, reshuffle_each_iteration=reshuffle)
    out = plain(ds)
    expected = paths(tmp_path, NAMES) * repetitions
    assert sorted(out) == sorted(expected) and out != expected
    assert len(out) == ds.cardinality()


def test_shuffle_not_supported(tmp_path):
    touch(tmp_path, NAMES)
    ds = D.list_files(str(tmp_path / "*"), shuffle=True)
    with pytest.raises(HeadraceError, match="read by index"):
        list(ds.global_shuffle())


@pytest.mark.parametrize("repetitions", [1, 2])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_global_shuffle_checkpoint(tmp_path, repetitions, reshuffle):
    touch(tmp_path, NAMES)

    def make():
        ds = D.list_files(str(tmp_path / "*"), shuffle=False).prefetch(hr.AUTOTUNE)
        if repetitions > 1:
            ds = ds.repeat(repetitions)
        return ds.global_shuffle(seed=42, reshuffle_each_iteration=reshuffle)

    verify_checkpoints(make, len(NAMES) * repetitions)
