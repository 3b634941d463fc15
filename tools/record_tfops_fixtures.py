"""Record TensorFlow's outputs (values, dtypes, or the error class) for headrace's tf ops.

Run with a Python that has TensorFlow (e.g. ``/work/tfvenv-ops/bin/python tools/record_tfops_fixtures.py``);
it writes ``tests/data/tfops_fixtures/ops.json``, which ``tests/tfops/test_fixtures.py`` replays
against headrace without TensorFlow.

A case is ``[op, args, kwargs]``; a tensor argument is ``{"t": value, "d": dtype}`` (a
``tf.constant`` in TensorFlow, a numpy array in headrace: an element of a dataset), anything else a
Python value. Bytes are stored as ``{"b": latin-1 text}``.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "tfops_fixtures" / "ops.json"


def T(value, dtype):  # noqa: N802 (reads as a tensor literal)
    return {"t": value, "d": dtype}


def B(text: str):  # noqa: N802
    return {"b": text}


def Tu(*items):  # noqa: N802 (a tuple, which JSON has not)
    return {"tuple": list(items)}


def cases() -> list:
    out: list = []
    add = out.append
    # binary arithmetic and comparisons: dtype pairs, python scalars, broadcasting
    binary = [
        "add",
        "subtract",
        "multiply",
        "divide",
        "truediv",
        "math.floordiv",
        "math.floormod",
        "pow",
        "maximum",
        "minimum",
        "equal",
        "not_equal",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
        "math.squared_difference",
        "truncatediv",
        "truncatemod",
        "realdiv",
    ]
    for op in binary:
        for d in ["int8", "uint8", "int32", "int64", "float16", "float32", "float64", "bool"]:
            a = (
                [True, False, True]
                if d == "bool"
                else ([3, 7, 100] if d.startswith(("int", "uint")) else [3.5, -7.25, 100.0])
            )
            b = (
                [False, False, True]
                if d == "bool"
                else ([2, 3, 9] if d.startswith(("int", "uint")) else [2.0, 3.0, -0.5])
            )
            if d.startswith("int") and op not in ("pow",):
                a = [3, -7, 100]
            add([op, [T(a, d), T(b, d)], {}])
        add([op, [T([1, 2], "int32"), T([1.0, 2.0], "float32")], {}])
        add([op, [T([1, 2], "int32"), 2], {}])
        add([op, [T([1, 2], "int32"), 2.5], {}])
        add([op, [T([1.5, 2], "float32"), 2], {}])
        add([op, [2, T([1.5, 2], "float32")], {}])
        add([op, [T([[1], [2]], "int64"), T([1, 2, 3], "int64")], {}])
        add([op, [T([1, 2], "int64"), T([1, 2, 3], "int64")], {}])
        add([op, [7, 2], {}])
        add([op, [7, 2.5], {}])
        add([op, [T([5, -5], "int32"), T([0, 0], "int32")], {}])
        add([op, [T([5.0, -5.0, 0.0], "float32"), T([0.0, 0.0, 0.0], "float32")], {}])
        add([op, [T([2], "int32"), T([-1], "int32")], {}])
    for op in ["add", "equal", "not_equal", "less"]:
        add([op, [T([B("a"), B("b")], "string"), B("c")], {}])
        add([op, [T(B("a"), "string"), 1], {}])
    for op in ["logical_and", "logical_or", "math.logical_xor"]:
        add([op, [T([True, False], "bool"), T([True, True], "bool")], {}])
        add([op, [T([1, 0], "int32"), T([1, 1], "int32")], {}])
        add([op, [T([True, False], "bool"), True], {}])
    add(["logical_not", [T([True, False], "bool")], {}])
    add(["logical_not", [T([1], "int32")], {}])
    # unary
    unary = [
        "abs",
        "negative",
        "sign",
        "square",
        "sqrt",
        "exp",
        "math.log",
        "math.log1p",
        "math.rint",
        "round",
        "math.floor",
        "math.ceil",
        "math.reciprocal",
        "sigmoid",
        "tanh",
        "sin",
        "cos",
        "math.is_nan",
        "math.is_inf",
        "math.is_finite",
        "math.rsqrt",
        "math.expm1",
    ]
    for op in unary:
        for d in ["int32", "int64", "uint8", "float16", "float32", "float64", "bool"]:
            v = (
                [True, False]
                if d == "bool"
                else (
                    [0, 3, 9]
                    if d == "uint8"
                    else ([-2, 0, 3] if d.startswith("int") else [-2.5, -0.5, 0.5, 1.5, 2.5, 0.0, 4.0])
                )
            )
            add([op, [T(v, d)], {}])
        add([op, [T([float("nan"), float("inf"), -float("inf")], "float32")], {}])
        add([op, [2.25], {}])
    add(["abs", [T([1 + 2j], "complex64")], {}])
    # cast
    cast_values = {
        "float32": [-1.7, 2.5, -0.5, 1e20, -1e20, float("nan"), 255.9, 300.0, float("inf")],
        "float64": [-1.7, 2.5, 3e9, -3e9, 65535.9],
        "int64": [2**40, -1, 300, -129, 2**31],
        "int32": [-1, 300, 65537, 0],
        "uint8": [0, 200, 255],
        "bool": [True, False],
        "complex64": [1 + 2j, -3.5 - 1j],
        "string": [B("1")],
    }
    for source, values in cast_values.items():
        for target in [
            "int8",
            "uint8",
            "int16",
            "uint16",
            "int32",
            "uint32",
            "int64",
            "float16",
            "float32",
            "float64",
            "bool",
            "complex64",
        ]:
            add(["cast", [T(values, source), target], {}])
    add(["cast", [1.7, "int32"], {}])
    add(["cast", [[1, 2], "float32"], {}])
    add(["cast", [T([B("1")], "string"), "string"], {}])
    # clip, cumulative
    add(["clip_by_value", [T([1, 5, 9], "int32"), 2, 6], {}])
    add(["clip_by_value", [T([1.0, 5, 9], "float32"), 2, 6], {}])
    add(["clip_by_value", [T([1, 5, 9], "int32"), 2.5, 6], {}])
    add(["clip_by_value", [T([1, 5], "int32"), 6, 2], {}])
    add(["clip_by_value", [T([[1, 5], [7, 8]], "int32"), T([2, 3], "int32"), 6], {}])
    add(["clip_by_value", [T([1, 5], "int32"), T([2, 3, 4], "int32"), 6], {}])
    add(["clip_by_value", [T([1.0, 5], "float32"), T(2, "float64"), 6.0], {}])
    for kw in [
        {},
        {"exclusive": True},
        {"reverse": True},
        {"exclusive": True, "reverse": True},
        {"axis": 1},
        {"axis": -1},
        {"axis": 2},
    ]:
        add(["cumsum", [T([[1, 2, 3], [4, 5, 6]], "int32")], kw])
        add(["math.cumprod", [T([[1, 2, 3], [4, 5, 6]], "float32")], kw])
    add(["cumsum", [T([100, 100], "int8")], {}])
    # reductions
    matrix = [[1, -2, 3], [4, 5, -6]]
    for op in [
        "reduce_sum",
        "reduce_prod",
        "reduce_mean",
        "reduce_max",
        "reduce_min",
        "math.reduce_std",
        "math.reduce_variance",
        "reduce_logsumexp",
    ]:
        for d in ["int32", "int64", "float32", "float64", "bool", "uint8"]:
            values = (
                [[True, False, True], [False, False, True]]
                if d == "bool"
                else ([[1, 2, 3], [4, 5, 6]] if d == "uint8" else matrix)
            )
            for kw in [
                {},
                {"axis": 0},
                {"axis": 1},
                {"axis": -1},
                {"axis": [0, 1]},
                {"axis": 1, "keepdims": True},
                {"axis": 2},
            ]:
                add([op, [T(values, d)], kw])
        add([op, [T([], "float32")], {}])
        add([op, [T([], "int32")], {}])
        add([op, [T([[-1, -2]], "int32")], {"axis": 1}])
    for op in ["reduce_any", "reduce_all"]:
        for kw in [{}, {"axis": 0}, {"axis": 1, "keepdims": True}]:
            add([op, [T([[True, False], [False, False]], "bool")], kw])
        add([op, [T([1, 0], "int32")], {}])
        add([op, [T([], "bool")], {}])
    for op in ["argmax", "argmin"]:
        add([op, [T([[1, 3, 3], [4, 2, 4]], "int32")], {}])
        add([op, [T([[1, 3, 3], [4, 2, 4]], "float32")], {"axis": 1}])
        add([op, [T([[1, 3, 3], [4, 2, 4]], "float32")], {"axis": 1, "output_type": "int32"}])
        add([op, [T([], "float32")], {}])
    add(["add_n", [[T([1, 2], "int32"), T([3, 4], "int32"), T([5, 6], "int32")]], {}])
    add(["add_n", [[T([1, 2], "int32"), T([3.0, 4], "float32")]], {}])
    # creation
    for value in [
        1,
        2**40,
        2**70,
        1.5,
        [1, 2.5],
        [1, 2],
        True,
        [True, False],
        B("a"),
        [B("a"), B("b")],
        [],
        [[1, 2], [3]],
        1 + 2j,
    ]:
        add(["constant", [value], {}])
    for value, d in [
        (1, "float32"),
        (1.5, "int32"),
        (300, "int8"),
        (True, "int32"),
        (1, "bool"),
        (-1, "uint8"),
        (1, "string"),
        (B("x"), "int32"),
        (2**40, "int32"),
    ]:
        add(["constant", [value, d], {}])
    add(["constant", [T([1.5, 2.7], "float64"), "int32"], {}])
    add(["constant", [1], {"shape": [2, 3]}])
    add(["constant", [[1, 2]], {"shape": [2, 2]}])
    add(["constant", [[1, 2, 3, 4, 5, 6]], {"shape": [2, 3]}])
    add(["convert_to_tensor", [T(1, "int32"), "int64"], {}])
    add(["convert_to_tensor", [1, "int64"], {}])
    add(["convert_to_tensor", [1.5], {}])
    add(["convert_to_tensor", [1], {"dtype_hint": "float32"}])
    add(["convert_to_tensor", [1.5], {"dtype_hint": "int32"}])
    for op in ["zeros", "ones"]:
        for shape, d in [
            ([2, 1], "int32"),
            ([2], "float32"),
            ([], "float64"),
            ([-2, 1], "float32"),
            ([0, 3], "bool"),
        ]:
            add([op, [shape, d], {}])
    add(["zeros", [[2], "string"], {}])
    add(["fill", [[2, 3], 9], {}])
    add(["fill", [[2], 1.5], {}])
    add(["fill", [[2], T([1, 2], "int32")], {}])
    add(["zeros_like", [T([[1, 2]], "int64")], {}])
    add(["ones_like", [T([1.5], "float32")], {}])
    add(["ones_like", [T([1.5], "float32")], {"dtype": "int32"}])
    for args, kw in [
        ([5], {}),
        ([0, 3, 0.5], {}),
        ([5, 0, -2], {}),
        ([5, 0, 0], {}),
        ([5, 0, 1], {}),
        ([T(5, "int64")], {}),
        ([5], {"dtype": "float64"}),
        ([1, T(5, "int64")], {}),
        ([0.5, 3], {}),
        ([0, 1, 0.3], {}),
        ([3, 3], {}),
        ([T(2, "int32"), T(6, "int64")], {}),
        ([-3], {}),
    ]:
        add(["range", args, kw])
    add(["linspace", [0.0, 1.0, 5], {}])
    add(["eye", [3], {}])
    add(["eye", [2, 3], {"dtype": "int32"}])
    # shapes
    for value in [T([[1, 2]], "int32"), T(3, "float32"), [[1.0, 2]], T([[[1]], [[2]]], "int64")]:
        add(["shape", [value], {}])
        add(["size", [value], {}])
        add(["rank", [value], {}])
    add(["shape", [T([1], "int32")], {"out_type": "int64"}])
    add(["size", [T([1], "int32")], {"out_type": "int64"}])
    add(["shape", [T([1], "int32")], {"out_type": "float32"}])
    x = T([[1, 2, 3], [4, 5, 6]], "int32")
    for shape in [[3, 2], [-1], [6, 1], [-1, 2], [2, -1, 3], [4, -1], [5], [-1, -1], [1, 2, 3], []]:
        add(["reshape", [x, shape], {}])
    add(["reshape", [T([7], "int32"), []], {}])
    for axis in [0, 1, 2, -1, -3, 3, -4]:
        add(["expand_dims", [x, axis], {}])
    y = T([[[1], [2]]], "int32")
    for kw in [{}, {"axis": 0}, {"axis": [0, 2]}, {"axis": 1}, {"axis": -1}, {"axis": 3}]:
        add(["squeeze", [y], kw])
    for kw in [{}, {"perm": [1, 0]}, {"perm": [0, 0]}, {"perm": [0]}]:
        add(["transpose", [x], kw])
    add(["broadcast_to", [T([1, 2], "int32"), [3, 2]], {}])
    add(["broadcast_to", [T([1, 2], "int32"), [3, 3]], {}])
    # joining
    for axis in [0, 1, -1, 2, -3]:
        add(["concat", [[x, x], axis], {}])
        add(["stack", [[x, x]], {"axis": axis}])
    add(["concat", [[T([1], "int32"), T([2.0], "float32")], 0], {}])
    add(["concat", [[[1], [2.0]], 0], {}])
    add(["concat", [[T(1, "int32"), T(2, "int32")], 0], {}])
    add(["concat", [[T([[1]], "int32"), T([[2, 3]], "int32")], 0], {}])
    add(["concat", [[T([[1]], "int32"), T([[2, 3]], "int32")], 1], {}])
    add(["concat", [[T([B("a")], "string"), T([B("b")], "string")], 0], {}])
    add(["concat", [[x], 0], {}])
    add(["stack", [[T(1, "int32"), T(2.0, "float32")]], {}])
    add(["stack", [[T([1, 2], "int32"), T([3], "int32")]], {}])
    add(["stack", [[1, 2, 3]], {}])
    add(["stack", [[1, 2.5]], {}])
    for kw in [{}, {"axis": 1}, {"axis": -1}, {"num": 2}, {"num": 3}, {"axis": 2}]:
        add(["unstack", [x], kw])
    add(["unstack", [T(1, "int32")], {}])
    for args in [[x, 3, 1], [x, 2, 1], [x, [1, 2], 1], [x, [1, -1], 1], [x, [1, 1], 1], [x, 2]]:
        add(["split", args, {}])
    for multiples in [[2, 1], [1, 3], [2], [0, 2], [-1, 1]]:
        add(["tile", [x, multiples], {}])
    # a list holding tensors is packed into the op's int32 argument, each tensor cast (floats truncate):
    # keras-io's RetinaNet tiles by [tf.math.ceil(h / 2**i), ...]; a float tensor or Python floats are refused
    add(["tile", [x, [T(2.0, "float64"), 1]], {}])
    add(["tile", [x, [T(1.9, "float32"), T(True, "bool")]], {}])
    add(["tile", [x, T([2.0, 1.0], "float64")], {}])
    add(["tile", [x, [2.0, 1]], {}])
    add(["reshape", [x, [T(3.0, "float64"), -1]], {}])
    # pad
    for paddings, kw in [
        ([[1, 0], [0, 1]], {}),
        ([[0, 0], [2, 1]], {"mode": "reflect"}),
        ([[0, 0], [3, 1]], {"mode": "REFLECT"}),
        ([[0, 0], [3, 1]], {"mode": "SYMMETRIC"}),
        ([[0, 0], [4, 1]], {"mode": "SYMMETRIC"}),
        ([[0, 0], [1, 1]], {"constant_values": 2.5}),
        ([[0, 0], [1, 1]], {"constant_values": 7}),
        ([[1, 1]], {}),
        ([[-1, 0], [0, 0]], {}),
        ([[1, 1], [1, 1]], {"mode": "edge"}),
        ([[1, 1], [2, 0]], {"mode": "symmetric"}),
    ]:
        add(["pad", [x, paddings], kw])
    add(["pad", [T([B("a")], "string"), [[1, 1]]], {"constant_values": B("z")}])
    add(["pad", [T([1.5], "float32"), [[1, 1]]], {"constant_values": 1}])
    for args in [[x, 1, 1], [x, -1, 0], [x, [1, 1], [0, 1]], [x, 5, 1], [x, [1], [0, 1]], [x, 1, 2]]:
        add(["roll", args, {}])
    for axis in [[0], [1], [0, 1], [-1], [2]]:
        add(["reverse", [x, axis], {}])
    for begin, size in [([0, 1], [2, 2]), ([1, 0], [-1, -1]), ([0, 2], [1, 2]), ([0], [1])]:
        add(["slice", [x, begin, size], {}])
    # gather, where, masks, one_hot
    for indices, kw in [
        ([1, 0], {}),
        ([2], {"axis": 1}),
        (5, {}),
        (-1, {}),
        ([[0, 1]], {"axis": 1}),
        ([0, 1], {"axis": -1}),
        ([0.5], {}),
    ]:
        add(
            [
                "gather",
                [
                    x,
                    indices
                    if isinstance(indices, int)
                    else T(indices, "float32" if indices == [0.5] else "int32"),
                ],
                kw,
            ]
        )
    add(["gather", [x, T([[0], [2]], "int32")], {"axis": 1, "batch_dims": 1}])
    add(["gather_nd", [x, T([[0, 1], [1, 2]], "int32")], {}])
    add(["gather_nd", [x, T([[1]], "int32")], {}])
    add(["gather_nd", [x, T([[2, 0]], "int32")], {}])
    add(["where", [T([[True, False], [False, True]], "bool")], {}])
    add(["where", [T([[1, 0], [0, 2]], "int32")], {}])
    add(["where", [T([True, False], "bool"), T([1, 2], "int32"), T([3, 4], "int32")], {}])
    add(["where", [T([True, False], "bool"), T([1, 2], "int32"), 9], {}])
    add(["where", [T([True, False], "bool"), T([1, 2], "int32"), T([3.0, 4], "float32")], {}])
    add(["where", [T([[True], [False]], "bool"), T([1, 2], "int32"), T([3, 4], "int32")], {}])
    add(["where", [T([1, 0], "int32"), T([1, 2], "int32"), T([3, 4], "int32")], {}])
    add(["boolean_mask", [x, T([True, False], "bool")], {}])
    add(["boolean_mask", [x, T([[True, False, True], [False, False, True]], "bool")], {}])
    add(["boolean_mask", [x, T([True, False, True], "bool")], {"axis": 1}])
    add(["boolean_mask", [x, T([True, False, True], "bool")], {}])
    for args, kw in [
        ([T([0, 2, -1, 5], "int32"), 3], {}),
        ([T([0, 2], "int32"), 3], {"axis": 0}),
        ([T([0, 2], "int64"), 3], {"on_value": 5, "off_value": -1}),
        ([T([0, 2], "int32"), 3], {"on_value": 5.0, "off_value": -1}),
        ([T([0, 2], "int32"), 3], {"dtype": "int64"}),
        ([T([0, 2], "uint8"), 3], {}),
        ([T([0.0, 2], "float32"), 3], {}),
        ([T([[0, 1], [2, 0]], "int32"), 3], {}),
        ([T([[0, 1], [2, 0]], "int32"), 3], {"axis": 1}),
        ([T([0], "int32"), 0], {}),
        ([T([1], "int32"), 2], {"on_value": 1.5}),
        ([T([1], "int32"), 2], {"on_value": 3, "dtype": "float32"}),
        ([T(1, "int32"), 3], {}),
        ([[0, 1], 2], {"axis": 2}),
    ]:
        add(["one_hot", args, kw])
    for kw in [{}, {"direction": "DESCENDING"}, {"axis": 0}]:
        add(["sort", [T([[3, 1, 2], [0, 5, 4]], "int32")], kw])
        add(["argsort", [T([[3, 1, 2], [0, 5, 4]], "float32")], kw])
    add(["unique", [T([1, 1, 2, 4, 4, 4, 7, 8, 8], "int32")], {}])
    add(["unique", [T([B("b"), B("a"), B("b")], "string")], {}])
    # strings
    words = T([B("Hello World"), B("\xc3\x84BC d\xc3\xa9f"), B("")], "string")
    for op, kw in [
        ("strings.lower", {}),
        ("strings.lower", {"encoding": "utf-8"}),
        ("strings.upper", {}),
        ("strings.upper", {"encoding": "utf-8"}),
        ("strings.length", {}),
        ("strings.length", {"unit": "UTF8_CHAR"}),
        ("strings.strip", {}),
    ]:
        add([op, [words], kw])
    add(["strings.strip", [T([B("  a b \t\n")], "string")], {}])
    add(["strings.lower", [T([1], "int32")], {}])
    add(["strings.lower", [B("ABC")], {}])
    add(["strings.join", [[T([B("a"), B("b")], "string"), B("c")]], {"separator": "-"}])
    add(["strings.join", [[T([B("a"), B("b")], "string"), T([B("x"), B("y")], "string")]], {}])
    add(["strings.join", [[T([B("a"), B("b")], "string"), T([B("x"), B("y"), B("z")], "string")]], {}])
    add(["strings.join", [[T([B("a")], "string"), T([1], "int32")]], {}])
    add(["strings.reduce_join", [T([[B("a"), B("b")], [B("c"), B("d")]], "string")], {}])
    add(
        [
            "strings.reduce_join",
            [T([[B("a"), B("b")], [B("c"), B("d")]], "string")],
            {"axis": 1, "separator": ","},
        ]
    )
    add(
        [
            "strings.reduce_join",
            [T([[B("a"), B("b")], [B("c"), B("d")]], "string")],
            {"axis": 0, "keepdims": True},
        ]
    )
    for value, kw in [
        (B("a b  c"), {}),
        (B("a,b,,c"), {"sep": ","}),
        (B(""), {}),
        (B(""), {"sep": ","}),
        (B("a b c"), {"maxsplit": 1}),
        (B("a<>b<>c"), {"sep": "<>"}),
        (B(" a\tb\n"), {}),
    ]:
        add(["strings.split", [T(value, "string")], kw])
    add(["strings.split", [T([B("a b"), B("c")], "string")], {}])
    add(["strings.bytes_split", [T(B("ab\xc3"), "string")], {}])
    add(["strings.unicode_split", [T(B("h\xc3\xa9llo"), "string"), "UTF-8"], {}])
    add(["strings.unicode_split", [T(B("a\xffb"), "string"), "UTF-8"], {}])
    add(["strings.unicode_split", [T(B("a\xffb"), "string"), "UTF-8"], {"errors": "ignore"}])
    add(["strings.unicode_split", [T(B("a\xffb"), "string"), "UTF-8"], {"errors": "strict"}])
    add(["strings.unicode_split", [T([B("h\xc3\xa9"), B("xy")], "string"), "UTF-8"], {}])
    add(["strings.unicode_decode", [T(B("h\xc3\xa9"), "string"), "UTF-8"], {}])
    for pattern, rewrite, kw in [
        (r"(\d)", r"<\1>", {}),
        (r"\d", "#", {"replace_global": False}),
        (r"^\s+|\s+$", "", {}),
        ("a+", r"[\0]", {}),
        ("[", "x", {}),
        ("(?i)hello", "bye", {}),
        (r"\s+", " ", {}),
    ]:
        add(
            [
                "strings.regex_replace",
                [T([B("a1b22"), B("  Hello  World  "), B("aaa")], "string"), pattern, rewrite],
                kw,
            ]
        )
    add(["strings.regex_full_match", [T([B("abc"), B("ab1"), B("")], "string"), "[a-z]*"], {}])
    for args, kw in [
        ([1, 3], {}),
        ([7, 3], {}),
        ([-3, 2], {}),
        ([0, 10], {}),
        ([5, 1], {}),
        ([-6, 1], {}),
        ([1, 2], {"unit": "UTF8_CHAR"}),
    ]:
        add(["strings.substr", [T([B("hello"), B("h\xc3\xa9llo")], "string"), *args], kw])
    for values, kw in [
        ([B("1.5"), B("2"), B("-3e2"), B(" 4")], {}),
        ([B("x")], {}),
        ([B("1")], {"out_type": "int32"}),
        ([B("1.5")], {"out_type": "int32"}),
        ([B("99999999999")], {"out_type": "int32"}),
        ([B("99999999999")], {"out_type": "int64"}),
        ([B("inf"), B("nan"), B("-INF")], {}),
        ([B("")], {}),
        ([B("1")], {"out_type": "string"}),
        ([B(".5"), B("5."), B("+1")], {"out_type": "float64"}),
        ([B("0x10")], {"out_type": "int32"}),
    ]:
        add(["strings.to_number", [T(values, "string")], kw])
    for value, kw in [
        (T([1.5, 2.0, -0.25], "float32"), {}),
        (T([1, -20], "int32"), {}),
        (T([True, False], "bool"), {}),
        (T([1.5, 2.0], "float32"), {"precision": 2}),
        (T([1234.5], "float64"), {"scientific": True}),
        (T([7], "int32"), {"width": 4}),
        (T([7], "int32"), {"width": 4, "fill": "0"}),
        (T([1.5], "float32"), {"shortest": True}),
        (T([float("nan"), float("inf"), -float("inf")], "float32"), {}),
        (T([B("a")], "string"), {}),
    ]:
        add(["strings.as_string", [value], kw])
    # control and functions
    add(["cond", [T(True, "bool")], {}])
    add(["cond", [T(1, "int32")], {}])
    add(["cond", [T([True], "bool")], {}])
    add(["cond", [False], {}])
    # random: shapes, dtypes and refusals (values differ by design)
    for op, args, kw in [
        ("random.uniform", [[2, 3]], {}),
        ("random.uniform", [[2]], {"dtype": "int32"}),
        ("random.uniform", [[2]], {"maxval": 5, "dtype": "int32"}),
        ("random.uniform", [[2]], {"minval": 5, "maxval": 5, "dtype": "int64"}),
        ("random.uniform", [[2]], {"minval": 1, "maxval": 2, "dtype": "float64"}),
        ("random.uniform", [[]], {"dtype": "float16"}),
        ("random.uniform", [[2]], {"dtype": "uint8", "maxval": 3}),
        ("random.uniform", [[2]], {"minval": T([1.0], "float64")}),
        ("random.normal", [[3]], {}),
        ("random.normal", [[3]], {"dtype": "int32"}),
        ("random.truncated_normal", [[3]], {"dtype": "float64"}),
        ("random.gamma", [[3], T([1.0, 2.0], "float32")], {}),
        ("random.gamma", [[3], 2.0], {"beta": T([1.0, 2.0], "float32")}),
        ("random.gamma", [[2], 2.0], {"dtype": "int32"}),
        ("random.poisson", [[4], T([1.0, 3.0], "float32")], {}),
        ("random.categorical", [T([[0.0, 1.0], [2.0, 0.0]], "float32"), 5], {}),
        ("random.categorical", [T([[0.0, 1.0]], "float32"), 3], {"dtype": "int32"}),
        ("random.categorical", [T([0.0, 1.0], "float32"), 3], {}),
        ("random.shuffle", [T([[1, 2], [3, 4], [5, 6]], "int32")], {}),
        ("random.uniform", [[-1]], {}),
    ]:
        add([op, args, kw])
    # nest
    for structure in [[1, Tu(2, 3)], {"b": 1, "a": [2, 3]}, None, B("ab"), Tu(1, {"y": 2, "x": [3]}), []]:
        add(["nest.flatten", [structure], {}])
    add(["nest.pack_sequence_as", [{"b": 0, "a": [0, 0]}, [1, 2, 3]], {}])
    add(["nest.pack_sequence_as", [[0, Tu(0, 0)], [1, 2]], {}])
    add(["nest.pack_sequence_as", [Tu(0, [0]), [1, 2]], {}])
    add(["nest.assert_same_structure", [[1, 2], [3, 4]], {}])
    add(["nest.assert_same_structure", [[1, 2], Tu(3, 4)], {}])
    add(["nest.assert_same_structure", [[1, 2], Tu(3, 4)], {"check_types": False}])
    add(["nest.assert_same_structure", [[1, 2], [3, [4]]], {}])
    add(["nest.assert_same_structure", [{"a": 1}, {"b": 1}], {}])
    add(["nest.assert_same_structure", [[1, 2], [3]], {}])
    add(["nest.is_nested", [[1]], {}])
    add(["nest.is_nested", [B("a")], {}])
    add(["nest.is_nested", [{"a": 1}], {}])
    # signal
    add(["signal.hann_window", [5], {}])
    add(["signal.hann_window", [4], {"periodic": False}])
    add(["signal.hamming_window", [6], {}])
    add(["signal.frame", [T(list(range(10)), "float32"), 4, 3], {}])
    add(["signal.frame", [T(list(range(10)), "float32"), 4, 3], {"pad_end": True}])
    signal_values = [math.sin(i * 0.3) + 0.1 * i for i in range(40)]
    add(["signal.stft", [T(signal_values, "float32"), 16, 8], {}])
    add(["signal.stft", [T(signal_values, "float32"), 10, 4], {"fft_length": 16, "pad_end": True}])
    add(["signal.stft", [T([signal_values, signal_values[::-1]], "float64"), 8, 8], {}])
    add(["signal.rfft", [T(signal_values[:8], "float32")], {}])
    add(
        [
            "signal.linear_to_mel_weight_matrix",
            [],
            {
                "num_mel_bins": 4,
                "num_spectrogram_bins": 9,
                "sample_rate": 8000,
                "lower_edge_hertz": 100.0,
                "upper_edge_hertz": 3000.0,
            },
        ]
    )
    # audio
    wav = _wav([[0.0, 0.5], [-0.5, 0.25], [0.999, -1.0]], 16000)
    add(["audio.decode_wav", [T(B(wav.decode("latin-1")), "string")], {}])
    add(["audio.decode_wav", [T(B(wav.decode("latin-1")), "string")], {"desired_channels": 1}])
    add(
        [
            "audio.decode_wav",
            [T(B(wav.decode("latin-1")), "string")],
            {"desired_channels": 3, "desired_samples": 5},
        ]
    )
    add(["audio.decode_wav", [T(B(wav.decode("latin-1")), "string")], {"desired_samples": 2}])
    add(["audio.decode_wav", [T(B("RIFFxxxxWAVEjunk"), "string")], {}])
    add(["audio.encode_wav", [T([[0.0, 0.5], [-0.5, 1.5], [0.25, -2.0]], "float32"), 8000], {}])
    # names the public-code scan found (docs/porting.md, "Which ops, from public code")
    for args, kw in [
        ([T([1, 2], "int32"), 3], {}),
        ([T([[1, 2], [3, 4]], "int32"), T([1, 2], "int32")], {"axis": 0}),
        ([T([[1, 2], [3, 4]], "int64"), 2], {"axis": 1}),
        ([T([[1, 2], [3, 4]], "float32"), T([0, 2], "int64")], {"axis": -1}),
        ([T([[1, 2], [3, 4]], "int32"), 2], {}),
        ([T([B("a"), B("bc")], "string"), T([2, 0], "int32")], {"axis": 0}),
        ([T([1, 2], "int32"), T([1, 2, 3], "int32")], {"axis": 0}),
        ([T([1, 2], "int32"), T([-1, 2], "int32")], {"axis": 0}),
        ([T([1, 2], "int32"), 2], {"axis": 1}),
        ([T([1, 2], "int32"), T([1.0], "float32")], {}),
    ]:
        add(["repeat", args, kw])
    for value, dtype, target in [
        ([1.0, -2.5], "float32", "int32"),
        ([1.0, -2.5], "float32", "uint8"),
        ([[1, 0, 0, 0], [255, 255, 255, 255]], "uint8", "int32"),
        ([1, 2, 3], "uint8", "int32"),
        (7, "int64", "int16"),
        ([1.5], "float64", "int64"),
        ([3], "int32", "float32"),
        ([True], "bool", "uint8"),
    ]:
        add(["bitcast", [T(value, dtype)], {"type": target}])
    tensor = T([[1, 2], [3, 4], [5, 6]], "int32")
    for op in [
        "tensor_scatter_nd_update",
        "tensor_scatter_nd_add",
        "tensor_scatter_nd_sub",
        "tensor_scatter_nd_max",
        "tensor_scatter_nd_min",
    ]:
        add([op, [tensor, T([[0], [2]], "int32"), T([[9, 9], [0, 7]], "int32")], {}])
        add([op, [tensor, T([[0, 1], [2, 0]], "int64"), T([10, 20], "int32")], {}])
    add(["tensor_scatter_nd_update", [tensor, T([[3]], "int32"), T([[1, 1]], "int32")], {}])
    add(["tensor_scatter_nd_update", [tensor, T([[0]], "int32"), T([[1.0, 1.0]], "float32")], {}])
    add(["tensor_scatter_nd_update", [tensor, T([[0]], "int32"), T([[1, 1, 1]], "int32")], {}])
    add(
        [
            "tensor_scatter_nd_update",
            [T([1.0, 2.0, 3.0], "float32"), T([[1]], "int32"), T([5.0], "float32")],
            {},
        ]
    )
    add(["scatter_nd", [T([[1], [1], [3]], "int32"), T([1.0, 2.0, 3.0], "float32"), [5]], {}])
    add(["scatter_nd", [T([[0, 1]], "int64"), T([7], "int64"), [2, 3]], {}])
    add(["scatter_nd", [T([[1]], "int32"), T([[1, 2]], "int32"), [3, 2]], {}])
    add(["scatter_nd", [T([[5]], "int32"), T([1], "int32"), [3]], {}])
    for args, kw in [
        ([T([1, 3, 2], "int32")], {}),
        ([T([1, 3, 2], "int64"), 5], {}),
        ([T([[1], [0]], "int32")], {"maxlen": 3, "dtype": "float32"}),
        ([T([0, 2], "int32")], {"dtype": "int64"}),
        ([T([1.0], "float32")], {}),
    ]:
        add(["sequence_mask", args, kw])
    for args, kw in [
        ([T([[1, 3, 5], [2, 4, 6]], "int32"), T([[0, 3, 6], [4, 4, 1]], "int32")], {}),
        ([T([[1, 3, 5]], "float32"), T([[3.0, 5.5]], "float32")], {"side": "right"}),
        ([T([[1, 3, 5]], "int32"), T([[3]], "int32")], {"out_type": "int64"}),
        ([T([1, 3, 5], "int32"), T([2, 9], "int32")], {}),
        ([T([[1, 3, 5]], "int32"), T([[3.0]], "float32")], {}),
    ]:
        add(["searchsorted", args, kw])
    add(["unique_with_counts", [T([1, 1, 2, 4, 4, 4, 2], "int32")], {}])
    add(["unique_with_counts", [T([B("b"), B("a"), B("b")], "string")], {"out_idx": "int64"}])
    for op in ["asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh", "acosh"]:
        add([op, [T([-0.5, 0.0, 0.25, 0.9], "float32")], {}])
        add([op, [T([1, 2], "int32")], {}])
    add(["acosh", [T([1.0, 2.5, 10.0], "float64")], {}])
    add(["scalar_mul", [2, T([1.5, 2.0], "float32")], {}])
    add(["scalar_mul", [T(3, "int32"), T([1, 2], "int32")], {}])
    add(["as_string", [T([1.5, 2.25], "float32")], {"precision": 1}])
    add(["as_string", [T([3, 12], "int64")], {"width": 4, "fill": "0"}])
    add(["assert_equal", [T([1, 2], "int32"), T([1, 3], "int32")], {}])
    add(["assert_less", [T([1, 2], "int32"), T([2, 3], "int32")], {}])
    add(["assert_greater", [T([1, 2], "int32"), T([2, 3], "int32")], {}])
    add(["is_tensor", [T([1], "int32")], {}])
    add(["is_tensor", [3], {}])
    add(["random.split", [T([1, 2], "int64")], {}])
    add(["random.split", [T([1, 2], "int32"), 3], {}])
    add(["random.fold_in", [T([1, 2], "int64"), 7], {}])
    # TF1 names (tf.compat.v1, the namespace of `import tensorflow.compat.v1 as tf`)
    add(["compat.v1.to_float", [T([1, 2], "int64")], {}])
    add(["compat.v1.to_int32", [T([1.7, -2.5], "float32")], {}])
    add(["compat.v1.to_int64", [T([True, False], "bool")], {}])
    add(["compat.v1.decode_raw", [T(B("\x01\x02\x03\x04"), "string"), "uint16"], {}])
    add(["compat.v1.decode_raw", [T([B("\x01\x02"), B("\x03\x04")], "string"), "int8"], {}])
    add(["compat.v1.string_to_number", [T([B("1.5"), B("-2")], "string")], {}])
    add(["compat.v1.string_to_number", [T([B("7")], "string")], {"out_type": "int32"}])
    add(["compat.v1.string_to_number", [T([B("x")], "string")], {}])
    add(["compat.v1.sparse_to_dense", [T([[0, 1], [1, 0]], "int64"), [2, 3], T([5, 6], "int32")], {}])
    add(["compat.v1.sparse_to_dense", [T([0, 2], "int32"), [4], T(1.5, "float32")], {"default_value": -1.0}])
    add(["compat.v1.sparse_to_dense", [T([[3, 0]], "int64"), [2, 3], T([5], "int32")], {}])
    add(["compat.v1.random_uniform", [[2, 3]], {}])
    add(["compat.v1.random_normal", [[4]], {"dtype": "float64"}])
    add(["compat.as_bytes", ["abc"], {}])
    nn_cases(add)
    lookup_cases(add)
    return out


def nn_cases(add) -> None:
    """tf.nn's activations and normalisations (and the tf.math names of some of them)."""
    values = {"int32": [-3, 0, 2, 7], "uint8": [0, 3, 9]}
    floats = [-2.5, -0.5, 0.0, 0.5, 7.5, -30.0, 30.0]
    for op in [
        "nn.relu",
        "nn.relu6",
        "nn.elu",
        "nn.selu",
        "nn.softplus",
        "nn.softsign",
        "nn.silu",
        "math.softplus",
    ]:
        for d in ["int32", "uint8", "float16", "float32", "float64"]:
            add([op, [T(values.get(d, floats), d)], {}])
        add([op, [T([float("nan"), float("inf"), -float("inf")], "float32")], {}])
    add(["nn.silu", [T(floats, "float32")], {"beta": 2.0}])
    for alpha in (0.1, 0.2, 2.0):
        add(["nn.leaky_relu", [T(floats, "float32")], {"alpha": alpha}])
    add(["nn.leaky_relu", [T([-3, 0, 2], "int32")], {}])
    add(["nn.leaky_relu", [T([-3.0, 2.0], "float64")], {}])
    matrix = [[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]]
    for op in ["nn.softmax", "nn.log_softmax", "math.softmax", "math.log_softmax"]:
        add([op, [T(matrix, "float32")], {}])
        add([op, [T(matrix, "float64")], {"axis": 0}])
        add([op, [T(matrix, "float32")], {"axis": -1}])
        add([op, [T([1000.0, 0.0, -1000.0], "float32")], {}])
        add([op, [T([1, 2], "int32")], {}])
        add([op, [T(1.0, "float32")], {}])
        add([op, [T(matrix, "float32")], {"axis": 2}])
    for op in ["nn.l2_normalize", "math.l2_normalize"]:
        add([op, [T([3.0, 4.0], "float32")], {}])
        add([op, [T(matrix, "float32")], {"axis": 0}])
        add([op, [T(matrix, "float64")], {"axis": [0, 1]}])
        add([op, [T(matrix, "float32")], {"axis": -1, "epsilon": 100.0}])
        add([op, [T([0.0, 0.0], "float32")], {}])
        add([op, [T([3.0, 4.0], "float16")], {}])
        add([op, [T([3, 4], "int32")], {}])
    add(["nn.moments", [T(matrix, "float32"), [0]], {}])
    add(["nn.moments", [T(matrix, "float64"), [0, 1]], {"keepdims": True}])
    add(["nn.moments", [T([1.0, 2.0, 4.0], "float16"), [0]], {}])
    add(["nn.bias_add", [T([[1.0, 2.0], [3.0, 4.0]], "float32"), T([10.0, 20.0], "float32")], {}])
    add(["nn.bias_add", [T([[[1, 2], [3, 4]]], "int32"), T([10, 20], "int32")], {"data_format": "NCHW"}])
    add(["nn.bias_add", [T([[1.0, 2.0]], "float32"), T([[10.0, 20.0]], "float32")], {}])
    add(["nn.bias_add", [T([[1.0, 2.0]], "float32"), T([10, 20], "int32")], {}])


