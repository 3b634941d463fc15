"""Inputs for the ported pipelines of tf_math_pipelines.py / tf1_math_pipelines.py, in place of the TFDS,
Keras and download loaders the sources use. Arithmetic only (no random generators), with explicit numpy
dtypes, so TensorFlow and headrace read the same values (a Python int would be int32 in one and int64 in
the other)."""

from __future__ import annotations

import io
import json
import os

import numpy as np


def _pixels(n: int, h: int, w: int, c: int = 3, salt: int = 0) -> np.ndarray:
    i, y, x, k = np.meshgrid(np.arange(n), np.arange(h), np.arange(w), np.arange(c), indexing="ij")
    return ((i * 53 + y * 7 + x * 13 + k * 41 + salt + (x * y) % 17) % 256).astype(np.uint8)


def images(n: int, h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """(uint8 images [n, h, w, 3], int64 labels), as a TFDS image dataset ``as_supervised``."""
    return _pixels(n, h, w), (np.arange(n) * 3 % 10).astype(np.int64)


def _strings(items: list[str]) -> np.ndarray:
    return np.array([s.encode() for s in items], dtype=object)


def glue_rte() -> dict:
    premises = ["The cat sat on the mat.", "Paris is in France.", "It rained all day.", "Dogs bark."]
    hypotheses = ["A cat sat.", "Paris is in Spain.", "The ground is wet.", "Cats meow."]
    return {
        "sentence1": _strings(premises),
        "sentence2": _strings(hypotheses),
        "label": np.array([0, 1, 0, -1], np.int64),  # -1: the test split's unknown label
        "idx": np.arange(4, dtype=np.int32),
    }


def glue_multirc() -> dict:
    return {
        "paragraph": _strings(
            ["<b>Sent 1: </b>Tom ran.<br><b>Sent 2: </b>He won.", "<b>Sent 1: </b>Rain.<br>"]
        ),
        "question": _strings(["Did Tom win?", "Was it dry?"]),
        "answer": _strings(["Yes", "No"]),
        "label": np.array([1, 0], np.int64),
        "idx": {
            "paragraph": np.array([0, 1], np.int32),
            "question": np.array([0, 0], np.int32),
            "answer": np.array([3, 1], np.int32),
        },
    }


def glue_stsb() -> dict:
    return {
        "sentence1": _strings(["A man plays.", "Two dogs run.", "Soup is hot.", "Kids swim."]),
        "sentence2": _strings(["A man is playing.", "Dogs are running.", "It is cold.", "Children swim."]),
        "label": np.array([4.75, 3.3, 0.1, 2.5], np.float32),
        "idx": np.arange(4, dtype=np.int32),
    }


def articles() -> dict:
    return {
        "article": _strings(["Long text about markets.  It goes on.", ""]),
        "highlights": _strings(["Markets moved.", "Nothing."]),
    }


def squad() -> dict:
    return {
        "id": _strings(["q1", "q2", "q3"]),
        "context": _strings(
            [
                "Normans (Norman: Nourmands; French: Normands) gave their name to Normandy.",
                "The  Amazon,  in South America, is 6,400 km long!",
                "E=mc^2 is [famous]; isn't it?",
            ]
        ),
        "question": _strings(["Who gave their name to Normandy?", "How long is the Amazon?", "Famous?"]),
        "answers": {
            "text": np.array(
                [[b"Normans", b"The Normans"], [b"6,400 km", b"6,400"], [b"yes", b"[famous]"]], dtype=object
            ),
            "answer_start": np.array([[0, 0], [39, 39], [11, 10]], np.int32),
        },
    }


def waveforms(n: int, samples: int) -> tuple[np.ndarray, np.ndarray]:
    """(float32 audio [n, samples, 1] in [-1, 1], int32 labels), as Keras' audio loader gives them."""
    t = np.arange(samples, dtype=np.float64) / 16000
    rows = [
        0.5 * np.sin(2 * np.pi * (220 + 110 * i) * t) + 0.1 * np.cos(2 * np.pi * 3000 * t * (i + 1))
        for i in range(n)
    ]
    return np.array(rows, np.float32)[..., None], (np.arange(n) % 8).astype(np.int32)


def _jpeg(array: np.ndarray) -> bytes:
    from PIL import Image  # noqa: PLC0415

    out = io.BytesIO()
    Image.fromarray(array).save(out, "JPEG", quality=90)
    return out.getvalue()


def facade_jpegs(tmp: str) -> str:
    """pix2pix's facades layout: ``test/*.jpg``, each the photo and its label map side by side."""
    root = os.path.join(tmp, "facades")
    os.makedirs(os.path.join(root, "test"), exist_ok=True)
    pictures = _pixels(3, 30, 60, salt=5)
    for k, picture in enumerate(pictures):
        with open(os.path.join(root, "test", f"{k + 1}.jpg"), "wb") as f:
            f.write(_jpeg(picture))
    return root


def pets(n: int, h: int, w: int) -> dict:
    """oxford_iiit_pet's features: a uint8 image and a uint8 mask of classes 1..3."""
    mask = (_pixels(n, h, w, 1, salt=2) % 3 + 1).astype(np.uint8)
    return {"image": _pixels(n, h, w), "segmentation_mask": mask}


def tagged_images(n: int, h: int, w: int) -> dict:
    return {
        "image": _pixels(n, h, w),
        "mask": _pixels(n, h, w, 1, salt=9),
        "tags": np.zeros((n, 0), np.int64),  # empty: setdefault fills it
    }


def mnist_records(path: str, count: int) -> str:
    """MNIST as tensorflow/tpu's convert script writes it: ``image_raw`` bytes and an int64 ``label``."""
    import headrace as hr  # noqa: PLC0415

    with hr.io.TFRecordWriter(path) as writer:
        for k, picture in enumerate(_pixels(count, 28, 28, 1, salt=3)):
            writer.write(hr.io.serialize_example({"image_raw": [picture.tobytes()], "label": [k % 10]}))
    return path


def tf_records_tutorial(path: str, count: int) -> str:
    """The four features of the TF1 TFRecord tutorial (feature0 int, feature1 int, feature2 bytes,
    feature3 float), written as its ``serialize_example`` writes them."""
    import headrace as hr  # noqa: PLC0415

    animals = [b"cat", b"dog", b"chicken", b"horse", b"goat"]
    with hr.io.TFRecordWriter(path) as writer:
        for k in range(count):
            writer.write(
                hr.io.serialize_example(
                    {
                        "feature0": [k % 2 == 0],
                        "feature1": [k % 5],
                        "feature2": [animals[k % 5]],
                        "feature3": [np.float32(k * 0.37 - 1)],
                    }
                )
            )
    return path


def word_pngs(tmp: str) -> np.ndarray:
    """Grey PNGs of handwritten-word sizes (wider and narrower than the 128x32 target), as an array of
    path strings."""
    from PIL import Image  # noqa: PLC0415

    paths = []
    for k, (h, w) in enumerate([(20, 90), (40, 100), (31, 200), (16, 16), (33, 127)]):
        path = os.path.join(tmp, f"word{k}.png")
        Image.fromarray(_pixels(1, h, w, 1, salt=k)[0, :, :, 0]).save(path)
        paths.append(path.encode())
    return np.array(paths, dtype=object)


def xy_records(tmp: str, shards: int, per_shard: int) -> None:
    """TFRecord shards ``train-0000k-of-0000n`` of Examples with a float ``x`` [2] and an int64 ``y`` (the
    shard), as a tensorflow/models task's files."""
    import headrace as hr  # noqa: PLC0415

    for shard in range(shards):
        with hr.io.TFRecordWriter(os.path.join(tmp, f"train-{shard:05d}-of-{shards:05d}")) as writer:
            for i in range(per_shard):
                value = float(shard * per_shard + i)
                writer.write(hr.io.serialize_example({"x": [value, -value], "y": [shard]}))


def summary(items: list) -> list:
    """What a random pipeline's elements must agree on: each component's dtype and shape, and for floats
    whether all values lie in [0, 1]."""
    out = []
    for item in items:
        parts = item if isinstance(item, tuple) else (item,)
        row = []
        for part in parts:
            array = np.asarray(part)
            in_unit = bool(np.all((array >= 0) & (array <= 1))) if array.dtype.kind == "f" else None
            row.append([str(array.dtype), list(array.shape), in_unit])
        out.append(row)
    return out


def unordered(items: list) -> list:
    """A shuffled pipeline's elements in one fixed order (by their canonical form), to compare as a set."""
    from tests.helpers.tf_fixtures import canon  # noqa: PLC0415

    return sorted(items, key=lambda item: json.dumps(canon(item), sort_keys=True))
