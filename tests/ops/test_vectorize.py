"""Vectorised maps (ops/vectorize.py): map(f).batch(n) as batch plus one traced call of f, with the
per-element run's values, random draws, errors and checkpoints."""

import functools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as tf
from headrace.ops import vectorize
from tests.helpers.checkpoint import check_checkpoints

FEATURES = {
    "x": tf.io.FixedLenFeature([3], tf.float32),
    "y": tf.io.FixedLenFeature([], tf.int64),
    "raw": tf.io.FixedLenFeature([], tf.string),
}


def records(n: int = 11) -> list[bytes]:
    return [
        tf.io.serialize_example(
            {"x": [i, i + 0.5, -i], "y": i % 5, "raw": np.arange(4, dtype=np.uint8).tobytes() + bytes([i])}
        )
        for i in range(n)
    ]


def off(ds):
    options = tf.data.Options()
    options.experimental_optimization.map_vectorization = False
    return ds.with_options(options)


def assert_same(a, b):
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def check(ds, vectorised: bool = True, reference=None):
    """``ds`` gives the per-element run's batches (``reference``, a fresh copy of ``ds`` for seeded
    maps, whose iterations draw anew); returns them, and the explain() text."""
    assert "decided at the first batch" in ds.explain()
    got, expected = list(ds), list(off(ds if reference is None else reference))
    text = ds.explain()
    assert ("vectorised, one traced call per batch" in text) is vectorised, text
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert_same(a, b)
    return got, text


class Counted:
    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


def tabular(r):
    d = tf.io.parse_single_example(r, FEATURES)
    x = tf.cast(d["x"], tf.float64) * 2.0 + 1
    return {
        "x": tf.clip_by_value(x, 0.0, 10.0),
        "y": tf.one_hot(d["y"], 5),
        "s": tf.reduce_sum(x, axis=0),
        "raw": tf.io.decode_raw(d["raw"], tf.uint8),
    }


@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("parallel", [None, 2, tf.data.AUTOTUNE])
def test_parse_pipeline_runs_vectorised_with_per_element_values(drop, parallel):
    fn = Counted(tabular)
    ds = tf.data.Dataset.from_tensor_slices(records(23)).map(fn, num_parallel_calls=parallel).batch(4, drop)
    got, _ = check(ds)
    assert len(got) == (5 if drop else 6)
    # The trace and the check of the first batch happen once per pipeline: a second iteration calls
    # the function only on a dropped remainder (the per-element run computes it, batch drops it).
    calls_before = fn.calls
    list(ds)
    assert fn.calls - calls_before == (23 % 4 if drop else 0)


def test_explain_names_the_ops_and_the_option_turns_it_off():
    ds = tf.data.Dataset.from_tensor_slices(records()).map(tabular).batch(4)
    next(iter(ds))
    text = ds.explain()
    assert "io.parse_single_example" in text and "one_hot" in text
    assert "vectorised" not in off(ds).explain()


# --- every supported op against its per-element result ---------------------------------------------
ARRAYS = st.sampled_from([np.float32, np.float64, np.int32, np.int64]).flatmap(
    lambda dtype: st.lists(st.integers(1, 3), min_size=1, max_size=3).map(
        lambda shape: np.arange(7 * int(np.prod(shape)), dtype=dtype).reshape(7, *shape) % 5 - 2
    )
)

