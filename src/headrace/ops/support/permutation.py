"""A seeded bijection of ``[0, n)`` that costs O(1) memory: global shuffle without a permutation table.

A balanced Feistel network permutes ``[0, 4^k)`` for the smallest ``4^k >= n``; indices that land
outside ``[0, n)`` are permuted again ("cycle walking") until they land inside, which keeps the map a
bijection of ``[0, n)``. Evaluated on whole numpy arrays of indices at once.
"""

from __future__ import annotations

import numpy as np

_ROUNDS = 6
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


class IndexPermutation:
    """``perm(indices)`` maps positions of a shuffled order to source indices.

    >>> perm = IndexPermutation(10, seed=3)
    >>> sorted(perm(np.arange(10)).tolist())
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    >>> perm(np.arange(10)).tolist() == IndexPermutation(10, seed=3)(np.arange(10)).tolist()
    True
    """

    def __init__(self, n: int, seed: int | list[int]):
        if n < 0:
            raise ValueError(f"n={n} must be >= 0")
        self.n = n
        half_bits = max(1, ((max(n, 2) - 1).bit_length() + 1) // 2)
        self._half_bits = np.uint64(half_bits)
        self._half_mask = np.uint64((1 << half_bits) - 1)
        seed_words = seed if isinstance(seed, list) else [seed]
        self._keys = np.random.SeedSequence(seed_words).generate_state(_ROUNDS, dtype=np.uint64)

    def _round(self, right: np.ndarray, key: np.uint64) -> np.ndarray:
        # A multiply-xorshift mix of (right ^ key): cheap, and every input bit reaches every output bit.
        x = (right ^ key) * _MULTIPLIER
        x ^= x >> np.uint64(29)
        x *= _MULTIPLIER
        x ^= x >> np.uint64(32)
        return x & self._half_mask

    def _feistel(self, values: np.ndarray) -> np.ndarray:
        left = values >> self._half_bits
        right = values & self._half_mask
        for key in self._keys:
            left, right = right, left ^ self._round(right, key)
        return (left << self._half_bits) | right

    def __call__(self, positions: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            values = self._feistel(np.asarray(positions, dtype=np.uint64))
            outside = values >= np.uint64(self.n)
            while outside.any():
                values[outside] = self._feistel(values[outside])
                outside = values >= np.uint64(self.n)
        return values.astype(np.int64)