def _hash_strings() -> list:
    """Strings of every length class farmhash treats apart (0-16, 17-32, 33-64, longer), unicode ones."""
    items = [B(""), B("a"), B("ab"), B("abc"), B("h\xc3\xa9llo"), B("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e")]
    for n in [*range(1, 80), 95, 96, 127, 128, 129, 200, 255, 256, 257, 1000]:
        items.append(B(bytes((i * 37 + n * 11) % 256 for i in range(n)).decode("latin-1")))
    return items


def lookup_cases(add) -> None:
    """tf.lookup tables and the string hashes. A table case is driven by ``lookup_case`` (the same driver
    in tests/tfops/test_fixtures.py): ``lookup.StaticHashTable`` [keys, values, default_value, query]
    (kwargs: the initializer's key_dtype / value_dtype), ``lookup.StaticVocabularyTable`` [keys or None,
    values, num_oov_buckets, query] (also lookup_key_dtype), ``.size`` of either (no query), and
    ``lookup.TextFileInitializer`` [file content, key_dtype, key_index, value_dtype, value_index,
    default_value, query] (kwargs: vocab_size, delimiter, value_index_offset; oov: a vocabulary table)."""
    strings = _hash_strings()
    for buckets in [1, 7, 1000, 2**31, 2**62 + 12345, 2**63 - 1]:
        add(["strings.to_hash_bucket_fast", [T(strings, "string"), buckets], {}])
    add(["strings.to_hash_bucket_fast", [T(B("abc"), "string"), 5], {}])
    add(["strings.to_hash_bucket_fast", [T([[B("a"), B("b")], [B(""), B("zz")]], "string"), 3], {}])
    add(["strings.to_hash_bucket_fast", [T([1, 2], "int32"), 5], {}])
    add(["strings.to_hash_bucket_fast", [T([B("a")], "string"), 0], {}])
    add(["strings.to_hash_bucket_fast", [T([B("a")], "string"), -1], {}])
    add(["strings.to_hash_bucket", [T(strings, "string"), 2**63 - 1], {}])
    add(["strings.to_hash_bucket", [T(strings, "string"), 1000], {}])
    add(["strings.to_hash_bucket_strong", [T(strings, "string"), 2**63 - 1, [123456789, 2**62 + 5]], {}])
    add(["strings.to_hash_bucket_strong", [T(strings, "string"), 997, [0, 0]], {}])
    add(["strings.to_hash_bucket_strong", [T([B("a")], "string"), 10, [1]], {}])
    add(["compat.v1.string_to_hash_bucket_fast", [T([B("a"), B("hello")], "string"), 100], {}])

    abc, ints = T([B("a"), B("b"), B("c")], "string"), T([1, 2, 3], "int32")
    query = T([[B("a"), B("z")], [B("c"), B("")]], "string")
    table = "lookup.StaticHashTable"
    add([table, [abc, ints, -1, query], {}])
    add([table, [abc, ints, -1, T(B("b"), "string")], {}])
    add([table, [abc, ints, -1, T([[]], "string")], {}])
    add([table, [abc, ints, -1, T([1, 2], "int32")], {}])
    add([table, [abc, ints, -1, [B("a")]], {}])
    add([table, [abc, ints, -1.5, query], {}])
    add([table, [abc, ints, B("x"), query], {}])
    add([table, [abc, ints, T(-1, "int64"), query], {}])
    add([table, [abc, ints, [0, 1], query], {}])
    add([table, [T([B("a"), B("a")], "string"), T([1, 2], "int32"), -1, query], {}])
    add([table, [T([B("a"), B("a")], "string"), T([1, 1], "int32"), -1, query], {}])
    add([table, [abc, T([1, 2], "int32"), -1, query], {}])
    add([table, [T([], "string"), T([], "int64"), T(0, "int64"), query], {}])
    add([table, [[[1, 2], [3, 4]], [[10, 20], [30, 40]], 0, T([3, 5], "int32")], {}])
    add([table, [[B("a"), B("b")], [1, 2], 0, query], {"key_dtype": "int64"}])
    add([table, [[1, 2], [10, 20], 0, T([1, 5, 2], "int64")], {"key_dtype": "int64"}])
    add([table, [[1, 2], [10, 20], 0, T([1, 5, 2], "int32")], {"key_dtype": "int64"}])
    add([table, [[1, 2], [10, 20], 0, T([1, 5, 2], "int32")], {}])
    add([table, [T([1, 2], "int32"), [10, 20], 0, T([1], "int32")], {"key_dtype": "int64"}])
    add([table, [[1, 2], [1.5, 2.5], -1.0, T([2, 9], "int32")], {"value_dtype": "float64"}])
    add([table, [abc, T([True, False, True], "bool"), False, query], {}])
    add([table, [abc, [B("x"), B("y"), B("z")], B("?"), query], {}])
    add(
        [
            table,
            [T([5, -3, 2**40], "int64"), [B("x"), B("y"), B("z")], B("?"), T([[2**40], [-3]], "int64")],
            {},
        ]
    )
    add(
        [
            table,
            [[B("a\x00b"), B("\xc3\xa9")], [1, 2], 0, T([B("a\x00b"), B("\xc3\xa9"), B("a")], "string")],
            {},
        ]
    )
    for key_dtype, keys in [
        ("string", [B("a"), B("b")]),
        ("int32", [1, 2]),
        ("int64", [1, 2]),
        ("float32", [1.5, 2.5]),
        ("bool", [True, False]),
        ("int8", [1, 2]),
    ]:
        for value_dtype in ["string", "int32", "int64", "float32", "float64", "bool", "int8", "float16"]:
            values = (
                [B("x"), B("y")]
                if value_dtype == "string"
                else ([True, False] if value_dtype == "bool" else [1, 2])
            )
            default = B("?") if value_dtype == "string" else (False if value_dtype == "bool" else 0)
            add(
                [
                    table,
                    [T(keys, key_dtype), T(values, value_dtype), T(default, value_dtype), T(keys, key_dtype)],
                    {},
                ]
            )
    add([table + ".size", [abc, ints, -1], {}])
    add([table + ".size", [T([B("a"), B("a"), B("b")], "string"), T([1, 1, 2], "int64"), T(-1, "int64")], {}])

    vocab = "lookup.StaticVocabularyTable"
    ab64 = T([0, 1], "int64")
    oov_query = T(strings[:40], "string")
    for buckets in [1, 3, 1000]:
        add([vocab, [T([B("a"), B("b")], "string"), ab64, buckets, oov_query], {}])
    add(
        [
            vocab,
            [
                T([B("a"), B("b")], "string"),
                ab64,
                3,
                T([B("a"), B("b"), B("c"), B("d"), B(""), B("hello")], "string"),
            ],
            {},
        ]
    )
    add(
        [
            vocab,
            [T([B("a"), B("b")], "string"), T([-1, 7], "int64"), 3, T([B("a"), B("b"), B("q")], "string")],
            {},
        ]
    )
    add([vocab, [T([B("a"), B("b")], "string"), T([0, 1], "int32"), 3, oov_query], {}])
    add([vocab, [T([B("a"), B("b")], "string"), ab64, 0, oov_query], {}])
    add([vocab, [T([B("a"), B("b")], "string"), ab64, -1, oov_query], {}])
    add([vocab, [T([B("a"), B("b")], "string"), ab64, 3, T([1, 2], "int64")], {}])
    int_query = T([5, 7, 1, 2, 3, -1, 0, 2**40, -(2**63), 2**63 - 1, 12345678901], "int64")
    for buckets in [1, 4, 1000]:
        add([vocab, [T([5, 7], "int64"), ab64, buckets, int_query], {}])
    add([vocab, [T([5, 7], "int64"), ab64, 4, T([5, 7, 1], "int32")], {}])
    add([vocab, [T([5, 7], "int64"), ab64, 4, T([5, 7, 1, -200], "int32")], {"lookup_key_dtype": "int32"}])
    add([vocab, [T([5, 7], "int64"), ab64, 4, T([5, 7, 1, 200], "uint8")], {"lookup_key_dtype": "uint8"}])
    add([vocab, [T([5, 7], "int64"), ab64, 4, oov_query], {"lookup_key_dtype": "string"}])
    add([vocab, [T([5, 7], "int64"), ab64, 4, oov_query], {"lookup_key_dtype": "float32"}])
    add([vocab, [T([B("a"), B("b")], "string"), ab64, 4, int_query], {"lookup_key_dtype": "int64"}])
    add([vocab, [T([5, 7], "int32"), ab64, 4, T([5], "int32")], {}])
    add([vocab, [None, None, 5, oov_query], {}])
    add([vocab, [None, None, 5, oov_query], {"lookup_key_dtype": "int64"}])
    add([vocab, [None, None, 5, int_query], {}])
    add([vocab + ".size", [T([B("a"), B("b")], "string"), ab64, 3], {}])
    add([vocab + ".size", [None, None, 5], {}])

    text = "lookup.TextFileInitializer"
    W, L = -2, -1  # noqa: N806 (TextFileIndex.WHOLE_LINE, LINE_NUMBER)
    fruit = B("apple\tx\t1\nbanana\ty\t2\ncherry\tz\t3\n")
    fq = T([B("apple"), B("banana"), B("kiwi"), B("apple\tx\t1")], "string")
    add([text, [fruit, "string", W, "int64", L, -1, fq], {}])
    add([text, [fruit, "string", 0, "int64", L, -1, fq], {}])
    add([text, [fruit, "string", 0, "int64", 2, -1, fq], {}])
    add([text, [fruit, "string", 0, "int32", 2, -1, fq], {}])
    add([text, [fruit, "string", 0, "string", 1, B("?"), fq], {}])
    add([text, [fruit, "string", 0, "float32", 2, -1.0, fq], {}])
    add([text, [fruit, "string", 0, "int64", 5, -1, fq], {}])
    add([text, [fruit, "string", 0, "int64", 1, -1, fq], {}])
    add([text, [fruit, "int64", 2, "string", 0, B("?"), T([1, 3, 7], "int64")], {}])
    add([text, [fruit, "int64", L, "string", 0, B("?"), T([0, 2, 7], "int64")], {}])
    add([text, [fruit, "string", 0, "int64", L, -1, fq], {"vocab_size": 2}])
    add([text, [fruit, "string", 0, "int64", L, -1, fq], {"vocab_size": 3}])
    add([text, [fruit, "string", 0, "int64", L, -1, fq], {"vocab_size": 5}])
    add([text, [fruit, "string", 0, "int64", L, -1, fq], {"vocab_size": 0}])
    add([text, [fruit, "string", 0, "int64", L, -1, fq], {"value_index_offset": 10}])
    add([text, [fruit, "string", L, "int64", 0, -1, fq], {}])
    add([text, [fruit, "float32", W, "int64", L, -1, fq], {}])
    add([text, [fruit, "string", W, "string", L, B("?"), fq], {}])
    add([text, [fruit, "string", W, "float32", W, -1.0, fq], {}])
    add([text, [fruit, "string", -3, "int64", L, -1, fq], {}])
    add([text, [fruit, "string", W, "int64", -3, -1, fq], {}])
    add([text, [fruit, "string", 0, "string", 1, B("?"), fq], {"delimiter": "::"}])
    add([text, [fruit, "string", 0, "string", 1, B("?"), fq], {"delimiter": ""}])
    words = T([B("a"), B("b"), B("c"), B(""), B("a\r"), B("e f")], "string")
    add([text, [B("a\r\nb\r\nc"), "string", W, "int64", L, -1, words], {}])
    add([text, [B("a\nb\n\n"), "string", W, "int64", L, -1, words], {}])
    add([text, [B("a\n\nb\n"), "string", W, "int64", L, -1, words], {}])
    add([text, [B("a\nb\n\n"), "string", W, "int64", L, -1, words], {"vocab_size": 2}])
    add([text, [B(""), "string", W, "int64", L, -1, words], {}])
    add([text, [B("a\nb\na\n"), "string", W, "int64", L, -1, words], {}])
    add([text, [B("a x\nb\ta\n"), "string", 0, "string", 1, B("?"), words], {"delimiter": " "}])
    add([text, [B("a  b\nc d\n"), "string", 0, "string", 1, B("?"), words], {"delimiter": " "}])
    add(
        [
            text,
            [B("a\xff\n\xc3\xa9\n"), "string", W, "int64", L, -1, T([B("a\xff"), B("\xc3\xa9")], "string")],
            {},
        ]
    )
    numbers = B("x\t 12\ny\t+3\nz\t-0\nw\t12 \n")
    xyzw = T([B("x"), B("y"), B("z"), B("w")], "string")
    add([text, [numbers, "string", 0, "int64", 1, -1, xyzw], {}])
    add([text, [numbers, "string", 0, "float64", 1, -1.0, xyzw], {}])
    for bad in ["0x10", "99999999999999999999", "", "1.5", "1_0", "abc"]:
        add([text, [B(f"x\t{bad}\n"), "string", 0, "int64", 1, -1, xyzw], {}])
    add([text, [B("x\t3000000000\n"), "string", 0, "int32", 1, -1, xyzw], {}])
    floats = B("x\t1.5\ny\t1e3\nz\tnan\nw\t.5\n")
    add([text, [floats, "string", 0, "float32", 1, -1.0, xyzw], {}])
    add([text, [floats, "string", 0, "float64", 1, -1.0, xyzw], {}])
    for bad in ["1.5x", "1_0", "0x1p3", ""]:
        add([text, [B(f"x\t{bad}\n"), "string", 0, "float32", 1, -1.0, xyzw], {}])
    add([text, [B("5\n7\n"), "int64", W, "int64", L, -1, T([5, 7, 1], "int64")], {}])
    add([text, [B("5\n7\n"), "int32", W, "int64", L, -1, T([5, 7, 1], "int32")], {}])
    add([text, [B("5\n7\n"), "int64", L, "int32", W, -1, T([0, 1, 2], "int64")], {}])
    add([text, [fruit, "string", 0, "int64", L, 2, fq], {"oov": 2}])
    add([text, [fruit, "string", 0, "int64", L, 2, fq], {"oov": 2, "vocab_size": 1}])


