"""tf.linalg, the few names input functions use."""

from __future__ import annotations

from typing import Any

import numpy as np

from .array import eye
from .math import matmul


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> np.ndarray:
    array = np.asarray(a)
    result = np.swapaxes(array, -1, -2)
    return np.conj(result) if conjugate else result.copy()


def trace(x: Any, name: str | None = None) -> Any:
    return np.trace(np.asarray(x), axis1=-2, axis2=-1)


__all__ = ["eye", "matmul", "matrix_transpose", "trace"]
