"""Inputs for the ported repository pipelines of tf_math_pipelines_repos.py / tf1_math_pipelines_repos.py,
in place of the downloads the sources read (CIFAR-10 and MNIST binaries, WMT, BERT, ImageNet and COCO
TFRecords, NMT text). Arithmetic only (no random generators), written with headrace and numpy, so
TensorFlow and headrace read the same files."""

from __future__ import annotations

import os

import numpy as np

from tests.helpers.pipeline_data import _jpeg, _pixels


def _write_records(path: str, examples: list[dict]) -> str:
    import headrace as hr  # noqa: PLC0415

    with hr.io.TFRecordWriter(path) as writer:
        for example in examples:
            writer.write(hr.io.serialize_example(example))
    return path


def cifar10_bins(tmp: str) -> str:
    """CIFAR-10's binary layout: ``data_batch_1..5.bin`` (2 records each) and ``test_batch.bin`` (7), each
    record a label byte and a depth-major 3x32x32 image."""

    def records(count: int, salt: int) -> bytes:
        pixels = _pixels(count, 32, 32, salt=salt).transpose(0, 3, 1, 2)  # depth major
        return b"".join(bytes([(k * 7 + salt) % 10]) + pixels[k].tobytes() for k in range(count))

    for i in range(1, 6):
        with open(os.path.join(tmp, f"data_batch_{i}.bin"), "wb") as f:
            f.write(records(2, i))
    with open(os.path.join(tmp, "test_batch.bin"), "wb") as f:
        f.write(records(7, 0))
    return tmp


def mnist_idx(tmp: str) -> str:
    """MNIST's idx files (train: 6 digits, t10k: 5) with their big-endian headers."""
    for prefix, count, salt in (("train", 6, 1), ("t10k", 5, 2)):
        digits = _pixels(count, 28, 28, 1, salt=salt)
        header = np.array([2051, count, 28, 28], ">u4").tobytes()
        with open(os.path.join(tmp, f"{prefix}-images-idx3-ubyte"), "wb") as f:
            f.write(header + digits.tobytes())
        labels = (np.arange(count) * 3 + salt) % 10
        with open(os.path.join(tmp, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
            f.write(np.array([2049, count], ">u4").tobytes() + labels.astype(np.uint8).tobytes())
    return tmp


def wmt_records(tmp: str) -> str:
    """The transformer's TFRecords: ``inputs`` and ``targets`` token ids of varied lengths (some over 32),
    one dev file and two train files."""
    for name, count, salt in (
        ("wmt-dev-00000", 30, 0),
        ("wmt-train-00000", 12, 1),
        ("wmt-train-00001", 12, 2),
    ):
        examples = []
        for k in range(count):
            n, m = (k * 7 + salt) % 38 + 1, (k * 11 + 3 * salt) % 36 + 1
            examples.append(
                {
                    "inputs": np.arange(1, n + 1, dtype=np.int64) + k,
                    "targets": np.arange(m, dtype=np.int64) + 2,
                }
            )
        _write_records(os.path.join(tmp, name), examples)
    return tmp


def bert_records(tmp: str, max_seq_length: int, max_predictions_per_seq: int) -> list[str]:
    """BERT's pretraining TFRecords (create_pretraining_data.py's features): 3 files of 10 examples."""
    paths = []
    for shard in range(3):
        examples = []
        for i in range(10):
            uid = shard * 100 + i
            examples.append(
                {
                    "input_ids": np.arange(uid, uid + max_seq_length, dtype=np.int64),
                    "input_mask": (np.arange(max_seq_length) < 10 + i % 5).astype(np.int64),
                    "segment_ids": (np.arange(max_seq_length) >= 6).astype(np.int64),
                    "masked_lm_positions": np.arange(1, max_predictions_per_seq + 1, dtype=np.int64)
                    * (i % 3),
                    "masked_lm_ids": np.arange(max_predictions_per_seq, dtype=np.int64) + uid,
                    "masked_lm_weights": np.array([1.0, 1.0, 0.5, 0.0], np.float32)[:max_predictions_per_seq],
                    "next_sentence_labels": np.array([uid % 2], np.int64),
                }
            )
        paths.append(_write_records(os.path.join(tmp, f"tf_examples.tfrecord-{shard}"), examples))
    return paths


def imagenet_records(tmp: str) -> str:
    """ImageNet's TFRecords as imagenet_to_gcs.py writes them (``image/encoded`` JPEG,
    ``image/class/label`` 1..1000): 4 ``train-*`` files of 3 images of varied sizes."""
    for shard in range(4):
        examples = []
        for i in range(3):
            label = shard * 3 + i + 1
            picture = _pixels(1, 40 + 4 * i, 48 - 2 * i, salt=label)[0]
            examples.append({"image/encoded": [_jpeg(picture)], "image/class/label": [label]})
        _write_records(os.path.join(tmp, f"train-{shard:05d}-of-00004"), examples)
    return tmp


def coco_records(tmp: str) -> str:
    """COCO as official/vision's TFRecords hold it: a JPEG, its size, boxes (normalised ymin/xmin/ymax/xmax),
    classes and is_crowd; record 4 has no boxes."""
    examples = []
    for i in range(6):
        n = (i % 3) + 1 if i != 4 else 0
        lo = (np.arange(n * 2, dtype=np.float32).reshape(n, 2) + i) / 20
        examples.append(
            {
                "image/encoded": [_jpeg(_pixels(1, 12 + i, 16, salt=i)[0])],
                "image/source_id": [str(i).encode()],
                "image/height": [12 + i],
                "image/width": [16],
                "image/object/bbox/ymin": lo[:, 0],
                "image/object/bbox/xmin": lo[:, 1],
                "image/object/bbox/ymax": lo[:, 0] + np.float32(0.3),
                "image/object/bbox/xmax": lo[:, 1] + np.float32(0.4),
                "image/object/class/label": (np.arange(n) * 5 + i + 1).astype(np.int64),
                "image/object/is_crowd": np.zeros(n, np.int64),
            }
        )
    return _write_records(os.path.join(tmp, "coco-00000-of-00001.tfrecord"), examples)


def nmt_text(tmp: str) -> dict[str, str]:
    """tensorflow/nmt's inputs: parallel source/target text files and a vocabulary file (words w20..w29 of
    the text are out of vocabulary; some lines are empty)."""
    words = [f"w{i}" for i in range(30)]
    src, tgt = [], []
    for k in range(40):
        src.append(" ".join(words[(k * 7 + j * 3) % 30] for j in range((k * 5) % 23)))
        tgt.append(" ".join(words[(k * 11 + j) % 30] for j in range((k * 3) % 21 + (k % 4 != 0))))
    paths = {"src": os.path.join(tmp, "train.src"), "tgt": os.path.join(tmp, "train.tgt")}
    paths["vocab"] = os.path.join(tmp, "vocab.txt")
    paths["infer"] = os.path.join(tmp, "infer.src")
    for key, lines in (
        ("src", src),
        ("tgt", tgt),
        ("vocab", ["<unk>", "<s>", "</s>"] + words[:20]),
        ("infer", ["w1 w2 w3", "w4", "w25 w2"]),
    ):
        with open(paths[key], "w") as f:
            f.write("".join(line + "\n" for line in lines))
    return paths
