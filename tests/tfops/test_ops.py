"""headrace's tf ops beyond the recorded fixtures: random streams in maps, control flow, TensorArray,
py_function, nest, errors, gfile, and `import headrace as tf` as a port uses it."""

from __future__ import annotations

import os
import pickle
import threading

import numpy as np
import pytest

import headrace as tf

D = tf.data.Dataset


# ---- names ------------------------------------------------------------------------------------------


def test_tf_names_reach_from_the_top_and_existing_names_stay():
    assert tf.int64 == np.int64 and tf.io.TFRecordWriter is not None and tf.image.resize is not None
    assert tf.cast(np.int64(3), tf.float32) == np.float32(3.0)
    assert tf.math.reduce_std is tf.math.reduce_std and tf.strings.lower(b"A") == b"a"
    assert tf.io.gfile.exists(os.getcwd()) and tf.gfile.Exists(os.getcwd())
    assert "cast" in dir(tf) and "strings" in dir(tf)
    with pytest.raises(AttributeError, match="no attribute 'not_a_tf_name'"):
        tf.not_a_tf_name  # noqa: B018


def test_tensor_isinstance_accepts_numpy_values():
    assert isinstance(np.zeros(2), tf.Tensor) and isinstance(np.float32(1), tf.Tensor)
    assert not isinstance([1.0], tf.Tensor) and not isinstance(1.0, tf.Tensor)
    with pytest.raises(TypeError):
        tf.Tensor()


def test_tensorspec_shape_has_rank_and_compatibility():
    spec = tf.TensorSpec([None, 3], tf.float32)
    assert spec.shape.rank == 2 and spec.shape.as_list() == [None, 3] and spec.shape == (None, 3)
    assert spec.shape.is_compatible_with([7, 3]) and not spec.shape.is_compatible_with([7, 4])
    assert D.range(4).batch(2).element_spec.shape.rank == 1
    assert pickle.loads(pickle.dumps(spec)) == spec


# ---- dtype rules ------------------------------------------------------------------------------------


def test_binary_ops_refuse_mixed_dtypes_without_promotion():
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a int32 tensor but is a float"):
        tf.add(np.int32(1), np.float32(1))
    with pytest.raises(TypeError):
        tf.maximum(np.array([1], np.int32), 2.5)  # TF: TypeError, or InvalidArgumentError for tf.add
    assert tf.add(np.array([1], np.int8), 300).tolist() == [45]  # a Python int wraps into the tensor's dtype
    assert tf.multiply(2, np.float32(1.5)) == np.float32(3.0)  # a Python value takes the tensor's dtype


def test_python_values_convert_as_tensorflow():
    assert tf.constant(1).dtype == np.int32 and tf.constant(2**40).dtype == np.int64
    assert tf.constant([1, 2.5]).dtype == np.float32 and tf.constant(b"a") == b"a"
    with pytest.raises(TypeError, match="Cannot convert 1.5 to EagerTensor of dtype int32"):
        tf.constant(1.5, tf.int32)
    with pytest.raises(ValueError):
        tf.constant(2**70)


def test_array_likes_convert_with_their_numpy_dtype():
    # tensorflow/docs load_data/pandas_dataframe: tf.convert_to_tensor(numeric_features) of a DataFrame of
    # int64 and float64 columns is float64 there (np.asarray(df)), not float32 as Python floats would be
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"age": [63, 67], "oldpeak": [2.3, 1.5]})
    tensor = tf.convert_to_tensor(df)
    assert tensor.dtype == np.float64 and tensor.tolist() == [[63.0, 2.3], [67.0, 1.5]]
    assert tf.convert_to_tensor(df["age"]).dtype == np.int64
    names = tf.convert_to_tensor(pd.Series(["fixed", "normal"]))  # object columns: strings, as TF
    assert names.dtype == object and names.tolist() == [b"fixed", b"normal"]


