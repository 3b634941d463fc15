"""headrace: fast, reliable, framework-free input pipelines with tf.data's API.

>>> import headrace as hr
>>> [b.tolist() for b in hr.Dataset.range(6).map(lambda x: x * x).batch(3)]
[[0, 1, 4], [9, 16, 25]]
"""

from . import data, experimental, image, io, tune
from .core.closures import CapturedValueChanged
from .core.dtypes import (  # tf's dtype names; `bool` is tf.bool here, as in TensorFlow
    DType,
    as_dtype,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .core.errors import (
    CheckpointError,
    DataLossError,
    HeadraceError,
    InvalidArgumentError,
    StructureError,
    UserStopIteration,
    WorkerError,
)
from .core.node import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .core.options import Options
from .core.spec import TensorShape, TensorSpec, string
from .dataset import Dataset, TFRecordDataset
from .iterator import Iterator
from .keras_hook import install as _install_keras_hook
from .ops.map import batch_safe
from .readers import CsvDataset, FixedLengthRecordDataset, TextLineDataset
from .recipes import shuffled_records
from .version import __version__


def __getattr__(name: str):
    # TensorFlow's op names (tf.cast, tf.strings, tf.random ...) for `import headrace as tf`; loaded on
    # first use so a plain pipeline never imports them.
    from .tfops import EXPORTS  # noqa: PLC0415

    try:
        return EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'headrace' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    from .tfops import EXPORTS  # noqa: PLC0415

    return sorted({*globals(), *EXPORTS})


__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "CapturedValueChanged",
    "CheckpointError",
    "CsvDataset",
    "DType",
    "DataLossError",
    "Dataset",
    "FixedLengthRecordDataset",
    "HeadraceError",
    "InvalidArgumentError",
    "Iterator",
    "Options",
    "StructureError",
    "TFRecordDataset",
    "TensorShape",
    "TensorSpec",
    "TextLineDataset",
    "UserStopIteration",
    "WorkerError",
    "__version__",
    "as_dtype",
    "batch_safe",
    "bool",
    "complex64",
    "complex128",
    "data",
    "double",
    "experimental",
    "float16",
    "float32",
    "float64",
    "half",
    "image",
    "int8",
    "int16",
    "int32",
    "int64",
    "io",
    "shuffled_records",
    "string",
    "tune",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]

# Last, so that headrace is complete: Keras takes headrace Datasets once it is imported, before or after.
_install_keras_hook()
