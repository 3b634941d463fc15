"""tf.strings on object arrays of ``bytes`` (headrace's string tensors), elementwise with broadcasting.

Regular expressions use Python's ``re`` on bytes, not RE2: the common syntax is the same (RE2 has no
backreferences or lookaround, so patterns written for TF work); a rewrite's ``\\0`` is the whole match
as in RE2.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.trace_hook import traceable
from ._tensor import STRING, DTypeError, as_tensor, check_dtype, dtype_arg, infer, is_tensor, out, tf_name


def _strings(value: Any, what: str = "input") -> np.ndarray:
    array = as_tensor(value) if is_tensor(value) else infer(value)
    if array.dtype != STRING:
        raise DTypeError(f"{what} must be a string tensor, got {tf_name(array.dtype)}")
    return array


def _apply(fn: Callable, *arrays: np.ndarray, otype: Any = object) -> np.ndarray:
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise InvalidArgumentError(
            f"Incompatible shapes: {' vs. '.join(str(list(a.shape)) for a in arrays)}"
        ) from None
    result = (
        np.frompyfunc(fn, len(arrays), 1)(*arrays)
        if shape or arrays[0].ndim
        else fn(*(a[()] for a in arrays))
    )
    array = np.asarray(result, dtype=object).reshape(shape)
    return array if otype is object else array.astype(otype)


def _ascii_map(table: bytes) -> Callable:
    return lambda s: s.translate(table)


_LOWER = bytes(range(65)) + bytes(range(97, 123)) + bytes(range(91, 256))
_UPPER = bytes(range(97)) + bytes(range(65, 91)) + bytes(range(123, 256))


@traceable("strings.lower")
def lower(input: Any, encoding: str = "", name: str | None = None) -> Any:  # noqa: A002
    """ASCII letters lowered; with ``encoding='utf-8'`` every Unicode letter."""
    array = _strings(input)
    if encoding.lower().replace("-", "") == "utf8":
        return out(_apply(lambda s: s.decode("utf-8", "replace").lower().encode(), array))
    if encoding:
        raise InvalidArgumentError(f"StringLower: encoding must be '' or 'utf-8', got {encoding!r}")
    return out(_apply(_ascii_map(_LOWER), array))


@traceable("strings.upper")
def upper(input: Any, encoding: str = "", name: str | None = None) -> Any:  # noqa: A002
    array = _strings(input)
    if encoding.lower().replace("-", "") == "utf8":
        return out(_apply(lambda s: s.decode("utf-8", "replace").upper().encode(), array))
    if encoding:
        raise InvalidArgumentError(f"StringUpper: encoding must be '' or 'utf-8', got {encoding!r}")
    return out(_apply(_ascii_map(_UPPER), array))


def join(inputs: Any, separator: str = "", name: str | None = None) -> Any:
    """Elementwise joins of the tensors in ``inputs`` (scalars broadcast)."""
    arrays = [_strings(v, "inputs") for v in inputs]
    if not arrays:
        return b""
    sep = separator.encode() if isinstance(separator, str) else bytes(separator)
    return out(_apply(lambda *parts: sep.join(parts), *arrays))


def reduce_join(
    inputs: Any, axis: Any = None, keepdims: bool = False, separator: str = "", name: str | None = None
) -> Any:
    array = _strings(inputs)
    sep = separator.encode() if isinstance(separator, str) else bytes(separator)
    if axis is None:
        result: Any = np.asarray(sep.join(array.reshape(-1).tolist()), dtype=object)
        if keepdims:
            result = result.reshape([1] * array.ndim)
        return out(result)
    a = int(axis)
    if not -array.ndim <= a < array.ndim:
        raise InvalidArgumentError(
            f"ReduceJoin: Invalid reduction dimension {a} for input with {array.ndim} dimension(s)"
        )
    moved = np.moveaxis(array, a, -1)
    joined = np.empty(moved.shape[:-1], dtype=object)
    for index in np.ndindex(joined.shape):
        joined[index] = sep.join(moved[index].tolist())
    return out(np.expand_dims(joined, a % array.ndim) if keepdims else joined)


@traceable("strings.length")
def length(input: Any, unit: str = "BYTE", name: str | None = None) -> Any:  # noqa: A002
    array = _strings(input)
    if unit == "BYTE":
        return out(_apply(len, array, otype=np.int32))
    if unit == "UTF8_CHAR":
        return out(_apply(lambda s: sum(1 for b in s if b & 0xC0 != 0x80), array, otype=np.int32))
    raise ValueError(f"unit must be one of 'BYTE' or 'UTF8_CHAR', got {unit!r}")


@traceable("strings.strip")
def strip(input: Any, name: str | None = None) -> Any:  # noqa: A002
    return out(_apply(lambda s: s.strip(b" \t\n\r\x0b\x0c"), _strings(input)))


def _per_string(fn: Callable, array: np.ndarray) -> np.ndarray:
    """``fn`` of each string, as an object array of its results (lists) with the input's shape."""
    result = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        result[index] = fn(item)
    return result