def test_integer_division_by_zero_and_negative_powers_are_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        tf.math.floordiv(np.int32(1), np.int32(0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
        tf.pow(np.int32(2), np.int32(-1))
    assert tf.divide(np.int32(3), np.int32(2)).dtype == np.float64  # int32 truediv gives float64


def test_cast_strings_is_unimplemented():
    with pytest.raises(tf.errors.UnimplementedError):
        tf.cast(np.array([b"1"], dtype=object), tf.int32)


# ---- random -----------------------------------------------------------------------------------------


def _draws(ds) -> list[float]:
    return [float(x) for x in ds]


def test_random_in_a_seeded_map_uses_the_element_stream():
    def f(x):
        return tf.random.uniform([])

    serial = _draws(D.range(8).map(f, seed=5))
    threads = _draws(D.range(8).map(f, seed=5, num_parallel_calls=4, executor="thread"))
    assert serial == threads and len(set(serial)) == 8
    assert serial != _draws(D.range(8).map(f, seed=6))
    # the stream is the one `rng` would give: the same values a function taking rng draws
    via_rng = _draws(D.range(8).map(lambda x, rng: rng.random(dtype=np.float32), seed=5))
    assert serial == via_rng


def test_random_ops_in_one_element_draw_in_sequence_and_epochs_differ():
    ds = D.range(2).map(lambda x: tf.stack([tf.random.uniform([]), tf.random.uniform([])]), seed=1).repeat(2)
    values = [tuple(v.tolist()) for v in ds]
    assert all(a != b for a, b in values) and values[:2] != values[2:]


def test_random_outside_maps_follows_set_seed_and_op_seeds():
    tf.random.set_seed(3)
    first = [tf.random.uniform([2]).tolist(), tf.random.normal([2]).tolist()]
    seeded = [tf.random.uniform([], seed=7) for _ in range(2)]
    tf.random.set_seed(3)
    assert [tf.random.uniform([2]).tolist(), tf.random.normal([2]).tolist()] == first
    assert [tf.random.uniform([], seed=7) for _ in range(2)] == seeded and seeded[0] != seeded[1]


def test_random_ranges_and_refusals():
    tf.random.set_seed(0)
    ints = tf.random.uniform([1000], 3, 7, dtype=tf.int64)
    assert ints.dtype == np.int64 and ints.min() == 3 and ints.max() == 6
    floats = tf.random.uniform([1000], -2.0, 2.0)
    assert floats.dtype == np.float32 and -2 <= floats.min() and floats.max() < 2
    with pytest.raises(ValueError, match="Must specify maxval"):
        tf.random.uniform([2], dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="minval < maxval"):
        tf.random.uniform([2], 5, 5, dtype=tf.int32)
    shuffled = tf.random.shuffle(np.arange(10))
    assert sorted(shuffled.tolist()) == list(range(10))
    assert tf.random.gamma([4], np.array([1.0, 2.0], np.float32)).shape == (4, 2)
    assert np.abs(tf.random.truncated_normal([1000])).max() <= 2


def test_stateless_random_is_a_function_of_its_seed():
    a = tf.random.stateless_uniform([3], seed=[1, 2])
    assert a.tolist() == tf.random.stateless_uniform([3], seed=[1, 2]).tolist()
    assert a.tolist() != tf.random.stateless_uniform([3], seed=[1, 3]).tolist()


def test_global_random_is_safe_from_threads():
    out: list = []

    def draw():
        out.extend(tf.random.uniform([100]).tolist())

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 400 and all(0 <= v < 1 for v in out)


# ---- control flow -----------------------------------------------------------------------------------


def test_cond_case_switch_case():
    assert tf.cond(np.bool_(True), lambda: 1, lambda: 2) == 1
    with pytest.raises(TypeError, match="true_fn must be callable"):
        tf.cond(True, 1, lambda: 2)
    x = np.int32(3)
    assert (
        tf.case(
            [(tf.less(x, 2), lambda: b"small"), (tf.less(x, 5), lambda: b"medium")], default=lambda: b"big"
        )
        == b"medium"
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match="exclusive"):
        tf.case([(True, lambda: 1), (True, lambda: 2)], exclusive=True)
    assert tf.switch_case(np.int32(1), [lambda: 10, lambda: 20]) == 20
    assert tf.switch_case(np.int32(7), [lambda: 10, lambda: 20]) == 20  # out of range: the last branch


def test_while_loop_keeps_structure_and_limits_iterations():
    i, total = tf.while_loop(lambda i, t: i < 5, lambda i, t: (i + 1, t + i), (np.int32(0), np.int32(0)))
    assert (int(i), int(total)) == (5, 10)
    assert tf.while_loop(lambda i: i < 10, lambda i: i + 1, [0]) == [10]
    assert tf.while_loop(lambda i: True, lambda i: i + 1, [0], maximum_iterations=3) == [3]
    with pytest.raises(ValueError, match="structure"):
        tf.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1,), (0, 0))


