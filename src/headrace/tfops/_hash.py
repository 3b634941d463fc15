"""TensorFlow's string hashes in Python: farmhash's ``Fingerprint64`` (``tf.strings.to_hash_bucket_fast``,
the out-of-vocabulary buckets of ``tf.lookup.StaticVocabularyTable``), TensorFlow's own ``Hash64``
(``tf.strings.to_hash_bucket``) and SipHash-2-4 (``tf.strings.to_hash_bucket_strong``).

Each is the reference algorithm on 64-bit unsigned integers (Python ints masked to 64 bits); the
results are checked against TensorFlow's in the op fixtures. Fingerprints of repeated strings (tokens)
are cached.
"""

from __future__ import annotations

import functools
import struct

M64 = (1 << 64) - 1
K0 = 0xC3A5C85C97CB3127
K1 = 0xB492B66FBE98F273
K2 = 0x9AE16A3B2F90404F
_KMUL = 0x9DDFEA08EB382D69


def _fetch64(s: bytes, i: int) -> int:
    return struct.unpack_from("<Q", s, i)[0]


def _fetch32(s: bytes, i: int) -> int:
    return struct.unpack_from("<I", s, i)[0]


def _rotate(value: int, shift: int) -> int:
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & M64


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _hash_len16(u: int, v: int, mul: int = _KMUL) -> int:
    a = ((u ^ v) * mul) & M64
    a ^= a >> 47
    b = ((v ^ a) * mul) & M64
    b ^= b >> 47
    return (b * mul) & M64


def _len0to16(s: bytes) -> int:
    n = len(s)
    if n >= 8:
        mul = K2 + n * 2
        a = (_fetch64(s, 0) + K2) & M64
        b = _fetch64(s, n - 8)
        c = (_rotate(b, 37) * mul + a) & M64
        d = ((_rotate(a, 25) + b) * mul) & M64
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = K2 + n * 2
        a = _fetch32(s, 0)
        return _hash_len16((n + (a << 3)) & M64, _fetch32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
        z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * K2) ^ (z * K0)) & M64) * K2) & M64
    return K2


def _len17to32(s: bytes) -> int:
    n = len(s)
    mul = K2 + n * 2
    a = (_fetch64(s, 0) * K1) & M64
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & M64
    d = (_fetch64(s, n - 16) * K2) & M64
    return _hash_len16(
        (_rotate((a + b) & M64, 43) + _rotate(c, 30) + d) & M64,
        (a + _rotate((b + K2) & M64, 18) + c) & M64,
        mul,
    )


def _len33to64(s: bytes) -> int:
    n = len(s)
    mul = K2 + n * 2
    a = (_fetch64(s, 0) * K2) & M64
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & M64
    d = (_fetch64(s, n - 16) * K2) & M64
    y = (_rotate((a + b) & M64, 43) + _rotate(c, 30) + d) & M64
    z = _hash_len16(y, (a + _rotate((b + K2) & M64, 18) + c) & M64, mul)
    e = (_fetch64(s, 16) * mul) & M64
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & M64
    h = ((z + _fetch64(s, n - 24)) * mul) & M64
    return _hash_len16(
        (_rotate((e + f) & M64, 43) + _rotate(g, 30) + h) & M64,
        (e + _rotate((f + a) & M64, 18) + g) & M64,
        mul,
    )