UNARY = {
    "cast": lambda x: tf.cast(x, tf.float32),
    "arithmetic": lambda x: tf.cast((x * 3 + 1) - x // 2 + x % 3 - x**2, tf.float64),
    "tf_arithmetic": lambda x: tf.add(tf.multiply(x, 2), x),
    "compare": lambda x: (x > 0, tf.equal(x, 1), tf.less_equal(x, 0)),
    "maximum": lambda x: tf.maximum(x, 0),
    "abs_neg": lambda x: (tf.abs(x), -x, abs(x)),
    "clip": lambda x: tf.clip_by_value(x, -1, 1),
    "reshape": lambda x: tf.reshape(x, [-1]),
    "method_reshape": lambda x: tf.square(x.reshape(-1)),
    "expand": lambda x: (tf.expand_dims(x, 0), tf.expand_dims(x, -1)),
    "concat": lambda x: tf.concat([x, x], axis=0),
    "concat_last": lambda x: tf.concat([x, x * 2], axis=-1),
    "stack": lambda x: (tf.stack([x, x], axis=0), tf.stack([x, x], axis=-1)),
    "reduce": lambda x: (tf.reduce_sum(x), tf.reduce_max(x, axis=-1), tf.reduce_min(x, 0, keepdims=True)),
    "reduce_mean": lambda x: tf.reduce_mean(tf.cast(x, tf.float64), axis=0),
    "getitem": lambda x: (tf.cast(x[0], tf.float32), x[..., -1:]),
    "astype": lambda x: tf.cast(x.astype(np.float64), tf.float32),
    "shape": lambda x: tf.reshape(x, tf.shape(x)),
    "float_math": lambda x: (
        tf.sqrt(tf.abs(tf.cast(x, tf.float32))),
        tf.exp(tf.cast(x, tf.float64) / 4),
        tf.truediv(tf.cast(x, tf.float32), 3),
        tf.subtract(1.0, tf.square(tf.cast(x, tf.float32))),
        tf.negative(tf.floor(tf.cast(x, tf.float64) * 0.5)),
    ),
    "float_clip_sum": lambda x: (
        tf.clip_by_value(tf.cast(x, tf.float32), -1.5, 1),
        tf.clip_by_value(tf.cast(x, tf.float64) / 3, -0.9, 0.3),  # bounds converted through float32
        tf.add(tf.cast(x, tf.float64), 1e-6),
        tf.multiply(tf.cast(x, tf.float64), 0.1),
        tf.reduce_sum(tf.cast(x, tf.float64), axis=-1),
        tf.concat([tf.cast(x, tf.float32), tf.cast(x, tf.float32) + 1], axis=-1),
    ),
    # the rest of the elementwise and reduction rules (each op of vectorize.RULES appears somewhere here)
    "more_float_math": lambda x: (
        tf.math.log(tf.abs(tf.cast(x, tf.float32)) + 1),
        tf.math.log1p(tf.abs(tf.cast(x, tf.float64))),
        tf.tanh(tf.cast(x, tf.float32) / 2),
        tf.sigmoid(tf.cast(x, tf.float64)),
        tf.math.ceil(tf.cast(x, tf.float32) / 3),
        tf.round(tf.cast(x, tf.float64) / 4),
        tf.math.rsqrt(tf.abs(tf.cast(x, tf.float32)) + 1),
        tf.sign(x),
    ),
    "more_arithmetic": lambda x: (
        tf.pow(x, 2),
        tf.minimum(x, 1),
        tf.math.squared_difference(x, 1),
        tf.divide(tf.cast(x, tf.float32), 4),
        tf.math.floordiv(x, 3),
        tf.math.floormod(x, 3),
    ),
    "logical": lambda x: (
        tf.logical_and(x > -2, x < 2),
        tf.logical_or(x > 1, tf.equal(x, -2)),
        tf.math.logical_xor(x > 0, x > 1),
        tf.logical_not(x > 0),
        tf.not_equal(x, 0),
        tf.greater_equal(x, 1),
        tf.greater(x, 0),
        tf.less(x, 0),
    ),
    "more_reduce": lambda x: (
        tf.reduce_prod(x, axis=-1),
        tf.reduce_any(x > 1),
        tf.reduce_all(x > -3, axis=0),
        tf.reduce_min(x),
    ),
    "squeeze": lambda x: (tf.squeeze(tf.expand_dims(x, 0), 0), tf.squeeze(tf.expand_dims(x, -1), axis=[-1])),
    "transpose": lambda x: (tf.transpose(x), tf.transpose(x, list(range(len(x.shape)))[::-1]) + 1),
    "where": lambda x: (
        tf.where(x > 0, x, tf.zeros_like(x)),
        tf.where(x < 0, 1, x),
        tf.ones_like(x, tf.float32),
    ),
    "axes": lambda x: (
        tf.roll(x, 1, axis=0),
        tf.roll(x, [1, -1], axis=[0, -1]),
        tf.reverse(x, [-1]),
        tf.cumsum(x, axis=-1),
        tf.math.cumprod(x, axis=0, exclusive=True),
        tf.argmax(x, axis=-1),
        tf.argmin(x),
        tf.sort(x),
        tf.sort(x, axis=0, direction="DESCENDING"),
        tf.argsort(x, stable=True),
    ),
    "gather_tile_slice": lambda x: (
        tf.gather(x, [0, 0], axis=-1),
        tf.gather(tf.constant([10, 20, 30, 40, 50]), tf.cast(tf.abs(x), tf.int32)),
        tf.tile(x, [2] * len(x.shape)),
        tf.slice(x, [0] * len(x.shape), [1] * len(x.shape)),
        tf.size(x) + tf.cast(x, tf.int32),
    ),
    "parts": lambda x: (
        *tf.unstack(x, axis=-1),
        *tf.split(tf.concat([x, x], axis=0), 2),
        tf.split(tf.concat([x, x, x], axis=-1), [1, -1], axis=-1)[1],
    ),
    "moments": lambda x: (
        tf.math.reduce_std(tf.cast(x, tf.float32)),
        tf.math.reduce_variance(tf.cast(x, tf.float64), axis=-1),
        tf.math.reduce_logsumexp(tf.cast(x, tf.float32), axis=0),
        tf.math.rint(tf.cast(x, tf.float32) / 3),
    ),
    "nn": lambda x: (
        tf.nn.relu(x),
        tf.nn.relu6(tf.cast(x, tf.float32) * 3),
        tf.nn.leaky_relu(tf.cast(x, tf.float32), 0.1),
        tf.nn.elu(tf.cast(x, tf.float64)),
        tf.nn.selu(tf.cast(x, tf.float32)),
        tf.nn.softplus(tf.cast(x, tf.float32)),
        tf.nn.softsign(tf.cast(x, tf.float32)),
        tf.nn.silu(tf.cast(x, tf.float32), beta=2.0),
        tf.nn.softmax(tf.cast(x, tf.float32)),
        tf.nn.log_softmax(tf.cast(x, tf.float64), axis=0),
        tf.nn.l2_normalize(tf.cast(x, tf.float32)),
        tf.math.l2_normalize(tf.cast(x, tf.float32), axis=-1, epsilon=1e-3),
    ),
    "pad": lambda x: (
        tf.pad(x, [[1, 2]] * len(x.shape)),
        tf.pad(x, [[0, 1]] * len(x.shape), constant_values=7),
        tf.pad(x, [[0, 1]] * len(x.shape), mode="SYMMETRIC"),
    ),
}


def test_every_elementwise_and_reduction_rule_is_in_the_hypothesis_table():
    # A rule added to vectorize.RULES without a case above would go untested against per element.
    import inspect

    source = inspect.getsource(
        inspect.getmodule(test_every_elementwise_and_reduction_rule_is_in_the_hypothesis_table)
    )
    table = source[source.index("UNARY = {") : source.index("def test_every_elementwise")]
    names = set(vectorize._ELEMENTWISE.split()) | set(vectorize._REDUCE.split())
    names |= {name for name, rule in vectorize.RULES.items() if name.startswith("nn.")}
    names -= {"image.convert_image_dtype"}  # test_image_ops
    untested = sorted(n for n in names if f"{n}(" not in table and not _written_as_operator(n, table))
    assert untested == []


def _written_as_operator(name, table):
    # the cases write some ops as Python operators on the element (x * 3, x // 2, -x)
    operators = {
        "multiply": " * ",
        "subtract": " - ",
        "floordiv": " // ",
        "floormod": " % ",
        "negative": "-x",
    }
    return name in operators and operators[name] in table


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=8, deadline=None)
@given(data=ARRAYS)
def test_each_op_vectorised_equals_per_element(name, data):
    ds = tf.data.Dataset.from_tensor_slices(data).map(UNARY[name]).batch(3)
    check(ds)


def test_one_hot_and_int_ops():
    labels = np.array([0, 3, 1, 2, 4, 9, -1], np.int64)
    check(tf.data.Dataset.from_tensor_slices(labels).map(lambda y: tf.one_hot(y, 5)).batch(3))
    check(tf.data.Dataset.from_tensor_slices(labels).map(lambda y: tf.one_hot(y, 4, axis=0)).batch(3))


_VOCAB = tf.lookup.StaticVocabularyTable(
    tf.lookup.KeyValueTensorInitializer([b"a", b"bb", b"\xc3\xa9"], np.array([0, 1, 2], np.int64)), 5
)
_IDS = tf.lookup.StaticHashTable(
    tf.lookup.KeyValueTensorInitializer(np.array([0, 2, 4], np.int64), ["zero", "two", "four"]), "?"
)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.sampled_from([b"a", b"bb", b"", b"\xc3\xa9", b"zebra", b"x" * 70]), min_size=1, max_size=9),
    st.lists(st.integers(1, 3), max_size=2),
    st.integers(1, 4),
)
def test_lookup_tables_vectorised_equal_per_element(words, shape, batch):
    tokens = np.empty(len(words), dtype=object)
    tokens[:] = words
    check(
        tf.data.Dataset.from_tensor_slices(tokens)
        .map(lambda w: (_VOCAB.lookup(w), tf.strings.to_hash_bucket_fast(w, 3)))
        .batch(batch)
    )
    ints = np.arange(len(words) * int(np.prod(shape)), dtype=np.int64).reshape(len(words), *shape) % 6
    check(tf.data.Dataset.from_tensor_slices(ints).map(lambda x: (_IDS.lookup(x), _IDS[x])).batch(batch))


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"Cat ", b" bB\t", b"", b"Caf\xc3\xa9", b"12", b"-3.5", b"x" * 70]), min_size=1
    ),
    st.integers(1, 4),
)
def test_string_ops_vectorised_equal_per_element(words, batch):
    tokens = np.empty(len(words), dtype=object)
    tokens[:] = words

    def fn(w):
        w = tf.strings.strip(tf.strings.lower(w))
        return (
            _VOCAB.lookup(tf.strings.regex_replace(w, "[^a-z]", "")),
            tf.strings.upper(w, encoding="utf-8"),
            tf.strings.length(w, unit="UTF8_CHAR"),
            tf.strings.regex_full_match(w, "[0-9.-]+"),
            tf.strings.as_string(tf.strings.length(w) * 2, width=3),
        )

    check(tf.data.Dataset.from_tensor_slices(tokens).map(fn).batch(batch))
    numbers = tokens[[w in (b"12", b"-3.5") for w in words]]
    if len(numbers):
        check(tf.data.Dataset.from_tensor_slices(numbers).map(tf.strings.to_number).batch(batch))


