"""``tfops.keras_preprocessing`` against Keras 3's own outputs (recorded with TensorFlow by
tools/record_keras_preprocessing.py), and its refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from headrace.core.errors import InvalidArgumentError
from headrace.tfops import keras_preprocessing as kp
from tests.helpers.keras_preprocessing_cases import APPLICATION_CASES, LOOKUP_CASES

RECORDED = json.loads(
    (Path(__file__).parents[1] / "data" / "tfops_fixtures" / "keras_preprocessing.json").read_text()
)


def _strings(value):
    array = np.asarray(value)
    if array.dtype.kind == "U":
        return np.vectorize(lambda s: s.encode(), otypes=[object])(array)
    return array


@pytest.mark.parametrize(
    "index", range(len(LOOKUP_CASES)), ids=[f"{c['layer']}-{i}" for i, c in enumerate(LOOKUP_CASES)]
)
def test_lookup_layers_match_keras(index):
    case, expected = LOOKUP_CASES[index], RECORDED["lookups"][index]
    layer = getattr(kp, case["layer"])(**case["args"])
    out = np.asarray(layer(_strings(case["input"])))
    assert list(out.shape) == expected["shape"]
    if expected["dtype"] == "string":
        assert [v.decode() for v in out.reshape(-1).tolist()] == expected["values"]
    else:
        assert str(out.dtype) == expected["dtype"]
        assert out.reshape(-1).tolist() == expected["values"]
    vocabulary = [v.decode() if isinstance(v, bytes) else v for v in layer.get_vocabulary()]
    assert vocabulary == expected["vocabulary"]


@pytest.mark.parametrize("index", range(len(APPLICATION_CASES)), ids=[c["model"] for c in APPLICATION_CASES])
def test_preprocess_input_matches_keras(index):
    case, expected = APPLICATION_CASES[index], RECORDED["applications"][index]
    image = np.asarray(case["input"], case["dtype"])
    before = image.copy()
    out = kp.APPLICATIONS[case["model"]].preprocess_input(image, **case["args"])
    assert str(out.dtype) == expected["dtype"] and list(out.shape) == expected["shape"]
    np.testing.assert_allclose(out.reshape(-1), expected["values"], rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(image, before)  # the input is not changed in place


def test_a_vocabulary_file_and_the_refusals(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("a\nb\n\nc\n")
    assert kp.StringLookup(vocabulary=str(path))(np.array([b"c", b"q"], dtype=object)).tolist() == [3, 0]
    for args, match in [
        ({"vocabulary": ["a"], "output_mode": "tf_idf"}, "tf_idf"),
        ({"vocabulary": ["a"], "sparse": True}, "sparse"),
        ({"vocabulary": ["a", "a"]}, "repeated"),
        ({"vocabulary": ["a", "[UNK]"]}, "OOV"),
        ({}, "vocabulary="),
        ({"vocabulary": ["a"], "invert": True, "output_mode": "one_hot"}, "invert"),
        ({"vocabulary": ["a", "b"], "max_tokens": 2}, "max_tokens"),
    ]:
        with pytest.raises(InvalidArgumentError, match=match):
            kp.StringLookup(**args)
    strict = kp.StringLookup(vocabulary=["a"], num_oov_indices=0)
    with pytest.raises(InvalidArgumentError, match="not in the vocabulary"):
        strict(np.array([b"z"], dtype=object))
    with pytest.raises(InvalidArgumentError, match="expected integers"):
        kp.IntegerLookup(vocabulary=[1])(np.array([1.5]))
    with pytest.raises(InvalidArgumentError, match="3 colour channels"):
        kp.preprocess_input(np.zeros((2, 2, 4)))
