"""headrace's tf ops against TensorFlow's recorded outputs (tests/data/tfops_fixtures/ops.json, written by
tools/record_tfops_fixtures.py with TensorFlow 2.21): the same values and dtypes, or the same kind
of error. A tensor argument is given as numpy (as a dataset element reaches a map function)."""

from __future__ import annotations

import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import headrace as hr

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from record_tfops_fixtures import lookup_case  # noqa: E402 (the recorder's tf.lookup driver)

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "tfops_fixtures" / "ops.json"
DATA = json.loads(FIXTURES.read_text())
CASES = DATA["cases"]

#: TensorFlow's error class -> what headrace must raise instead (an instance of it)
ERRORS = {
    "InvalidArgumentError": hr.errors.InvalidArgumentError,
    "TypeError": TypeError,
    "ValueError": ValueError,
    "UnimplementedError": hr.errors.UnimplementedError,
    # TF has no kernel for that dtype (NotFoundError in eager mode); headrace refuses the dtype
    "NotFoundError": (hr.errors.NotFoundError, hr.errors.InvalidArgumentError),
    "FailedPreconditionError": hr.errors.FailedPreconditionError,
    "OutOfRangeError": hr.errors.OutOfRangeError,
    # TF's lookup reads keys.dtype: a Python list is refused there with AttributeError, here TypeError
    "AttributeError": (AttributeError, TypeError),
}

#: cases where headrace differs on purpose (docs/porting.md), by op and arguments as recorded
KNOWN: dict[str, str] = {
    json.dumps(
        [
            "cast",
            [
                {"t": [-1.7, 2.5, -0.5, 1e20, -1e20, math.nan, 255.9, 300.0, math.inf], "d": "float32"},
                "uint32",
            ],
            {},
        ],
        separators=(",", ":"),
    ): "float32 NaN and out-of-range values cast to uint32: TF's CPU conversion gives 2**31 (and 0 for inf), "
    "headrace 0 (undefined in C++)",
}


def from_json(value):
    if isinstance(value, dict):
        keys = set(value)
        if keys == {"b"}:
            return value["b"].encode("latin-1")
        if keys == {"z"}:
            return complex(*value["z"])
        if keys == {"tuple"}:
            return tuple(from_json(v) for v in value["tuple"])
        if keys == {"t", "d"}:
            dtype = hr.string if value["d"] == "string" else np.dtype(value["d"])
            raw = from_json(value["t"])
            array = np.empty(np.shape(raw), dtype=object) if dtype == hr.string else None
            if array is not None:
                array[...] = raw if np.ndim(raw) else raw
                if array.ndim == 0:
                    array[()] = raw
            else:
                array = np.array(raw, dtype=dtype)
            return array[()] if array.ndim == 0 else array
        return {k: from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_json(v) for v in value]
    return value


def resolve(name: str):
    target = hr
    for part in name.split("."):
        target = getattr(target, part)
    return target


def call(case):
    op, args, kwargs = (
        case["op"],
        [from_json(a) for a in case["args"]],
        {k: from_json(v) for k, v in case["kwargs"].items()},
    )
    if op == "cond":
        return hr.cond(args[0], lambda: np.int32(1), lambda: np.int32(2))
    if op.startswith("lookup."):
        with tempfile.TemporaryDirectory(prefix="hr-lookup-") as folder:
            return lookup_case(
                hr, case["op"], case["args"], case["kwargs"], from_json, lambda d: d, _writer(folder)
            )
    return resolve(op)(*args, **kwargs)


def _writer(folder: str):
    def write(content) -> str:
        path = Path(folder) / f"vocab{len(list(Path(folder).iterdir()))}.txt"
        path.write_bytes(from_json(content))
        return str(path)

    return write


def decode_values(encoded):
    def leaf(v):
        if isinstance(v, dict) and set(v) == {"b"}:
            return v["b"].encode("latin-1")
        if v is None:
            return math.nan
        if v == "inf":
            return math.inf
        if v == "-inf":
            return -math.inf
        return v

    def walk(v):
        return [walk(x) for x in v] if isinstance(v, list) else leaf(v)

    return walk(encoded)


def flat(values) -> list:
    if not isinstance(values, list):
        return [values]
    return [item for value in values for item in flat(value)]