def test_image_ops():
    images = np.random.default_rng(0).integers(0, 255, (9, 4, 5, 3), dtype=np.uint8)

    def fn(image):
        image = tf.image.convert_image_dtype(image, tf.float32)
        return tf.image.flip_left_right(image) * 2.0

    check(tf.data.Dataset.from_tensor_slices(images).map(fn).batch(4))


def test_tuple_elements_and_outputs():
    xs = np.arange(12, dtype=np.float32).reshape(6, 2)
    ys = np.arange(6, dtype=np.int64)
    ds = (
        tf.data.Dataset.from_tensor_slices((xs, ys))
        .map(lambda x, y: (x * 2, tf.cast(y, tf.float32)))
        .batch(4)
    )
    check(ds)


def test_a_function_without_tf_ops_stays_per_element():
    # headrace's own per-element Python (numpy operators, side effects) keeps running per element.
    calls = []

    def count(x):
        calls.append(1)
        return x * 2 + 1

    ds = tf.data.Dataset.from_tensor_slices(np.arange(8, dtype=np.int64)).map(count).batch(4)
    text = ds.explain()
    assert "decided at the first batch" not in text and "refers to no headrace op" in text, text
    assert [list(b) for b in ds] == [[1, 3, 5, 7], [9, 11, 13, 15]]
    assert len(calls) == 8  # no trace: its side effects run once per element, as written


def test_a_candidate_that_calls_no_op_stays_per_element():
    # It refers to headrace (a module), but the trace meets no op: per element, said at the first batch.
    calls = []

    def count(x):
        calls.append(tf.int64)
        return x * 2 + 1

    ds = tf.data.Dataset.from_tensor_slices(np.arange(8, dtype=np.int64)).map(count).batch(4)
    _, text = check(ds, vectorised=False)
    assert "calls no TF op" in text and len(calls) == 1 + 8 + 8  # the trace, then per element on and off


def test_the_candidate_check_looks_through_helpers_partials_and_closures():
    from headrace.ops.vectorize import may_call_ops

    def helper(x):
        return tf.cast(x, "float32")

    def uses_helper(x):
        return helper(x) + 1

    cast = tf.cast
    assert may_call_ops(uses_helper) and may_call_ops(functools.partial(uses_helper))
    assert may_call_ops(lambda x: cast(x, "int32"))  # a closure cell holding an op
    assert not may_call_ops(lambda x: np.asarray(x) * 2) and not may_call_ops(len)


def test_untraceable_parallel_map_goes_on_with_its_workers():
    data = np.arange(40, dtype=np.int64).reshape(20, 2)
    ds = tf.data.Dataset.from_tensor_slices(data).map(python_if, num_parallel_calls=2).batch(3)
    it = iter(ds)
    first = next(it)  # the first batch too is computed by the workers
    assert first.tolist() == [python_if(row).tolist() for row in data[:3]]
    root = it._root
    assert type(root.delegate.parent).__name__ == "ParallelMapIterator"
    assert root.delegate.parent.produced == 3 and root.map_iterator.produced == 0
    rest = list(it)
    assert np.array_equal(np.concatenate([first, *rest]), np.stack([python_if(row) for row in data]))
    assert "per element, " in ds.explain()
    # Later iterations build the parallel stages directly.
    assert type(iter(ds)._root).__name__ == "BatchIterator"


def test_untraceable_parallel_map_checkpoints_across_the_switch():
    data = np.arange(40, dtype=np.int64).reshape(20, 2)

    def make():
        return tf.data.Dataset.from_tensor_slices(data).map(python_if, num_parallel_calls=2).batch(3)

    check_checkpoints(make, stride=2)


def test_dict_elements():
    data = {"a": np.arange(10, dtype=np.float32), "b": np.arange(20, dtype=np.int64).reshape(10, 2)}
    ds = tf.data.Dataset.from_tensor_slices(data).map(lambda d: {"s": d["a"] * 2, "t": tf.reduce_max(d["b"])})
    check(ds.batch(4))


def test_fallback_is_silent_and_logged_at_debug_level(caplog):
    data = np.arange(-9, 9, dtype=np.int64).reshape(9, 2)
    ds = tf.data.Dataset.from_tensor_slices(data).map(python_if).batch(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with caplog.at_level("DEBUG", logger="headrace.vectorize"):
            list(ds)
    assert any("stays per element" in r.getMessage() and "bool()" in r.getMessage() for r in caplog.records)


# --- random ops: each element's own stream ------------------------------------------------------------
def random_fn(image, rng):
    image = tf.image.random_flip_left_right(image, rng=rng)
    image = tf.image.random_crop(image, (3, 3), rng=rng)
    return image, tf.random.uniform([2]), tf.random.normal([])


def test_random_ops_draw_as_the_per_element_run():
    images = np.arange(10 * 5 * 6 * 2, dtype=np.float32).reshape(10, 5, 6, 2)

    def make():
        return tf.data.Dataset.from_tensor_slices(images).map(random_fn, seed=7).batch(4)

    ds = make()
    got, _ = check(ds, reference=make())
    again = list(ds)  # a new iteration draws anew, still as the per-element run does
    assert not np.array_equal(got[0][1], again[0][1])


def test_random_ops_without_seed_stay_per_element():
    images = np.zeros((4, 5, 6, 2), np.float32)
    ds = tf.data.Dataset.from_tensor_slices(images).map(lambda x: tf.random.uniform([2]) + 1).batch(2)
    list(ds)
    assert "per element, random.uniform in a map without seed=" in ds.explain()


# --- fallbacks ----------------------------------------------------------------------------------------
def python_if(x):
    if tf.reduce_sum(x) > 0:
        return x
    return -x


def unsupported_op(x):
    return tf.unique(x)[0]  # its size differs between elements


def numpy_call(x):
    return np.mean(tf.cast(x, "float64")) + x


@pytest.mark.parametrize(
    "fn, reason",
    [
        (python_if, "bool()"),
        (unsupported_op, "unique"),
        (numpy_call, ""),
        (lambda x: int(x[0]) + tf.cast(x, "int64"), "int()"),
        (lambda x: [tf.cast(x, "int64"), x], "list"),
    ],
)
def test_fallback_runs_per_element_and_explain_says_why(fn, reason):
    data = np.arange(-9, 9, dtype=np.int64).reshape(9, 2)
    ds = tf.data.Dataset.from_tensor_slices(data).map(fn).batch(4)
    _, text = check(ds, vectorised=False)
    assert "per element, " in text and reason in text


def test_a_failing_element_raises_as_per_element():
    bad = records(9)
    bad[6] = b"not an example"
    ds = tf.data.Dataset.from_tensor_slices(bad).map(tabular).batch(4)
    errors = []
    for variant in (ds, off(ds)):
        it = iter(variant)
        got = [next(it)]
        with pytest.raises(Exception) as info:
            got.append(next(it))
        errors.append((type(info.value), str(info.value), len(got)))
        got.extend(it)  # the batch completes after the failing element, as per element
        errors.append([b["y"].tolist() for b in got])
    assert errors[0] == errors[2] and errors[1] == errors[3]
    assert "vectorised, one traced call" in ds.explain()


def test_first_batch_difference_warns_once_naming_the_op(monkeypatch):
    def wrong(graph, name, fn, args, kwargs):
        return vectorize.elementwise(graph, name, lambda x, d: fn(x, d) + 1, args, kwargs)

    monkeypatch.setitem(vectorize.RULES, "cast", wrong)
    ds = tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.int32)).map(
        lambda x: tf.cast(x, tf.float32)
    )
    ds = ds.batch(4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = list(ds) + list(ds)
    messages = [str(w.message) for w in caught if issubclass(w.category, vectorize.VectorizationWarning)]
    assert len(messages) == 1 and "op cast" in messages[0]
    assert "per element, its first batch differed at op cast" in ds.explain()
    assert [b.tolist() for b in got[:3]] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [b.tolist() for b in got[3:]] == [b.tolist() for b in got[:3]]


# --- checkpoints --------------------------------------------------------------------------------------
def test_checkpoints_restore_exactly():
    def make():
        return tf.data.Dataset.from_tensor_slices(records(10)).map(tabular).batch(3)

    check_checkpoints(make, stride=1)


def test_seeded_checkpoints_restore_exactly_and_match_per_element_states():
    images = np.arange(7 * 5 * 6 * 2, dtype=np.float32).reshape(7, 5, 6, 2)

    def make():
        return tf.data.Dataset.from_tensor_slices(images).map(random_fn, seed=3).batch(2).repeat(2)

    check_checkpoints(make, stride=2)
    on, per_element = iter(make()), iter(off(make()))
    for _ in range(3):
        next(on), next(per_element)
    assert on.get_state()["state"] == per_element.get_state()["state"]


# --- image decoders and the augment ops after them ------------------------------------------------------
IMAGE = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}


