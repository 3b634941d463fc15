"""tf.random on numpy: the same arguments, shapes, dtypes and refusals; draws from numpy streams.

Where draws come from:

- inside ``map(f, seed=S)``: the element's own stream (the ``rng`` the map would pass to ``f``), so
  results do not depend on parallelism or executor and every epoch draws anew; an op's ``seed`` is
  then ignored (the element's stream already fixes the values);
- elsewhere, with an op ``seed``: a stream for the pair (global seed, op seed) that continues from
  call to call, as TensorFlow's eager kernels do for a seeded op;
- elsewhere without one: one global stream, re-seeded by ``set_seed`` (draws from several threads
  of a parallel map interleave in whatever order they run).

The values are numpy's, not TensorFlow's Philox ones: a pipeline reproduces itself, not TF's numbers.
The ``stateless_*`` ops are functions of their seed here too, with numpy's values.
"""

from __future__ import annotations

import threading
import types
from typing import Any

import numpy as np

from ..core.element_random import ELEMENT_RNG
from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable
from ._tensor import (
    FLOATS,
    as_tensor,
    check_dtype,
    convert,
    dtype_arg,
    int_list,
    is_tensor,
    out,
)

_DEFAULT_GLOBAL_SEED = 87654321  # TensorFlow's graph seed when only an op seed is given
_lock = threading.Lock()
_global_seed: int | None = None
_global = np.random.default_rng()
_op_streams: dict[tuple, np.random.Generator] = {}

INT_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def set_seed(seed: int | None) -> None:
    """tf.random.set_seed: restart the global stream and every seeded op's stream."""
    global _global_seed, _global
    with _lock:
        _global_seed = None if seed is None else int(seed)
        _global = np.random.default_rng(_global_seed)
        _op_streams.clear()


def get_seed(op_seed: int | None) -> tuple[int | None, int | None]:
    """tf.random.get_seed: the (global, op) seed pair an op would use."""
    if _global_seed is None and op_seed is None:
        return None, None
    return (_DEFAULT_GLOBAL_SEED if _global_seed is None else _global_seed), (
        0 if op_seed is None else int(op_seed)
    )


class _Locked:
    """A generator used under the module lock (numpy generators are not thread-safe)."""

    def __init__(self, rng: np.random.Generator, lock: Any):
        self.rng, self.lock = rng, lock

    def __enter__(self) -> np.random.Generator:
        if self.lock is not None:
            self.lock.acquire()
        return self.rng

    def __exit__(self, *exc: Any) -> None:
        if self.lock is not None:
            self.lock.release()


def _stream(seed: Any) -> _Locked:
    element = ELEMENT_RNG.get()
    if element is not None:
        return _Locked(element, None)  # one element is computed by one thread
    if seed is None:
        return _Locked(_global, _lock)
    key = get_seed(int(seed))
    with _lock:
        rng = _op_streams.get(key)
        if rng is None:
            rng = _op_streams[key] = np.random.default_rng([int(k or 0) & (2**63 - 1) for k in key])
    return _Locked(rng, _lock)


def _shape(shape: Any) -> list[int]:
    dims = int_list(shape, "shape")
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(f"shape must hold non-negative sizes, got {dims}")
    return dims


def _param(value: Any, dtype: np.dtype, what: str) -> np.ndarray:
    return convert(value, dtype, what)


def _unit(rng: np.random.Generator, shape: list[int], dtype: np.dtype) -> np.ndarray:
    if dtype == np.float16:  # 10 random mantissa bits: [0, 1) exactly, as TensorFlow's half kernel
        return (rng.integers(0, 1 << 10, shape) / (1 << 10)).astype(np.float16)
    return rng.random(shape, dtype=np.float32 if dtype == np.float32 else np.float64).astype(dtype)


