"""Record TensorFlow's outputs into tests/data/tf_fixtures, so CI compares headrace with TensorFlow
without installing it. Run from a virtual environment that has TensorFlow, numpy and headrace (with its
[image] extra) installed, from the repository root:

    /path/to/tf-venv/bin/python tools/record_tf_fixtures.py

Inputs are generated here from fixed seeds and stored beside TensorFlow's outputs (the tests read both
from the fixtures, never regenerate them). Orders that depend on tf.data's default cycle length (the
schedulable CPUs) are recorded in child processes pinned to 1 and 2 CPUs. meta.json keeps the versions.
See docs/tensorflow.md ("Recorded TensorFlow fixtures").
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
from tests.helpers.tf_fixtures import (  # noqa: E402
    CPU_DEPENDENT,
    FIXTURES,
    SAME_VALUES,
    canon,
    infinite_pipelines,
    pack,
    to_tf_cases,
)

CPU_COUNTS = (1, 2)


def sha(record: bytes) -> str:
    return hashlib.sha256(record).hexdigest()


def tf_list(ds) -> list:
    return [canon(x) for x in ds.as_numpy_iterator()]


def write_json(name: str, value) -> None:
    with open(os.path.join(FIXTURES, name), "w", encoding="utf-8") as f:
        json.dump(value, f, indent=None, separators=(",", ":"), sort_keys=False)
        f.write("\n")


def cpu_orders() -> dict:
    """Run in a child pinned to N CPUs: the orders tf.data's default cycle length decides."""
    import tensorflow as tf

    import headrace as hr

    out = {name: tf_list(build(tf.data)) for name, build in CPU_DEPENDENT.items()}
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k in range(5):
            paths.append(os.path.join(tmp, f"f{k}.tfrecord"))
            with hr.io.TFRecordWriter(paths[-1]) as writer:
                for i in range(3):
                    writer.write(b"%d-%d" % (k, i))
        ds = tf.data.TFRecordDataset(paths, num_parallel_reads=tf.data.AUTOTUNE)
        out["tfrecord_autotune"] = [r.hex() for r in ds.as_numpy_iterator()]
    return out