def _wav(samples, rate) -> bytes:
    import struct

    pcm = np.round(np.asarray(samples) * 32767).astype("<i2").tobytes()
    channels = len(samples[0])
    header = b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVE"
    fmt = b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2, 16)
    return header + fmt + b"data" + struct.pack("<I", len(pcm)) + pcm


def encode(value):
    """A result as JSON: {"v": nested values, "d": dtype, "s": shape}; lists and tuples as {"l": [...]}."""
    import tensorflow as tf

    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return {"l": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"m": {k: encode(v) for k, v in value.items()}}
    if isinstance(value, tf.RaggedTensor):
        return {
            "r": value.to_list() if value.dtype != tf.string else _bytes_list(value.to_list()),
            "d": value.dtype.name,
        }
    if value is None:
        return {"n": None}
    if isinstance(value, (bytes, int, float, bool, str)) and not isinstance(value, np.generic):
        value = np.asarray(value) if not isinstance(value, bytes) else np.asarray(value, dtype=object)
    if hasattr(value, "numpy"):
        dtype = value.dtype.name
        array = np.asarray(value.numpy())
    else:
        array = np.asarray(value)
        dtype = "string" if array.dtype == object else array.dtype.name
    if dtype == "string":
        return {"v": _bytes_list(array.tolist()), "d": "string", "s": list(array.shape)}
    if array.dtype.kind == "c":
        return {
            "v": [[float(z.real), float(z.imag)] for z in array.reshape(-1)],
            "d": dtype,
            "s": list(array.shape),
            "c": 1,
        }
    flat = array.reshape(-1).tolist()
    flat = [
        None
        if isinstance(v, float) and math.isnan(v)
        else ("inf" if v == float("inf") else "-inf" if v == float("-inf") else v)
        for v in flat
    ]
    return {"v": flat, "d": dtype, "s": list(array.shape)}