def image_records(sizes, encode="jpeg", channels=3, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i, (h, w) in enumerate(sizes):
        c = channels[i % len(channels)] if isinstance(channels, tuple) else channels
        pixels = rng.integers(0, 255, (h, w, c), dtype=np.uint8)
        data = tf.image.encode_jpeg(pixels) if encode == "jpeg" else tf.image.encode_png(pixels)
        if encode == "mixed":
            data = (tf.image.encode_jpeg if i % 2 else tf.image.encode_png)(pixels)
        out.append(tf.io.serialize_example({"image": data, "label": i}))
    return np.array(out, dtype=object)


def decode_augment(record, rng):
    ex = tf.io.parse_single_example(record, IMAGE)
    image = tf.io.decode_jpeg(ex["image"], channels=3)
    image = tf.image.random_crop(image, [12, 10, 3], rng=rng)
    image = tf.image.random_flip_left_right(image, rng=rng)
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.resize(image, (8, 8))
    return tf.cast(image * 255.0, tf.uint8), ex["label"]


@pytest.mark.parametrize("sizes", [[(16, 14)] * 9, [(16, 14), (20, 12), (13, 30)] * 3])
def test_decode_and_augment_run_vectorised_with_the_per_element_draws(sizes):
    data = image_records(sizes)

    def make():
        return tf.data.Dataset.from_tensor_slices(data).map(decode_augment, seed=5).batch(4)

    ds = make()
    got, text = check(ds, reference=make())
    assert "io.decode_jpeg, image.random_crop, image.random_flip_left_right" in text
    assert "image.resize" in text
    # Images of several sizes in a batch run row by row up to the crop, which makes them one size.
    assert ("held values of several sizes" in text) is (len(set(sizes)) > 1)
    assert [b[1].tolist() for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]


@pytest.mark.parametrize(
    "dtype",
    [tf.float32, np.float32, "float32", np.dtype("float32")],
    ids=["tf", "np-type", "str", "np-dtype"],
)
def test_a_dtype_argument_traces_however_it_is_spelled(dtype):
    # np.float32 is a class: its ``ndim`` is a descriptor, and taking it for an operand's rank made the
    # trace raise TypeError, so the benchmark's JPEG map (``convert_image_dtype(x, np.float32)``) ran
    # per element with vectorisation on.
    data = image_records([(16, 14)] * 5)

    def fn(record):
        image = tf.io.decode_jpeg(tf.io.parse_single_example(record, IMAGE)["image"], channels=3)
        return tf.image.convert_image_dtype(image, dtype), tf.cast(image, dtype)

    got, _ = check(tf.data.Dataset.from_tensor_slices(data).map(fn).batch(2))
    assert got[0][0].dtype == got[0][1].dtype == np.float32


PER_IMAGE = {
    "flip_up_down": lambda im: tf.image.flip_up_down(im),
    "transpose": lambda im: tf.image.transpose(im),
    "rot90": lambda im: (tf.image.rot90(im), tf.image.rot90(im, k=2)),
    "central_crop": lambda im: tf.image.central_crop(im, 0.5),
    "crop_or_pad": lambda im: tf.image.resize_with_crop_or_pad(im, 6, 3),
    "brightness": lambda im: tf.image.adjust_brightness(tf.image.convert_image_dtype(im, tf.float32), 0.1),
    "contrast": lambda im: (tf.image.adjust_contrast(im, 1.5), tf.image.adjust_contrast(im * 1.0, 0.5)),
    "grey": lambda im: tf.image.rgb_to_grayscale(im),
    "standardise": lambda im: tf.image.per_image_standardization(im),
    "crop_to_box": lambda im: tf.image.crop_to_bounding_box(im, 1, 2, 3, 2),
    "pad_to_box": lambda im: tf.image.pad_to_bounding_box(im, 2, 1, 7, 8),
    "resize_with_pad": lambda im: tf.image.resize_with_pad(im, 6, 9),
    "saturation_hue": lambda im: (tf.image.adjust_saturation(im, 0.4), tf.image.adjust_hue(im, -0.2)),
    "grey_to_rgb": lambda im: tf.image.grayscale_to_rgb(tf.image.rgb_to_grayscale(im)),
    "gamma": lambda im: tf.image.adjust_gamma(tf.image.convert_image_dtype(im, tf.float32), 0.5, 1.2),
}


@pytest.mark.parametrize("name", sorted(PER_IMAGE))
def test_per_image_ops_run_vectorised_with_the_per_element_values(name):
    images = np.random.default_rng(1).integers(0, 255, (9, 4, 5, 3), dtype=np.uint8)
    check(tf.data.Dataset.from_tensor_slices(images).map(PER_IMAGE[name]).batch(4))


def test_cifar_augmentation_pad_then_random_crop_runs_vectorised():
    # The CIFAR recipe as the tutorials write it: pad 4 pixels (tf.pad or pad_to_bounding_box), crop back
    # at random, flip at random, transposed to channels first.
    images = np.random.default_rng(2).integers(0, 255, (10, 8, 8, 3), dtype=np.uint8)

    def augment(image, rng):
        image = tf.pad(image, [[4, 4], [4, 4], [0, 0]], mode="REFLECT")
        image = tf.image.random_crop(image, [8, 8, 3], rng=rng)
        image = tf.image.random_flip_left_right(image, rng=rng)
        boxed = tf.image.crop_to_bounding_box(tf.image.pad_to_bounding_box(image, 2, 2, 12, 12), 1, 1, 9, 9)
        return tf.transpose(image, [2, 0, 1]), tf.where(boxed > 128, boxed, tf.zeros_like(boxed))

    def make():
        return tf.data.Dataset.from_tensor_slices(images).map(augment, seed=3).batch(4)

    got, text = check(make(), reference=make())
    assert "pad, image.random_crop, image.random_flip_left_right" in text
    assert got[0][0].shape == (4, 3, 8, 8) and got[0][1].shape == (4, 9, 9, 3)


def random_apply(image, label):
    # the tutorials' "apply with probability p": a cond on a per-element draw
    image = tf.cond(tf.random.uniform([]) > 0.5, lambda: tf.image.flip_left_right(image), lambda: image)
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.cond(label > 4, lambda: image * 0.5, lambda: tf.image.adjust_brightness(image, 0.1))
    pair = tf.cond(label % 2 == 0, lambda: (label, image[0, 0]), lambda: (label * 10, image[1, 1]))
    return image, pair


def test_cond_on_a_traced_predicate_runs_vectorised_with_each_elements_branch():
    images = np.random.default_rng(3).integers(0, 255, (10, 6, 5, 3), dtype=np.uint8)
    labels = np.arange(10, dtype=np.int64)

    def make():
        return tf.data.Dataset.from_tensor_slices((images, labels)).map(random_apply, seed=4).batch(4)

    got, text = check(make(), reference=make())
    assert "random.uniform, gt, image.flip_left_right, cond" in text
    assert [b[1][0].tolist() for b in got] == [[0, 10, 2, 30], [4, 50, 6, 70], [8, 90]]


@pytest.mark.parametrize(
    "fn, reason",
    [
        (
            lambda x: tf.cond(x[0] > 0, lambda: x + tf.random.uniform([2]), lambda: x),
            "cond whose branches draw random numbers",
        ),
        (lambda x: tf.reduce_sum(tf.cond(x[0] > 0, lambda: x, lambda: x[:1])), "different shapes or dtypes"),
        (lambda x: sum(tf.cond(x[0] > 0, lambda: (x, x), lambda: (x, x, x))), "different structures"),
    ],
)
def test_cond_that_cannot_select_per_element_stays_per_element(fn, reason):
    data = np.arange(-4, 4, dtype=np.float32).reshape(4, 2)
    ds = tf.data.Dataset.from_tensor_slices(data).map(fn, seed=1).batch(2)
    _, text = check(
        ds, vectorised=False, reference=tf.data.Dataset.from_tensor_slices(data).map(fn, seed=1).batch(2)
    )
    assert reason in text


def test_cond_whose_other_branch_fails_falls_back_to_the_per_element_values():
    # per element only the branch taken runs; the batched call computes both, and the lookup fails for
    # the ids past the table, which take the other branch: the map warns, naming the op, and runs per
    # element, with the per-element values
    table = np.arange(10, dtype=np.float32) * 10
    data = np.array([4, 12, 12, 3], np.int64)

    def fn(n):
        return tf.cond(n < 10, lambda: tf.gather(table, n), lambda: tf.constant(-1.0))

    ds = tf.data.Dataset.from_tensor_slices(data).map(fn).batch(4)
    with pytest.warns(vectorize.VectorizationWarning, match="gather"):
        got = list(ds)
    assert got[0].tolist() == [40.0, -1.0, -1.0, 30.0]


def test_where_with_one_argument_stays_per_element():
    # the coordinates of the true entries: their number differs between elements
    data = np.array([[1, 0, 2], [0, 0, 3], [4, 5, 6]], np.int64)
    ds = tf.data.Dataset.from_tensor_slices(data).map(lambda x: tf.reduce_sum(tf.where(x > 0)))
    got, text = check(ds.batch(2), vectorised=False)
    assert "where without x and y" in text


def decode_and_jitter(record):
    # the tutorials' augmentations, none given rng=: in map(f, seed=S) they draw from the element's stream
    image = tf.io.decode_jpeg(tf.io.parse_single_example(record, IMAGE)["image"], channels=3)
    image = tf.image.random_flip_up_down(image)
    image = tf.image.rot90(tf.image.flip_up_down(image))
    image = tf.image.random_brightness(tf.image.convert_image_dtype(image, tf.float32), max_delta=0.2)
    image = tf.image.random_contrast(image, 0.5, 1.5)
    image = tf.image.random_hue(tf.image.random_saturation(image, 0.6, 1.4), 0.2)
    return tf.image.resize_with_crop_or_pad(tf.image.central_crop(image, 0.8), 9, 9)


@pytest.mark.parametrize("sizes", [[(16, 14)] * 9, [(16, 14), (20, 12), (13, 30)] * 3])
def test_random_image_ops_draw_from_each_elements_stream_vectorised(sizes):
    data = image_records(sizes)

    def make():
        return tf.data.Dataset.from_tensor_slices(data).map(decode_and_jitter, seed=7).batch(4)

    got, text = check(make(), reference=make())
    assert (
        "image.random_flip_up_down, image.flip_up_down, image.rot90" in text
        and "image.random_contrast, image.random_saturation, image.random_hue" in text
    )
    assert ("held values of several sizes" in text) is (len(set(sizes)) > 1)
    assert got[0].shape == (4, 9, 9, 3)


def test_random_image_ops_checkpoints_restore_exactly():
    data = image_records([(16, 14), (20, 12)] * 4)
    check_checkpoints(
        lambda: tf.data.Dataset.from_tensor_slices(data).map(decode_and_jitter, seed=2).batch(3), stride=2
    )


def test_random_image_ops_with_their_own_seed_run_per_element():
    def fn(image):
        return tf.image.random_brightness(image, 0.2, seed=3)

    images = np.zeros((6, 4, 4, 3), np.float32)
    _, text = check(tf.data.Dataset.from_tensor_slices(images).map(fn, seed=1).batch(3), vectorised=False)
    assert "random_brightness with seed=" in text


@pytest.mark.parametrize(
    "decode",
    [
        lambda b: tf.io.decode_jpeg(b),
        lambda b: tf.io.decode_jpeg(b, channels=3),
        lambda b: tf.io.decode_png(b, channels=3),
        lambda b: tf.io.decode_image(b, channels=3, expand_animations=False),
        lambda b: tf.io.decode_image(b, dtype=tf.float32),
    ],
)
@pytest.mark.parametrize("encode, channels", [("jpeg", 3), ("jpeg", (3, 1)), ("mixed", 3), ("png", (1, 3))])
def test_each_decoder_equals_per_element(decode, encode, channels):
    # Same-size images of one or several formats and channel counts: stacked when the decoded shapes
    # agree, the per-element run's error (batch refuses the shapes) when they do not.
    data = image_records([(9, 7)] * 6, encode, channels)

    def fn(record):
        return tf.cast(decode(tf.io.parse_single_example(record, IMAGE)["image"]), tf.float32)

    ds = tf.data.Dataset.from_tensor_slices(data).map(fn).batch(3)
    try:
        expected = list(off(ds))
    except Exception as exc:
        with pytest.raises(type(exc)):
            list(ds)
        return
    got = list(ds)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert_same(a, b)
    assert "vectorised, one traced call per batch" in ds.explain()


def test_decoded_images_of_several_sizes_without_a_crop_fail_as_batch_does():
    data = image_records([(8, 8), (8, 8), (9, 8), (8, 8)])

    def fn(record):
        return tf.io.decode_jpeg(tf.io.parse_single_example(record, IMAGE)["image"], channels=3)

    ds = tf.data.Dataset.from_tensor_slices(data).map(fn).batch(2)
    errors = []
    for variant in (ds, off(ds)):
        it = iter(variant)
        first = next(it)
        with pytest.raises(Exception) as info:
            next(it)
        errors.append((first.shape, type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def test_a_damaged_image_raises_as_per_element():
    data = image_records([(16, 14)] * 6)
    data[4] = tf.io.serialize_example({"image": b"\xff\xd8\xff not a jpeg", "label": 4})
    ds = tf.data.Dataset.from_tensor_slices(data).map(decode_augment, seed=1).batch(3)
    errors = []
    for variant in (ds, off(ds)):
        it = iter(variant)
        next(it)
        with pytest.raises(Exception) as info:
            next(it)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]
    assert issubclass(errors[0][0], tf.errors.DataLossError)


def test_the_shape_of_a_decoded_image_stays_per_element():
    # Its size differs between elements (TF's static shape is (None, None, 3)): a function that reads it
    # runs per element, and explain says why.
    data = image_records([(10, 9), (12, 9)] * 2)

    def fn(record):
        image = tf.io.decode_jpeg(tf.io.parse_single_example(record, IMAGE)["image"], channels=3)
        return tf.shape(image)

    def by_attribute(record):
        image = tf.io.decode_jpeg(tf.io.parse_single_example(record, IMAGE)["image"], channels=3)
        return tf.cast(image, tf.float32)[: image.shape[0] // 2]

    for f in (fn, by_attribute):
        ds = tf.data.Dataset.from_tensor_slices(data).map(f).batch(1)
        _, text = check(ds, vectorised=False)
        assert "whose size differs between elements" in text


def test_random_image_ops_need_the_maps_rng():
    data = image_records([(10, 9)] * 4)

    def fn(record):
        image = tf.io.decode_jpeg(tf.io.parse_single_example(record, IMAGE)["image"], channels=3)
        return tf.image.random_crop(image, [4, 4, 3], seed=3)

    ds = tf.data.Dataset.from_tensor_slices(data).map(fn).batch(2)
    list(ds)
    assert "image.random_crop with seed= or another rng than the map's" in ds.explain()


def test_ported_image_random_ops_draw_from_the_element_stream():
    # tf.image.random_*(image) without rng, in map(f, seed=S): each element's stream, as tf.random.*;
    # so the map is reproducible and vectorises.
    data = image_records([(16, 14), (20, 12)] * 4)

    def fn(record):
        image = tf.io.decode_jpeg(tf.io.parse_single_example(record, IMAGE)["image"], channels=3)
        image = tf.image.random_flip_left_right(tf.image.random_crop(image, [10, 10, 3]))
        return image, tf.random.uniform([])

    def make():
        return tf.data.Dataset.from_tensor_slices(data).map(fn, seed=9).batch(4)

    got, text = check(make(), reference=make())
    assert "image.random_crop, image.random_flip_left_right" in text
    again = list(make())
    for a, b in zip(got, again):
        assert_same(a, b)


def test_jpegs_of_one_size_decode_into_one_array_as_the_op_decodes_them():
    from headrace.image import decode as decoders

    rng = np.random.default_rng(1)
    colour = [tf.image.encode_jpeg(rng.integers(0, 255, (6, 5, 3), dtype=np.uint8)) for _ in range(3)]
    gray = tf.image.encode_jpeg(rng.integers(0, 255, (6, 5, 1), dtype=np.uint8))
    out = vectorize._decode_jpegs_into_one(decoders, colour + [gray], 3)
    assert out is not None and out.shape == (4, 6, 5, 3)
    for row, data in zip(out, colour + [gray]):
        assert np.array_equal(row, tf.io.decode_jpeg(data, channels=3))
    many = colour * 8 + [gray] * 8  # in threads (a map's num_parallel_calls): the same array
    assert np.array_equal(
        vectorize._decode_jpegs_into_one(decoders, many, 3, workers=3),
        np.stack([tf.io.decode_jpeg(data, channels=3) for data in many]),
    )
    # What the op decodes otherwise (grey as stored, another size, not a JPEG): element by element.
    assert vectorize._decode_jpegs_into_one(decoders, colour + [gray], 0) is None
    other = tf.image.encode_jpeg(np.zeros((7, 5, 3), np.uint8))
    assert vectorize._decode_jpegs_into_one(decoders, colour + [other], 3) is None
    png = tf.image.encode_png(np.zeros((6, 5, 3), np.uint8))
    assert vectorize._decode_jpegs_into_one(decoders, colour + [png], 3) is None


def test_decode_augment_checkpoints_restore_exactly():
    data = image_records([(16, 14), (20, 12)] * 4)

    def make():
        return tf.data.Dataset.from_tensor_slices(data).map(decode_augment, seed=2).batch(3)

    check_checkpoints(make, stride=1)


# --- map -> shuffle -> batch: the map vectorised over chunks of its input ---------------------------------
def seeded_tabular(r):
    d = tf.io.parse_single_example(r, FEATURES)
    return tf.cast(d["x"], tf.float64) * 2.0 + tf.random.uniform([3]), d["y"]


def shuffled(fn=seeded_tabular, n=41, parallel=None, seed=4, buffer=10, batch=4):
    source = tf.data.Dataset.from_tensor_slices(records(n))
    return source.map(fn, seed=seed, num_parallel_calls=parallel).shuffle(buffer, seed=1).batch(batch)


@pytest.mark.parametrize("buffer", [1, 10, 100])
@pytest.mark.parametrize("parallel", [None, 2])
def test_map_shuffle_batch_runs_vectorised_with_per_element_values(buffer, parallel):
    ds = shuffled(buffer=buffer, parallel=parallel)
    got, expected = list(ds), list(off(shuffled(buffer=buffer, parallel=parallel)))
    assert len(got) == len(expected) == 11
    for a, b in zip(got, expected):
        assert_same(a, b)
    text = ds.explain()
    assert "vectorised, one traced call per chunk of its input (io.parse_single_example" in text
    assert "before shuffle(" in text
    again = list(ds)  # a new iteration draws anew (map and shuffle), still as the per-element run does
    assert not np.array_equal(got[0][0], again[0][0])


def test_map_shuffle_batch_calls_the_function_once_per_chunk():
    fn = Counted(tabular)
    ds = tf.data.Dataset.from_tensor_slices(records(40)).map(fn).shuffle(8, seed=1).batch(8)
    expected = list(
        off(tf.data.Dataset.from_tensor_slices(records(40)).map(tabular).shuffle(8, seed=1).batch(8))
    )
    got = list(ds)
    for a, b in zip(got, expected):
        assert_same(a, b)
    assert "vectorised, one traced call per chunk of its input" in ds.explain()
    # One trace; the first chunk checked per element (8); then one call per chunk, none per element.
    calls = fn.calls
    assert calls < 40
    list(ds)
    assert fn.calls - calls == 0


def test_map_shuffle_batch_checkpoints_restore_exactly():
    def make():
        return shuffled(n=23, buffer=6, batch=3)

    check_checkpoints(make, stride=1)
    on, per_element = iter(make()), iter(off(make()))
    for _ in range(3):
        next(on), next(per_element)
    assert on.get_state()["state"] == per_element.get_state()["state"]


@pytest.mark.parametrize("parallel", [None, 2])
def test_map_shuffle_batch_fallback_runs_per_element_and_says_why(parallel):
    def python_if(r):
        d = tf.io.parse_single_example(r, FEATURES)
        if tf.reduce_sum(d["x"]) > 0:
            return d["x"], d["y"]
        return -d["x"], d["y"]

    ds = shuffled(python_if, parallel=parallel)
    got, expected = list(ds), list(off(shuffled(python_if, parallel=parallel)))
    for a, b in zip(got, expected):
        assert_same(a, b)
    assert "per element, bool()" in ds.explain()
    check_checkpoints(lambda: shuffled(python_if, n=13, parallel=parallel, buffer=4, batch=3), stride=2)


def test_map_shuffle_batch_a_failing_element_raises_as_per_element():
    bad = records(20)
    bad[9] = b"not an example"

    def make():
        return tf.data.Dataset.from_tensor_slices(bad).map(tabular).shuffle(5, seed=2).batch(4)

    vectorised, per_element = (until_error(variant) for variant in (make(), off(make())))
    assert vectorised[:3] == per_element[:3]


def until_error(ds) -> tuple:
    """Iterate ``ds`` to its error: (error type, message, labels before it, labels of a later pass)."""
    it = iter(ds)
    got = []
    with pytest.raises(Exception) as info:
        while True:
            got.append(next(it)["y"].tolist())
    return type(info.value), str(info.value), got, [b["y"].tolist() for b in it]


def test_map_shuffle_batch_first_chunk_difference_warns_once(monkeypatch):
    def wrong(graph, name, fn, args, kwargs):
        return vectorize.elementwise(graph, name, lambda x, d: fn(x, d) + 1, args, kwargs)

    monkeypatch.setitem(vectorize.RULES, "cast", wrong)

    def make():
        ds = tf.data.Dataset.from_tensor_slices(np.arange(30, dtype=np.int32))
        return ds.map(lambda x: tf.cast(x, tf.float32)).shuffle(6, seed=1).batch(4)

    ds = make()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = list(ds) + list(ds)
    messages = [str(w.message) for w in caught if issubclass(w.category, vectorize.VectorizationWarning)]
    assert len(messages) == 1 and "op cast" in messages[0]
    expected = list(off(make())) + list(off(make()))
    assert [b.tolist() for b in got[:8]] == [b.tolist() for b in expected[:8]]
    assert "per element, its first chunk differed at op cast" in ds.explain()


BETWEEN = {
    "shuffle-repeat": lambda ds: ds.shuffle(6, seed=1).repeat(2),
    "cache-shuffle": lambda ds: ds.cache().shuffle(6, seed=1),
    "filter": lambda ds: ds.filter(lambda d: d["s"] > 2.0),
    "shuffle-take": lambda ds: ds.shuffle(6, seed=1).take(30),
    "ignore_errors": lambda ds: ds.ignore_errors(),
}


@pytest.mark.parametrize("between", sorted(BETWEEN))
def test_stages_that_pass_chunks_between_map_and_batch_keep_the_map_vectorised(between):
    # Issue 23: map -> shuffle -> repeat -> batch, map -> cache -> shuffle -> batch and a filter
    # between ran the map per element.
    def make(fn):
        ds = tf.data.Dataset.from_tensor_slices(records(40)).map(fn)
        return BETWEEN[between](ds).batch(8)

    fn = Counted(tabular)
    ds = make(fn)
    got, expected = list(ds), list(off(make(tabular)))
    assert len(got) == len(expected) > 0
    for a, b in zip(got, expected):
        assert_same(a, b)
    text = ds.explain()
    assert "vectorised, one traced call per chunk of its input" in text, text
    assert fn.calls < 40  # the trace and the first chunk's check, then one call per chunk


@pytest.mark.parametrize("between", ["shuffle-repeat", "filter"])
def test_stages_between_map_and_batch_checkpoint_exactly(between):
    def make():
        ds = tf.data.Dataset.from_tensor_slices(records(17)).map(seeded_tabular, seed=3)
        return BETWEEN[between](ds.map(lambda x, y: {"s": tf.reduce_sum(x), "y": y})).batch(3)

    check_checkpoints(make, stride=2)


def test_a_failing_element_under_a_filter_raises_as_per_element():
    bad = records(20)
    bad[9] = b"not an example"

    def make():
        return tf.data.Dataset.from_tensor_slices(bad).map(tabular).filter(lambda d: d["s"] > 2.0).batch(4)

    assert until_error(make()) == until_error(off(make()))


def test_map_shuffle_without_batch_stays_as_written():
    ds = tf.data.Dataset.from_tensor_slices(records(6)).map(tabular).shuffle(3, seed=1)
    list(ds)
    assert "vectorised" not in ds.explain().split("rewrites:")[1]


@pytest.mark.parametrize("crop", [True, False])
def test_map_shuffle_batch_decodes_images_of_several_sizes(crop):
    # Chunks of decoded images of several sizes: the elements go on one by one as the per-element map's
    # (cropped to one size, or kept at theirs: batch(1) takes them).
    data = image_records([(16, 14), (20, 12), (13, 30)] * 4)

    def fn(record, rng):
        image = tf.io.decode_jpeg(tf.io.parse_single_example(record, IMAGE)["image"], channels=3)
        if crop:
            image = tf.image.random_crop(image, [12, 10, 3], rng=rng)
        return tf.image.convert_image_dtype(tf.image.random_flip_left_right(image, rng=rng), tf.float32)

    def make():
        ds = tf.data.Dataset.from_tensor_slices(data).map(fn, seed=3).shuffle(5, seed=1)
        return ds.batch(4 if crop else 1)

    ds = make()
    got, _ = check_shuffled(ds, make())
    assert "one traced call per chunk of its input (io.parse_single_example, io.decode_jpeg" in ds.explain()
    assert len(got) == (3 if crop else 12)


def check_shuffled(ds, reference):
    got, expected = list(ds), list(off(reference))
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert_same(a, b)
    return got, expected


def test_ensure_shape_is_set_shape_and_fixes_a_decoded_size():
    # x.set_shape(s) is written tf.ensure_shape(x, s) here (numpy arrays have no set_shape): checked per
    # element, and in a vectorised map the sizes it names are known from there on.
    data = image_records([(10, 9)] * 6)

    def fn(record):
        image = tf.io.decode_jpeg(tf.io.parse_single_example(record, IMAGE)["image"], channels=3)
        image = tf.ensure_shape(image, [10, 9, 3])
        return tf.reshape(tf.cast(image, tf.float32), [-1])  # reshape needs the known size

    ds = tf.data.Dataset.from_tensor_slices(data).map(fn).batch(4)
    _, text = check(ds)
    assert "ensure_shape" in text
    # An element of another size fails as per element, with ensure_shape's error.
    other = image_records([(10, 9)] * 3 + [(11, 9)] + [(10, 9)] * 2)
    ds = tf.data.Dataset.from_tensor_slices(other).map(fn).batch(3)
    errors = []
    for variant in (ds, off(ds)):
        it = iter(variant)
        next(it)
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            next(it)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "EnsureShape" in errors[0]


@pytest.mark.parametrize("shuffle", [False, True])
def test_a_parallel_map_decodes_in_threads_with_the_per_element_values(shuffle):
    data = image_records([(16, 14)] * 40)

    def make():
        ds = tf.data.Dataset.from_tensor_slices(data).map(decode_augment, seed=5, num_parallel_calls=2)
        return (ds.shuffle(7, seed=1) if shuffle else ds).batch(20)

    ds = make()
    check_shuffled(ds, make())
    assert "io.decode_jpeg" in ds.explain()


@pytest.mark.parametrize("at", [8, 11])
def test_map_shuffle_batch_a_failure_after_a_vectorised_piece_keeps_the_piece(monkeypatch, at):
    # The shuffle's first fill asks for more inputs than one traced call takes: the pieces before a
    # failing element go on, the error comes at its place, as per element.
    monkeypatch.setattr(vectorize, "CHUNK", 8)
    bad = records(30)
    bad[at] = b"not an example"  # first of the second piece, or inside it

    def make():
        return tf.data.Dataset.from_tensor_slices(bad).map(tabular).shuffle(20, seed=2).batch(4)

    assert until_error(make()) == until_error(off(make()))


@pytest.mark.parametrize("executor", ["process", "thread"])
def test_explain_says_a_vectorised_parallel_map_runs_in_the_consumers_thread(executor):
    # It said "processes (executor='process' was given)" for a map that ran as one traced call.
    def make(between):
        ds = tf.data.Dataset.from_tensor_slices(np.arange(64, dtype=np.float32))
        ds = ds.map(lambda x: tf.cast(x, tf.int32) * 2, num_parallel_calls=2, executor=executor)
        return between(ds).batch(8)

    for between in (lambda ds: ds, lambda ds: ds.shuffle(4, seed=1)):
        ds = make(between)
        assert f"(executor={executor!r} was given)" in ds.explain().split("executors:")[1]
        assert sorted(int(x) for b in ds for x in b) == list(range(0, 128, 2))
        line = ds.explain().split("executors:")[1]
        assert "vectorised (one traced call per batch" in line and "was given" not in line


def test_two_maps_fused_into_one_stage_still_vectorise():
    # map(parse).map(augment).batch(n), the form tf.data teaches: the two maps fuse into one stage whose
    # function is a FusedFunction; the look at the code saw only the fused wrapper and kept the stage
    # per element ("refers to no headrace op").
    ds = (
        tf.data.Dataset.range(12)
        .map(lambda x: tf.cast(x, tf.float32) * tf.ones([3]))
        .map(lambda v: tf.nn.softmax(v - 1.0))
        .batch(4)
    )
    assert "fused into one stage" in ds.explain()
    check(ds)


# --- several batches at once (num_parallel_calls >= 4) ---------------------------------------------------
def test_lanes_rule():
    assert vectorize.lanes(1) == (1, 1)  # serial: one batch at a time
    assert vectorize.lanes(2) == (1, 2)  # one batch, decoding in two threads (faster on 2 cores)
    assert vectorize.lanes(4) == (2, 2)  # two batches at once, each decoding in two threads
    assert vectorize.lanes(16) == (vectorize.MAX_LANES, 16 // vectorize.MAX_LANES)


def windowed(ds):
    it = iter(ds)
    first = next(it)
    return it, first


@pytest.mark.parametrize("sizes", [[(16, 14)] * 23, [(16, 14), (20, 12), (13, 30)] * 7])
def test_batches_in_flight_give_the_per_element_values_and_draws(sizes):
    data = image_records(sizes)

    def make():
        return (
            tf.data.Dataset.from_tensor_slices(data)
            .map(decode_augment, seed=5, num_parallel_calls=4)
            .batch(4)
        )

    got, _ = check(make(), reference=make())
    it, _ = windowed(make())
    next(it)
    assert it._root.lanes == 2 and len(it._root.inflight) == 1  # two taken, the oldest handed out
    assert [b[1].tolist() for b in got][-1] == [
        len(sizes) - len(sizes) % 4 + i for i in range(len(sizes) % 4)
    ]


def test_batches_in_flight_checkpoint_exactly():
    data = image_records([(16, 14)] * 19)

    def make():
        return (
            tf.data.Dataset.from_tensor_slices(data)
            .map(decode_augment, seed=5, num_parallel_calls=4)
            .batch(3)
            .repeat(2)
        )

    check_checkpoints(make, stride=1)

    def once():
        return (
            tf.data.Dataset.from_tensor_slices(data)
            .map(decode_augment, seed=5, num_parallel_calls=4)
            .batch(3)
        )

    # Batches in flight keep their inputs owed to the map: a state saved meanwhile holds them, and
    # they keep computing.
    it, _ = windowed(once())
    next(it)
    window = it._root.inflight
    assert window and len(it._root.map_iterator.owed) == sum(len(lane.entries) for lane in window)
    state = it.get_state()
    assert it._root.inflight
    rest = list(it)
    again = iter(once())
    again.set_state(state)
    for a, b in zip(list(again), rest, strict=True):
        assert_same(a, b)


class FailsAt:
    """A map function that raises (or interrupts) at given values, once each when ``once``."""

    def __init__(self, bad, error=ValueError, once=False):
        self.bad, self.error, self.once = set(bad), error, once

    def __call__(self, x):
        if int(x) in self.bad:
            if self.once:
                self.bad.discard(int(x))
            raise self.error(f"bad {int(x)}")
        return x


def outcomes(it):
    out = []
    while True:
        try:
            out.append(next(it).tolist())
        except StopIteration:
            return out
        except (ValueError, KeyboardInterrupt) as exc:
            out.append(type(exc).__name__)


@pytest.mark.parametrize("drop", [False, True])
def test_an_input_error_behind_the_window_comes_at_its_place(drop):
    # The map's input raises at elements 13 and 30: the batches before each come out first (computed
    # vectorised), then the error, then the rest, as the per-element run gives them.
    def make():
        return (
            tf.data.Dataset.range(34)
            .map(FailsAt({13, 30}))
            .map(lambda x: tf.cast(x, tf.float32) * 2.0, num_parallel_calls=4)
            .batch(4, drop_remainder=drop)
        )

    got, expected = outcomes(iter(make())), outcomes(iter(off(make())))
    assert got == expected and "ValueError" in got


def test_an_interrupt_while_filling_the_window_loses_nothing():
    def make(fn):
        return (
            tf.data.Dataset.range(40)
            .map(fn)
            .map(lambda x: tf.cast(x, tf.float32) + 1.0, num_parallel_calls=4)
            .batch(4)
        )

    got = outcomes(iter(make(FailsAt({17}, KeyboardInterrupt, once=True))))
    assert "KeyboardInterrupt" in got
    values = [v for batch in got if batch != "KeyboardInterrupt" for v in batch]
    assert values == [float(x + 1) for x in range(40)]  # every element once, in order


def test_a_batch_the_traced_call_refuses_in_flight_runs_per_element():
    # decode_jpeg refuses a PNG inside a batch in flight: the per-element run raises its error (or
    # decodes it, as tf does); either way the values are the per-element run's.
    sizes = [(16, 14)] * 21
    data = image_records(sizes)
    data[14] = image_records([(16, 14)], encode="png")[0]

    def make():
        return (
            tf.data.Dataset.from_tensor_slices(data)
            .map(decode_augment, seed=5, num_parallel_calls=4)
            .batch(4)
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = list(make())
    expected = list(off(make()))
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert_same(a, b)


def test_close_leaves_no_batch_thread():
    import threading

    data = image_records([(16, 14)] * 40)
    ds = tf.data.Dataset.from_tensor_slices(data).map(decode_augment, seed=5, num_parallel_calls=4).batch(4)
    it, _ = windowed(ds)
    next(it)
    assert it._root.inflight
    it.close()
    assert not any(t.name == "headrace vectorised map" for t in threading.enumerate())


def test_restoring_an_iterator_with_batches_in_flight_drops_them():
    data = image_records([(16, 14)] * 30)

    def make():  # a fresh pipeline each: a seeded map's iterations draw anew
        return (
            tf.data.Dataset.from_tensor_slices(data)
            .map(decode_augment, seed=5, num_parallel_calls=4)
            .batch(3)
        )

    expected = list(off(make()))
    it, first = windowed(make())
    state = it.get_state()
    for _ in range(3):
        next(it)
    assert it._root.inflight  # a window of later batches is being computed
    it.set_state(state)  # back to after the first batch: the window's batches are stale
    got = [first, *it]
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert_same(a, b)