def record_datasets(tf, hr) -> dict:
    out: dict = {"same_values": {name: tf_list(build(tf.data)) for name, build in SAME_VALUES.items()}}
    out["cpu_dependent"] = {}
    for cpus in CPU_COUNTS:
        child = subprocess.run(
            [sys.executable, __file__, "--cpu-orders", str(cpus)],
            check=True,
            capture_output=True,
            text=True,
        )
        out["cpu_dependent"][str(cpus)] = json.loads(child.stdout.strip().splitlines()[-1])

    with tempfile.TemporaryDirectory() as tmp:
        csv_bytes = b'a,b\r\n1,"x,y"\n3,\n7,"q""r"\n'
        path = os.path.join(tmp, "t.csv")
        with open(path, "wb") as f:
            f.write(csv_bytes)
        defaults = [[0], [""]]
        single = os.path.join(tmp, "s.csv")
        with open(single, "wb") as f:
            f.write(b"1\n\n2\n")
        cr = os.path.join(tmp, "r.txt")
        with open(cr, "wb") as f:
            f.write(b"a\rb\r\nc\n\nd")
        out["text_csv"] = {
            "csv": csv_bytes.hex(),
            "lines": tf_list(tf.data.TextLineDataset(path)),
            "rows": tf_list(tf.data.experimental.CsvDataset(path, defaults, header=True)),
            "single": b"1\n\n2\n".hex(),
            "single_rows": tf_list(tf.data.experimental.CsvDataset(single, [[-1]])),
            "cr": b"a\rb\r\nc\n\nd".hex(),
            "cr_lines": tf_list(tf.data.TextLineDataset(cr)),
        }

    out["cardinalities"] = [
        int(ds.cardinality())
        for ds in infinite_pipelines(tf.data, lambda n: tf.fill([n], n), lambda x: tf.shape(x)[0])
    ]
    sparse = next(iter(tf.data.Dataset.range(1, 3).map(lambda n: tf.fill([n], 7)).sparse_batch(2, [3])))
    out["sparse_batch"] = {
        "indices": canon(sparse.indices.numpy()),
        "values": canon(sparse.values.numpy()),
        "dense_shape": canon(sparse.dense_shape.numpy()),
    }
    records = np.array([b"1,x,2.5", b"3,,"], dtype=object)
    out["decode_csv"] = {
        "records": canon(records),
        "outputs": [canon(t.numpy()) for t in tf.io.decode_csv(records, [[0], ["d"], [1.0]])],
    }
    raw = np.array([b"\x01\x02\x03\x04"], dtype=object)
    out["decode_raw_int16"] = {"input": canon(raw), "output": canon(tf.io.decode_raw(raw, tf.int16).numpy())}
    out["parse_tensor_string"] = tf.io.serialize_tensor(tf.constant([[b"a"], [b"bc"]])).numpy().hex()
    out["serialize_tensor"] = [
        {"value": canon(value), "bytes": tf.io.serialize_tensor(value).numpy().hex()}
        for value in (
            np.arange(6, dtype=np.float32).reshape(2, 3),
            np.array([b"a", b"bc"], dtype=object),
            np.array(3),
            np.array([[1.5, -2.0]], dtype=np.float64),
            np.array([True, False]),
            np.zeros((0, 2), np.int32),
        )
    ]

    # tests/ops: interleave orders, rebatch and bucket_by_sequence_length, cases drawn as the live tests do
    cases = []
    rng = np.random.default_rng(0)
    for _ in range(25):
        sizes = rng.integers(0, 6, size=rng.integers(0, 9)).tolist()
        cycle_length, block_length = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        table = tf.constant(sizes + [0], tf.int64)
        expected = tf.data.Dataset.range(len(sizes)).interleave(
            lambda i: tf.data.Dataset.range(100 * i, 100 * i + tf.gather(table, i)),  # noqa: B023
            cycle_length=cycle_length,
            block_length=block_length,
        )
        cases.append(
            {
                "sizes": sizes,
                "cycle_length": cycle_length,
                "block_length": block_length,
                "expected": [int(x) for x in expected.as_numpy_iterator()],
            }
        )
    out["interleave_orders"] = cases

    cases = []
    rng = np.random.default_rng(1)
    for _ in range(30):
        n, size = int(rng.integers(0, 25)), int(rng.integers(1, 6))
        plan = rng.integers(0, 4, size=rng.integers(1, 4)).tolist()
        batch_size = plan if any(plan) else int(rng.integers(1, 6))
        drop = bool(rng.integers(0, 2))
        expected = tf.data.Dataset.range(n).batch(size).rebatch(batch_size, drop_remainder=drop)
        cases.append(
            {
                "n": n,
                "size": size,
                "batch_size": batch_size,
                "drop_remainder": drop,
                "expected": [b.tolist() for b in expected.as_numpy_iterator()],
            }
        )
    out["rebatch"] = cases

    cases = []
    rng = np.random.default_rng(2)
    for _ in range(15):
        boundaries = sorted(rng.choice(np.arange(2, 10), size=rng.integers(1, 4), replace=False).tolist())
        sizes = rng.integers(1, 4, size=len(boundaries) + 1).tolist()
        pad_to_boundary, drop = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
        limit = boundaries[-1] - 1 if pad_to_boundary else 9
        lengths = rng.integers(1, limit + 1, size=rng.integers(0, 20)).tolist()
        expected = tf.data.Dataset.from_generator(
            lambda: (np.arange(1, n + 1, dtype=np.int64) for n in lengths),  # noqa: B023
            output_signature=tf.TensorSpec([None], tf.int64),
        ).bucket_by_sequence_length(
            lambda e: tf.shape(e)[0],
            boundaries,
            sizes,
            padding_values=tf.constant(-1, tf.int64),
            pad_to_bucket_boundary=pad_to_boundary,
            drop_remainder=drop,
        )
        cases.append(
            {
                "lengths": lengths,
                "boundaries": boundaries,
                "sizes": sizes,
                "pad_to_bucket_boundary": pad_to_boundary,
                "drop_remainder": drop,
                "expected": [b.tolist() for b in expected.as_numpy_iterator()],
            }
        )
    out["bucket_by_sequence_length"] = cases

    # tests/sources/test_tfrecord.py: four files (one empty) of headrace-framed records, and golden files
    with tempfile.TemporaryDirectory() as tmp:
        counts = [5, 1, 0, 3]
        paths = []
        for k, count in enumerate(counts):
            paths.append(os.path.join(tmp, f"f{k}.tfrecord"))
            with open(paths[-1], "wb") as f:
                f.write(b"".join(hr.io.encode_record(b"%d:%d" % (k, i)) for i in range(count)))
        out["tfrecord_reads"] = {
            "counts": counts,
            "orders": {
                str(cycle): [
                    r.numpy().hex() for r in tf.data.TFRecordDataset(paths, num_parallel_reads=cycle)
                ]
                for cycle in (None, 1, 2, 3)
            },
        }
    from tests.conftest import GOLDEN

    out["golden_reads"] = {
        name: {
            "compression": compression,
            "sha256": [
                sha(r.numpy()) for r in tf.data.TFRecordDataset(os.path.join(GOLDEN, name), compression)
            ],
        }
        for name, compression in (
            ("examples_gzip.tfrecord", "GZIP"),
            ("examples_zlib.tfrecord", "ZLIB"),
            ("raw.tfrecord", ""),
            ("sequence.tfrecord", ""),
        )
    }
    return out