@traceable("random.uniform")
def uniform(
    shape: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = np.float32,
    seed: Any = None,
    name: str | None = None,
) -> Any:
    """Floats in [minval, maxval) (maxval 1 by default); ints in [minval, maxval), maxval required."""
    dtype = dtype_arg(dtype)
    check_dtype("RandomUniform", dtype, FLOATS + INT_DTYPES, "dtype")
    dims = _shape(shape)
    if dtype.kind in "iu":
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {dtype.name}")
        low, high = _param(minval, dtype, "minval"), _param(maxval, dtype, "maxval")
        if low.ndim or high.ndim:
            raise InvalidArgumentError("RandomUniformInt: minval and maxval must be scalars")
        if not low < high:
            raise InvalidArgumentError(f"RandomUniformInt: Need minval < maxval: {low} >= {high}")
        with _stream(seed) as rng:
            return out(rng.integers(int(low), int(high), dims, dtype=dtype))
    low = _param(minval, dtype, "minval")
    high = _param(1 if maxval is None else maxval, dtype, "maxval")
    with _stream(seed) as rng:
        unit = _unit(rng, dims, dtype)
    with np.errstate(all="ignore"):
        return out(np.asarray(unit * (high - low) + low, dtype=dtype))


@traceable("random.normal")
def normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = np.float32,
    seed: Any = None,
    name: str | None = None,
) -> Any:
    dtype = dtype_arg(dtype)
    check_dtype("RandomStandardNormal", dtype, FLOATS, "dtype")
    dims = _shape(shape)
    mu, sigma = _param(mean, dtype, "mean"), _param(stddev, dtype, "stddev")
    with _stream(seed) as rng:
        z = rng.standard_normal(dims)
    return out(np.asarray(z.astype(dtype) * sigma + mu, dtype=dtype))


def truncated_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = np.float32,
    seed: Any = None,
    name: str | None = None,
) -> Any:
    """Normal draws more than two standard deviations from the mean are drawn again."""
    dtype = dtype_arg(dtype)
    check_dtype("TruncatedNormal", dtype, FLOATS, "dtype")
    dims = _shape(shape)
    mu, sigma = _param(mean, dtype, "mean"), _param(stddev, dtype, "stddev")
    with _stream(seed) as rng:
        z = rng.standard_normal(dims)
        bad = np.abs(z) > 2
        while bad.any():
            z[bad] = rng.standard_normal(int(bad.sum()))
            bad = np.abs(z) > 2
    return out(np.asarray(z.astype(dtype) * sigma + mu, dtype=dtype))


def shuffle(value: Any, seed: Any = None, name: str | None = None) -> Any:
    """A random permutation along the first dimension."""
    array = as_tensor(value) if is_tensor(value) else convert(value)
    if array.ndim == 0:
        return out(array)
    with _stream(seed) as rng:
        order = rng.permutation(len(array))
    return array[order]


def gamma(
    shape: Any,
    alpha: Any,
    beta: Any = None,
    dtype: Any = np.float32,
    seed: Any = None,
    name: str | None = None,
) -> Any:
    """Gamma(alpha, rate=beta) draws of shape ``shape + broadcast(alpha, beta).shape``."""
    dtype = dtype_arg(dtype)
    check_dtype("RandomGamma", dtype, FLOATS, "dtype")
    dims = _shape(shape)
    a = _param(alpha, dtype, "alpha")
    b = _param(1 if beta is None else beta, dtype, "beta")
    params = np.broadcast_shapes(a.shape, b.shape)
    with _stream(seed) as rng:
        draws = rng.standard_gamma(np.broadcast_to(a, params).astype(np.float64), size=[*dims, *params])
    with np.errstate(all="ignore"):
        return out(np.asarray(draws / b.astype(np.float64), dtype=dtype))


def poisson(shape: Any, lam: Any, dtype: Any = np.float32, seed: Any = None, name: str | None = None) -> Any:
    dtype = dtype_arg(dtype)
    check_dtype("RandomPoisson", dtype, FLOATS + INT_DTYPES, "dtype")
    dims = _shape(shape)
    rate = as_tensor(lam) if is_tensor(lam) else convert(lam, np.float32)
    with _stream(seed) as rng:
        draws = rng.poisson(rate.astype(np.float64), size=[*dims, *rate.shape])
    return out(draws.astype(dtype))