def _bytes_list(value):
    if isinstance(value, list):
        return [_bytes_list(v) for v in value]
    return {"b": value.decode("latin-1")}


def to_tf(value):
    import tensorflow as tf

    if isinstance(value, dict) and set(value) == {"t", "d"}:
        return tf.constant(from_json(value["t"]), dtype=value["d"])
    if isinstance(value, list):
        return [to_tf(v) for v in value]
    return from_json(value)


def from_json(value):
    if isinstance(value, dict) and set(value) == {"b"}:
        return value["b"].encode("latin-1")
    if isinstance(value, dict) and set(value) == {"z"}:
        return complex(*value["z"])
    if isinstance(value, dict) and set(value) == {"tuple"}:
        return tuple(from_json(v) for v in value["tuple"])
    if isinstance(value, list):
        return [from_json(v) for v in value]
    if isinstance(value, dict):
        return {k: from_json(v) for k, v in value.items()}
    return value


def _complex(value):
    if isinstance(value, complex):
        return {"z": [value.real, value.imag]}
    raise TypeError(f"cannot store {value!r}")


def resolve(module, name: str):
    target = module
    for part in name.split("."):
        target = getattr(target, part)
    return target


def lookup_case(tf, op: str, args: list, kwargs: dict, tensor, dtype, write):
    """A tf.lookup case (see ``lookup_cases``) with module ``tf``: ``tensor`` makes an argument a value,
    ``dtype`` a dtype name one, ``write(content)`` a file's path. The same driver replays the fixtures."""
    kwargs = dict(kwargs)
    if op.startswith("lookup.TextFileInitializer"):
        content, key_dtype, key_index, value_dtype, value_index, default, query = args
        oov = kwargs.pop("oov", None)
        init = tf.lookup.TextFileInitializer(
            write(content), dtype(key_dtype), key_index, dtype(value_dtype), value_index, **kwargs
        )
        if oov is not None:
            return tf.lookup.StaticVocabularyTable(init, oov).lookup(tensor(query))
        return tf.lookup.StaticHashTable(init, tensor(default)).lookup(tensor(query))
    init_kwargs = {k: dtype(kwargs.pop(k)) for k in ("key_dtype", "value_dtype") if k in kwargs}
    if "lookup_key_dtype" in kwargs:
        kwargs["lookup_key_dtype"] = dtype(kwargs["lookup_key_dtype"])
    keys, values, second = args[:3]
    init = (
        None
        if keys is None
        else tf.lookup.KeyValueTensorInitializer(tensor(keys), tensor(values), **init_kwargs)
    )
    name = op.removesuffix(".size")
    if name == "lookup.StaticHashTable":
        table = tf.lookup.StaticHashTable(init, tensor(second))
    else:
        table = tf.lookup.StaticVocabularyTable(init, second, **kwargs)
    if op.endswith(".size"):
        return table.size()
    return table.lookup(tensor(args[3]))