SERIALIZE_CASES = [
    {"a": [1.5, 2.5]},
    {"b": [-3, 2**62]},
    {"c": [b"x", b""]},
    {"d": 7},
    {"e": [0.1, -1e30, 3.0e-5]},
    {"f": [b"\x00\xff" * 40]},
    {"g": np.arange(-2, 3, dtype=np.int64)},
    {"h": np.array([0.5, -1.25], np.float32)},
    {"i": [-1]},
    {"x": [1.0], "y": [2, 3], "z": [b"q"]},
    {"label": 3, "image/encoded": [b"\xff\xd8\xff"], "bbox": np.array([0.1, 0.2, 0.9, 1.0], np.float32)},
]


def tf_feature(tf, value):
    values = value.tolist() if isinstance(value, np.ndarray) else value
    values = values if isinstance(values, list) else [values]
    if values and isinstance(values[0], bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    if values and isinstance(values[0], float):
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def record_io(tf, hr, arrays: dict) -> dict:
    from tests.conftest import GOLDEN

    out: dict = {}
    golden = list(hr.io.tf_record_iterator(os.path.join(GOLDEN, "examples.tfrecord")))
    extra = [b"", b"\x00" * 70_000]
    arrays["writer/extra/data"], arrays["writer/extra/ends"] = pack(extra)
    out["writer"] = {"records": "golden examples.tfrecord + writer/extra", "files": {}}
    with tempfile.TemporaryDirectory() as tmp:
        records = golden + extra
        for compression in ("", "GZIP", "ZLIB"):
            path = os.path.join(tmp, f"for_tf_{compression}.tfrecord")
            with hr.io.TFRecordWriter(path, compression) as writer:
                for record in records:
                    writer.write(record)
            read = [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type=compression)]
            assert read == records, compression
            with open(path, "rb") as f:
                arrays[f"writer/{compression or 'NONE'}"] = np.frombuffer(f.read(), np.uint8)
            out["writer"]["files"][compression or "NONE"] = [sha(r) for r in read]
        paths = hr.io.write_shards(
            records, os.path.join(tmp, "tfshards"), num_shards=3, compression_type="GZIP"
        )
        for k, path in enumerate(paths):
            with open(path, "rb") as f:
                arrays[f"shards/{k}"] = np.frombuffer(f.read(), np.uint8)
        read = tf.data.TFRecordDataset(paths, compression_type="GZIP", num_parallel_reads=3)
        out["shards"] = {"count": len(paths), "order": [sha(r.numpy()) for r in read]}

    # parse_example: 200 records headrace serialized (as tests/io/codec/test_example.py draws them)
    rng = np.random.default_rng(7)
    records = []
    for i in range(200):
        features = {
            "dense": rng.standard_normal(4).astype(np.float32),
            "label": int(rng.integers(-(2**40), 2**40)),
        }
        if i % 3:
            features["tags"] = [b"t%d" % k for k in range(int(rng.integers(0, 4)))]
        if i % 4:
            features["ints"] = rng.integers(-1000, 1000, size=int(rng.integers(0, 5)))
        features["seq"] = rng.standard_normal(2 * int(rng.integers(0, 3))).astype(np.float32)
        records.append(hr.io.serialize_example(features))
    arrays["example/records/data"], arrays["example/records/ends"] = pack(records)
    theirs = tf.io.parse_example(
        records,
        {
            "dense": tf.io.FixedLenFeature([4], tf.float32),
            "label": tf.io.FixedLenFeature([], tf.int64),
            "tags": tf.io.VarLenFeature(tf.string),
            "ints": tf.io.RaggedFeature(tf.int64),
            "seq": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
            "opt": tf.io.FixedLenFeature([2], tf.int64, default_value=[7, 8]),
        },
    )
    for key in ("dense", "label", "seq", "opt"):
        arrays[f"example/{key}"] = theirs[key].numpy()
    arrays["example/tags/indices"] = theirs["tags"].indices.numpy()
    arrays["example/tags/data"], arrays["example/tags/ends"] = pack(theirs["tags"].values.numpy().tolist())
    arrays["example/tags/dense_shape"] = theirs["tags"].dense_shape.numpy()
    arrays["example/ints/row_splits"] = theirs["ints"].row_splits.numpy()
    arrays["example/ints/values"] = theirs["ints"].values.numpy()

    out["serialize_example"] = []
    for features in SERIALIZE_CASES:
        example = tf.train.Example(
            features=tf.train.Features(feature={k: tf_feature(tf, v) for k, v in features.items()})
        )
        out["serialize_example"].append(
            {"features": canon(features), "bytes": example.SerializeToString().hex()}
        )

    # parse_sequence_example: 50 records (as tests/io/codec/test_sequence_example.py draws them)
    rng = np.random.default_rng(3)
    records = []
    for i in range(50):
        steps = int(rng.integers(0, 4))
        records.append(
            hr.io.serialize_sequence_example(
                {"id": i},
                {
                    "tok": [rng.integers(0, 9, size=2) for _ in range(steps)],
                    "var": [
                        rng.standard_normal(int(rng.integers(0, 3))).astype(np.float32) for _ in range(steps)
                    ],
                },
            )
        )
    arrays["sequence/records/data"], arrays["sequence/records/ends"] = pack(records)
    context, sequences, lengths = tf.io.parse_sequence_example(
        records,
        context_features={"id": tf.io.FixedLenFeature([], tf.int64)},
        sequence_features={
            "tok": tf.io.FixedLenSequenceFeature([2], tf.int64),
            "var": tf.io.RaggedFeature(tf.float32),
        },
    )
    arrays["sequence/id"] = context["id"].numpy()
    arrays["sequence/tok"] = sequences["tok"].numpy()
    arrays["sequence/tok_lengths"] = lengths["tok"].numpy()
    arrays["sequence/var/row_splits"] = sequences["var"].row_splits.numpy()
    arrays["sequence/var/inner_row_splits"] = sequences["var"].values.row_splits.numpy()
    arrays["sequence/var/flat_values"] = sequences["var"].flat_values.numpy()

    records = [
        hr.io.serialize_example({"ix": [3, 0], "val": [0.5, 2.0]}),
        hr.io.serialize_example({}),
        hr.io.serialize_example({"ix": [1], "val": [7.0]}),
    ]
    sparse = tf.io.parse_example(records, {"s": tf.io.SparseFeature("ix", "val", tf.float32, 5)})["s"]
    out["sparse_feature"] = {
        "records": [r.hex() for r in records],
        "indices": canon(sparse.indices.numpy()),
        "values": canon(sparse.values.numpy()),
        "dense_shape": canon(sparse.dense_shape.numpy()),
    }
    return out


