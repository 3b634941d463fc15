"""The random generator of the element a seeded map is computing, for ops that draw without an ``rng``
argument (``headrace.random.uniform`` ... inside ``map(f, seed=S)``).

``runtime.calls.apply`` sets it around each call; it is a context variable, so each thread (and each
worker process) sees the element it is computing, and code outside a seeded map sees ``None``.
"""

from __future__ import annotations

from contextvars import ContextVar

import numpy as np

ELEMENT_RNG: ContextVar[np.random.Generator | None] = ContextVar("headrace_element_rng", default=None)