def _write_temp(content: bytes) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False, dir=_TEMP) as handle:
        handle.write(content)
    return handle.name


_TEMP = None


def run(tf, op: str, args: list, kwargs: dict):
    if op.startswith("lookup."):
        return lookup_case(tf, op, args, kwargs, to_tf, tf.as_dtype, lambda c: _write_temp(from_json(c)))
    if op == "cond":
        return tf.cond(to_tf(args[0]), lambda: tf.constant(1), lambda: tf.constant(2))
    fn = resolve(tf, op)
    call_args = [to_tf(a) for a in args]
    call_kwargs = {k: to_tf(v) for k, v in kwargs.items()}
    for key in ("dtype", "out_type", "output_type", "type", "Tout"):
        if isinstance(call_kwargs.get(key), str):
            call_kwargs[key] = tf.as_dtype(call_kwargs[key])
    if (
        op in ("cast", "zeros", "ones", "constant", "convert_to_tensor")
        and len(call_args) > 1
        and isinstance(call_args[1], str)
    ):
        call_args[1] = tf.as_dtype(call_args[1])
    return fn(*call_args, **call_kwargs)


def main() -> int:
    import tempfile

    import tensorflow as tf

    global _TEMP
    _TEMP = tempfile.mkdtemp(prefix="tfops-fixtures-")

    tf.random.set_seed(0)
    records = []
    for op, args, kwargs in cases():
        try:
            result = {"ok": encode(run(tf, op, args, kwargs))}
        except Exception as exc:  # noqa: BLE001 (recording which error TF raises)
            result = {
                "error": type(exc).__name__,
                "message": str(exc).splitlines()[0][:200] if str(exc) else "",
            }
        if op.startswith(
            ("random.", "compat.v1.random_")
        ):  # numpy's streams, not TF's: keep dtype and shape only
            if "ok" in result:
                result["ok"] = {k: v for k, v in result["ok"].items() if k != "v"}
        records.append({"op": op, "args": args, "kwargs": kwargs, **result})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {"tensorflow": tf.__version__, "cases": records},
            indent=None,
            separators=(",", ":"),
            default=_complex,
        )
        + "\n"
    )
    import shutil

    shutil.rmtree(_TEMP, ignore_errors=True)
    errors = sum("error" in r for r in records)
    print(f"{len(records)} cases ({errors} errors) recorded with TensorFlow {tf.__version__} in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
