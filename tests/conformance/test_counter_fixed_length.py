"""tensorflow/python/data/kernel_tests/counter_test.py and fixed_length_record_dataset_test.py,
translated."""

import gzip
import pathlib
import zlib

import numpy as np
import pytest

import headrace as hr
from headrace.core.errors import HeadraceError

from .support import produces, verify_checkpoints

D = hr.Dataset


@pytest.mark.parametrize(("start", "step", "expected"), [(3, 4, [3, 7, 11]), (0, -1, [0, -1, -2])])
def test_counter(start, step, expected):
    ds = D.counter(start, step)
    assert tuple(ds.element_spec.shape) == () and ds.element_spec.dtype == np.int64
    it = iter(ds)
    assert [int(next(it)) for _ in expected] == expected


NUM_FILES, NUM_RECORDS, HEADER, RECORD, FOOTER = 2, 7, 5, 3, 2


def record(f, r):
    return str(f * 2 + r).encode() * RECORD


def create_files(directory, compression_type=None):
    names = []
    for i in range(NUM_FILES):
        path = directory / f"fixed_length_record.{i}.txt"
        contents = b"H" * HEADER + b"".join(record(i, j) for j in range(NUM_RECORDS)) + b"F" * FOOTER
        if compression_type == "GZIP":
            with gzip.GzipFile(path, "wb") as f:
                f.write(contents)
        elif compression_type == "ZLIB":
            path.write_bytes(zlib.compress(contents))
        else:
            path.write_bytes(contents)
        names.append(str(path))
    return names


def all_records():
    return [record(j, i) for j in range(NUM_FILES) for i in range(NUM_RECORDS)]


@pytest.mark.parametrize("compression_type", [None, "GZIP", "ZLIB"])
def test_fixed_length_record_dataset(tmp_path, compression_type):
    files = create_files(tmp_path, compression_type)

    def make(names, epochs, batch_size=None):
        ds = hr.FixedLengthRecordDataset(names, RECORD, HEADER, FOOTER, compression_type=compression_type)
        ds = ds.repeat(epochs)
        return ds.batch(batch_size) if batch_size else ds

    produces(make([files[0]], 1), [record(0, i) for i in range(NUM_RECORDS)])
    produces(make([files[1]], 1), [record(1, i) for i in range(NUM_RECORDS)])
    produces(make(files, 1), all_records())
    produces(make(files, 10), all_records() * 10)
    batches = [np.array([record(j, i) for i in range(NUM_RECORDS)], dtype=object) for j in range(NUM_FILES)]
    produces(make(files, 10, NUM_RECORDS), batches * 10)


def test_fixed_length_record_dataset_buffering(tmp_path):
    produces(
        hr.FixedLengthRecordDataset(create_files(tmp_path), RECORD, HEADER, FOOTER, buffer_size=10),
        all_records(),
    )


def test_fixed_length_record_dataset_parallel_read(tmp_path):
    ds = hr.FixedLengthRecordDataset(
        create_files(tmp_path), RECORD, HEADER, FOOTER, buffer_size=10, num_parallel_reads=4
    )
    produces(ds, all_records(), items_equal=True)


def test_fixed_length_record_dataset_wrong_size(tmp_path):
    ds = hr.FixedLengthRecordDataset(create_files(tmp_path), RECORD + 1, HEADER, FOOTER, buffer_size=10)
    # tf: InvalidArgumentError naming the file and the record length; headrace: DataLossError.
    with pytest.raises(
        HeadraceError, match=r"fixed_length_record\.0\.txt.*not a whole number of 4-byte records"
    ):
        list(ds)


def test_fixed_length_record_dataset_pathlib(tmp_path):
    files = [pathlib.Path(f) for f in create_files(tmp_path)]
    ds = hr.FixedLengthRecordDataset(files, RECORD, HEADER, FOOTER, buffer_size=10, num_parallel_reads=4)
    produces(ds, all_records(), items_equal=True)


def test_fixed_length_record_checkpoint(tmp_path):
    files = create_files(tmp_path)
    verify_checkpoints(
        lambda: hr.FixedLengthRecordDataset(files, RECORD, HEADER, FOOTER).repeat(5), 70, max_elements=72
    )
