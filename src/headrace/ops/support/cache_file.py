"""The disk cache's file format and writer lock: safe to read, compact, and fast to read back.

Layout (integers little-endian)::

    "HRCACHE\\n" | u32 version | u32 header length | header JSON                  (padded to 16 bytes)
    block ...    | "HBLK" | u32 spec length | u64 data length | u32 records | u32 crc32c(spec + data)
                 | spec JSON (padded) | data: the block's sections, each 16-byte aligned
    footer JSON  | {"blocks": [[offset, length, records], ...], "records": n, "element_spec": {...}}
    trailer      | u64 footer offset | u32 footer length | u32 crc32c(footer) | u32 crc32c(header)
                 | u32 0 | "HRCEND\\n\\0"     (32 bytes; a file without it is incomplete)

A block's spec (JSON) gives the element structure (tuples, dicts, namedtuples) and, per leaf, its kind,
dtype and shape. The records of a block are stored column-wise: a leaf with one shape is one raw array
``(records, *shape)``; strings are a lengths array then the bytes. Reading a block is one read into one
buffer and one ``np.frombuffer`` per leaf: arrays come back as views of it.

Safe to read: nothing is unpickled or evaluated. Headers are JSON, dtypes must be plain numeric, bool,
fixed-width string or datetime kinds, every size is checked against the file before use and every
block carries a CRC32C; namedtuple classes are looked up only among modules already imported, never
imported. A hostile file can at worst hold wrong numbers.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "c.hrcache")
>>> writer = CacheFileWriter(path, {"note": "demo"})
>>> for i in range(3):
...     writer.append((np.full(2, i, np.uint8), b"x" * i))
>>> writer.commit()
>>> with CacheFileReader(path) as reader:
...     [(a.tolist(), s) for a, s in reader]
[([0, 0], b''), ([1, 1], b'x'), ([2, 2], b'xx')]
"""

from __future__ import annotations

import bisect
import json
import os
import re
import struct
import sys
from collections.abc import Callable, Iterator
from typing import Any, cast

import numpy as np

from ...core.errors import DataLossError, InvalidArgumentError, on_failure
from ...core.state import encode_structure, namedtuple_class
from ...io.limits import load_json
from ...io.records.crc import crc32c
from ...io.storage.publish import fsync_directory, os_error, temporary_path

MAGIC = b"HRCACHE\n"
END_MAGIC = b"HRCEND\n\0"
BLOCK_MAGIC = b"HBLK"
VERSION = 1
ALIGN = 16
BLOCK_BYTES = 4 << 20  # a block holds about this much data (or one larger element)
BLOCK_RECORDS = 8192
#: The most records a writer puts in one block, and so the most a reader accepts: a block of records
#: that take no bytes (``()``, ``None``) still costs a Python object per record to read back.
MAX_BLOCK_RECORDS = 1 << 16

_HEAD = struct.Struct("<8sII")
_BLOCK = struct.Struct("<4sIQII")
_TRAILER = struct.Struct("<QIII4s8s")
_DTYPE = re.compile(r"[<|][biufcmMSU]\d+(\[\d*[A-Za-z]+\])?")
_MAX_JSON = 64 << 20
_MAX_DEPTH = 64


class CacheFileError(DataLossError):
    """A cache file is damaged, incomplete or from another format version; names the file and offset."""

    def __init__(self, path: str, offset: int, reason: str):
        super().__init__(f"cache file {path}: {reason} (at byte offset {offset})")
        self.path, self.offset, self.reason = path, offset, reason


def _pad(n: int) -> int:
    return -n % ALIGN


# --- writing -------------------------------------------------------------------------------------------
def _file_dtype(dtype: np.dtype, where: str) -> np.dtype:
    """The little-endian dtype a leaf is stored with; only plain kinds are allowed."""
    if dtype.kind not in "biufcmMSU" or dtype.fields is not None or dtype.subdtype is not None:
        raise InvalidArgumentError(
            f"{where} has dtype {dtype}, which a disk cache cannot store: use numeric, bool, string or "
            "datetime arrays (convert in a map first)"
        )
    if dtype.byteorder == ">" or (dtype.byteorder == "=" and sys.byteorder == "big"):
        return dtype.newbyteorder("<")
    return dtype