def test_map_fn_structures_signatures_and_empty_input():
    assert tf.map_fn(lambda v: v * 2, np.array([1, 2, 3])).tolist() == [2, 4, 6]
    a, b = tf.map_fn(
        lambda t: (t[0] + t[1], t[0] * 1.0),
        (np.array([1, 2]), np.array([3, 4])),
        fn_output_signature=(tf.int64, tf.float64),
    )
    assert a.tolist() == [4, 6] and b.dtype == np.float64
    empty = tf.map_fn(
        lambda v: v, np.zeros((0, 3), np.float32), fn_output_signature=tf.TensorSpec([3], tf.int32)
    )
    assert empty.shape == (0, 3) and empty.dtype == np.int32
    with pytest.raises(tf.errors.InvalidArgumentError, match="fn_output_signature"):
        tf.map_fn(lambda v: np.float32(v), np.array([1, 2]), fn_output_signature=tf.int64)


def test_function_decorator_and_name_scope():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.int64)], jit_compile=False)
    def double(x):
        return x * 2

    @tf.function
    def triple(x):
        return x * 3

    assert double(np.array([1])).tolist() == [2] and triple(2) == 6
    with tf.name_scope("pre") as scope:
        assert scope == "pre/"


def test_py_function_gives_numpy_method_and_converts_outputs():
    def f(x, s):
        assert x.numpy().tolist() == [1, 2] and s.numpy() == b"a"
        return x.numpy() * 1.5

    out = tf.py_function(f, [np.array([1, 2]), b"a"], tf.float32)
    assert out.dtype == np.float32 and out.tolist() == [1.5, 3.0]
    pair = tf.py_function(lambda x: (x, 2), [np.int64(1)], [tf.int64, tf.int32])
    assert isinstance(pair, list) and pair[1].dtype == np.int32


def test_py_function_as_a_decorator_and_with_no_outputs():
    # tensorflow/docs guide/data: @tf.py_function(Tout=tf.float32); guide/data_performance:
    # tf.py_function(lambda: time.sleep(0.03), [], ()) inside a map gives [] (TF: the same)
    @tf.py_function(Tout=tf.string)
    def serialize(x, s):
        return s.numpy() + str(int(x.numpy())).encode()

    assert serialize(np.int64(4), b"n") == b"n4" and serialize.__name__ == "serialize"
    assert tf.py_function(lambda: None, [], ()) == [] and tf.py_function(lambda: None, [], []) == []
    ds = D.range(3).map(lambda s: (tf.py_function(lambda: None, [], ()), s)[1])
    assert [int(v) for v in ds] == [0, 1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="returned 1 values but Tout lists 0"):
        tf.py_function(lambda: 5, [], ())
    with pytest.raises(tf.errors.InvalidArgumentError, match="returned 0 values but Tout lists 1"):
        tf.py_function(lambda: None, [], [tf.int32])


def test_numpy_function_requires_exact_dtypes():
    assert tf.numpy_function(lambda x: x + 1, [np.int64(1)], tf.int64) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="is double, but expects float"):
        tf.numpy_function(lambda x: 1.5, [np.int64(1)], tf.float32)