def record_image(tf, hr, arrays: dict) -> list:
    """Cases of tests/image's live comparisons: {key, op, input, kwargs, check}; arrays in/ and out/."""
    from tests.image.conftest import random_image

    hi = hr.image
    cases: list = []

    def case(key, op, inp, check="exact", **kwargs):
        cases.append({"key": key, "op": op, "input": inp, "kwargs": kwargs, "check": check})

    for dt in ("uint8", "float32"):
        images = random_image((3, 17, 19, 3), dtype=np.dtype(dt).type)
        arrays[f"in/color/{dt}"] = images
        check = "exact" if dt == "uint8" else "atol=1e-6"
        for delta in (-0.3, 0.0, 0.13):
            case(f"color/{dt}/brightness/{delta}", "adjust_brightness", f"color/{dt}", check, delta=delta)
        for factor in (0.0, 0.3, 1.7):
            case(
                f"color/{dt}/contrast/{factor}",
                "adjust_contrast",
                f"color/{dt}",
                check,
                contrast_factor=factor,
            )
        case(f"color/{dt}/gamma", "adjust_gamma", f"color/{dt}", check, gamma=0.7, gain=1.1)
        case(f"color/{dt}/grayscale", "rgb_to_grayscale", f"color/{dt}", check)
        arrays[f"in/grey/{dt}"] = tf.image.rgb_to_grayscale(images).numpy()
        case(f"color/{dt}/grayscale_to_rgb", "grayscale_to_rgb", f"grey/{dt}", check)

        hsv_images = images.copy()
        hsv_images[0, :3] = hsv_images[0, :3, :, :1]  # grey pixels
        hsv_images[0, 4, :, 0] = hsv_images[0, 4, :, 1]  # ties between channels
        arrays[f"in/hsv/{dt}"] = hsv_images
        for factor in (0.0, 0.5, 1.7, 5.0):
            case(
                f"hsv/{dt}/saturation/{factor}",
                "adjust_saturation",
                f"hsv/{dt}",
                check,
                saturation_factor=factor,
            )
        for delta in (-1.0, -0.37, 0.0, 0.1, 0.5, 1.0):
            case(f"hsv/{dt}/hue/{delta}", "adjust_hue", f"hsv/{dt}", check, delta=delta)
        if dt == "float32":
            case("hsv/float32/rgb_to_hsv", "rgb_to_hsv", "hsv/float32", check)
            arrays["in/hsv_values"] = tf.image.rgb_to_hsv(hsv_images).numpy()
            case("hsv/float32/hsv_to_rgb", "hsv_to_rgb", "hsv_values", check)

        rng = np.random.default_rng(0)
        arrays[f"in/rotate/{dt}"] = random_image((3, 13, 17, 3), dtype=np.dtype(dt).type)
        angles = rng.uniform(-3.2, 3.2, 3).tolist()
        for interpolation in ("nearest", "bilinear"):
            for fill_mode in ("constant", "reflect", "wrap", "nearest"):
                case(
                    f"rotate/{dt}/{interpolation}/{fill_mode}",
                    "rotate",
                    f"rotate/{dt}",
                    angles=angles,
                    interpolation=interpolation,
                    fill_mode=fill_mode,
                    fill_value=0.25,
                )

        # resize: a smaller batch than the live test's (1 image, not 2), to keep the fixture small
        arrays[f"in/resize/{dt}"] = random_image((1, 17, 23, 3), dtype=np.dtype(dt).type)
        scale = 255.0 if dt == "uint8" else 1.0
        # the live test also resizes to 64x64; left out here to keep the fixture small (2 MB)
        for size in [(8, 11), (31, 40), (17, 23), (3, 60), (1, 1)]:
            tag = f"{size[0]}x{size[1]}"
            fine, coarse = f"atol={1e-5 * scale:.6g}", f"atol={3e-5 * scale:.6g}"
            for method in ("bicubic", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"):
                for antialias in (False, True):
                    case(
                        f"resize/{dt}/{tag}/{method}/{antialias}",
                        "resize",
                        f"resize/{dt}",
                        fine,
                        size=list(size),
                        method=method,
                        antialias=antialias,
                    )
            for align in (False, True):
                for method in ("bilinear", "nearest", "bicubic"):
                    case(
                        f"resize/{dt}/{tag}/v1/{method}/{align}",
                        "resize_v1",
                        f"resize/{dt}",
                        fine,
                        size=list(size),
                        method=method,
                        align_corners=align,
                    )
            for method in ("nearest", "bilinear"):
                case(f"resize/{dt}/{tag}/{method}", "resize", f"resize/{dt}", size=list(size), method=method)
            case(f"resize/{dt}/{tag}/area", "resize", f"resize/{dt}", coarse, size=list(size), method="area")
            case(
                f"resize/{dt}/{tag}/bilinear_antialias",
                "resize",
                f"resize/{dt}",
                coarse,
                size=list(size),
                method="bilinear",
                antialias=True,
            )
            case(
                f"resize/{dt}/{tag}/preserve_aspect_ratio",
                "resize",
                f"resize/{dt}",
                size=list(size),
                method="bilinear",
                preserve_aspect_ratio=True,
            )
            if min(size) > 1:
                case(
                    f"resize/{dt}/{tag}/with_pad",
                    "resize_with_pad",
                    f"resize/{dt}",
                    target_height=size[0],
                    target_width=size[1],
                )

    rng = np.random.default_rng(0)
    sources = {
        "uint8": rng.integers(0, 256, (4, 5, 3)).astype(np.uint8),
        "uint16": rng.integers(0, 65536, (4, 5, 3)).astype(np.uint16),
        "int32": rng.integers(-(2**31), 2**31 - 1, (4, 5, 3)).astype(np.int32),
        "float32": rng.uniform(-0.2, 1.2, (4, 5, 3)).astype(np.float32),
    }
    for name, source in sources.items():
        arrays[f"in/convert/{name}"] = source
        for target in ("uint8", "uint16", "int8", "int32", "float16", "float32", "float64"):
            for saturate in (False, True):
                if source.dtype.kind == "f" and np.dtype(target).kind in "ui" and not saturate:
                    continue  # undefined in tf for out-of-range floats; headrace always saturates
                case(
                    f"convert/{name}/{target}/{saturate}",
                    "convert_image_dtype",
                    f"convert/{name}",
                    "exact+dtype",
                    dtype=target,
                    saturate=saturate,
                )

    arrays["in/crop"] = random_image((3, 21, 16, 3))
    arrays["in/crop_single"] = arrays["in/crop"][0]
    for fraction in (0.1, 0.33, 0.5, 0.875):
        case(f"crop/central/{fraction}", "central_crop", "crop", central_fraction=fraction)
        case(f"crop/central_single/{fraction}", "central_crop", "crop_single", central_fraction=fraction)
    for height, width in [(10, 30), (25, 8), (21, 16), (1, 1)]:
        case(
            f"crop/crop_or_pad/{height}x{width}",
            "resize_with_crop_or_pad",
            "crop",
            target_height=height,
            target_width=width,
        )
    case("crop/to_bounding_box", "crop_to_bounding_box", "crop", offset_height=2, offset_width=3,
         target_height=5, target_width=7)  # fmt: skip

    for k, (shape, kwargs) in enumerate(
        [((37, 53, 3), {}), ((64, 64, 1), {}), ((48, 40, 3), {"chroma_downsampling": False})]
    ):
        data = hi.encode_jpeg(random_image(shape), quality=90, **kwargs)
        arrays[f"in/jpeg/{k}"] = np.frombuffer(data, np.uint8)
        for name, options in [
            ("plain", {}),
            ("rgb", {"channels": 3}),
            ("integer_accurate", {"dct_method": "INTEGER_ACCURATE"}),
            ("no_fancy_upscaling", {"fancy_upscaling": False}),
            ("grey", {"channels": 1}),
            ("ratio2", {"ratio": 2}),
            ("ratio4", {"ratio": 4}),
            ("ratio8", {"ratio": 8}),
        ]:
            case(f"jpeg/{k}/{name}", "decode_jpeg", f"jpeg/{k}", **options)
        case(f"jpeg/{k}/batch", "decode_batch_second", f"jpeg/{k}")
    arrays["in/jpeg/tf"] = np.frombuffer(
        tf.io.encode_jpeg(random_image((20, 30, 3)), quality=85).numpy(), np.uint8
    )
    case("jpeg/tf/plain", "decode_jpeg", "jpeg/tf")

    for channels in (1, 3, 4):
        arrays[f"in/png/{channels}"] = np.frombuffer(hi.encode_png(random_image((11, 9, channels))), np.uint8)
        case(f"png/{channels}/png", "decode_png", f"png/{channels}")
        case(f"png/{channels}/image", "decode_image", f"png/{channels}")
    wide = (random_image((5, 4, 1)).astype(np.uint16) * 250) + 7
    arrays["in/png/wide"] = np.frombuffer(hi.encode_png(wide), np.uint8)
    case("png/wide/uint16", "decode_png", "png/wide", "exact+dtype", dtype="uint16")
    case("png/wide/uint8", "decode_png", "png/wide", "exact+dtype")

    arrays["in/photo"] = np.frombuffer(hi.encode_jpeg(random_image((120, 160, 3)), quality=90), np.uint8)
    for channels in (0, 1, 3):
        for ratio in (1, 2, 4):
            case(
                f"decode_crop/{channels}/{ratio}",
                "decode_and_crop_jpeg",
                "photo",
                crop_window=[3, 5, 20 // ratio, 30 // ratio],
                channels=channels,
                ratio=ratio,
            )

    image = random_image((24, 36, 3))
    arrays["in/encode/image"] = image
    arrays["in/encode/png"] = np.frombuffer(hi.encode_png(image), np.uint8)
    arrays["in/encode/jpeg"] = np.frombuffer(hi.encode_jpeg(image, quality=90), np.uint8)
    arrays["in/encode/tf_jpeg"] = np.frombuffer(tf.io.encode_jpeg(image, quality=90).numpy(), np.uint8)
    case("encode/png", "decode_png", "encode/png")  # TensorFlow read headrace's PNG as the image
    case("encode/jpeg", "decode_jpeg", "encode/jpeg")

    for k, shape in enumerate([(5, 7, 3), (2, 5, 7, 1)]):
        arrays[f"in/flip/{k}"] = random_image(shape)
        for op in ("flip_left_right", "flip_up_down", "transpose"):
            case(f"flip/{k}/{op}", op, f"flip/{k}")

    arrays["in/jpeg_quality"] = random_image((16, 16, 3), np.float32)
    case("jpeg_quality/40", "adjust_jpeg_quality", "jpeg_quality", f"atol={3.5 / 255:.8g}", jpeg_quality=40)

    for k, image in enumerate(
        [
            random_image((2, 9, 7, 3)),
            random_image((9, 7, 1), dtype=np.float32),
            np.full((4, 4, 3), 9, np.uint8),
        ]
    ):
        arrays[f"in/standardize/{k}"] = image
        case(f"standardize/{k}", "per_image_standardization", f"standardize/{k}", "rtol=1e-5,atol=1e-5")

    arrays["in/pad"] = random_image((2, 5, 6, 3))
    case("pad/bounding_box", "pad_to_bounding_box", "pad", offset_height=2, offset_width=1,
         target_height=9, target_width=10)  # fmt: skip
    for mode in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        case(f"pad/{mode}", "pad", "pad", paddings=[[2, 3], [1, 4]], mode=mode)

    arrays["in/rot90"] = random_image((2, 3, 5, 3))
    arrays["in/rot90_single"] = arrays["in/rot90"][0]
    for k in range(-1, 5):
        case(f"rot90/batch/{k}", "rot90", "rot90", k=k)
        case(f"rot90/single/{k}", "rot90", "rot90_single", k=k)

    ops = tf_image_ops(tf)
    for c in cases:
        value = arrays["in/" + c["input"]]
        if c["op"].startswith("decode") or c["op"] == "decode_batch_second":
            value = value.tobytes()
        arrays["out/" + c["key"]] = np.asarray(ops[c["op"]](value, **c["kwargs"]))
    return cases


def tf_image_ops(tf) -> dict:
    def rotate(images, angles, interpolation, fill_mode, fill_value):
        _, height, width, _ = images.shape
        angles = np.asarray(angles)
        cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
        x_offset = (((width - 1) - (cos * (width - 1) - sin * (height - 1))) / 2.0).astype(np.float32)
        y_offset = (((height - 1) - (sin * (width - 1) + cos * (height - 1))) / 2.0).astype(np.float32)
        zeros = np.zeros_like(cos)
        transforms = np.stack([cos, -sin, x_offset, sin, cos, y_offset, zeros, zeros], axis=1)
        return tf.raw_ops.ImageProjectiveTransformV3(
            images=images,
            transforms=transforms,
            output_shape=[height, width],
            fill_value=fill_value,
            interpolation=interpolation.upper(),
            fill_mode=fill_mode.upper(),
        ).numpy()

    v1 = {
        "bilinear": tf.compat.v1.image.resize_bilinear,
        "nearest": tf.compat.v1.image.resize_nearest_neighbor,
        "bicubic": tf.compat.v1.image.resize_bicubic,
    }

    def numpy(fn):
        return lambda *args, **kwargs: fn(*args, **kwargs).numpy()

    image = tf.image
    return {
        "adjust_brightness": numpy(image.adjust_brightness),
        "adjust_contrast": numpy(image.adjust_contrast),
        "adjust_gamma": numpy(image.adjust_gamma),
        "rgb_to_grayscale": numpy(image.rgb_to_grayscale),
        "grayscale_to_rgb": lambda x: image.grayscale_to_rgb(tf.constant(x)).numpy(),
        "adjust_saturation": numpy(image.adjust_saturation),
        "adjust_hue": numpy(image.adjust_hue),
        "rgb_to_hsv": numpy(image.rgb_to_hsv),
        "hsv_to_rgb": numpy(image.hsv_to_rgb),
        "rotate": rotate,
        "resize": lambda x, size, **kw: image.resize(x, size, **kw).numpy(),
        "resize_v1": lambda x, size, method, align_corners: v1[method](
            x, size, align_corners=align_corners
        ).numpy(),
        "resize_with_pad": numpy(image.resize_with_pad),
        "convert_image_dtype": lambda x, dtype, saturate: image.convert_image_dtype(
            x, tf.as_dtype(dtype), saturate=saturate
        ).numpy(),
        "central_crop": numpy(image.central_crop),
        "resize_with_crop_or_pad": numpy(image.resize_with_crop_or_pad),
        "crop_to_bounding_box": numpy(image.crop_to_bounding_box),
        "decode_jpeg": numpy(tf.io.decode_jpeg),
        "decode_batch_second": lambda data: tf.io.decode_jpeg(data, channels=3).numpy(),
        "decode_png": lambda data, dtype="uint8": tf.io.decode_png(data, dtype=tf.as_dtype(dtype)).numpy(),
        "decode_image": numpy(tf.io.decode_image),
        "decode_and_crop_jpeg": numpy(tf.io.decode_and_crop_jpeg),
        "flip_left_right": numpy(image.flip_left_right),
        "flip_up_down": numpy(image.flip_up_down),
        "transpose": numpy(image.transpose),
        "adjust_jpeg_quality": numpy(image.adjust_jpeg_quality),
        "per_image_standardization": numpy(image.per_image_standardization),
        "pad_to_bounding_box": numpy(image.pad_to_bounding_box),
        "pad": lambda x, paddings, mode: tf.pad(x, [[0, 0], *paddings, [0, 0]], mode).numpy(),
        "rot90": numpy(image.rot90),
    }


def spec_json(tf, spec):
    if isinstance(spec, dict):
        return {"dict": {k: spec_json(tf, v) for k, v in spec.items()}}
    if isinstance(spec, tuple):
        return {"tuple": [spec_json(tf, v) for v in spec]}
    shape = None if spec.shape.rank is None else spec.shape.as_list()
    return {"shape": shape, "dtype": spec.dtype.name, "name": spec.name}


def record_to_tf(tf) -> dict:
    from headrace.tf import to_tf

    out = {}
    for name, (dataset, kwargs, take, ordered) in to_tf_cases().items():
        tf_ds = to_tf(dataset, **kwargs)
        values = tf_list(tf_ds if take is None else tf_ds.take(take))
        out[name] = {
            "element_spec": spec_json(tf, tf_ds.element_spec),
            "cardinality": int(tf_ds.cardinality()),
            "values": values if ordered else sorted(values, key=json.dumps),
        }
    return out


class TFOps:
    """The user-function math of the ported pipelines in TensorFlow (tests/helpers/tf_pipelines.py)."""

    def __init__(self, tf):
        self.tf = tf

    def elements(self, ds):
        return list(ds.as_numpy_iterator())

    def first(self, ds):
        return next(ds.as_numpy_iterator())

    def value(self, x):
        return x.numpy() if hasattr(x, "numpy") else x

    def fill(self, x):
        return self.tf.fill([self.tf.cast(x, self.tf.int32)], x)

    def length(self, e):
        return self.tf.shape(e)[0]

    def to_float32(self, x):
        return self.tf.cast(x, self.tf.float32)

    def to_int32(self, x):
        return self.tf.cast(x, self.tf.int32)

    def to_int64(self, x):
        return self.tf.cast(x, self.tf.int64)

    def size(self, x):
        return self.tf.size(x, out_type=self.tf.int32)

    def nonempty(self, line):
        return self.tf.cast(self.tf.strings.length(line), bool)

    def count_eq(self, labels, k):
        return self.tf.reduce_sum(self.tf.cast(labels == k, self.tf.int32))

    def serialize_example(self, features):
        tf = self.tf
        example = tf.train.Example(
            features=tf.train.Features(feature={k: tf_feature(tf, v) for k, v in features.items()})
        )
        return example.SerializeToString()

    def label_from_path(self, path, class_names):
        parts = self.tf.strings.split(path, os.path.sep)
        return self.tf.argmax(parts[-2] == class_names)

    def lookup(self, line, vocab):
        tf = self.tf
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(vocab, tf.range(len(vocab), dtype=tf.int64)), default_value=0
        )
        return tf.cast(table.lookup(tf.strings.split(line)), tf.int32)

    def decode_raw_image(self, raw, record_bytes, shape):
        tf = self.tf
        vector = tf.io.decode_raw(raw, tf.uint8)
        label = tf.cast(vector[0], tf.int32)
        image = tf.cast(tf.transpose(tf.reshape(vector[1:record_bytes], shape), [1, 2, 0]), tf.float32)
        return tf.image.per_image_standardization(image), label


def record_pipelines(tf) -> dict:
    from tests.helpers.tf_pipelines import NOT_RECORDED, PIPELINES

    out: dict = {"not_recorded": NOT_RECORDED, "pipelines": {}}
    for name, pipeline in PIPELINES.items():
        with tempfile.TemporaryDirectory() as tmp:
            out["pipelines"][name] = canon(pipeline(tf, TFOps(tf), tmp))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu-orders", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cpu_orders:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cpu_orders])
        if len(os.sched_getaffinity(0)) != args.cpu_orders:
            raise SystemExit(f"this machine has fewer than {args.cpu_orders} CPUs to pin to")
        print(json.dumps(cpu_orders()))
        return

    import tensorflow as tf

    import headrace as hr

    tf.config.set_visible_devices([], "GPU")
    os.makedirs(FIXTURES, exist_ok=True)
    write_json("datasets.json", record_datasets(tf, hr))
    arrays: dict = {}
    write_json("io.json", record_io(tf, hr, arrays))
    np.savez_compressed(os.path.join(FIXTURES, "io.npz"), **arrays)
    arrays = {}
    write_json("image.json", record_image(tf, hr, arrays))
    np.savez_compressed(os.path.join(FIXTURES, "image.npz"), **arrays)
    write_json("to_tf.json", record_to_tf(tf))
    write_json("pipelines.json", record_pipelines(tf))
    import PIL
    import simplejpeg

    files = sorted(n for n in os.listdir(FIXTURES) if n != "meta.json")
    write_json(
        "meta.json",
        {
            "recorded_by": "tools/record_tf_fixtures.py",
            "recorded_on": datetime.date.today().isoformat(),
            "tensorflow": tf.__version__,
            "numpy": np.__version__,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "zlib": zlib.ZLIB_RUNTIME_VERSION,
            "simplejpeg": simplejpeg.__version__,
            "pillow": PIL.__version__,
            "cpu_counts": list(CPU_COUNTS),
            "files": {
                name: hashlib.sha256(open(os.path.join(FIXTURES, name), "rb").read()).hexdigest()
                for name in files
            },
        },
    )
    total = sum(os.path.getsize(os.path.join(FIXTURES, n)) for n in os.listdir(FIXTURES))
    print(f"TensorFlow {tf.__version__}: wrote {len(files) + 1} files, {total / 1e6:.2f} MB, to {FIXTURES}")


if __name__ == "__main__":
    main()