def check_equal(expected, actual, where: str) -> None:
    if "l" in expected or "tuple" in expected:
        items = expected.get("l", expected.get("tuple"))
        assert isinstance(actual, (list, tuple)), f"{where}: expected a sequence, got {type(actual).__name__}"
        assert len(actual) == len(items), f"{where}: {len(actual)} items, TF gave {len(items)}"
        for i, (e, a) in enumerate(zip(items, actual)):
            check_equal(e, a, f"{where}[{i}]")
        return
    if "m" in expected:
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected["m"]), where
        for key, e in expected["m"].items():
            check_equal(e, actual[key], f"{where}[{key!r}]")
        return
    if "n" in expected:
        assert actual is None, where
        return
    if "r" in expected:
        rows = actual.to_list() if isinstance(actual, hr.io.Ragged) else np.asarray(actual).tolist()
        assert rows == decode_values(expected["r"]), f"{where}: {rows} != {decode_values(expected['r'])}"
        return
    dtype = expected["d"]
    if isinstance(actual, bytes):
        actual = np.array(actual, dtype=object)
    array = np.asarray(actual)
    if dtype == "string":
        assert array.dtype == object and all(isinstance(x, bytes) for x in array.reshape(-1)), (
            f"{where}: not bytes: {actual!r}"
        )
    else:
        assert array.dtype == np.dtype(dtype), f"{where}: dtype {array.dtype}, TF gave {dtype}"
    assert list(array.shape) == expected["s"], f"{where}: shape {list(array.shape)}, TF gave {expected['s']}"
    if "v" not in expected:
        return
    if expected.get("c"):
        want = np.array([complex(r, i) for r, i in expected["v"]]).reshape(expected["s"])
        np.testing.assert_allclose(array, want, rtol=2e-5, atol=1e-5, err_msg=where)
        return
    want = flat(decode_values(expected["v"]))
    if dtype == "string":
        assert array.reshape(-1).tolist() == want, f"{where}: {array.reshape(-1).tolist()} != {want}"
    elif dtype.startswith("float") or dtype.startswith("bfloat"):
        rtol = 2e-3 if dtype == "float16" else 2e-5
        np.testing.assert_allclose(
            array.reshape(-1).astype(np.float64),
            np.array(want, dtype=np.float64),
            rtol=rtol,
            atol=1e-6,
            err_msg=where,
        )
    else:
        assert array.reshape(-1).tolist() == want, f"{where}: {array.reshape(-1).tolist()} != {want}"


def case_id(index: int, case) -> str:
    return f"{index}-{case['op']}"


def key(case) -> str:
    return json.dumps([case["op"], case["args"], case["kwargs"]], separators=(",", ":"))


@pytest.mark.parametrize("case", CASES, ids=[case_id(i, c) for i, c in enumerate(CASES)])
def test_op_matches_tensorflow(case):
    reason = KNOWN.get(key(case))
    if reason:
        pytest.xfail(reason)
    where = f"{case['op']}{tuple(case['args'])} {case['kwargs']}"
    if "error" in case:
        expected = ERRORS.get(case["error"], Exception)
        with pytest.raises(expected):
            result = call(case)
            print(where, "gave", result)
        return
    check_equal(case["ok"], call(case), where)


def test_the_fixtures_cover_the_common_ops():
    ops = {case["op"] for case in CASES}
    for name in [
        "cast",
        "shape",
        "random.uniform",
        "clip_by_value",
        "concat",
        "one_hot",
        "range",
        "constant",
        "squeeze",
        "equal",
        "strings.lower",
        "stack",
        "less",
        "maximum",
        "tile",
        "random.shuffle",
        "math.rint",
        "unstack",
        "reshape",
        "random.gamma",
        "sqrt",
        "pad",
        "zeros",
        "size",
        "reduce_sum",
        "not_equal",
        "logical_and",
        "less_equal",
        "cumsum",
        "roll",
        "rank",
        "strings.join",
        "audio.decode_wav",
        "signal.stft",
        "abs",
        "pow",
        "reduce_mean",
        "math.reduce_std",
        "strings.unicode_split",
        "strings.regex_replace",
        "strings.to_hash_bucket_fast",
        "lookup.StaticHashTable",
        "lookup.StaticVocabularyTable",
        "lookup.TextFileInitializer",
    ]:
        assert name in ops, name
    assert len(CASES) > 1000
