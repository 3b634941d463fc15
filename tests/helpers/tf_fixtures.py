"""TensorFlow's outputs recorded in tests/data/tf_fixtures (tools/record_tf_fixtures.py writes them), and
what the recorder and the tests share: the pipelines both sides build, and one canonical JSON form of
values so that a headrace result and a recorded TensorFlow result compare with ``==``.

Canonical form (``canon``): an array or numpy scalar is ``{"dtype", "shape", "values"}`` (strings as
dtype ``"string"`` with hex values, so bytes survive JSON); ``bytes`` is a 0-d string array (TensorFlow's
numpy iterators give ``bytes`` for a scalar string); a tuple is ``{"tuple": [...]}``, a dict
``{"dict": {...}}``, a list stays a list; Python numbers stay themselves.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "tf_fixtures")


def fixture_path(name: str) -> str:
    return os.path.join(FIXTURES, name)


def load_json(name: str) -> Any:
    with open(fixture_path(name), encoding="utf-8") as f:
        return json.load(f)


def load_npz(name: str) -> dict[str, np.ndarray]:
    with np.load(fixture_path(name), allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def _string_values(array: np.ndarray) -> Any:
    flat = [bytes(v).hex() if not isinstance(v, str) else v.encode().hex() for v in array.reshape(-1)]
    return np.array(flat, dtype=object).reshape(array.shape).tolist() if array.ndim else flat[0]


def canon(value: Any) -> Any:
    """``value`` (nested tuples, lists, dicts of arrays, numpy scalars, bytes) in the canonical JSON form."""
    if isinstance(value, (bytes, np.bytes_)):
        return {"dtype": "string", "shape": [], "values": bytes(value).hex()}
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind in "OSU":
            return {"dtype": "string", "shape": list(array.shape), "values": _string_values(array)}
        return {"dtype": array.dtype.name, "shape": list(array.shape), "values": array.tolist()}
    if isinstance(value, tuple):
        return {"tuple": [canon(v) for v in value]}
    if isinstance(value, list):
        return [canon(v) for v in value]
    if isinstance(value, dict):
        return {"dict": {str(k): canon(v) for k, v in value.items()}}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    raise TypeError(f"canon: no canonical form for {type(value).__name__}")


def plain(value: Any) -> Any:
    """The canonical form without dtypes: what ``np.asarray(x).tolist()`` compares (the live tests)."""
    if isinstance(value, dict) and "dtype" in value and "values" in value:
        return value["values"]
    if isinstance(value, dict) and "tuple" in value:
        return [plain(v) for v in value["tuple"]]
    if isinstance(value, dict) and "dict" in value:
        return {k: plain(v) for k, v in value["dict"].items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def uncanon(value: Any) -> Any:
    """The Python value of a canonical form: arrays as arrays, a 0-d string as ``bytes``, a 0-d number
    as a numpy scalar of its dtype."""
    if isinstance(value, dict) and "dtype" in value and "values" in value:
        if value["dtype"] == "string":
            if not value["shape"]:
                return bytes.fromhex(value["values"])
            flat = np.array(value["values"], dtype=object).reshape(-1)
            return np.array([bytes.fromhex(v) for v in flat], dtype=object).reshape(value["shape"])
        array = np.array(value["values"], dtype=value["dtype"]).reshape(value["shape"])
        return array[()] if not value["shape"] else array
    if isinstance(value, dict) and "tuple" in value:
        return tuple(uncanon(v) for v in value["tuple"])
    if isinstance(value, dict) and "dict" in value:
        return {k: uncanon(v) for k, v in value["dict"].items()}
    if isinstance(value, list):
        return [uncanon(v) for v in value]
    return value


def pack(records: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Byte strings as one uint8 array and their end offsets (npz files keep no object arrays)."""
    data = np.frombuffer(b"".join(records), np.uint8) if records else np.zeros(0, np.uint8)
    return data, np.cumsum([len(r) for r in records], dtype=np.int64)


def unpack(data: np.ndarray, ends: np.ndarray) -> list[bytes]:
    raw = data.tobytes()
    starts = [0, *ends[:-1].tolist()]
    return [raw[s:e] for s, e in zip(starts, ends.tolist())]


# Pipelines both sides build: ``build(d)`` with ``d`` either ``tf.data`` or ``headrace.data``.
SAME_VALUES: dict[str, Callable[[Any], Any]] = {
    "window_shift_stride": lambda d: d.Dataset.range(11).window(3, 2, 2).flat_map(lambda w: w.batch(3)),
    "window_drop_remainder": lambda d: (
        d.Dataset.range(7).window(4, 3, 1, True).flat_map(lambda w: w.batch(4))
    ),
    "unique": lambda d: d.Dataset.from_tensor_slices([3, 1, 3, 2, 1, 5]).unique(),
    "counter": lambda d: d.Dataset.counter(4, 3).take(5),
    "interleave_repeat_by_value": lambda d: d.Dataset.range(1, 4).interleave(
        lambda x: d.Dataset.from_tensors(x).repeat(x), cycle_length=2
    ),
    "rebatch": lambda d: d.Dataset.range(10).batch(3).rebatch(2),
}