def _items_kind(array: np.ndarray, where: str) -> str:
    kinds = {type(item) for item in array.flat}
    if kinds <= {bytes}:
        return "ob"
    if kinds == {str}:
        return "os"
    raise InvalidArgumentError(
        f"{where} is an object array holding {sorted(k.__name__ for k in kinds)}; a disk cache stores object "
        "arrays of bytes (or of str) only"
    )


def _leaf_key(leaf: Any, where: str) -> tuple:
    kind = type(leaf)
    if kind is bool:
        return ("?",)
    if kind is int:
        return ("i",)
    if kind is float:
        return ("f",)
    if kind is bytes:
        return ("b",)
    if kind is str:
        return ("s",)
    if leaf is None:
        return ("n",)
    if isinstance(leaf, np.ndarray):
        if leaf.dtype.hasobject:
            return (_items_kind(leaf, where), leaf.ndim)
        return ("a", _file_dtype(leaf.dtype, where).str, leaf.ndim)
    if isinstance(leaf, np.generic):
        return ("g", _file_dtype(leaf.dtype, where).str)
    raise InvalidArgumentError(
        f"{where} is a {kind.__name__}; a disk cache stores numpy arrays and scalars, Python numbers, bytes, "
        "str and None inside tuples and dicts (convert it in a map first, or use cache() in memory)"
    )


def _lengths(values: list) -> tuple[str, np.ndarray]:
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    width = "<u4" if lengths.size == 0 or int(lengths.max()) < 2**32 else "<u8"
    return width, lengths.astype(width)


def _encode_leaf(key: tuple, column: list) -> tuple[dict, list]:
    """The spec and byte sections of one leaf over a block's records."""
    code = key[0]
    n = len(column)
    if code == "a":
        dtype = np.dtype(key[1])
        first = column[0].shape
        if all(a.shape == first for a in column):
            return {"k": "a", "dt": key[1], "nd": key[2], "shape": list(first)}, [
                np.stack(column).astype(dtype, copy=False)
            ]
        shapes = np.array([a.shape for a in column], dtype="<i8").reshape(n, key[2])
        data = np.concatenate([np.asarray(a, dtype=dtype).reshape(-1) for a in column])
        return {"k": "a", "dt": key[1], "nd": key[2], "shape": None}, [shapes, data]
    if code == "g":
        return {"k": "g", "dt": key[1]}, [np.array(column, dtype=np.dtype(key[1]))]
    if code in ("i", "f", "?"):
        dtype = {"i": "<i8", "f": "<f8", "?": "|u1"}[code]
        try:
            return {"k": code}, [np.array(column, dtype=dtype)]
        except OverflowError:
            raise InvalidArgumentError(
                "a Python int outside the int64 range cannot be stored in a disk cache; convert it to bytes or str"
            ) from None
    if code in ("b", "s"):
        values = column if code == "b" else [s.encode("utf-8", "surrogatepass") for s in column]
        width, lengths = _lengths(values)
        return {"k": code, "len": width}, [lengths, b"".join(values)]
    if code in ("ob", "os"):
        first = column[0].shape
        fixed = all(a.shape == first for a in column)
        items = [item for a in column for item in a.flat]
        if code == "os":
            items = [s.encode("utf-8", "surrogatepass") for s in items]
        width, lengths = _lengths(items)
        spec = {"k": code, "nd": key[1], "shape": list(first) if fixed else None, "len": width}
        sections = [lengths, b"".join(items)]
        if not fixed:
            sections.insert(0, np.array([a.shape for a in column], dtype="<i8").reshape(n, key[1]))
        return spec, sections
    return {"k": "n"}, []


def _as_bytes(section: Any) -> memoryview:
    if isinstance(section, bytes):
        return memoryview(section)
    # numpy's stubs give ndarray the buffer protocol (__buffer__) only for Python >= 3.12
    return memoryview(np.ascontiguousarray(section).reshape(-1).view(np.uint8))  # type: ignore[arg-type]


def write_error(exc: OSError, path: str, doing: str) -> OSError:
    """An OSError of the same kind whose message names the path and what to change."""
    return os_error(
        exc,
        path,
        f"{doing} of the disk cache",
        "pass a cache filename in a writable directory with free space",
    )


