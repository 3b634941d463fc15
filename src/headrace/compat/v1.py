"""TF1's namespace (``tf.compat.v1``): ``import tensorflow.compat.v1 as tf`` becomes
``import headrace.compat.v1 as tf``.

TF1's own names are below (the ones TF1 input functions use: ``parse_single_example``,
``FixedLenFeature``, ``decode_raw``, ``to_float``, ``py_func``, ``random_uniform`` ...); every other name
resolves as it does in ``headrace`` (``tf.data``, ``tf.cast``, ``tf.image`` ...), then in ``headrace.math``
(TF1 kept ``tf.log``, ``tf.ceil``, ``tf.floordiv`` ... at its top level).
"""

from __future__ import annotations

import logging as _logging
import types
from collections.abc import Callable
from typing import Any

import numpy as np


def _io(name: str) -> Callable:
    def call(*args: Any, **kwargs: Any) -> Any:
        from .. import io  # noqa: PLC0415

        return getattr(io, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"TF1's ``tf.{name}``: ``headrace.io.{name}``."
    return call


def _cast_to(dtype: Any, op: str) -> Callable:
    def cast(x: Any, name: str = op) -> Any:
        from ..tfops.math import cast as _cast  # noqa: PLC0415

        return _cast(x, dtype)

    cast.__name__ = cast.__qualname__ = op
    cast.__doc__ = f"TF1's ``tf.{op}(x)``: ``tf.cast(x, {np.dtype(dtype).name})``."
    return cast


to_float = _cast_to(np.float32, "to_float")
to_double = _cast_to(np.float64, "to_double")
to_int32 = _cast_to(np.int32, "to_int32")
to_int64 = _cast_to(np.int64, "to_int64")
parse_single_example = _io("parse_single_example")
parse_example = _io("parse_example")
parse_single_sequence_example = _io("parse_single_sequence_example")
parse_tensor = _io("parse_tensor")
serialize_tensor = _io("serialize_tensor")
read_file = _io("read_file")
write_file = _io("write_file")
decode_csv = _io("decode_csv")
decode_base64 = _io("decode_base64")
encode_base64 = _io("encode_base64")
decode_compressed = _io("decode_compressed")
matching_files = _io("matching_files")


def decode_raw(
    input_bytes: Any = None,
    out_type: Any = None,
    little_endian: bool = True,
    name: str | None = None,
    bytes: Any = None,  # noqa: A002 (TF1's deprecated alias of input_bytes)
) -> Any:
    """TF1's ``tf.decode_raw`` (``bytes=`` is its old name for ``input_bytes``)."""
    from ..io import decode_raw as _decode_raw  # noqa: PLC0415

    if (input_bytes is None) == (bytes is None):
        raise ValueError("decode_raw: give exactly one of input_bytes and bytes")
    return _decode_raw(input_bytes if bytes is None else bytes, out_type, little_endian)


def py_func(func: Callable, inp: Any, Tout: Any, stateful: bool = True, name: str | None = None) -> Any:  # noqa: N803
    """TF1's ``tf.py_func``: ``tf.numpy_function``."""
    from ..tfops.control import numpy_function  # noqa: PLC0415

    return numpy_function(func, inp, Tout, stateful)


def random_shuffle(value: Any, seed: Any = None, name: Any = None) -> Any:
    from ..tfops.random import shuffle  # noqa: PLC0415

    return shuffle(value, seed)


def string_to_number(string_tensor: Any, out_type: Any = np.float32, name: Any = None) -> Any:
    from ..tfops.strings import to_number  # noqa: PLC0415

    return to_number(string_tensor, out_type)


def string_join(inputs: Any, separator: str = "", name: Any = None) -> Any:
    from ..tfops.strings import join  # noqa: PLC0415

    return join(inputs, separator)


def substr(input: Any, pos: Any, len: Any, name: Any = None, unit: str = "BYTE") -> Any:  # noqa: A002
    from ..tfops.strings import substr as _substr  # noqa: PLC0415

    return _substr(input, pos, len, unit=unit)


def string_to_hash_bucket_fast(input: Any, num_buckets: Any, name: Any = None) -> Any:  # noqa: A002
    from ..tfops.strings import to_hash_bucket_fast  # noqa: PLC0415

    return to_hash_bucket_fast(input, num_buckets)


def string_to_hash_bucket_strong(input: Any, num_buckets: Any, key: Any, name: Any = None) -> Any:  # noqa: A002
    from ..tfops.strings import to_hash_bucket_strong  # noqa: PLC0415

    return to_hash_bucket_strong(input, num_buckets, key)


def string_to_hash_bucket(string_tensor: Any, num_buckets: Any, name: Any = None) -> Any:
    from ..tfops.strings import to_hash_bucket  # noqa: PLC0415

    return to_hash_bucket(string_tensor, num_buckets)


def tables_initializer(name: str = "init_all_tables") -> None:
    """TF1's table init op: tables here are filled when built, so there is nothing to run (``None``, as
    TensorFlow's in eager mode)."""
    return None


initialize_all_tables = tables_initializer


def executing_eagerly_outside_functions() -> bool:
    return True


def _logger() -> _logging.Logger:
    return _logging.getLogger("tensorflow")


#: TF1's ``tf.logging``, on Python's logging (logger ``tensorflow``, as TensorFlow's own)
logging = types.SimpleNamespace(
    DEBUG=_logging.DEBUG,
    INFO=_logging.INFO,
    WARN=_logging.WARNING,
    ERROR=_logging.ERROR,
    FATAL=_logging.CRITICAL,
    debug=lambda msg, *args, **kw: _logger().debug(msg, *args, **kw),
    info=lambda msg, *args, **kw: _logger().info(msg, *args, **kw),
    warning=lambda msg, *args, **kw: _logger().warning(msg, *args, **kw),
    warn=lambda msg, *args, **kw: _logger().warning(msg, *args, **kw),
    error=lambda msg, *args, **kw: _logger().error(msg, *args, **kw),
    set_verbosity=lambda level: _logger().setLevel(level),
    get_verbosity=lambda: _logger().getEffectiveLevel(),
)


class _Contrib:
    """TF1's ``tf.contrib``, its ``data`` part: in TF 1.13-1.15 ``tf.contrib.data.X`` were deprecated
    aliases of ``tf.data.experimental.X`` (``parallel_interleave``, ``map_and_batch``, ``group_by_window``,
    ``shuffle_and_repeat`` ...), so they resolve to ``headrace.data.experimental``. The rest of
    ``tf.contrib`` (layers, lookup, slim ...) is not covered."""

    @property
    def data(self) -> types.ModuleType:
        from .. import experimental  # noqa: PLC0415

        return experimental

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"headrace.compat.v1.contrib has no {name!r}: only tf.contrib.data (as tf.data.experimental) is "
            "covered; see docs/porting.md"
        )


#: TF1's ``tf.contrib`` (``tf.contrib.data`` only)
contrib = _Contrib()

_IO_CLASSES = ("FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "SparseFeature")


# TF1 names of ops whose arguments are TF2's (``tf.random_uniform`` is ``tf.random.uniform``).
_RANDOM = {"random_uniform": "uniform", "random_normal": "normal", "truncated_normal": "truncated_normal"}


def __getattr__(name: str) -> Any:
    import headrace  # noqa: PLC0415

    if name in _RANDOM:
        from ..tfops import random  # noqa: PLC0415

        return getattr(random, _RANDOM[name])
    if name in _IO_CLASSES:
        from .. import io  # noqa: PLC0415

        return getattr(io, name)
    if name == "sparse_to_dense":
        from ..tfops.array import sparse_to_dense  # noqa: PLC0415

        return sparse_to_dense
    try:
        return getattr(headrace, name)
    except AttributeError:
        pass
    from ..tfops import math  # noqa: PLC0415

    if not name.startswith("_") and hasattr(math, name):
        return getattr(math, name)
    raise AttributeError(
        f"module 'headrace.compat.v1' has no attribute {name!r} (TF1's names that input functions use are "
        "covered; see docs/porting.md)"
    )