def _ragged_or_list(pieces: np.ndarray, dtype: Any = object) -> Any:
    """One list per string: a 1-D array for a scalar input, ``hr.io.Ragged`` rows for a vector."""
    from ..io.codec.ragged import Ragged  # noqa: PLC0415 (io imports this package)

    if pieces.ndim == 0:
        return np.array(pieces[()], dtype=dtype).reshape(-1)
    if pieces.ndim != 1:
        raise InvalidArgumentError(
            f"only scalars and vectors of strings are supported here, got rank {pieces.ndim}"
        )
    rows = pieces.tolist()
    values = np.array([item for row in rows for item in row], dtype=dtype).reshape(-1)
    return Ragged.from_row_lengths(values, [len(row) for row in rows])


def split(input: Any, sep: Any = None, maxsplit: int = -1, name: str | None = None) -> Any:  # noqa: A002
    """Split on ``sep`` (None: runs of whitespace, empty pieces dropped); a scalar gives a 1-D array,
    a vector ``hr.io.Ragged`` rows (TensorFlow's RaggedTensor)."""
    array = _strings(input)
    limit = None if maxsplit is None or maxsplit < 0 else int(maxsplit)
    if sep is None:
        fn = (lambda s: s.split()) if limit is None else (lambda s: s.split(None, limit))
    else:
        separator = sep.encode() if isinstance(sep, str) else bytes(sep)
        if not separator:
            raise InvalidArgumentError("StringSplitV2: sep must not be empty")
        fn = (lambda s: s.split(separator)) if limit is None else (lambda s: s.split(separator, limit))
    return _ragged_or_list(_per_string(fn, array))


def bytes_split(input: Any, name: str | None = None) -> Any:  # noqa: A002
    return _ragged_or_list(_per_string(lambda s: [bytes([b]) for b in s], _strings(input)))


def _decode(s: bytes, encoding: str, errors: str, replacement_char: int) -> list[str]:
    codec = encoding.lower().replace("-", "")
    python = {"utf8": "utf-8", "utf16be": "utf-16-be", "utf32be": "utf-32-be"}.get(codec)
    if python is None:
        raise InvalidArgumentError(
            f"input_encoding must be one of UTF-8, UTF-16-BE, UTF-32-BE, got {encoding!r}"
        )
    if errors == "strict":
        try:
            return list(s.decode(python))
        except UnicodeDecodeError:
            raise InvalidArgumentError(f"Invalid formatting on input string: {s!r}") from None
    if errors == "ignore":
        return list(s.decode(python, "ignore"))
    if errors != "replace":
        raise ValueError(f"errors must be one of 'strict', 'replace', 'ignore', got {errors!r}")
    return list(s.decode(python, "replace").replace("\ufffd", chr(replacement_char)))


