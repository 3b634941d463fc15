"""tf.lookup (tfops/lookup.py) and the string hashes (tfops/_hash.py): tables inside map functions,
vectorised maps and process workers, pickling, and the errors of bad tables and files. Values against
TensorFlow are in the op fixtures (test_fixtures.py)."""

from __future__ import annotations

import pickle
import sys

import cloudpickle
import numpy as np
import pytest

import headrace as tf
from headrace.tfops._hash import fingerprint64

pytestmark = pytest.mark.timeout(120)
cloudpickle.register_pickle_by_value(sys.modules[__name__])

WORDS = [b"the", b"cat", b"sat", b"on", b"a", b"mat", b"zebra", b"", b"caf\xc3\xa9"]


def strings(items) -> np.ndarray:
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


@pytest.fixture
def vocab_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"the\ncat\nsat\non\n")
    return str(path)


def vocabulary(path: str, oov: int = 3) -> tf.lookup.StaticVocabularyTable:
    init = tf.lookup.TextFileInitializer(
        path, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER
    )
    return tf.lookup.StaticVocabularyTable(init, oov)


def expected_ids(words, n_vocab: int = 4, oov: int = 3) -> list[int]:
    known = {b"the": 0, b"cat": 1, b"sat": 2, b"on": 3}
    return [known.get(w, n_vocab + fingerprint64(w) % oov) for w in words]


def test_fingerprint64_reference_values():
    # farmhash's Fingerprint64 of the empty string is its constant k2; the other two are what
    # tf.strings.to_hash_bucket_fast gives for 1000 buckets in TensorFlow 2.21
    assert fingerprint64(b"") == 0x9AE16A3B2F90404F
    assert tf.strings.to_hash_bucket_fast(strings([b"", b"a", b"hello world"]), 1000).tolist() == [
        263,
        939,
        11,
    ]
    assert tf.strings.to_hash_bucket_fast(b"abc", 5).dtype == np.int64


def test_static_hash_table_any_shape_and_its_properties():
    init = tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], [1, 2, 3])
    table = tf.lookup.StaticHashTable(init, -1)
    assert table.key_dtype == tf.string and table.value_dtype == np.int32
    assert table.size() == np.int64(3) and table.size().dtype == np.int64
    keys = np.array([[b"a", b"z"], [b"c", b""]], dtype=object)
    got = table.lookup(keys)
    assert got.dtype == np.int32 and got.tolist() == [[1, -1], [3, -1]]
    assert table.lookup(b"b") == np.int32(2) and isinstance(table.lookup(b"b"), np.int32)
    assert table[b"c"] == 3
    exported_keys, exported_values = table.export()
    assert dict(zip(exported_keys.tolist(), exported_values.tolist())) == {b"a": 1, b"b": 2, b"c": 3}


def test_int64_keys_and_string_values():
    init = tf.lookup.KeyValueTensorInitializer(np.array([5, -3, 2**40], np.int64), ["x", "y", "z"])
    table = tf.lookup.StaticHashTable(init, "?")
    got = table.lookup(np.array([[2**40, 7], [-3, 5]], np.int64))
    assert got.dtype == object and got.tolist() == [[b"z", b"?"], [b"y", b"x"]]


def test_vocabulary_table_oov_ids_hash_as_tensorflow(vocab_file):
    table = vocabulary(vocab_file)
    assert table.size() == 7 and table.key_dtype == tf.string and table.value_dtype == np.int64
    got = table.lookup(strings(WORDS))
    assert got.dtype == np.int64 and got.tolist() == expected_ids(WORDS)
    assert all(4 <= i < 7 for w, i in zip(WORDS, got.tolist()) if w not in (b"the", b"cat", b"sat", b"on"))


def test_vocabulary_table_int_keys_hash_their_decimal_text():
    init = tf.lookup.KeyValueTensorInitializer(np.array([5, 7], np.int64), np.array([0, 1], np.int64))
    table = tf.lookup.StaticVocabularyTable(init, 4, lookup_key_dtype=tf.int32)
    got = table.lookup(np.array([5, 7, 1, -200], np.int32))
    assert got.tolist() == [0, 1, 2 + fingerprint64(b"1") % 4, 2 + fingerprint64(b"-200") % 4]


