import os

import pytest

import headrace as hr
from headrace.core.errors import InvalidArgumentError
from headrace.io.records.index import check_index
from headrace.io.records.tfrecord import tf_record_iterator
from headrace.io.records.writer import TFRecordWriter, write_shards


def golden(golden_dir):
    return list(tf_record_iterator(os.path.join(golden_dir, "examples.tfrecord")))


def test_plain_writer_is_byte_identical_to_tensorflow(tmp_path, golden_dir):
    path = tmp_path / "out.tfrecord"
    with TFRecordWriter(path) as writer:
        for record in golden(golden_dir):
            writer.write(record)
    with open(os.path.join(golden_dir, "examples.tfrecord"), "rb") as f:
        assert path.read_bytes() == f.read()


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_round_trip(tmp_path, golden_dir, compression):
    path = tmp_path / "out.tfrecord"
    with TFRecordWriter(path, compression) as writer:
        for record in golden(golden_dir):
            writer.write(record)
    assert list(tf_record_iterator(path, compression)) == golden(golden_dir)
    assert path.stat().st_size < os.path.getsize(os.path.join(golden_dir, "examples.tfrecord"))


def test_flush_makes_records_readable_while_open(tmp_path):
    for compression in ("", "GZIP"):
        path = tmp_path / f"open{compression}.tfrecord"
        writer = TFRecordWriter(path, compression)
        writer.write(b"one")
        writer.flush()
        if compression:  # a flushed but unfinished stream reads as truncated after its records
            with pytest.raises(hr.io.RecordError):
                list(tf_record_iterator(path, compression))
        else:
            assert list(tf_record_iterator(path)) == [b"one"]
        writer.close()
        assert list(tf_record_iterator(path, compression)) == [b"one"]
        with pytest.raises(ValueError, match="closed"):
            writer.write(b"two")


def test_writer_accepts_bytes_like_and_refuses_other_values(tmp_path):
    path = tmp_path / "mixed.tfrecord"
    with TFRecordWriter(path) as writer:
        writer.write(bytearray(b"a"))
        writer.write(memoryview(b"b"))
        writer.write("c")
        with pytest.raises(InvalidArgumentError, match="serialize it first"):
            writer.write(3)
    assert list(tf_record_iterator(path)) == [b"a", b"b", b"c"]


def test_writer_index(tmp_path):
    path = tmp_path / "indexed.tfrecord"
    with TFRecordWriter(path, index=True) as writer:
        for i in range(5):
            writer.write(b"x" * i)
    index, status = check_index(path)
    assert status == "fresh" and index.offsets.tolist() == [0, 16, 33, 51, 70]


def test_round_robin_shards_give_back_the_order_with_parallel_reads(tmp_path):
    records = [b"record %d" % i for i in range(23)]
    paths = write_shards(records, tmp_path / "train", num_shards=4)
    assert [os.path.basename(p) for p in paths] == [f"train-0000{k}-of-00004.tfrecord" for k in range(4)]
    assert [len(list(tf_record_iterator(p))) for p in paths] == [6, 6, 6, 5]
    back = [bytes(r) for r in hr.TFRecordDataset(paths, num_parallel_reads=4)]
    assert back == records
    assert not [name for name in os.listdir(tmp_path) if "incomplete" in name]


def test_shard_size_and_a_dataset_as_input(tmp_path):
    records = hr.Dataset.from_tensor_slices([b"%03d" % i for i in range(50)])
    paths = write_shards(records, tmp_path / "sized", shard_size=100, compression_type="GZIP", index=True)
    # each 3-byte record takes 19 framed bytes: shards close after 6 records (114 bytes)
    assert len(paths) == 9 and paths[-1].endswith("-00008-of-00009.tfrecord")
    back = [r for p in paths for r in tf_record_iterator(p, "GZIP")]
    assert back == [b"%03d" % i for i in range(50)]
    assert all(check_index(p, "GZIP")[1] == "fresh" for p in paths)


def test_empty_input_writes_one_empty_shard(tmp_path):
    assert [list(tf_record_iterator(p)) for p in write_shards([], tmp_path / "e", shard_size=10)] == [[]]


def test_an_interrupted_write_leaves_no_shard_behind(tmp_path):
    def records():
        yield b"fine"
        yield b"also fine"
        raise RuntimeError("the producer died")

    with pytest.raises(RuntimeError, match="producer died"):
        write_shards(records(), tmp_path / "broken", num_shards=2, index=True)
    assert os.listdir(tmp_path) == []


def test_write_shards_arguments(tmp_path):
    with pytest.raises(InvalidArgumentError, match="not both"):
        write_shards([], tmp_path / "x", num_shards=2, shard_size=10)
    with pytest.raises(InvalidArgumentError, match="num_shards"):
        write_shards([], tmp_path / "x", num_shards=0)
    with pytest.raises(InvalidArgumentError, match="record 1 must be bytes"):
        write_shards([b"a", 2], tmp_path / "x")


def test_memory_filesystem_shards():
    pytest.importorskip("fsspec")
    paths = write_shards([b"a", b"b", b"c"], "memory://shards/run", num_shards=2)
    assert paths[0] == "memory://shards/run-00000-of-00002.tfrecord"
    assert [list(tf_record_iterator(p)) for p in paths] == [[b"a", b"c"], [b"b"]]


@pytest.mark.slow
def test_tensorflow_reads_what_headrace_writes(tmp_path, golden_dir):
    tf = pytest.importorskip("tensorflow")
    records = golden(golden_dir) + [b"", b"\x00" * 70_000]
    for compression in ("", "GZIP", "ZLIB"):
        path = str(tmp_path / f"for_tf_{compression}.tfrecord")
        with TFRecordWriter(path, compression) as writer:
            for record in records:
                writer.write(record)
        read = [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type=compression)]
        assert read == records
    paths = write_shards(records, str(tmp_path / "tfshards"), num_shards=3, compression_type="GZIP")
    read = [r.numpy() for r in tf.data.TFRecordDataset(paths, compression_type="GZIP", num_parallel_reads=3)]
    assert read == records


def test_writer_keeps_the_size_and_crc32c_of_the_file(tmp_path):
    from headrace.io.storage.publish import file_crc32c

    for compression in ("", "GZIP"):
        path = tmp_path / f"c{compression}.tfrecord"
        writer = TFRecordWriter(path, compression)
        for i in range(100):
            writer.write(b"record %d" % i)
        writer.close(sync=True)
        assert writer.file_bytes == os.path.getsize(path) and writer.file_crc32c == file_crc32c(str(path))


def test_a_writer_that_cannot_create_its_file_names_it(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError, match="cannot create the file") as info:
        TFRecordWriter(blocker / "out.tfrecord")
    assert info.value.filename == str(blocker / "out.tfrecord")