def unicode_split(
    input: Any,
    input_encoding: str,
    errors: str = "replace",
    replacement_char: int = 65533,
    name: str | None = None,
) -> Any:  # noqa: A002
    """The characters of each string, each encoded back as ``input_encoding`` bytes."""
    array = _strings(input)
    codec = {"utf8": "utf-8", "utf16be": "utf-16-be", "utf32be": "utf-32-be"}.get(
        input_encoding.lower().replace("-", ""), "utf-8"
    )
    return _ragged_or_list(
        _per_string(
            lambda s: [c.encode(codec) for c in _decode(s, input_encoding, errors, replacement_char)], array
        )
    )


def unicode_decode(
    input: Any,
    input_encoding: str,
    errors: str = "replace",
    replacement_char: int = 65533,
    replace_control_characters: bool = False,
    name: str | None = None,
) -> Any:  # noqa: A002
    return _ragged_or_list(
        _per_string(
            lambda s: [ord(c) for c in _decode(s, input_encoding, errors, replacement_char)], _strings(input)
        ),
        np.int32,
    )


def unicode_encode(
    input: Any,
    output_encoding: str,
    errors: str = "replace",
    replacement_char: int = 65533,
    name: str | None = None,
) -> Any:  # noqa: A002
    from ..io.codec.ragged import Ragged  # noqa: PLC0415

    codec = {"utf8": "utf-8", "utf16be": "utf-16-be", "utf32be": "utf-32-be"}[
        output_encoding.lower().replace("-", "")
    ]
    if isinstance(input, Ragged):
        return np.array(
            [("".join(chr(c) for c in row)).encode(codec) for row in input.to_list()], dtype=object
        )
    codes = np.asarray(input)
    if codes.ndim == 1:
        return "".join(chr(int(c)) for c in codes).encode(codec)
    return np.array(["".join(chr(int(c)) for c in row).encode(codec) for row in codes], dtype=object)


#: RE2's POSIX classes (ASCII), as Python character-class contents
_POSIX = {
    b"alnum": rb"0-9A-Za-z",
    b"alpha": rb"A-Za-z",
    b"ascii": rb"\x00-\x7f",
    b"blank": rb"\t ",
    b"cntrl": rb"\x00-\x1f\x7f",
    b"digit": rb"0-9",
    b"graph": rb"!-~",
    b"lower": rb"a-z",
    b"print": rb" -~",
    b"punct": rb"!-/:-@\[-`{-~",
    b"space": rb"\t\n\x0b\x0c\r ",
    b"upper": rb"A-Z",
    b"word": rb"0-9A-Za-z_",
    b"xdigit": rb"0-9A-Fa-f",
}
_POSIX_CLASS = re.compile(rb"\[:(\^?)([a-z]+):\]")


def _re2_to_python(text: bytes) -> bytes:
    """RE2 syntax Python's ``re`` lacks: POSIX classes inside brackets (``[[:punct:]]``, ``[^[:space:]x]``)
    and ``\\z`` (end of text). Python would read ``[[:punct:]]`` as a set of ``[:punct`` then ``]``."""
    out, i, in_class, class_start = bytearray(), 0, False, False
    while i < len(text):
        char = text[i : i + 1]
        if char == b"\\":
            pair = text[i : i + 2]
            out += b"\\Z" if pair == b"\\z" else pair
            i += 2
            continue
        if in_class:
            posix = _POSIX_CLASS.match(text, i)
            if posix:
                name = posix.group(2)
                if name not in _POSIX or posix.group(1):
                    raise InvalidArgumentError(
                        f"Invalid pattern: unsupported character class {posix.group(0)!r}"
                    )
                out += _POSIX[name]
                i, class_start = posix.end(), False
                continue
            if char == b"]" and not class_start:
                in_class = False
            class_start = False
            out += char
            i += 1
            continue
        if char == b"[":
            in_class, class_start = True, True
            out += char
            i += 1
            if text[i : i + 1] == b"^":
                out += b"^"
                i += 1
            continue
        out += char
        i += 1
    return bytes(out)


