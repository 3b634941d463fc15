"""tf.data's dtype names (``hr.int64``, ``hr.float32``, ``hr.string`` ...) as numpy dtypes.

They are plain ``numpy.dtype`` objects, so they work wherever numpy takes a dtype
(``x.astype(hr.float32)``) and wherever headrace does (``TensorSpec``, ``counter``, ``CsvDataset``).
``string`` is numpy's object dtype: string leaves are Python ``bytes``, batches object arrays of them.
Not provided: ``bfloat16`` (numpy has none), quantized and resource types.

>>> import headrace as hr
>>> hr.TensorSpec([None, 3], hr.float32)
TensorSpec(shape=(None, 3), dtype=float32)
>>> hr.int64 == "int64", hr.as_dtype("string") is hr.string
(True, True)
"""

from __future__ import annotations

import numpy as np

from .spec import as_dtype, string  # noqa: F401 (string is re-exported through NAMES)

bool = np.dtype(np.bool_)  # noqa: A001 (tf.bool: the name users write)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
half = float16
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
double = float64
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

DType = np.dtype

NAMES = (
    "bool",
    "complex128",
    "complex64",
    "double",
    "float16",
    "float32",
    "float64",
    "half",
    "int16",
    "int32",
    "int64",
    "int8",
    "string",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
)

__all__ = [  # noqa: PLE0604
    "DType",
    "as_dtype",
    *NAMES,
]