# Orders that depend on tf.data's default cycle length, hence on the schedulable CPUs: recorded per count.
CPU_DEPENDENT: dict[str, Callable[[Any], Any]] = {
    "interleave_default_cycle": lambda d: d.Dataset.range(6).interleave(
        lambda x: d.Dataset.range(x * 10, x * 10 + 3)
    ),
    "interleave_autotune": lambda d: d.Dataset.range(6).interleave(
        lambda x: d.Dataset.range(x * 10, x * 10 + 3), num_parallel_calls=-1
    ),
    "interleave_parallel_1": lambda d: d.Dataset.range(6).interleave(
        lambda x: d.Dataset.range(x * 10, x * 10 + 3), num_parallel_calls=1
    ),
}


def infinite_pipelines(d: Any, fill: Callable, length: Callable) -> list:
    """Infinite inputs whose cardinality both sides report (test_cardinalities_of_infinite_inputs)."""
    inf = d.Dataset.range(1, 4).repeat()
    return [
        inf.filter(lambda x: x > 0),
        inf.window(2),
        inf.unique(),
        inf.batch(2).rebatch(3),
        inf.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), 2),
        inf.map(fill).bucket_by_sequence_length(length, [2], [2, 2]),
        d.Dataset.random(seed=1),
        d.Dataset.counter(),
    ]


def example_entries(serialized: bytes) -> list[bytes]:
    """The map entries of a serialized ``tf.train.Example`` (field 1: Features, its field 1: one entry
    per feature), sorted: two serializations of one Example give the same list whatever their map order."""

    def varint(data: bytes, pos: int) -> tuple[int, int]:
        shift = result = 0
        while True:
            byte = data[pos]
            result |= (byte & 0x7F) << shift
            pos += 1
            if not byte & 0x80:
                return result, pos
            shift += 7

    def fields(data: bytes) -> list[bytes]:
        out, pos = [], 0
        while pos < len(data):
            tag, pos = varint(data, pos)
            if tag != 0x0A:
                raise ValueError(f"unexpected field tag {tag} at byte {pos}")
            size, pos = varint(data, pos)
            out.append(data[pos : pos + size])
            pos += size
        return out

    entries = [entry for features in fields(serialized) for entry in fields(features)]
    return sorted(entries)


def assert_matches(ours: Any, theirs: Any, atol: float = 0.0, where: str = "") -> None:
    """Canonical forms equal; float arrays within ``atol`` when it is given. The message names the path."""
    if isinstance(theirs, dict) and "dtype" in theirs and "values" in theirs:
        assert isinstance(ours, dict) and "dtype" in ours, f"{where}: headrace gave {ours!r}, TF an array"
        assert (ours["dtype"], ours["shape"]) == (theirs["dtype"], theirs["shape"]), (
            f"{where}: headrace {ours['dtype']}{ours['shape']}, TF {theirs['dtype']}{theirs['shape']}"
        )
        if atol and theirs["dtype"].startswith("float"):
            np.testing.assert_allclose(ours["values"], theirs["values"], rtol=0, atol=atol, err_msg=where)
        else:
            assert ours["values"] == theirs["values"], f"{where}: values differ"
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), (
            f"{where}: keys {ours!r} vs {theirs!r}"
        )
        for key in theirs:
            assert_matches(ours[key], theirs[key], atol, f"{where}/{key}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), (
            f"{where}: {len(ours) if isinstance(ours, list) else ours!r} items, TF {len(theirs)}"
        )
        for k, (a, b) in enumerate(zip(ours, theirs)):
            assert_matches(a, b, atol, f"{where}[{k}]")
    else:
        assert ours == theirs, f"{where}: headrace {ours!r}, TF {theirs!r}"


def to_tf_cases() -> dict:
    """headrace pipelines handed to ``headrace.tf.to_tf``, as the live tests in tests/integrations/test_tf.py."""
    import headrace as hr

    D = hr.Dataset  # noqa: N806
    image_dict = D.range(5).map(
        lambda i: {"image": np.full((2, 3), i, np.uint8), "label": (i, np.float32(i) / 2), "id": b"%d" % i}
    )
    return {
        # name: (dataset, to_tf keyword arguments, how many values to record (None: all), ordered)
        "dict_batch": (image_dict.batch(2), {}, None, True),
        "filter_unknown": (D.range(4).filter(lambda x: x > 1), {}, None, True),
        "repeat_infinite": (D.range(4).repeat(), {}, 6, True),
        "global_shuffle": (D.range(6).global_shuffle(seed=1), {}, None, False),
        "batch_drop_remainder": (D.range(4).batch(2, drop_remainder=True), {}, None, True),
        "map_after_batch": (D.range(5).batch(2).map(lambda x: x * 2), {"batch_axis_to_none": False}, 2, True),
        "batch_axis_to_none": (
            D.range(5).batch(2).map(lambda x: x * 2),
            {"batch_axis_to_none": True},
            None,
            True,
        ),
        "strings_floats": (D.from_tensor_slices(([b"a", b"bc", b""], [1.5, 2.5, -1.0])), {}, None, True),
        "scalar_bool_matrix": (
            D.from_tensors((np.array(True), np.arange(6, dtype=np.float64).reshape(2, 3))),
            {},
            None,
            True,
        ),
    }