def temp_name(path: str) -> str:
    """A fresh temporary name next to ``path``, reclaimable once its writer is dead."""
    return temporary_path(path)


class CacheFileWriter:
    """Writes records to a temporary file next to ``path``; :meth:`commit` makes it appear as ``path``.

    Until ``commit`` (which fsyncs the file, renames it over ``path`` and fsyncs the directory) nothing
    exists at ``path``; :meth:`abort` removes the temporary file. At most one block of records is
    held in memory.
    """

    def __init__(
        self,
        path: str,
        header: dict,
        *,
        temp: str | None = None,
        block_bytes: int | None = None,
        block_records: int | None = None,
    ):
        self.path = path
        self.temp = temp or temp_name(path)
        self.block_bytes = BLOCK_BYTES if block_bytes is None else block_bytes
        self.block_records = min(BLOCK_RECORDS if block_records is None else block_records, MAX_BLOCK_RECORDS)
        directory = os.path.dirname(os.path.abspath(path))
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise write_error(exc, directory, "create the cache directory") from exc
        try:
            self._file = open(self.temp, "xb")  # noqa: SIM115 (closed by commit or abort)
        except OSError as exc:
            raise write_error(exc, self.temp, "create the temporary cache file") from exc
        header_bytes = json.dumps({"format": "headrace cache", "version": VERSION, **header}).encode()
        self._header_crc = crc32c(header_bytes)
        start = _HEAD.pack(MAGIC, VERSION, len(header_bytes)) + header_bytes
        self._write([start, b"\0" * _pad(len(start))])
        self.offset = len(start) + _pad(len(start))
        self.records = 0
        self.blocks: list[list[int]] = []
        self.element_spec: dict | None = None
        self.closed = False
        self._signature: tuple | None = None
        self._columns: list[list] = []
        self._pending = 0
        self._pending_bytes = 0

    def _write(self, pieces: list) -> None:
        try:
            for piece in pieces:
                self._file.write(piece)
        except OSError as exc:
            raise write_error(exc, self.temp, "write the temporary cache file") from exc

    def append(self, element: Any, where: str = "element") -> None:
        """Add one record (a nested tuple/dict of numpy arrays, numbers, bytes, str or None)."""
        leaves: list = []
        keys: list = []

        def leaf(value: Any, path: str) -> int:
            keys.append(_leaf_key(value, path))
            leaves.append(value)
            return len(leaves) - 1  # the tree names each leaf by its column

        tree = encode_structure(element, leaf, where)  # the element codec checkpoints use too
        signature = (tree, keys)
        if signature != self._signature:
            self.flush()
            self._signature = signature
            self._columns = [[] for _ in leaves]
        for column, leaf in zip(self._columns, leaves):
            column.append(leaf)
            if isinstance(leaf, (bytes, str)):
                self._pending_bytes += len(leaf)
            elif isinstance(leaf, np.ndarray):
                self._pending_bytes += leaf.nbytes if not leaf.dtype.hasobject else 32 * leaf.size
            else:
                self._pending_bytes += 8
        self._pending += 1
        if self._pending >= self.block_records or self._pending_bytes >= self.block_bytes:
            self.flush()

    def extend(self, elements: list, first_position: int = 0) -> None:
        for offset, element in enumerate(elements):
            self.append(element, f"element {first_position + offset}")

    def flush(self) -> None:
        """Write the records held in memory as one block."""
        if not self._pending:
            return
        tree, keys = cast(tuple, self._signature)  # set by the append() that made _pending non-zero
        leaves, sections = [], []
        for key, column in zip(keys, self._columns):
            spec, parts = _encode_leaf(key, column)
            leaves.append(spec)
            sections.extend(parts)
        views = [_as_bytes(s) for s in sections]
        spec = {
            "n": self._pending,
            "tree": tree,
            "leaves": leaves,
            "sizes": [v.nbytes for v in views],
        }
        if self.element_spec is None:
            self.element_spec = {"tree": spec["tree"], "leaves": leaves}
        spec_bytes = json.dumps(spec, separators=(",", ":")).encode()
        spec_bytes += b" " * _pad(_BLOCK.size + len(spec_bytes))  # JSON allows trailing blanks
        pieces: list = [spec_bytes]
        for view in views:
            pieces += [view, b"\0" * _pad(view.nbytes)]
        crc = 0
        for piece in pieces:
            crc = crc32c(piece, crc)
        data_length = sum(len(p) if isinstance(p, bytes) else p.nbytes for p in pieces[1:])
        self._write([_BLOCK.pack(BLOCK_MAGIC, len(spec_bytes), data_length, self._pending, crc), *pieces])
        length = _BLOCK.size + len(spec_bytes) + data_length
        self.blocks.append([self.offset, length, self._pending])
        self.offset += length
        self.records += self._pending
        self._columns = [[] for _ in self._columns]
        self._pending = self._pending_bytes = 0

    def commit(self) -> None:
        """Finish the file and make it appear at ``path`` in one atomic rename (durable once this returns).
        On failure (a full disk) the temporary file is removed and the error names it."""
        with on_failure(self.abort):
            self._finish()

    def _finish(self) -> None:
        self.flush()
        footer = json.dumps(
            {"blocks": self.blocks, "records": self.records, "element_spec": self.element_spec}
        ).encode()
        trailer = _TRAILER.pack(
            self.offset, len(footer), crc32c(footer), self._header_crc, b"\0" * 4, END_MAGIC
        )
        self._write([footer, trailer])
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self.closed = True
            os.replace(self.temp, self.path)
        except OSError as exc:
            raise write_error(exc, self.path, "publish the cache file") from exc
        fsync_directory(os.path.dirname(os.path.abspath(self.path)))

    def abort(self) -> None:
        """Drop everything written; idempotent."""
        if not self.closed:
            self.closed = True
            try:
                self._file.close()
            except OSError:
                pass
        try:
            os.unlink(self.temp)
        except OSError:
            pass


