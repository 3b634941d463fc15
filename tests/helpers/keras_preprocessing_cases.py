"""The cases tools/record_keras_preprocessing.py records with Keras and
tests/tfops/test_keras_preprocessing.py replays on headrace: layer, arguments, input."""

from __future__ import annotations

WORDS = ["a", "b", "c", "d", "f"]
LOOKUP_CASES = [
    {"layer": "StringLookup", "args": {"vocabulary": WORDS}, "input": ["a", "c", "e", "f"]},
    {"layer": "StringLookup", "args": {"vocabulary": WORDS}, "input": [["a", "zz"], ["d", "b"]]},
    {"layer": "StringLookup", "args": {"vocabulary": WORDS, "mask_token": ""}, "input": ["", "a", "e"]},
    {
        "layer": "StringLookup",
        "args": {"vocabulary": WORDS, "num_oov_indices": 3},
        "input": ["x", "yy", "a", "zzz", "q"],
    },
    {
        "layer": "StringLookup",
        "args": {"vocabulary": WORDS, "num_oov_indices": 2, "mask_token": "[M]"},
        "input": ["[M]", "e", "f", "g"],
    },
    {"layer": "StringLookup", "args": {"vocabulary": WORDS, "invert": True}, "input": [0, 1, 5, 3]},
    {"layer": "StringLookup", "args": {"vocabulary": WORDS, "oov_token": "<oov>"}, "input": ["e"]},
    {
        "layer": "StringLookup",
        "args": {"vocabulary": WORDS, "output_mode": "one_hot"},
        "input": ["a", "e", "f"],
    },
    {
        "layer": "StringLookup",
        "args": {"vocabulary": WORDS, "output_mode": "multi_hot"},
        "input": [["a", "a", "e"], ["f", "b", "b"]],
    },
    {
        "layer": "StringLookup",
        "args": {"vocabulary": WORDS, "output_mode": "count"},
        "input": [["a", "a", "e"], ["f", "b", "b"]],
    },
    {
        "layer": "StringLookup",
        "args": {"vocabulary": WORDS, "output_mode": "multi_hot", "max_tokens": 9, "pad_to_max_tokens": True},
        "input": [["a", "e"]],
    },
    {"layer": "IntegerLookup", "args": {"vocabulary": [12, 36, 1138, 42]}, "input": [12, 1138, 7, 42]},
    {"layer": "IntegerLookup", "args": {"vocabulary": [12, 36], "mask_token": 0}, "input": [0, 36, 5]},
    {
        "layer": "IntegerLookup",
        "args": {"vocabulary": [12, 36, 1138], "num_oov_indices": 2},
        "input": [7, 8, 9, 36, 1000],
    },
    {"layer": "IntegerLookup", "args": {"vocabulary": [12, 36], "invert": True}, "input": [[0, 1], [2, 1]]},
    {
        "layer": "IntegerLookup",
        "args": {"vocabulary": [12, 36], "output_mode": "one_hot"},
        "input": [[36], [5]],
    },
]
_IMAGE = [[[0, 64, 255], [10, 20, 30]], [[255, 255, 255], [1, 2, 3]]]
APPLICATION_CASES = [
    {"model": "resnet", "args": {}, "input": _IMAGE, "dtype": "uint8"},
    {"model": "resnet50", "args": {}, "input": [_IMAGE], "dtype": "float32"},
    {
        "model": "vgg16",
        "args": {"data_format": "channels_first"},
        "input": [[[1.0, 2.0], [3.0, 4.0]]] * 3,
        "dtype": "float32",
    },
    {"model": "mobilenet_v2", "args": {}, "input": _IMAGE, "dtype": "uint8"},
    {"model": "inception_v3", "args": {}, "input": [_IMAGE], "dtype": "float32"},
    {"model": "densenet", "args": {}, "input": _IMAGE, "dtype": "float32"},
    {"model": "efficientnet", "args": {}, "input": _IMAGE, "dtype": "float32"},
]
