"""tensorflow/python/data/kernel_tests/text_line_dataset_test.py, translated."""

import gzip
import os
import pathlib
import zlib

import pytest

import headrace as hr

from .support import produces, verify_checkpoints

D = hr.Dataset


def line(f, n):
    return f"{f}: {n}".encode()


def create_files(directory, num_files, num_lines, crlf=False, compression_type=None):
    names = []
    for i in range(num_files):
        path = os.path.join(directory, f"text_line.{i}.txt")
        names.append(path)
        parts = []
        for j in range(num_lines):
            parts.append(line(i, j))
            # the last line of a file has no newline, except in the first file
            if j + 1 != num_lines or i == 0:
                parts.append(b"\r\n" if crlf else b"\n")
        contents = b"".join(parts)
        if compression_type == "GZIP":
            with gzip.GzipFile(path, "wb") as f:
                f.write(contents)
        elif compression_type == "ZLIB":
            with open(path, "wb") as f:
                f.write(zlib.compress(contents))
        else:
            with open(path, "wb") as f:
                f.write(contents)
    return names


@pytest.mark.parametrize("compression_type", [None, "GZIP", "ZLIB"])
def test_text_line_dataset(tmp_path, compression_type):
    files = create_files(str(tmp_path), 2, 5, crlf=True, compression_type=compression_type)

    def make(names, epochs, batch_size=None):
        ds = hr.TextLineDataset(names, compression_type=compression_type).repeat(epochs)
        return ds.batch(batch_size) if batch_size else ds

    produces(make([files[0]], 1), [line(0, i) for i in range(5)])
    produces(make([files[1]], 1), [line(1, i) for i in range(5)])
    both = [line(0, i) for i in range(5)] + [line(1, i) for i in range(5)]
    produces(make(files, 1), both)
    produces(make(files, 10), both * 10)
    import numpy as np

    batches = [
        np.array([line(0, i) for i in range(5)], dtype=object),
        np.array([line(1, i) for i in range(5)], dtype=object),
    ]
    produces(make(files, 10, 5), batches * 10)


def test_text_line_dataset_parallel_read(tmp_path):
    files = create_files(str(tmp_path), 10, 10)
    ds = hr.TextLineDataset(D.from_tensor_slices(files).repeat(10), num_parallel_reads=4)
    expected = [line(j, i) for j in range(10) for i in range(10)] * 10
    produces(ds, expected, items_equal=True)


def test_text_line_dataset_buffering(tmp_path):
    files = create_files(str(tmp_path), 2, 5, crlf=True)
    produces(hr.TextLineDataset(files, buffer_size=10), [line(j, i) for j in range(2) for i in range(5)])


def test_iterator_resource_cleanup(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("0\n1\n2\n")
    first = iter(hr.TextLineDataset(str(path)))
    assert next(first) == b"0"
    second = iter(hr.TextLineDataset(str(path)))
    assert next(second) == b"0"
    third = iter(hr.TextLineDataset(str(path)).repeat().batch(16))
    assert next(third).shape == (16,)
    for it in (first, second, third):
        it.close()
    fd_dir = "/proc/self/fd"
    if os.path.isdir(fd_dir):
        open_paths = {
            os.path.realpath(os.path.join(fd_dir, fd))
            for fd in os.listdir(fd_dir)
            if os.path.exists(os.path.join(fd_dir, fd))
        }
        assert os.path.realpath(str(path)) not in open_paths


def test_text_line_dataset_pathlib(tmp_path):
    files = [pathlib.Path(f) for f in create_files(str(tmp_path), 1, 5)]
    produces(hr.TextLineDataset(files), [line(0, i) for i in range(5)], items_equal=True)


@pytest.mark.parametrize("compression_type", [None, "GZIP", "ZLIB"])
def test_text_line_checkpoint(tmp_path, compression_type):
    files = create_files(str(tmp_path), 5, 5, crlf=True, compression_type=compression_type)
    verify_checkpoints(
        lambda: hr.TextLineDataset(files, compression_type=compression_type, buffer_size=10), 25
    )
