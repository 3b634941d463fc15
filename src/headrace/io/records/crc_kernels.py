"""CRC32C inside compiled (numba) loops: the SSE4.2 ``crc32`` instruction where the CPU has it, else a
slicing-by-8 table. Imported lazily by the readers (numba takes ~0.4 s to import).

Calling the crc32c package once per record from Python costs ~85 ns of call overhead, more than the
checksum of a 100-byte record itself; doing it inside the framing loop removes that overhead.
"""

from __future__ import annotations

import platform

import numpy as np
from llvmlite import binding as _llvm
from llvmlite import ir
from numba import types
from numba.core import config as _numba_config
from numba.extending import intrinsic

from ...core.jit import njit

POLYNOMIAL = 0x82F63B78  # CRC32C, reflected
MASK_DELTA = np.uint32(0xA282EAD8)


def _table_crc_tables() -> np.ndarray:
    tables = np.zeros((8, 256), dtype=np.uint32)
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (POLYNOMIAL if crc & 1 else 0)
        tables[0, byte] = crc
    for byte in range(256):
        crc = int(tables[0, byte])
        for k in range(1, 8):
            crc = (crc >> 8) ^ int(tables[0, crc & 0xFF])
            tables[k, byte] = crc
    return tables


_TABLES = _table_crc_tables()


def _cpu_has_sse42() -> bool:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        return bool(_llvm.get_host_cpu_features().get("sse4.2", False))
    # Feature probing is best effort; the table path is always correct. llvmlite raises RuntimeError
    # when LLVM cannot tell, OSError when its library cannot load, KeyError on a flag without +/-.
    except (RuntimeError, OSError, KeyError):
        return False


HARDWARE = _cpu_has_sse42()


@intrinsic
def _crc32_u64(typingctx, crc, value):
    signature = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(64)])
        fn = builder.module.declare_intrinsic("llvm.x86.sse42.crc32.64.64", fnty=fnty)
        return builder.call(fn, args)

    return signature, codegen


@intrinsic
def _crc32_u8(typingctx, crc, value):
    signature = types.uint32(types.uint32, types.uint8)

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), ir.IntType(8)])
        fn = builder.module.declare_intrinsic("llvm.x86.sse42.crc32.32.8", fnty=fnty)
        return builder.call(fn, args)

    return signature, codegen


@intrinsic
def load_u64(typingctx, array, index):
    """Unaligned little-endian load of 8 bytes at ``array[index:]`` (caller checks bounds)."""
    signature = types.uint64(array, index)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        pointer = builder.bitcast(builder.gep(ary.data, [args[1]]), ir.IntType(64).as_pointer())
        return builder.load(pointer, align=1)

    return signature, codegen


@intrinsic
def load_u32(typingctx, array, index):
    """Unaligned little-endian load of 4 bytes at ``array[index:]`` (caller checks bounds)."""
    signature = types.uint32(array, index)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        pointer = builder.bitcast(builder.gep(ary.data, [args[1]]), ir.IntType(32).as_pointer())
        return builder.load(pointer, align=1)

    return signature, codegen


# numba.core.config creates its settings at import time (from the environment), unseen by mypy
if _numba_config.BOUNDSCHECK:  # type: ignore[attr-defined]
    # NUMBA_BOUNDSCHECK=1 (the fuzz tests): the raw loads above become checked ones, so an index
    # computed from hostile data cannot read outside the array unnoticed, not even through a load.
    @njit
    def load_u64(array, index):
        if index < 0 or index + 8 > len(array):
            raise IndexError("load_u64: index out of bounds")
        value = np.uint64(0)
        for k in range(8):
            value |= np.uint64(array[index + k]) << np.uint64(8 * k)
        return value

    @njit
    def load_u32(array, index):
        if index < 0 or index + 4 > len(array):
            raise IndexError("load_u32: index out of bounds")
        value = np.uint32(0)
        for k in range(4):
            value |= np.uint32(array[index + k]) << np.uint32(8 * k)
        return value


@njit(boundscheck=False, nogil=True)
def _crc32c_hardware(buf, start, length):
    crc = np.uint64(0xFFFFFFFF)
    i = start
    end = start + length
    while i + 8 <= end:
        crc = _crc32_u64(crc, load_u64(buf, i))
        i += 8
    crc32 = np.uint32(crc)
    while i < end:
        crc32 = _crc32_u8(crc32, buf[i])
        i += 1
    return crc32 ^ np.uint32(0xFFFFFFFF)


@njit(boundscheck=False, nogil=True)
def _crc32c_table(buf, start, length):
    t = _TABLES
    crc = np.uint32(0xFFFFFFFF)
    i = start
    end = start + length
    while i + 8 <= end:
        low = load_u32(buf, i) ^ crc
        high = load_u32(buf, i + 4)
        crc = (
            t[7, low & 0xFF]
            ^ t[6, (low >> 8) & 0xFF]
            ^ t[5, (low >> 16) & 0xFF]
            ^ t[4, low >> 24]
            ^ t[3, high & 0xFF]
            ^ t[2, (high >> 8) & 0xFF]
            ^ t[1, (high >> 16) & 0xFF]
            ^ t[0, high >> 24]
        )
        i += 8
    while i < end:
        crc = (crc >> np.uint32(8)) ^ t[0, (crc ^ buf[i]) & 0xFF]
        i += 1
    return crc ^ np.uint32(0xFFFFFFFF)


crc32c_span = _crc32c_hardware if HARDWARE else _crc32c_table


@njit(nogil=True)
def masked_crc32c_span(buf, start, length):
    """TFRecord's masked CRC32C of ``buf[start:start + length]``."""
    crc = np.uint64(crc32c_span(buf, start, length))
    rotated = ((crc >> np.uint64(15)) | (crc << np.uint64(17))) & np.uint64(0xFFFFFFFF)
    return np.uint32((rotated + np.uint64(MASK_DELTA)) & np.uint64(0xFFFFFFFF))