def categorical(
    logits: Any, num_samples: Any, dtype: Any = None, seed: Any = None, name: str | None = None
) -> Any:
    """Class indices drawn from each row of ``logits`` ([batch, classes]) as [batch, num_samples]."""
    rows = as_tensor(logits) if is_tensor(logits) else convert(logits)
    check_dtype("Multinomial", rows.dtype, FLOATS + (np.dtype(np.int32), np.dtype(np.int64)), "T")
    target = np.dtype(np.int64) if dtype is None else dtype_arg(dtype)
    check_dtype("Multinomial", target, INT_DTYPES, "output_dtype")
    if rows.ndim != 2:
        raise InvalidArgumentError(f"Multinomial: logits should be a matrix, got shape {list(rows.shape)}")
    n = int(num_samples)
    if rows.shape[1] == 0 and n:
        raise InvalidArgumentError("Multinomial: num_classes should be positive")
    with np.errstate(all="ignore"):
        weights = rows.astype(np.float64)
        weights = np.exp(weights - np.max(weights, axis=1, keepdims=True))
        cumulative = np.cumsum(weights, axis=1)
    with _stream(seed) as rng:
        u = rng.random((rows.shape[0], n)) * cumulative[:, -1:]
    picks = (
        np.stack([np.searchsorted(c, row, side="right") for c, row in zip(cumulative, u)])
        if len(rows)
        else np.zeros((0, n))
    )
    return np.minimum(picks, rows.shape[1] - 1).astype(target)


# ---- stateless ops: functions of their seed ---------------------------------------------------------


def _stateless(seed: Any) -> np.random.Generator:
    key = as_tensor(seed) if is_tensor(seed) else np.asarray(seed)
    if key.shape != (2,) or key.dtype.kind not in "iu":
        raise InvalidArgumentError(f"seed must be a shape [2] integer tensor, got {seed!r}")
    return np.random.Generator(np.random.Philox(key=[int(k) & (2**64 - 1) for k in key.tolist()]))


def _seeded(seed: Any, draw: Any, *args: Any) -> Any:
    """``draw(*args)`` with the stream of a stateless op's ``seed`` in place of the element's."""
    token = ELEMENT_RNG.set(_stateless(seed))
    try:
        return draw(*args)
    finally:
        ELEMENT_RNG.reset(token)


def stateless_uniform(
    shape: Any,
    seed: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = np.float32,
    name: str | None = None,
    alg: Any = "auto_select",
) -> Any:
    return _seeded(seed, uniform, shape, minval, maxval, dtype_arg(dtype))


def stateless_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = np.float32,
    name: str | None = None,
    alg: Any = "auto_select",
) -> Any:
    return _seeded(seed, normal, shape, mean, stddev, dtype)


def stateless_truncated_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = np.float32,
    name: str | None = None,
    alg: Any = "auto_select",
) -> Any:
    return _seeded(seed, truncated_normal, shape, mean, stddev, dtype)


def stateless_categorical(
    logits: Any, num_samples: Any, seed: Any, dtype: Any = np.int64, name: str | None = None
) -> Any:
    return _seeded(seed, categorical, logits, num_samples, dtype)


def split(seed: Any, num: int = 2, alg: Any = "auto_select") -> Any:
    """tf.random.split: ``num`` new stateless seeds (an int64 ``[num, 2]`` array) from one; a function of
    the seed, as in TF, but not TF's numbers (headrace's streams are not TF's Philox)."""
    seed_dtype = (as_tensor(seed) if is_tensor(seed) else np.asarray(seed)).dtype
    draws = _stateless(seed).integers(-(2**63), 2**63, size=(int(num), 2), dtype=np.int64)
    return draws.astype(seed_dtype if seed_dtype.kind in "iu" else np.int64)


def fold_in(seed: Any, data: Any, alg: Any = "auto_select") -> Any:
    """tf.random.fold_in: a new stateless seed (int32, as TF gives) from ``seed`` and an integer ``data``."""
    _stateless(seed)  # validates the seed's shape and dtype
    key = as_tensor(seed) if is_tensor(seed) else np.asarray(seed)
    words = [int(k) & (2**64 - 1) for k in key.tolist()]
    mixed = np.random.Generator(np.random.Philox(key=words, counter=int(data) & (2**64 - 1)))
    return mixed.integers(-(2**31), 2**31, size=2, dtype=np.int32)


#: tf.random.experimental (``stateless_split``, ``stateless_fold_in``)
experimental = types.SimpleNamespace(stateless_split=split, stateless_fold_in=fold_in)
