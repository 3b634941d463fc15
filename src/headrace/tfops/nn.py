"""tf.nn, the activations and normalisations input functions use (``tf.nn.l2_normalize`` of an
embedding, ``tf.nn.softmax`` of label weights, ``tf.nn.relu`` in a hand-written feature transform).

Same arguments, defaults and dtype rules as TensorFlow: one dtype per op (floats only where TF takes
only floats), results in the input's dtype. Convolutions and pooling are not here: they belong to the
model (docs/porting.md lists what is missing).

>>> import headrace as tf
>>> tf.nn.relu(tf.constant([-1.0, 2.0])), tf.nn.softmax(tf.constant([0.0, 0.0]))
(array([0., 2.], dtype=float32), array([0.5, 0.5], dtype=float32))
>>> tf.nn.l2_normalize(tf.constant([3.0, 4.0]))
array([0.6, 0.8], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable
from ._tensor import FLOATS, REAL, match, out
from .math import (  # TensorFlow keeps these in tf.math too
    _axes,
    _unary,
    l2_normalize,
    log_softmax,
    sigmoid,
    softmax,
    softplus,
    softsign,
    tanh,
)

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@traceable("nn.relu")
def relu(features: Any, name: str | None = None) -> Any:
    return _unary("Relu", REAL, lambda a: np.maximum(a, a.dtype.type(0)), features)


@traceable("nn.relu6")
def relu6(features: Any, name: str | None = None) -> Any:
    return _unary("Relu6", REAL, lambda a: np.clip(a, a.dtype.type(0), a.dtype.type(6)), features)


@traceable("nn.leaky_relu")
def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Any:
    (a,) = match("LeakyRelu", [features], REAL)
    if a.dtype.kind in "iu":  # TensorFlow casts integer features to float32 first
        a = a.astype(np.float32)
    slope = a.dtype.type(alpha)
    return _unary("LeakyRelu", FLOATS, lambda v: np.where(v > 0, v, v * slope), a)


@traceable("nn.elu")
def elu(features: Any, name: str | None = None) -> Any:
    return _unary("Elu", FLOATS, lambda a: np.where(a > 0, a, np.expm1(a)), features)


@traceable("nn.selu")
def selu(features: Any, name: str | None = None) -> Any:
    def fn(a: np.ndarray) -> np.ndarray:
        return _SELU_SCALE * np.where(a > 0, a, _SELU_ALPHA * np.expm1(a))

    return _unary("Selu", FLOATS, fn, features)


@traceable("nn.silu")
def silu(features: Any, beta: float = 1.0, name: str | None = None) -> Any:
    return _unary("Silu", FLOATS, lambda v: v / (1 + np.exp(-v * v.dtype.type(beta))), features)


swish = silu


def moments(x: Any, axes: Any, shift: Any = None, keepdims: bool = False, name: str | None = None) -> tuple:
    """``(mean, variance)`` of ``x`` over ``axes`` (float16 computed in float32, as TensorFlow does)."""
    (a,) = match("Mean", [x], FLOATS)
    reduced = _axes("Mean", axes, a.ndim)
    wide = a.astype(np.float32) if a.dtype == np.float16 else a
    mean = np.mean(wide, axis=reduced, keepdims=True)
    variance = np.mean(np.square(wide - mean), axis=reduced, keepdims=True)
    if not keepdims:
        mean, variance = np.squeeze(mean, axis=reduced), np.squeeze(variance, axis=reduced)
    return out(mean.astype(a.dtype)), out(variance.astype(a.dtype))


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None) -> Any:
    """``value + bias`` along the channel axis: the last (``NHWC``, the default) or axis 1 (``NC...``)."""
    a, b = match("BiasAdd", [value, bias], REAL)
    if b.ndim != 1:
        raise InvalidArgumentError(f"BiasAdd: bias must be 1-D, got shape {list(b.shape)}")
    channels_first = bool(data_format) and str(data_format).startswith("NC")
    if channels_first:
        b = b.reshape([-1] + [1] * (a.ndim - 2))
    return out(np.asarray(a + b, dtype=a.dtype))


__all__ = [
    "bias_add",
    "elu",
    "l2_normalize",
    "leaky_relu",
    "log_softmax",
    "moments",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "softsign",
    "swish",
    "tanh",
]