def test_a_ported_map_function_runs_in_a_pipeline():
    def parse(x):
        x = tf.cast(x, tf.float32)
        label = tf.one_hot(tf.cast(x, tf.int32) % 3, 3)
        return tf.clip_by_value(x / 4.0, 0.0, 1.0), label

    ds = D.range(6).map(parse, num_parallel_calls=tf.data.AUTOTUNE).batch(3)
    features, labels = next(iter(ds))
    assert features.dtype == np.float32 and features.tolist() == [0.0, 0.25, 0.5]
    assert labels.shape == (3, 3) and labels[2].tolist() == [0.0, 0.0, 1.0]


# ---- TensorArray ------------------------------------------------------------------------------------


def test_tensor_array_write_read_stack_and_refusals():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    for i in range(3):
        ta = ta.write(i, np.float32(i) * 2)
    assert ta.stack().tolist() == [0.0, 2.0, 4.0] and ta.size() == 3 and ta.read(1) == 2.0
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="dtype is float but Op is trying to write dtype int32"
    ):
        ta.write(0, np.int32(1))
    fixed = tf.TensorArray(tf.int32, size=2, element_shape=[2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="not resizeable"):
        fixed.write(2, [1, 2])
    assert fixed.stack().tolist() == [[0, 0], [0, 0]]  # unwritten elements read as zeros
    assert tf.TensorArray(tf.int64, size=3).unstack(np.arange(3)).gather([2, 0]).tolist() == [2, 0]


# ---- nest and errors --------------------------------------------------------------------------------


def test_nest_flatten_pack_and_map():
    structure = {"b": [1, (2, 3)], "a": None}
    assert tf.nest.flatten(structure) == [None, 1, 2, 3]
    packed = tf.nest.pack_sequence_as(structure, [0, 10, 20, 30])
    assert packed == {"b": [10, (20, 30)], "a": 0} and list(packed) == ["b", "a"]
    assert tf.nest.map_structure(lambda x, y: x + y, [1, (2,)], [10, (20,)]) == [11, (22,)]
    with pytest.raises(TypeError):
        tf.nest.assert_same_structure([1], (1,))
    with pytest.raises(ValueError):
        tf.nest.assert_same_structure([1, 2], [1])
    with pytest.raises(ValueError, match="Structure had 2 atoms"):
        tf.nest.pack_sequence_as([0, 0], [1, 2, 3])


def test_errors_are_tensorflow_shaped_and_headrace_catches_them():
    assert issubclass(tf.errors.InvalidArgumentError, tf.errors.OpError)
    assert tf.errors.InvalidArgumentError is tf.InvalidArgumentError
    assert issubclass(tf.errors.DataLossError, tf.errors.OpError)
    error = tf.errors.NotFoundError(None, None, "no such file")
    assert error.message == "no such file" and error.error_code == tf.errors.NOT_FOUND
    assert isinstance(error, FileNotFoundError)
    with pytest.raises(tf.errors.InvalidArgumentError):
        D.range(3).batch(0)  # headrace's own argument errors are tf's InvalidArgumentError


# ---- gfile, distribute ------------------------------------------------------------------------------


def test_gfile_reads_writes_globs_and_raises_not_found(tmp_path):
    path = str(tmp_path / "a" / "x.txt")
    tf.io.gfile.makedirs(str(tmp_path / "a"))
    with tf.io.gfile.GFile(path, "w") as f:
        f.write("hello\nworld\n")
    with tf.io.gfile.GFile(path) as f:
        assert f.read() == "hello\nworld\n"
    with tf.io.gfile.GFile(path, "rb") as f:
        assert f.readline() == b"hello\n"
    assert tf.io.gfile.glob(str(tmp_path / "a" / "*.txt")) == [path]
    assert tf.io.gfile.listdir(str(tmp_path / "a")) == ["x.txt"] and tf.io.gfile.isdir(str(tmp_path))
    assert tf.io.gfile.stat(path).length == 12
    tf.io.gfile.copy(path, path + ".bak")
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.io.gfile.copy(path, path + ".bak")
    tf.io.gfile.rename(path + ".bak", path + ".moved")
    assert sorted(tf.io.gfile.listdir(str(tmp_path / "a"))) == ["x.txt", "x.txt.moved"]
    with pytest.raises(tf.errors.NotFoundError):
        tf.io.gfile.GFile(str(tmp_path / "missing")).read()
    assert [(os.path.basename(d), files) for d, _, files in tf.io.gfile.walk(str(tmp_path / "a"))] == [
        ("a", ["x.txt", "x.txt.moved"])
    ]
    tf.io.gfile.rmtree(str(tmp_path / "a"))
    assert not tf.io.gfile.exists(path)


def test_input_context():
    ctx = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=4)
    assert ctx.get_per_replica_batch_size(64) == 16
    with pytest.raises(ValueError, match="not divisible"):
        ctx.get_per_replica_batch_size(10)
    assert [int(x) for x in D.range(6).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)] == [1, 3, 5]