# --- reading -------------------------------------------------------------------------------------------
class CacheFileReader:
    """Reads a complete cache file; opening checks the header, trailer and block index.

    ``read_block(i)`` returns the records of block ``i`` (one read; arrays are views of one buffer);
    ``locate(position)`` gives the block and offset of a record, for seeks.
    """

    def __init__(self, path: str):
        self.path = path
        try:
            self._file = open(path, "rb", buffering=0)  # noqa: SIM115 (closed by close)
        except OSError as exc:
            raise CacheFileError(path, 0, f"cannot be opened ({exc.strerror or exc})") from exc
        self._assemblers: dict[bytes, tuple] = {}
        with on_failure(self._file.close):
            self._open()

    def _error(self, offset: int, reason: str) -> CacheFileError:
        return CacheFileError(self.path, offset, reason)

    def _read(self, offset: int, length: int, what: str) -> bytearray:
        buffer = bytearray(length)
        view = memoryview(buffer)
        self._file.seek(offset)
        done = 0
        while done < length:
            got = self._file.readinto(view[done:])
            if not got:
                raise self._error(
                    offset + done, f"short read of {what}: wanted {length} bytes, the file ends after {done}"
                )
            done += got
        return buffer

    def _json(self, data: bytes | bytearray, offset: int, what: str) -> dict:
        try:
            value = load_json(bytes(data), what, _MAX_JSON)
        except ValueError as exc:
            raise self._error(offset, str(exc)) from None
        if not isinstance(value, dict):
            raise self._error(offset, f"{what} is not a JSON object")
        return value

    def _open(self) -> None:
        size = os.fstat(self._file.fileno()).st_size
        if size < _HEAD.size + _TRAILER.size:
            raise self._error(
                0, f"the file is {size} bytes, too short for a complete cache (an interrupted write?)"
            )
        magic, version, header_length = _HEAD.unpack(self._read(0, _HEAD.size, "the file header"))
        if magic != MAGIC:
            raise self._error(
                0, f"not a headrace cache file (starts with {bytes(magic)!r}, expected {MAGIC!r})"
            )
        if version != VERSION:
            raise self._error(8, f"cache format version {version}, this headrace reads version {VERSION}")
        data_start = _HEAD.size + header_length + _pad(_HEAD.size + header_length)
        if header_length > _MAX_JSON or data_start + _TRAILER.size > size:
            raise self._error(12, f"header length {header_length} runs past the end of the {size}-byte file")
        header_bytes = self._read(_HEAD.size, header_length, "the header")
        footer_offset, footer_length, footer_crc, header_crc, _, end = _TRAILER.unpack(
            self._read(size - _TRAILER.size, _TRAILER.size, "the trailer")
        )
        if end != END_MAGIC:
            raise self._error(
                size - 8, "no end marker: the file is incomplete (an interrupted write) or truncated"
            )
        if crc32c(header_bytes) != header_crc:
            raise self._error(_HEAD.size, "header checksum mismatch")
        self.header = self._json(header_bytes, _HEAD.size, "the header")
        if (
            not data_start <= footer_offset
            or footer_offset + footer_length != size - _TRAILER.size
            or footer_length > _MAX_JSON
        ):
            raise self._error(
                size - _TRAILER.size,
                f"footer offset {footer_offset} / length {footer_length} do not fit the file",
            )
        footer_bytes = self._read(footer_offset, footer_length, "the footer")
        if crc32c(footer_bytes) != footer_crc:
            raise self._error(footer_offset, "footer checksum mismatch")
        footer = self._json(footer_bytes, footer_offset, "the footer")
        self.blocks: list[tuple[int, int, int]] = []
        self.firsts: list[int] = []
        expected, total = data_start, 0
        entries = footer.get("blocks")
        if not isinstance(entries, list):
            raise self._error(footer_offset, "the footer has no block list")
        for entry in entries:
            if not (isinstance(entry, list) and len(entry) == 3 and all(type(v) is int for v in entry)):
                raise self._error(footer_offset, f"malformed block entry {str(entry)[:60]} in the footer")
            offset, length, count = entry
            if offset != expected or length < _BLOCK.size or count < 0 or offset + length > footer_offset:
                raise self._error(footer_offset, f"block entry {entry} does not follow the previous block")
            if count > MAX_BLOCK_RECORDS:
                raise self._error(
                    footer_offset,
                    f"block {len(self.blocks)} claims {count:,} records; a writer puts at most "
                    f"{MAX_BLOCK_RECORDS:,} in a block (a damaged or forged file)",
                )
            self.blocks.append((offset, length, count))
            self.firsts.append(total)
            expected, total = offset + length, total + count
        if expected != footer_offset or footer.get("records") != total:
            raise self._error(
                footer_offset, f"the footer's blocks hold {total} records, it says {footer.get('records')}"
            )
        self.records = total
        self.element_spec = footer.get("element_spec")

    def locate(self, position: int) -> tuple[int, int]:
        """(block index, index within the block) of record ``position``; ``(len(blocks), 0)`` at the end."""
        if position >= self.records:
            return len(self.blocks), 0
        block = bisect.bisect_right(self.firsts, position) - 1
        return block, position - self.firsts[block]

    def read_block(self, index: int) -> list:
        offset, length, count = self.blocks[index]
        buffer = self._read(offset, length, f"block {index}")
        magic, spec_length, data_length, records, crc = _BLOCK.unpack_from(buffer, 0)
        if magic != BLOCK_MAGIC or records != count or _BLOCK.size + spec_length + data_length != length:
            raise self._error(offset, f"block {index} has a bad block header")
        if crc32c(memoryview(buffer)[_BLOCK.size :]) != crc:
            raise self._error(offset, f"block {index} checksum mismatch (the file is damaged)")
        spec_bytes = bytes(buffer[_BLOCK.size : _BLOCK.size + spec_length])
        compiled = self._assemblers.get(spec_bytes)
        if compiled is None:
            compiled = self._compile(spec_bytes, offset, index, count)
            self._assemblers[spec_bytes] = compiled
        decoders, assemble, sizes = compiled
        columns, position = [], _BLOCK.size + spec_length
        sections = []
        for size in sizes:
            if position + size > length:
                raise self._error(offset + position, f"block {index}: a section runs past the block's end")
            sections.append(position)
            position += size + _pad(size)
        cursor = 0
        try:
            for decode, used in decoders:
                columns.append(
                    decode(buffer, sections[cursor : cursor + used], sizes[cursor : cursor + used], count)
                )
                cursor += used
        except ValueError as exc:
            raise self._error(offset, f"block {index}: {exc}") from None
        return assemble(columns, count)

    def _compile(self, spec_bytes: bytes, offset: int, index: int, count: int) -> tuple:
        spec = self._json(spec_bytes, offset + _BLOCK.size, f"block {index}'s spec")
        try:
            if spec.get("n") != count:
                raise ValueError(f"spec says {spec.get('n')} records, the block header {count}")
            sizes = spec["sizes"]
            if not (isinstance(sizes, list) and all(type(s) is int and s >= 0 for s in sizes)):
                raise ValueError("malformed section sizes")
            decoders = [_leaf_decoder(leaf) for leaf in spec["leaves"]]
            if sum(used for _, used in decoders) != len(sizes):
                raise ValueError("the leaves do not match the sections")
            used_leaves: set[int] = set()
            assemble = _assembler(spec["tree"], len(decoders), used_leaves, 0)
            if len(used_leaves) != len(decoders):
                raise ValueError("the structure does not use every leaf")
        except (KeyError, TypeError, ValueError, RecursionError) as exc:
            raise self._error(offset + _BLOCK.size, f"block {index} has a malformed spec ({exc})") from None
        return decoders, assemble, sizes

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self.blocks)):
            yield from self.read_block(index)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> CacheFileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _safe_dtype(name: Any) -> np.dtype:
    if not isinstance(name, str) or not _DTYPE.fullmatch(name):
        raise ValueError(f"dtype {str(name)[:30]!r} is not allowed in a cache file")
    return np.dtype(name)


