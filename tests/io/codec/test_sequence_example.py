import os

import numpy as np
import pytest

from headrace.core.errors import InvalidArgumentError
from headrace.io import (
    ExampleParseError,
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    VarLenFeature,
    parse_sequence_example,
    parse_single_sequence_example,
    serialize_sequence_example,
    tf_record_iterator,
)
from tests.io.conftest import golden_spec


def test_golden_sequence_examples(golden_dir, manifest):
    info = manifest["files"]["sequence.tfrecord"]
    records = list(tf_record_iterator(os.path.join(golden_dir, "sequence.tfrecord")))
    context_spec, sequence_spec = golden_spec(info["context_spec"]), golden_spec(info["sequence_spec"])
    context, sequences, lengths = parse_sequence_example(records, context_spec, sequence_spec)
    for i, expected in enumerate(info["records"]):
        steps = len(expected["feature_lists"]["tokens"])
        assert context["id"][i] == expected["context"]["id"][0]
        assert context["lang"][i] == bytes.fromhex(expected["context"]["lang"][0])
        assert lengths["tokens"][i] == steps and lengths["scores"][i] == steps
        assert sequences["tokens"][i, :steps].tolist() == expected["feature_lists"]["tokens"]
        assert (
            sequences["scores"][i, :steps].tolist()
            == np.float32(expected["feature_lists"]["scores"]).tolist()
        )
        assert not sequences["tokens"][i, steps:].any()  # padding
        single_context, single = parse_single_sequence_example(records[i], context_spec, sequence_spec)
        assert single["tokens"].tolist() == expected["feature_lists"]["tokens"]
        assert single_context["id"] == expected["context"]["id"][0]
    assert sequences["tokens"].shape == (
        20,
        max(len(r["feature_lists"]["tokens"]) for r in info["records"]),
        2,
    )


def test_round_trip_with_var_len_and_ragged_steps():
    records = [
        serialize_sequence_example(
            {"user": b"u1"}, {"words": [[b"a", b"b"], [b"c"]], "ids": [[1], [2, 3], []]}
        ),
        serialize_sequence_example({"user": b"u2"}, {"words": [], "ids": [[4]]}),
        serialize_sequence_example({}, {}),
    ]
    context, sequences, lengths = parse_sequence_example(
        records,
        {"user": FixedLenFeature([], "string", default_value=b"?")},
        {"words": VarLenFeature("string"), "ids": RaggedFeature("int64")},
    )
    assert context["user"].tolist() == [b"u1", b"u2", b"?"]
    assert sequences["words"].to_list() == [[[b"a", b"b"], [b"c"]], [], []]
    assert sequences["ids"].to_list() == [[[1], [2, 3], []], [[4]], []]
    assert lengths == {}
    _, single = parse_single_sequence_example(records[0], None, {"ids": VarLenFeature("int64")})
    assert single["ids"].to_list() == [[1], [2, 3], []]


def test_sequence_errors_name_record_and_step():
    record = serialize_sequence_example({}, {"t": [[1, 2], [3]]})
    with pytest.raises(
        ExampleParseError, match=r"feature 't' of record 0, step 1 has 1 values but .* needs 2"
    ):
        parse_sequence_example([record], None, {"t": FixedLenSequenceFeature([2], "int64")})
    with pytest.raises(
        ExampleParseError, match="feature list 'u' is missing from record 0.*allow_missing=True"
    ):
        parse_sequence_example([record], None, {"u": FixedLenSequenceFeature([2], "int64")})
    _, sequences, lengths = parse_sequence_example(
        [record], None, {"u": FixedLenSequenceFeature([2], "int64", allow_missing=True)}
    )
    assert sequences["u"].shape == (1, 0, 2) and lengths["u"].tolist() == [0]
    with pytest.raises(ExampleParseError, match="holds int64 values but the spec's dtype is float32"):
        parse_sequence_example([record], None, {"t": VarLenFeature("float32")})
    with pytest.raises(InvalidArgumentError, match="only\\s+supported for context"):
        parse_sequence_example(
            [record], None, {"t": RaggedFeature("int64", partitions=[RaggedFeature.UniformRowLength(1)])}
        )
    with pytest.raises(InvalidArgumentError, match="for a batch use parse_sequence_example"):
        parse_single_sequence_example([record], None, {})


def test_padding_with_a_default_value():
    records = [
        serialize_sequence_example({}, {"t": [[1.0], [2.0]]}),
        serialize_sequence_example({}, {"t": [[3.0]]}),
    ]
    _, sequences, _ = parse_sequence_example(
        records, None, {"t": FixedLenSequenceFeature([1], "float32", default_value=-1.0)}
    )
    assert sequences["t"].tolist() == [[[1.0], [2.0]], [[3.0], [-1.0]]]


@pytest.mark.slow
def test_same_results_as_tensorflow(golden_dir):
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(3)
    records = []
    for i in range(50):
        steps = int(rng.integers(0, 4))
        records.append(
            serialize_sequence_example(
                {"id": i},
                {
                    "tok": [rng.integers(0, 9, size=2) for _ in range(steps)],
                    "var": [
                        rng.standard_normal(int(rng.integers(0, 3))).astype(np.float32) for _ in range(steps)
                    ],
                },
            )
        )
    context, sequences, lengths = parse_sequence_example(
        records,
        {"id": FixedLenFeature([], "int64")},
        {"tok": FixedLenSequenceFeature([2], "int64"), "var": RaggedFeature("float32")},
    )
    tf_context, tf_sequences, tf_lengths = tf.io.parse_sequence_example(
        records,
        context_features={"id": tf.io.FixedLenFeature([], tf.int64)},
        sequence_features={
            "tok": tf.io.FixedLenSequenceFeature([2], tf.int64),
            "var": tf.io.RaggedFeature(tf.float32),
        },
    )
    np.testing.assert_array_equal(context["id"], tf_context["id"].numpy())
    np.testing.assert_array_equal(sequences["tok"], tf_sequences["tok"].numpy())
    np.testing.assert_array_equal(lengths["tok"], tf_lengths["tok"].numpy())
    theirs = tf_sequences["var"]
    np.testing.assert_array_equal(sequences["var"].row_splits, theirs.row_splits.numpy())
    np.testing.assert_array_equal(sequences["var"].values.row_splits, theirs.values.row_splits.numpy())
    np.testing.assert_array_equal(sequences["var"].flat_values, theirs.flat_values.numpy())


@pytest.mark.parametrize(
    "spec",
    [
        RaggedFeature("int64", value_key="v", partitions=[RaggedFeature.RowLengths("outer")]),
        RaggedFeature("int64", value_key="v"),
        RaggedFeature("int64", partitions=[RaggedFeature.UniformRowLength(2)]),
    ],
    ids=["partitions and value_key", "value_key", "partitions"],
)
def test_a_nested_ragged_sequence_feature_is_a_clear_error_not_a_key_error(spec):
    # issue 12: the key lookup happened before the check and raised a bare KeyError
    record = serialize_sequence_example({}, {"v": [[1, 2], [3]], "outer": [[1], [1]]})
    with pytest.raises(
        InvalidArgumentError, match="sequence feature 'r'.*only supported for context features"
    ):
        parse_sequence_example([record], {}, {"r": spec})
