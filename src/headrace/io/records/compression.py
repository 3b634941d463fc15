"""GZIP and ZLIB streams for TFRecord files, read and written incrementally.

Reading never produces more output per call than asked for (``decompress(data, max_length)``), so a
small file that inflates to gigabytes (a decompression bomb) costs memory only for what the reader
actually asks for. A stream that ends early raises :class:`CompressedStreamError` instead of ending
quietly (TensorFlow 2.21 yields what it decoded and reports nothing).

Inflating runs on ISA-L (the ``isal`` package: 2.5x zlib's speed on TFRecord shards) when it is
installed and the file can seek, else on zlib. ISA-L's decompressor cannot be copied, which the
salvage of output before a damaged point needs, so at the first damage the reader decodes the file
again from its start with zlib, skips what it has delivered, and goes on from there on zlib: the
same records and the same error either way, damage costing one re-read.

>>> import io
>>> raw = io.BytesIO()
>>> writer = CompressingWriter(raw, "GZIP")
>>> writer.write(b"hello " * 3)
>>> writer.finish()
>>> DecompressingReader(io.BytesIO(raw.getvalue()), "GZIP").read(100)
b'hello hello hello '
"""

from __future__ import annotations

import zlib
from typing import IO, Any, Protocol

from ...core.errors import DataLossError, InvalidArgumentError
from .crc import masked_crc32c


def _isal() -> Any:
    """ISA-L's inflate, 2.5x zlib's (module docstring): zlib's API less ``copy()``; None without it."""
    try:
        from isal import isal_zlib  # noqa: PLC0415
    except ImportError:  # pragma: no cover (a platform without its wheels)
        return None
    return isal_zlib


_fast_inflate: Any = _isal()
_INFLATE_ERRORS: tuple[type[BaseException], ...] = (
    (zlib.error,) if _fast_inflate is None else (zlib.error, _fast_inflate.error)
)


#: TensorFlow's names; "" is no compression.
COMPRESSION_TYPES = ("", "GZIP", "ZLIB")
_WBITS = {"GZIP": 16 + zlib.MAX_WBITS, "ZLIB": zlib.MAX_WBITS}
BAD_STREAM = "bad compressed stream"
TRUNCATED_STREAM = "truncated compressed stream"


def normalize_compression(compression_type: Any, argument: str = "compression_type") -> str:
    """``None``/``""``/``"NONE"`` -> ``""``; ``"gzip"``/``"GZIP"`` -> ``"GZIP"``; same for ZLIB.

    >>> normalize_compression(None), normalize_compression("gzip")
    ('', 'GZIP')
    """
    # tf.io.TFRecordOptions (and anything else carrying one) names its compression this way.
    compression_type = getattr(compression_type, "compression_type", compression_type)
    if compression_type is None:
        return ""
    if isinstance(compression_type, bytes):
        compression_type = compression_type.decode("ascii", "replace")
    if isinstance(compression_type, str):
        name = compression_type.strip().upper()
        if name in ("", "NONE"):
            return ""
        if name in _WBITS:
            return name
    raise InvalidArgumentError(
        f"{argument}={compression_type!r} is not allowed: use None or '' (no compression), 'GZIP' or 'ZLIB'"
    )