def test_ragged_and_sparse_keys_keep_their_structure(vocab_file):
    table = vocabulary(vocab_file)
    ragged = tf.strings.split(strings([b"the cat", b"zebra on the mat"]))
    ids = table.lookup(ragged)
    assert ids.to_list() == [expected_ids([b"the", b"cat"]), expected_ids([b"zebra", b"on", b"the", b"mat"])]
    sparse = tf.SparseTensor([[0, 0], [1, 2]], strings([b"cat", b"mat"]), [2, 3])
    looked_up = table.lookup(sparse)
    assert looked_up.indices.tolist() == [[0, 0], [1, 2]]
    assert looked_up.values.tolist() == expected_ids([b"cat", b"mat"])


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda t: t.lookup(np.array([1, 2], np.int32)), TypeError),
        (lambda t: t.lookup([b"a"]), TypeError),
        (lambda t: tf.lookup.StaticHashTable(t_init(), -1.5), TypeError),
        (lambda t: tf.lookup.StaticHashTable(t_init(), np.int64(-1)), ValueError),
        (lambda t: tf.lookup.StaticHashTable(t_init(), [0, 1]), ValueError),
        (lambda t: tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2], key_dtype=tf.int64), TypeError),
        (lambda t: tf.lookup.KeyValueTensorInitializer(np.array([1], np.int32), [1], key_dtype=tf.int64), ValueError),
        (lambda t: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer([1.5], [1]), 0), tf.errors.InvalidArgumentError),
        (lambda t: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "a"], [1, 2]), 0), tf.errors.FailedPreconditionError),
        (lambda t: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1]), 0), tf.errors.InvalidArgumentError),
        (lambda t: tf.lookup.StaticVocabularyTable(t_init(), 0), ValueError),
        (lambda t: tf.lookup.StaticVocabularyTable(t_init(), 2), TypeError),  # values must be int64
        (lambda t: tf.strings.to_hash_bucket_fast(b"a", 0), tf.errors.InvalidArgumentError),
        (lambda t: tf.strings.to_hash_bucket_fast(np.array([1]), 3), tf.errors.InvalidArgumentError),
    ],
)  # fmt: skip
def test_bad_tables_and_keys_raise_tensorflows_errors(make, error):
    table = tf.lookup.StaticHashTable(t_init(), -1)
    with pytest.raises(error):
        make(table)


def t_init():
    return tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2])


def text_table(path, key_index=0, value_index=1, value_dtype=tf.int64, default=-1, **kwargs):
    init = tf.lookup.TextFileInitializer(path, tf.string, key_index, value_dtype, value_index, **kwargs)
    return tf.lookup.StaticHashTable(init, default)


def test_text_file_columns_and_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "labels.tsv"
    path.write_bytes(b"cat\t3\r\ndog\t5\n")
    assert text_table(str(path)).lookup(strings([b"dog", b"cat", b"cow"])).tolist() == [5, 3, -1]
    assert text_table(path.as_posix().encode()).size() == 2  # a bytes name, as a string tensor gives

    missing = tmp_path / "missing.txt"
    with pytest.raises(tf.errors.NotFoundError, match="missing.txt"):
        text_table(str(missing))
    path.write_bytes(b"cat\t3\ndog\tfive\n")
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=r"Field five in line 1 is not a valid int64 \(.*labels"
    ):
        text_table(str(path))
    path.write_bytes(b"cat\t3\ndog\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid number of columns .*line 1 \\(dog\\)"):
        text_table(str(path))
    path.write_bytes(b"cat\t3\n\ndog\t4\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty line found at position 7"):
        text_table(str(path))
    path.write_bytes(b"cat\t3\ncat\t4\n")
    with pytest.raises(tf.errors.FailedPreconditionError, match="Key cat has 3 and trying to add value 4"):
        text_table(str(path))
    path.write_bytes(b"cat\t3\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected 2 but got 1"):
        text_table(str(path), vocab_size=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="delimiter"):
        text_table(str(path), delimiter="::")
    with pytest.raises(ValueError, match="filename"):
        tf.lookup.TextFileInitializer("", tf.string, 0, tf.int64, 1)