def _shape(value: Any, ndim: int) -> tuple[int, ...]:
    if not (
        isinstance(value, list)
        and len(value) == ndim
        and all(type(d) is int and 0 <= d < 2**40 for d in value)
    ):
        raise ValueError(f"malformed shape {str(value)[:40]}")
    return tuple(value)


def _check(size: int, expected: int, what: str) -> None:
    if size != expected:
        raise ValueError(f"{what} section holds {size} bytes, the spec implies {expected}")


def _shapes_section(buffer: Any, start: int, size: int, count: int, ndim: int) -> np.ndarray:
    _check(size, count * ndim * 8, "shapes")
    shapes = np.frombuffer(buffer, "<i8", count * ndim, start).reshape(count, ndim)
    if shapes.size and (shapes.min() < 0 or shapes.max() >= 2**40):
        raise ValueError("a shape holds an impossible size")
    return shapes


def _split(
    buffer: Any, lengths_at: int, lengths_size: int, data_at: int, data_size: int, width: str, items: int
) -> list:
    _check(lengths_size, items * np.dtype(width).itemsize, "lengths")
    lengths = np.frombuffer(buffer, width, items, lengths_at).astype(np.int64)
    ends = np.cumsum(lengths)
    _check(data_size, int(ends[-1]) if items else 0, "string data")
    data = bytes(memoryview(buffer)[data_at : data_at + data_size])
    starts = (ends - lengths).tolist()
    return [data[a:b] for a, b in zip(starts, ends.tolist())]