class CompressedStreamError(DataLossError):
    """A GZIP/ZLIB stream is damaged or ends early; ``kind`` is one of the two module constants."""

    def __init__(self, kind: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def detect_compression(head: bytes) -> str | None:
    """Guess a TFRecord file's compression from its first bytes: "", "GZIP", "ZLIB", or None.

    >>> detect_compression(b"\\x1f\\x8b\\x08\\x00"), detect_compression(b"")
    ('GZIP', '')
    """
    if not head:
        return ""
    if len(head) >= 12 and masked_crc32c(head[:8]) == int.from_bytes(head[8:12], "little"):
        return ""
    if head[:2] == b"\x1f\x8b":
        return "GZIP"
    if len(head) >= 2 and head[0] & 0x0F == 8 and (head[0] * 256 + head[1]) % 31 == 0:
        return "ZLIB"
    return None


class DecompressingReader:
    """File-like ``read(n)`` over a GZIP or ZLIB stream read from ``raw``; at most ``n`` bytes a call.

    Concatenated streams (several gzip members) are read one after the other, as ``gzip`` does.
    """

    def __init__(self, raw: IO[bytes], compression: str, input_chunk: int = 1 << 18):
        self.raw = raw
        self.compression = compression
        self.input_chunk = input_chunk
        self.consumed = 0  # compressed bytes read so far (for progress)
        self.delivered = 0  # decompressed bytes returned so far
        # ISA-L while nothing has failed and the file can be read again from its start (_replay).
        seekable = getattr(raw, "seekable", None)
        fast = _fast_inflate is not None and seekable is not None and seekable() and raw.tell() == 0
        self._inflate: Any = _fast_inflate if fast else zlib
        self._decompressor = self._inflate.decompressobj(_WBITS[compression])
        self._input = b""
        self._fed = False  # has the current stream seen any input?
        self._finished = False
        self._failed: CompressedStreamError | None = None  # damage met after output that was delivered
        self._carry = b""  # input already read from the file, to be decoded before reading more

    @property
    def fast(self) -> bool:
        """Whether ISA-L inflates (no damage met yet, ``isal`` installed, the file seekable)."""
        return self._inflate is not zlib

    def _read_raw(self) -> bytes:
        if self._carry:
            data, self._carry = self._carry, b""
            return data
        data = self.raw.read(self.input_chunk)
        self.consumed += len(data)
        return data

    def read(self, n: int) -> bytes:
        """Up to ``n`` (>= 1) decompressed bytes; ``b""`` at the end of the last stream."""
        out = self._read(n)
        self.delivered += len(out)
        return out

    def _read(self, n: int) -> bytes:
        if self._failed is not None:
            raise self._failed
        while not self._finished:
            decompressor = self._decompressor
            if decompressor.eof:
                rest = decompressor.unused_data or self._read_raw()
                if not rest:
                    self._finished = True
                    break
                self._decompressor = self._inflate.decompressobj(_WBITS[self.compression])
                self._input, self._fed = rest, False
                continue
            data = decompressor.unconsumed_tail or self._input
            self._input = b""
            if not data and self._fed and self._inflate is not zlib:
                # ISA-L holds output back that zlib would leave as input (unconsumed_tail): drain it
                # before reading more (or calling the stream truncated).
                try:
                    out = decompressor.decompress(b"", n)
                except _INFLATE_ERRORS:
                    self._replay()
                    continue
                if out:
                    return out
                if decompressor.eof:
                    continue
            if not data:
                data = self._read_raw()
                if not data:
                    if self._fed:
                        raise CompressedStreamError(
                            TRUNCATED_STREAM,
                            f"the {self.compression} stream ends early, after {self.consumed} compressed "
                            "bytes (the file was cut short, e.g. by an interrupted copy or write)",
                        )
                    self._finished = True
                    break
            self._fed = True
            if self._inflate is not zlib:
                try:
                    out = decompressor.decompress(data, n)
                except _INFLATE_ERRORS:
                    self._replay()  # damage: zlib from the start, which can salvage (module docstring)
                    continue
                if out:
                    return out
                continue
            before = decompressor.copy()
            try:
                out = decompressor.decompress(data, n)
            except zlib.error as exc:
                salvaged = self._salvage(before, data, n)
                if salvaged is None:
                    raise self._damage(exc) from None
                out = salvaged
            if out:
                return out
        return b""

    def _replay(self) -> None:
        """Go on with zlib, positioned where ISA-L was: decode the file again from its start and skip
        the bytes already delivered (their damage, if any, was met already: it is met again here)."""
        self._inflate = zlib
        self.raw.seek(0)
        self.consumed = 0
        self._decompressor = zlib.decompressobj(_WBITS[self.compression])
        self._input, self._carry, self._fed, self._finished = b"", b"", False, False
        left = self.delivered
        while left:
            skipped = self._read(min(left, 1 << 20))
            if not skipped:  # the file changed under us: what was delivered cannot be found again
                raise CompressedStreamError(
                    BAD_STREAM, f"the {self.compression} stream changed while it was read ({self.raw!r})"
                )
            left -= len(skipped)

    def _damage(self, exc: zlib.error) -> CompressedStreamError:
        return CompressedStreamError(
            BAD_STREAM,
            f"the {self.compression} stream cannot be decoded near compressed byte {self.consumed} ({exc})",
        )

    def _salvage(self, decompressor: Any, data: bytes, n: int) -> bytes | None:
        """Decode ``data`` again from ``decompressor`` (the state before the failed call) in small
        pieces, so the output before the damaged point is delivered instead of lost with it (zlib
        discards a call's output when it fails). Returns that output, with the error kept for the
        next call, or None when nothing precedes the damage."""
        out: list[bytes] = []
        produced = 0
        step = 1024
        position = 0
        while position < len(data) and produced < n:
            piece = data[position : position + step]
            trial = decompressor.copy()
            try:
                chunk = trial.decompress(piece, n - produced)
            except zlib.error as exc:
                if step > 1:
                    step = 1  # replay this piece byte by byte to get as close to the damage as possible
                    continue
                if not produced:
                    return None
                self._failed = self._damage(exc)
                return b"".join(out)
            decompressor = trial
            out.append(chunk)
            produced += len(chunk)
            position += len(piece) - len(trial.unconsumed_tail)
            if trial.eof:
                break
        if not produced and not decompressor.eof:
            return None  # the replay met no error and made no progress: report the damage as it is
        # Stopped before the damage (output full, or this member ended): carry on from here. The
        # decompressor keeps its unconsumed tail (or, at a member's end, its unused data); the input
        # after that is read before the file's next bytes.
        self._decompressor = decompressor
        self._input = b""
        self._carry = data[position + len(decompressor.unconsumed_tail) :]
        return b"".join(out)

    def close(self) -> None:
        self.raw.close()


class BinarySink(Protocol):
    """What :class:`CompressingWriter` writes into: a binary file, or a wrapper with these methods."""

    def write(self, data: bytes, /) -> object: ...

    def flush(self) -> None: ...


class CompressingWriter:
    """``write``/``flush``/``finish`` into a GZIP or ZLIB stream on ``raw`` (TensorFlow's default level)."""

    def __init__(self, raw: BinarySink, compression: str, level: int = zlib.Z_DEFAULT_COMPRESSION):
        self.raw = raw
        self._compressor = zlib.compressobj(level, zlib.DEFLATED, _WBITS[compression])

    def write(self, data: bytes) -> None:
        out = self._compressor.compress(data)
        if out:
            self.raw.write(out)

    def flush(self) -> None:
        """Make everything written so far decodable by a reader (a zlib sync flush)."""
        self.raw.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self.raw.flush()

    def finish(self) -> None:
        """End the stream (writes the trailer); ``raw`` stays open."""
        self.raw.write(self._compressor.flush(zlib.Z_FINISH))
