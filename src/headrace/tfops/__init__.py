"""TensorFlow's ops for input functions, on numpy, under TensorFlow's names.

``import headrace as tf`` then ``tf.cast(x, tf.float32)``, ``tf.strings.lower(s)``,
``tf.random.uniform([])``: the names below are reachable from ``headrace`` itself (``EXPORTS``) and
as its submodules ``math``, ``strings``, ``random``, ``nest``, ``errors``, ``sparse``, ``ragged``,
``nn``, ``audio``, ``signal``, ``linalg``, ``lookup``, ``train``, ``debugging``, ``distribute``, ``dtypes``, ``gfile`` (and
``headrace.io.gfile``). Results are numpy arrays, numpy scalars and ``bytes``, like elements.

Each op keeps TensorFlow's arguments, defaults and dtype rules: one dtype per op (an int32 and a
float32 tensor are refused, not promoted), Python numbers converted as TensorFlow converts them (ints
to int32, floats to float32, or into the other operand's dtype), integer division by zero refused.
Numpy values count as tensors. See docs/porting.md for what is covered and what differs.

>>> import headrace as tf
>>> x = tf.constant([1, 2, 3])
>>> tf.cast(x, tf.float32) / 2
array([0.5, 1. , 1.5], dtype=float32)
>>> tf.reduce_sum(x), tf.shape(x), tf.strings.lower(b"ABC")
(np.int32(6), array([3], dtype=int32), b'abc')
"""

from __future__ import annotations

import importlib
from typing import Any

from . import (
    array,
    audio,
    autograph,
    control,
    debugging,
    distribute,
    dtypes,
    errors,
    gfile,
    linalg,
    lookup,
    math,
    nest,
    nn,
    ragged,
    random,
    signal,
    sparse,
    strings,
    train,
)
from ._tensor import Tensor
from .ragged import RaggedTensor
from .sparse import SparseTensor
from .tensor_array import TensorArray

_MATH = (
    "abs add add_n argmax argmin cast clip_by_value cos cumsum divide equal exp floor greater "
    "greater_equal less less_equal logical_and logical_not logical_or matmul maximum minimum multiply negative "
    "not_equal pow realdiv reduce_all reduce_any reduce_logsumexp reduce_max reduce_mean reduce_min reduce_prod "
    "reduce_sum round saturate_cast sigmoid sign sin sqrt square subtract tan tanh truediv truncatediv "
    "truncatemod acos acosh asin asinh atan atan2 atanh cosh sinh scalar_mul"
).split()
_ARRAY = (
    "boolean_mask broadcast_to concat constant convert_to_tensor ensure_shape expand_dims eye fill gather "
    "gather_nd identity linspace meshgrid one_hot ones ones_like pad range rank reshape reverse roll shape "
    "shape_n size slice sort argsort split squeeze stack tile transpose unique unstack where zeros zeros_like "
    "bitcast get_static_value identity_n is_tensor newaxis repeat scatter_nd searchsorted sequence_mask "
    "tensor_scatter_nd_add tensor_scatter_nd_max tensor_scatter_nd_min tensor_scatter_nd_sub "
    "tensor_scatter_nd_update unique_with_counts"
).split()
_CONTROL = (
    "Assert case cond control_dependencies device executing_eagerly function group map_fn name_scope no_op "
    "numpy_function print py_function stop_gradient switch_case vectorized_map while_loop foldl foldr "
    "init_scope scan"
).split()
_MODULES = {
    "audio": audio,
    "autograph": autograph,
    "debugging": debugging,
    "distribute": distribute,
    "dtypes": dtypes,
    "errors": errors,
    "gfile": gfile,
    "linalg": linalg,
    "lookup": lookup,
    "math": math,
    "nest": nest,
    "nn": nn,
    "ragged": ragged,
    "random": random,
    "signal": signal,
    "sparse": sparse,
    "strings": strings,
    "train": train,
}

#: every name ``headrace.<name>`` resolves here (what TensorFlow has at its top level)
EXPORTS: dict[str, Any] = {
    **{name: getattr(math, name) for name in _MATH},
    **{name: getattr(array, name) for name in _ARRAY},
    **{name: getattr(control, name) for name in _CONTROL},
    **_MODULES,
    "Tensor": Tensor,
    "TensorArray": TensorArray,
    "SparseTensor": SparseTensor,
    "RaggedTensor": RaggedTensor,
    # a module of its own (headrace.compat.v1 is TF1's namespace); imported by name, as `from .. import
    # compat` would ask the half-initialised facade for the attribute
    "compat": importlib.import_module("headrace.compat"),
    # TF2 keeps these at the top level too
    "as_string": strings.as_string,
    **{
        name: getattr(debugging, name)
        for name in ("assert_equal", "assert_greater", "assert_less", "assert_rank")
    },
}

__all__ = ["EXPORTS", "Tensor", "TensorArray", "SparseTensor", "RaggedTensor", *sorted(_MODULES)]