def test_text_file_through_fsspec():
    pytest.importorskip("fsspec")
    path = "memory://headrace-lookup-test/vocab.txt"
    with tf.io.gfile.GFile(path, "wb") as handle:
        handle.write(b"x\ny\n")
    try:
        assert vocabulary(path, oov=1).lookup(strings([b"y", b"q"])).tolist() == [1, 2]
    finally:
        tf.io.gfile.remove(path)


def test_tables_pickle_with_their_contents(tmp_path, vocab_file):
    table = vocabulary(vocab_file)
    hashed = tf.lookup.StaticVocabularyTable(None, 5)
    plain = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer([1, 2], [1.5, 2.5]), -1.0)
    copies = pickle.loads(pickle.dumps([table, hashed, plain]))
    (tmp_path / "vocab.txt").unlink()  # the copy holds the contents, not the file name
    assert copies[0].lookup(strings(WORDS)).tolist() == expected_ids(WORDS)
    assert copies[1].lookup(b"zebra") == fingerprint64(b"zebra") % 5
    assert copies[2].lookup(np.array([2, 3], np.int32)).tolist() == [2.5, -1.0]


def ids_and_labels(table, labels):
    names = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["cat"], ["Felis"]), "?")

    def fn(word):
        return {
            "id": table.lookup(word),
            "label": labels.lookup(word),
            "name": names.lookup(word),
            "bucket": tf.strings.to_hash_bucket_fast(word, 10),
        }

    return fn


@pytest.mark.parametrize("vectorise", [True, False])
def test_lookups_in_map_then_batch_give_the_per_element_values(vocab_file, vectorise):
    table = vocabulary(vocab_file)
    labels = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["cat", "mat"], [1.0, 2.0]), 0.0)
    ds = tf.data.Dataset.from_tensor_slices(strings(WORDS * 3)).map(ids_and_labels(table, labels)).batch(4)
    if not vectorise:
        options = tf.data.Options()
        options.experimental_optimization.map_vectorization = False
        ds = ds.with_options(options)
    batches = list(ds)
    ids = np.concatenate([b["id"] for b in batches]).tolist()
    assert ids == expected_ids(WORDS * 3)
    labels_out = np.concatenate([b["label"] for b in batches])
    assert labels_out.dtype == np.float32
    assert labels_out.tolist() == [{b"cat": 1.0, b"mat": 2.0}.get(w, 0.0) for w in WORDS * 3]
    assert np.concatenate([b["name"] for b in batches]).tolist() == [
        b"Felis" if w == b"cat" else b"?" for w in WORDS * 3
    ]
    buckets = np.concatenate([b["bucket"] for b in batches]).tolist()
    assert buckets == [fingerprint64(w) % 10 for w in WORDS * 3]
    text = ds.explain()
    if vectorise:
        assert "vectorised, one traced call per batch (lookup.lookup" in text, text
    else:
        assert "vectorised, one traced call" not in text


def test_a_map_of_the_bound_lookup_method_runs_vectorised(vocab_file):
    table = vocabulary(vocab_file)
    ds = tf.data.Dataset.from_tensor_slices(strings(WORDS)).map(table.lookup).batch(4)
    assert np.concatenate(list(ds)).tolist() == expected_ids(WORDS)
    assert "vectorised, one traced call per batch (lookup.lookup)" in ds.explain()


def test_lookups_run_in_process_workers(vocab_file):
    table = vocabulary(vocab_file)
    ds = (
        tf.data.Dataset.from_tensor_slices(strings(WORDS * 2))
        .map(table.lookup, num_parallel_calls=2, executor="process")
        .batch(6)
    )
    assert np.concatenate(list(ds)).tolist() == expected_ids(WORDS * 2)


def test_compat_v1_names():
    import headrace.compat.v1 as tf1

    table = tf1.lookup.StaticHashTable(tf1.lookup.KeyValueTensorInitializer(["a"], [7]), 0)
    assert tf1.tables_initializer() is None and table.initializer is None
    assert table.lookup(b"a") == 7
    assert tf1.string_to_hash_bucket_fast(b"a", 1000) == 939