def _leaf_decoder(leaf: Any) -> tuple:
    """(decode(buffer, section starts, section sizes, count) -> column, number of sections)."""
    if not isinstance(leaf, dict):
        raise ValueError("a leaf spec is not an object")
    code = leaf.get("k")
    if code == "a":
        dtype, ndim = _safe_dtype(leaf["dt"]), leaf["nd"]
        if type(ndim) is not int or not 0 <= ndim <= 32:
            raise ValueError(f"bad rank {ndim!r}")
        if leaf["shape"] is not None:
            shape = _shape(leaf["shape"], ndim)
            per = int(np.prod(shape, dtype=np.int64))

            def fixed(buffer: Any, at: Any, sizes: Any, count: int) -> Any:
                _check(sizes[0], count * per * dtype.itemsize, "array")
                array = np.frombuffer(buffer, dtype, count * per, at[0]).reshape((count, *shape))
                return [array[i, ...] for i in range(count)] if not shape else list(array)

            return fixed, 1

        def ragged(buffer: Any, at: Any, sizes: Any, count: int) -> Any:
            shapes = _shapes_section(buffer, at[0], sizes[0], count, ndim)
            counts = shapes.prod(axis=1) if ndim else np.ones(count, np.int64)
            ends = np.cumsum(counts)
            _check(sizes[1], int(ends[-1]) * dtype.itemsize if count else 0, "array")
            return [
                np.frombuffer(buffer, dtype, n, at[1] + start * dtype.itemsize).reshape(shape)
                for start, n, shape in zip(
                    (ends - counts).tolist(), counts.tolist(), map(tuple, shapes.tolist())
                )
            ]

        return ragged, 2
    if code in ("g", "i", "f", "?"):
        dtype = (
            _safe_dtype(leaf["dt"]) if code == "g" else np.dtype({"i": "<i8", "f": "<f8", "?": "|u1"}[code])
        )

        def scalars(buffer: Any, at: Any, sizes: Any, count: int) -> Any:
            _check(sizes[0], count * dtype.itemsize, "scalar")
            values = np.frombuffer(buffer, dtype, count, at[0])
            if code == "g":
                return list(values)
            return (values != 0).tolist() if code == "?" else values.tolist()

        return scalars, 1
    if code in ("b", "s"):
        width = leaf["len"]
        if width not in ("<u4", "<u8"):
            raise ValueError(f"bad length width {width!r}")

        def strings(buffer: Any, at: Any, sizes: Any, count: int) -> Any:
            values = _split(buffer, at[0], sizes[0], at[1], sizes[1], width, count)
            return values if code == "b" else [v.decode("utf-8", "surrogatepass") for v in values]

        return strings, 2
    if code in ("ob", "os"):
        ndim, width = leaf["nd"], leaf["len"]
        if type(ndim) is not int or not 0 <= ndim <= 32 or width not in ("<u4", "<u8"):
            raise ValueError("bad object-array leaf")
        object_shape = None if leaf["shape"] is None else _shape(leaf["shape"], ndim)

        def objects(buffer: Any, at: Any, sizes: Any, count: int) -> Any:
            if object_shape is None:
                shapes = [tuple(s) for s in _shapes_section(buffer, at[0], sizes[0], count, ndim).tolist()]
                at, sizes = at[1:], sizes[1:]
            else:
                shapes = [object_shape] * count
            counts = [int(np.prod(s, dtype=np.int64)) for s in shapes]
            items = _split(buffer, at[0], sizes[0], at[1], sizes[1], width, sum(counts))
            if code == "os":
                items = [v.decode("utf-8", "surrogatepass") for v in items]
            out, start = [], 0
            for s, n in zip(shapes, counts):
                array = np.empty(n, dtype=object)
                array[:] = items[start : start + n]
                out.append(array.reshape(s))
                start += n
            return out

        return objects, (2 if object_shape is not None else 3)
    if code == "n":
        return (lambda buffer, at, sizes, count: [None] * count), 0
    raise ValueError(f"unknown leaf kind {str(code)[:20]!r}")


