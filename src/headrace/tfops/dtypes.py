"""tf.dtypes: the dtype names (numpy dtypes here), ``as_dtype``, ``DType`` and ``cast``."""

from ..core.dtypes import *  # noqa: F403 (the dtype names, as tf.dtypes has them)
from ..core.dtypes import NAMES
from .math import cast, saturate_cast

__all__ = [*NAMES, "DType", "as_dtype", "cast", "saturate_cast"]