def _weak32(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = _fetch64(s, i), _fetch64(s, i + 8), _fetch64(s, i + 16), _fetch64(s, i + 24)
    a = (a + w) & M64
    b = _rotate((b + a + z) & M64, 21)
    c = a
    a = (a + x + y) & M64
    b = (b + _rotate(a, 44)) & M64
    return (a + z) & M64, (b + c) & M64


@functools.lru_cache(maxsize=1 << 16)
def fingerprint64(s: bytes) -> int:
    """farmhash ``Fingerprint64`` (farmhashna ``Hash64``) of ``s``, as an unsigned 64-bit int."""
    n = len(s)
    if n <= 16:
        return _len0to16(s)
    if n <= 32:
        return _len17to32(s)
    if n <= 64:
        return _len33to64(s)
    seed = 81
    x = seed
    y = (seed * K1 + 113) & M64
    z = (_shift_mix((y * K2 + 113) & M64) * K2) & M64
    v = (0, 0)
    w = (0, 0)
    x = (x * K2 + _fetch64(s, 0)) & M64
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(s, i + 8)) & M64, 37) * K1) & M64
        y = (_rotate((y + v[1] + _fetch64(s, i + 48)) & M64, 42) * K1) & M64
        x ^= w[1]
        y = (y + v[0] + _fetch64(s, i + 40)) & M64
        z = (_rotate((z + w[0]) & M64, 33) * K1) & M64
        v = _weak32(s, i, (v[1] * K1) & M64, (x + w[0]) & M64)
        w = _weak32(s, i + 32, (z + w[1]) & M64, (y + _fetch64(s, i + 16)) & M64)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = K1 + ((z & 0xFF) << 1)
    i = last64
    w = ((w[0] + ((n - 1) & 63)) & M64, w[1])
    v = ((v[0] + w[0]) & M64, v[1])
    w = ((w[0] + v[0]) & M64, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(s, i + 8)) & M64, 37) * mul) & M64
    y = (_rotate((y + v[1] + _fetch64(s, i + 48)) & M64, 42) * mul) & M64
    x ^= (w[1] * 9) & M64
    y = (y + v[0] * 9 + _fetch64(s, i + 40)) & M64
    z = (_rotate((z + w[0]) & M64, 33) * mul) & M64
    v = _weak32(s, i, (v[1] * mul) & M64, (x + w[0]) & M64)
    w = _weak32(s, i + 32, (z + w[1]) & M64, (y + _fetch64(s, i + 16)) & M64)
    z, x = x, z
    return _hash_len16(
        (_hash_len16(v[0], w[0], mul) + _shift_mix(y) * K0 + z) & M64,
        (_hash_len16(v[1], w[1], mul) + x) & M64,
        mul,
    )


def hash64(s: bytes, seed: int = 0xDECAFCAFFE) -> int:
    """TensorFlow's ``Hash64`` (a MurmurHash64A variant; ``tf.strings.to_hash_bucket``)."""
    m, r = 0xC6A4A7935BD1E995, 47
    n = len(s)
    h = (seed ^ (n * m)) & M64
    whole = n - n % 8
    for i in range(0, whole, 8):
        k = (_fetch64(s, i) * m) & M64
        k ^= k >> r
        k = (k * m) & M64
        h ^= k
        h = (h * m) & M64
    rest = s[whole:]
    if rest:
        for j in range(len(rest) - 1, -1, -1):
            h ^= rest[j] << (8 * j)
        h = (h * m) & M64
    h ^= h >> r
    h = (h * m) & M64
    h ^= h >> r
    return h


def _sip_round(v0: int, v1: int, v2: int, v3: int) -> tuple[int, int, int, int]:
    v0 = (v0 + v1) & M64
    v1 = _rotate(v1, 64 - 13) ^ v0
    v0 = _rotate(v0, 64 - 32)
    v2 = (v2 + v3) & M64
    v3 = _rotate(v3, 64 - 16) ^ v2
    v0 = (v0 + v3) & M64
    v3 = _rotate(v3, 64 - 21) ^ v0
    v2 = (v2 + v1) & M64
    v1 = _rotate(v1, 64 - 17) ^ v2
    v2 = _rotate(v2, 64 - 32)
    return v0, v1, v2, v3


def siphash24(k0: int, k1: int, s: bytes) -> int:
    """SipHash-2-4 of ``s`` under the key ``(k0, k1)`` (``tf.strings.to_hash_bucket_strong``)."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    n = len(s)
    whole = n - n % 8
    for i in range(0, whole, 8):
        m = _fetch64(s, i)
        v3 ^= m
        v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
        v0 ^= m
    last = ((n & 0xFF) << 56) | int.from_bytes(s[whole:], "little")
    v3 ^= last
    v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
    v0 ^= last
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3