def _pattern(pattern: Any) -> re.Pattern:
    raw = pattern[()] if is_tensor(pattern) else pattern
    text = raw.encode() if isinstance(raw, str) else bytes(raw)
    try:
        return re.compile(_re2_to_python(text))
    except re.error as exc:
        raise InvalidArgumentError(f"Invalid pattern: {raw!r}, error: {exc}") from None


@traceable("strings.regex_replace")
def regex_replace(
    input: Any, pattern: Any, rewrite: Any, replace_global: bool = True, name: str | None = None
) -> Any:  # noqa: A002
    array = _strings(input)
    compiled = _pattern(pattern)
    raw = rewrite[()] if is_tensor(rewrite) else rewrite
    template = raw.encode() if isinstance(raw, str) else bytes(raw)
    template = re.sub(rb"\\(\d)", rb"\\g<\1>", template)  # RE2's \0 .. \9 (\0: the whole match)
    count = 0 if replace_global else 1
    try:
        return out(_apply(lambda s: compiled.sub(template, s, count=count), array))
    except (re.error, IndexError) as exc:
        raise InvalidArgumentError(f"RegexReplace: bad rewrite {raw!r}: {exc}") from None


@traceable("strings.regex_full_match")
def regex_full_match(input: Any, pattern: Any, name: str | None = None) -> Any:  # noqa: A002
    compiled = _pattern(pattern)
    return out(_apply(lambda s: compiled.fullmatch(s) is not None, _strings(input), otype=bool))


def substr(input: Any, pos: Any, len: Any, unit: str = "BYTE", name: str | None = None) -> Any:  # noqa: A002
    """``len`` items from ``pos`` (negative: from the end); a ``pos`` outside the string is an error."""
    array = _strings(input)
    positions = np.asarray(pos)
    lengths = np.asarray(len)
    if positions.dtype.kind not in "iu" or lengths.dtype.kind not in "iu":
        raise DTypeError("Substr: pos and len must be integers")
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be one of 'BYTE' or 'UTF8_CHAR', got {unit!r}")

    def cut(s: bytes, p: Any, n: Any) -> bytes:
        items: Any = s if unit == "BYTE" else s.decode("utf-8", "replace")
        size = items.__len__()
        p, n = int(p), int(n)
        start = p + size if p < 0 else p
        if start < 0 or start > size:
            raise InvalidArgumentError(f"Substr: pos {p} out of range for string {s!r}")
        piece = items[start : start + n] if n >= 0 else items[start:start]
        return piece if unit == "BYTE" else piece.encode()

    return out(_apply(cut, array, positions, lengths))


@traceable("strings.to_number")
def to_number(string_tensor: Any, out_type: Any = np.float32, name: str | None = None) -> Any:
    """Parse numbers; a string that is not one is an InvalidArgumentError."""
    array = _strings(string_tensor)
    target = dtype_arg(out_type)
    check_dtype(
        "StringToNumber",
        target,
        tuple(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64)),
        "out_type",
    )

    def parse(s: bytes) -> Any:
        text = s.decode("ascii", "replace").strip()
        try:
            if target.kind == "i":
                if not re.fullmatch(r"[+-]?\d+", text):
                    raise ValueError
                value = int(text)
                info = np.iinfo(target)
                if not info.min <= value <= info.max:
                    raise ValueError
                return value
            if not re.fullmatch(
                r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|infinity|nan)", text, re.IGNORECASE
            ):
                raise ValueError
            return float(text)
        except ValueError:
            raise InvalidArgumentError(
                f"StringToNumberOp could not correctly convert string: {s.decode('utf-8', 'replace')}"
            ) from None

    return out(_apply(parse, array).astype(target))


string_to_number = to_number


