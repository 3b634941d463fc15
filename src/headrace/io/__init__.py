"""Record files: TFRecord framing, GZIP/ZLIB, tf.train.Example codec, sharded writing, indexes.

>>> import os, tempfile, headrace as hr
>>> path = os.path.join(tempfile.mkdtemp(), "e.tfrecord")
>>> with hr.io.TFRecordWriter(path) as writer:
...     writer.write(hr.io.serialize_example({"x": [1.0, 2.0], "label": 3}))
>>> spec = {"x": hr.io.FixedLenFeature([2], "float32"), "label": hr.io.FixedLenFeature([], "int64")}
>>> batch = hr.io.parse_example(list(hr.io.tf_record_iterator(path)), spec)
>>> batch["x"].tolist(), batch["label"].tolist()
([[1.0, 2.0]], [3])
"""

from ..image.decode import decode_image, decode_jpeg, decode_png, extract_jpeg_shape
from ..image.decode_crop import decode_and_crop_jpeg
from ..image.encode import encode_jpeg, encode_png
from .codec.csv_codec import decode_csv
from .codec.example import ExampleParseError, parse_example, parse_single_example, serialize_example
from .codec.features import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    VarLenFeature,
)
from .codec.ragged import Ragged
from .codec.sequence_example import (
    parse_sequence_example,
    parse_single_sequence_example,
    serialize_sequence_example,
)
from .codec.sparse import SparseTensor
from .codec.sparse_feature import SparseFeature
from .codec.strings import decode_base64, decode_compressed, encode_base64
from .codec.tensors import decode_raw, parse_tensor, serialize_tensor
from .limits import LimitExceededError, limit, set_limit
from .records.compression import COMPRESSION_TYPES, CompressedStreamError, detect_compression
from .records.crc import crc32c, masked_crc32c
from .records.index import (
    IndexedRecords,
    RecordIndex,
    StaleIndexError,
    build_index,
    check_index,
    index_path,
    load_index,
)
from .records.tfrecord import ERROR_KINDS, RecordError, RecordReader, encode_record, tf_record_iterator
from .records.writer import TFRecordWriter, shard_name, write_shards
from .storage.file_ops import TFRecordOptions, matching_files, read_file, write_file
from .storage.publish import ShardSetError
from .storage.reclaim import ShardSetWarning, reclaim_shards

__all__ = [
    "COMPRESSION_TYPES",
    "ERROR_KINDS",
    "CompressedStreamError",
    "ExampleParseError",
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "IndexedRecords",
    "LimitExceededError",
    "RaggedFeature",
    "Ragged",
    "RecordError",
    "RecordIndex",
    "RecordReader",
    "ShardSetError",
    "ShardSetWarning",
    "SparseFeature",
    "SparseTensor",
    "StaleIndexError",
    "TFRecordOptions",
    "TFRecordWriter",
    "VarLenFeature",
    "build_index",
    "check_index",
    "crc32c",
    "decode_and_crop_jpeg",
    "decode_base64",
    "decode_compressed",
    "decode_csv",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "decode_raw",
    "detect_compression",
    "encode_base64",
    "encode_jpeg",
    "encode_png",
    "encode_record",
    "extract_jpeg_shape",
    "index_path",
    "limit",
    "load_index",
    "masked_crc32c",
    "matching_files",
    "parse_example",
    "parse_sequence_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "parse_tensor",
    "read_file",
    "reclaim_shards",
    "serialize_example",
    "serialize_sequence_example",
    "serialize_tensor",
    "set_limit",
    "shard_name",
    "tf_record_iterator",
    "write_file",
    "write_shards",
]


def __getattr__(name: str):
    # tf.io.gfile for `import headrace as tf`, loaded on first use (it lives with the other tf ops)
    if name == "gfile":
        from ..tfops import gfile  # noqa: PLC0415

        return gfile
    raise AttributeError(f"module 'headrace.io' has no attribute {name!r}")