# ---- strings, sparse, ragged, audio -----------------------------------------------------------------


def test_string_splits_give_ragged_rows_for_vectors():
    rows = tf.strings.split(np.array([b"a b", b"c"], dtype=object))
    assert isinstance(rows, tf.RaggedTensor) and rows.to_list() == [[b"a", b"b"], [b"c"]]
    assert tf.strings.split(b"a b").tolist() == [b"a", b"b"]
    chars = tf.strings.unicode_split(np.array([b"h\xc3\xa9"], dtype=object), "UTF-8")
    assert chars.to_list() == [[b"h", b"\xc3\xa9"]]


def test_sparse_and_ragged_constructors():
    sp = tf.SparseTensor(indices=[[0, 1], [2, 0]], values=np.array([5, 6]), dense_shape=[3, 2])
    assert tf.sparse.to_dense(sp).tolist() == [[0, 5], [0, 0], [6, 0]]
    unsorted = tf.SparseTensor(indices=[[2, 0], [0, 1]], values=np.array([6, 5]), dense_shape=[3, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="lexicographic"):
        tf.sparse.to_dense(unsorted)
    assert tf.sparse.to_dense(tf.sparse.reorder(unsorted)).tolist() == [[0, 5], [0, 0], [6, 0]]
    assert tf.cast(sp, tf.float32).values.dtype == np.float32
    ragged = tf.RaggedTensor.from_row_lengths(np.arange(3), [2, 0, 1])
    assert ragged.to_list() == [[0, 1], [], [2]]
    assert tf.RaggedTensor.from_value_rowids(np.arange(3), [0, 0, 2]).to_list() == [[0, 1], [], [2]]
    assert tf.ragged.constant([[1, 2], [3]]).to_list() == [[1, 2], [3]]


def test_sparse_to_dense_takes_what_a_var_len_feature_parses_to():
    # TF densifies a VarLenFeature's SparseTensor; headrace parses it to that dense result already (a 1-D
    # array per example, Ragged rows per batch), so the source's tf.sparse.to_dense call stays
    serialized = tf.io.serialize_example({"ids": np.array([4, 5, 6])})
    features = {"ids": tf.io.VarLenFeature(tf.int64), "none": tf.io.VarLenFeature(tf.string)}
    one = tf.io.parse_single_example(serialized, features)
    ids = tf.sparse.to_dense(one["ids"])
    assert ids.tolist() == [4, 5, 6] and ids.dtype == np.int64
    assert tf.sparse.to_dense(one["none"], default_value="").shape == (0,)
    batch = tf.io.parse_example(np.array([serialized, tf.io.serialize_example({"x": [1]})], object), features)
    assert tf.sparse.to_dense(batch["ids"], default_value=-1).tolist() == [[4, 5, 6], [-1, -1, -1]]
    assert tf.sparse.to_dense(batch["ids"]).tolist() == [[4, 5, 6], [0, 0, 0]]
    with pytest.raises(TypeError, match="SparseTensor"):  # other dense values: refused, as in TF
        tf.sparse.to_dense(np.zeros((2, 2)))


def test_wav_round_trip():
    audio = np.array([[0.0, 0.5], [-0.5, 0.25]], np.float32)
    decoded, rate = tf.audio.decode_wav(tf.audio.encode_wav(audio, 16000))
    assert rate == 16000 and decoded.dtype == np.float32 and np.allclose(decoded, audio, atol=1e-4)
    mono, _ = tf.audio.decode_wav(tf.audio.encode_wav(audio, 8000), desired_channels=1, desired_samples=3)
    assert mono.shape == (3, 1) and mono[2, 0] == 0.0


# ---- names from the public-code scan (docs/porting.md) beyond the recorded fixtures -------------------


def test_folds_and_scan_run_in_order_over_slices():
    elems = np.array([1, 2, 3])
    assert tf.foldl(lambda acc, x: acc * 10 + x, elems) == 123
    assert tf.foldr(lambda acc, x: acc * 10 + x, elems) == 321
    assert tf.foldl(lambda acc, x: acc + x, elems, initializer=np.int64(100)) == 106
    np.testing.assert_array_equal(tf.scan(lambda acc, x: acc + x, elems), [1, 3, 6])
    np.testing.assert_array_equal(tf.scan(lambda acc, x: acc + x, elems, reverse=True), [6, 5, 3])
    a, b = tf.scan(lambda acc, x: (acc[0] + x, acc[1] * x), elems, initializer=(np.int64(0), np.int64(1)))
    np.testing.assert_array_equal(a, [1, 3, 6])
    np.testing.assert_array_equal(b, [1, 2, 6])
    with pytest.raises(ValueError, match="must not be empty"):
        tf.foldl(lambda acc, x: acc, np.zeros(0))


def test_a_list_holding_tensors_packs_into_an_int_argument_as_tf_packs_it():
    # keras-io's RetinaNet: tf.tile(dims, [tf.math.ceil(h / 2**i), tf.math.ceil(w / 2**i), 1, 1]), float64
    # tensors in the multiples list; TF packs the list, then casts it to int32 (the ops fixtures hold TF's
    # values and errors for these cases)
    dims = np.zeros((1, 1, 9, 2), np.float32)
    h, w = np.int32(896), np.int32(1152)
    assert tf.tile(dims, [tf.math.ceil(h / 2**3), tf.math.ceil(w / 2**3), 1, 1]).shape == (112, 144, 9, 2)
    assert tf.reshape(np.arange(6), [np.float32(2.9), -1]).shape == (2, 3)  # the cast truncates
    with pytest.raises(tf.errors.InvalidArgumentError, match="Pack as input #1"):  # one dtype per Pack
        tf.tile(dims, [np.float32(1), np.True_, 1, 1])
    for refused in (np.ones(4), [2.0, 1, 1, 1], [np.int32(1), 1.5, 1, 1]):  # floats alone: refused
        with pytest.raises(tf.errors.InvalidArgumentError, match="multiples must be integers"):
            tf.tile(dims, refused)


def test_small_top_level_names_behave_as_in_eager_tf():
    x = np.arange(6).reshape(2, 3)
    assert x[:, tf.newaxis].shape == (2, 1, 3)
    assert tf.is_tensor(x) and tf.is_tensor(np.float32(1)) and not tf.is_tensor([1])
    assert tf.is_tensor(tf.ragged.constant([[1], [2, 3]]))
    np.testing.assert_array_equal(tf.get_static_value(x), x)
    first, second = tf.identity_n([x, np.int32(1)])
    assert np.array_equal(first, x) and second == 1
    with tf.init_scope():
        pass
    assert tf.autograph.experimental.set_loop_options(maximum_iterations=2) is None
    assert tf.autograph.experimental.do_not_convert(len) is len
    assert tf.autograph.to_graph(len) is len
    seeds = tf.random.split(np.array([1, 2], np.int64), 3)
    assert seeds.shape == (3, 2) and seeds.dtype == np.int64
    np.testing.assert_array_equal(
        seeds, tf.random.split(np.array([1, 2], np.int64), 3)
    )  # a function of the seed
    assert not np.array_equal(tf.random.fold_in(np.array([1, 2]), 1), tf.random.fold_in(np.array([1, 2]), 2))
    assert tf.random.experimental.stateless_split is tf.random.split


def test_compat_strings_and_the_tf1_namespace():
    assert tf.compat.as_bytes("é") == "é".encode() and tf.compat.as_text(b"ab") == "ab"
    assert tf.compat.as_str_any(3) == "3" and tf.compat.dimension_value(None) is None
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_bytes(3)
    import headrace.compat.v1 as v1

    assert tf.compat.v1 is v1 and tf.compat.v2 is tf
    # TF1's names, then headrace's (tf.data ...), then TF1's top-level math
    assert v1.FixedLenFeature is tf.io.FixedLenFeature and v1.data is tf.data and v1.log is tf.math.log
    record = tf.io.serialize_example({"raw": [b"\x01\x02\x03\x04"], "n": [7]})
    spec = {"raw": v1.FixedLenFeature([], v1.string), "n": v1.FixedLenFeature([], v1.int64)}
    parsed = v1.parse_single_example(record, spec)
    np.testing.assert_array_equal(v1.decode_raw(parsed["raw"], v1.uint8), [1, 2, 3, 4])
    np.testing.assert_array_equal(v1.decode_raw(bytes=parsed["raw"], out_type=v1.uint16), [513, 1027])
    assert v1.to_float(parsed["n"]).dtype == np.float32
    assert v1.py_func(lambda n: n * 2, [parsed["n"]], v1.int64) == 14
    with pytest.raises(AttributeError, match="headrace.compat.v1"):
        v1.placeholder  # noqa: B018
    # TF 1.13-1.15's tf.contrib.data.X: deprecated aliases of tf.data.experimental.X
    assert v1.contrib.data.parallel_interleave is tf.data.experimental.parallel_interleave
    assert v1.contrib.data.map_and_batch is tf.data.experimental.map_and_batch
    with pytest.raises(AttributeError, match="only tf.contrib.data"):
        v1.contrib.lookup  # noqa: B018


def test_ported_tf1_map_function_runs_in_a_pipeline():
    import headrace.compat.v1 as tf1

    def parser(serialized):  # tensorflow/tpu style: `import tensorflow.compat.v1 as tf`
        features = tf1.parse_single_example(
            serialized,
            features={
                "image": tf1.FixedLenFeature([], tf1.string),
                "label": tf1.FixedLenFeature([], tf1.int64),
            },
        )
        image = tf1.cast(tf1.decode_raw(features["image"], tf1.uint8), tf1.float32) * (2.0 / 255) - 1.0
        return image, tf1.to_int32(features["label"])

    records = [tf.io.serialize_example({"image": [bytes([0, 255, i])], "label": [i]}) for i in range(3)]
    out = list(tf1.data.Dataset.from_tensor_slices(np.array(records, dtype=object)).map(parser))
    np.testing.assert_allclose(out[2][0], [-1.0, 1.0, 2 * 2 / 255 - 1], rtol=1e-6)
    assert out[2][1] == 2 and out[2][1].dtype == np.int32


def test_regex_ops_read_re2_posix_classes_as_re2_does():
    # t5's squad preprocessor pads punctuation with r"([[:punct:]])"; Python's re reads that as the set
    # "[:punct" followed by "]" and silently matches nothing (values checked against TF in the fixtures)
    assert tf.strings.regex_replace(b"a,b (c)", r"([[:punct:]])", r" \1 ") == b"a , b  ( c ) "
    assert tf.strings.regex_replace(b"a]b^", r"[]^]", "_") == b"a_b_"
    assert tf.strings.regex_replace(b"x1 y2", r"[^[:alpha:][:space:]]", "#") == b"x# y#"
    assert tf.strings.regex_full_match(b"ab", r"ab\z") and not tf.strings.regex_full_match(b"ab\n", r"ab\z")
    with pytest.raises(tf.errors.InvalidArgumentError, match="unsupported character class"):
        tf.strings.regex_replace(b"a", r"[[:nope:]]", "")