@traceable("strings.as_string")
def as_string(
    input: Any,
    precision: int = -1,
    scientific: bool = False,
    shortest: bool = False,
    width: int = -1,
    fill: str = "",
    name: str | None = None,
) -> Any:  # noqa: A002
    """Numbers as text, printf-style as TensorFlow formats them (%f with 6 digits for floats)."""
    array = as_tensor(input) if is_tensor(input) else infer(input)
    if array.dtype == STRING:
        return out(array)
    flags = ("0" if fill == "0" else "") + ("" if width < 0 else str(width))
    if array.dtype.kind == "f":
        spec = (
            "%"
            + flags
            + ("" if precision < 0 else f".{precision}")
            + ("g" if shortest else "e" if scientific else "f")
        )
        fn: Callable = lambda v: (
            (spec % v).encode()
            if np.isfinite(v)
            else (("-" if v < 0 else "") + ("inf" if np.isinf(v) else "nan")).encode()
        )
    elif array.dtype.kind in "iu":
        spec = "%" + flags + "d"
        fn = lambda v: (spec % v).encode()
    elif array.dtype.kind == "b":
        fn = lambda v: b"true" if v else b"false"
    else:
        fn = lambda v: f"({v.real:f},{v.imag:f})".encode()
    result = np.empty(array.shape, dtype=object)
    for index, value in np.ndenumerate(array):
        result[index] = fn(value)
    return out(result)


def format(
    template: str, inputs: Any, placeholder: str = "{}", summarize: int = 3, name: str | None = None
) -> Any:  # noqa: A001
    from .control import _format  # noqa: PLC0415

    values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    parts = template.split(placeholder)
    if len(parts) - 1 != values.__len__():
        raise ValueError(
            f"num placeholders in template and num inputs must match: {len(parts) - 1} vs. {values.__len__()}"
        )
    text = parts[0] + "".join(_format(v, summarize) + p for v, p in zip(values, parts[1:]))
    return text.encode()


def _num_buckets(num_buckets: Any) -> int:
    value = int(num_buckets)
    if value < 1:
        raise InvalidArgumentError(f"Value for attr 'num_buckets' of {value} must be at least minimum 1")
    return value


def _hash_op(fn: Callable, input: Any, num_buckets: Any) -> Any:  # noqa: A002
    from ._hash import M64  # noqa: PLC0415

    array = _strings(input)
    n = _num_buckets(num_buckets)
    flat = [(fn(s) & M64) % n for s in array.reshape(-1).tolist()]
    return out(np.array(flat, dtype=np.int64).reshape(array.shape))


@traceable("strings.to_hash_bucket_fast")
def to_hash_bucket_fast(input: Any, num_buckets: Any, name: str | None = None) -> Any:  # noqa: A002
    """``Fingerprint64(s) % num_buckets`` of each string (farmhash, as TensorFlow's), int64."""
    from ._hash import fingerprint64  # noqa: PLC0415

    return _hash_op(fingerprint64, input, num_buckets)


@traceable("strings.to_hash_bucket")
def to_hash_bucket(string_tensor: Any, num_buckets: Any, name: str | None = None) -> Any:
    """TensorFlow's (deprecated) ``Hash64(s) % num_buckets``, int64."""
    from ._hash import hash64  # noqa: PLC0415

    return _hash_op(hash64, string_tensor, num_buckets)


@traceable("strings.to_hash_bucket_strong")
def to_hash_bucket_strong(input: Any, num_buckets: Any, key: Any, name: str | None = None) -> Any:  # noqa: A002
    """``SipHash-2-4(key, s) % num_buckets``: ``key`` is two integers, int64."""
    from ._hash import M64, siphash24  # noqa: PLC0415

    parts = list(np.asarray(key).reshape(-1).tolist()) if is_tensor(key) else list(key)
    if len(parts) != 2:
        raise InvalidArgumentError(f"StringToHashBucketStrong: key must have 2 elements, got {len(parts)}")
    k0, k1 = (int(k) & M64 for k in parts)
    return _hash_op(lambda s: siphash24(k0, k1, s), input, num_buckets)