def _assembler(tree: Any, leaves: int, used: set[int], depth: int) -> Callable[..., Any]:
    """A function (columns, count) -> records for a spec's structure tree."""
    if depth > _MAX_DEPTH:
        raise ValueError("the structure is nested too deeply")
    if type(tree) is int:
        if not 0 <= tree < leaves or tree in used:
            raise ValueError(f"bad leaf index {tree}")
        used.add(tree)
        return lambda columns, count: columns[tree]
    if not isinstance(tree, dict):
        raise ValueError("malformed structure")
    if "d" in tree:
        keys = [k for k, _ in tree["d"]]
        if not all(type(k) in (str, int) for k in keys):
            raise ValueError("bad dict key")
        parts = [_assembler(sub, leaves, used, depth + 1) for _, sub in tree["d"]]
        if not parts:
            return lambda columns, count: [{} for _ in range(count)]
        return lambda columns, count: [
            dict(zip(keys, values)) for values in zip(*(p(columns, count) for p in parts))
        ]
    parts = [_assembler(sub, leaves, used, depth + 1) for sub in tree["t"]]
    kind = None
    if "nt" in tree:
        module, qualname, fields = tree["nt"]
        kind = namedtuple_class(str(module), str(qualname), list(fields))
    if not parts:
        empty = () if kind is None else tuple.__new__(kind, ())
        return lambda columns, count: [empty] * count
    if kind is None:
        return lambda columns, count: list(zip(*(p(columns, count) for p in parts)))
    return lambda columns, count: [tuple.__new__(kind, v) for v in zip(*(p(columns, count) for p in parts))]
