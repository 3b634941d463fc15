"""Memory budgets for sizes read from data: the one place that decides how large a length, a count or
an image dimension found in a file may be before headrace allocates memory for it.

A damaged or hostile file can claim any size in a few bytes (a record length, a ragged row id, JPEG
dimensions). Every such size is checked here before anything is allocated, and one that exceeds its
budget raises an error naming the budget, the value and how to raise it. Budgets are read from
environment variables, so worker processes inherit what the parent set; :func:`set_limit` sets them.

>>> limit("max_record_bytes") == LIMITS["max_record_bytes"].default
True
>>> previous = set_limit("max_ragged_rows", 10)
>>> check_size("max_ragged_rows", 11, "parse_example: feature 'x' of record 0")
Traceback (most recent call last):
...
headrace.io.limits.LimitExceededError: parse_example: feature 'x' of record 0 describes 11 ragged rows, above the budget max_ragged_rows=10; if the data is right, raise it with headrace.io.set_limit('max_ragged_rows', 11) or the environment variable HEADRACE_MAX_RAGGED_ROWS=11
>>> _ = set_limit("max_ragged_rows", previous)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError


@dataclass(frozen=True)
class Limit:
    """One budget: its environment variable, default, and how an exceeded value is described."""

    name: str
    default: int
    what: str  # "describes {value} {what}" in messages

    @property
    def env(self) -> str:
        return "HEADRACE_" + self.name.upper()


#: Every budget. The defaults are far above what real data needs and far below what would exhaust a
#: training machine's memory; each can be raised per process (and its workers).
LIMITS = {
    limit.name: limit
    for limit in (
        # a TFRecord frame's length field (plain or GZIP/ZLIB): the record is held in memory whole
        Limit("max_record_bytes", 256 << 20, "bytes in one record"),
        # rows a RaggedFeature partition may describe in one record (value_rowids, uniform splits):
        # unlike values, rows cost memory without taking bytes in the record
        Limit("max_ragged_rows", 1 << 24, "ragged rows"),
        # elements of a dense output padded to its longest record (FixedLenSequenceFeature): one
        # long record costs its length times the batch size
        Limit("max_padded_elements", 1 << 28, "elements"),
        # height * width of a decoded image, checked from the header before any pixel is decoded
        # (Pillow's own guard is ~89 Mpixel; this allows 11585 x 11585)
        Limit("max_image_pixels", 1 << 27, "pixels"),
    )
}


class LimitExceededError(InvalidArgumentError):
    """A size read from data exceeds its memory budget; ``limit`` names the budget."""

    def __init__(self, message: str, limit: str, value: int):
        super().__init__(message)
        self.limit = limit
        self.value = value


def _known(name: str) -> Limit:
    try:
        return LIMITS[name]
    except KeyError:
        raise InvalidArgumentError(
            f"unknown memory budget {name!r}; the budgets are {', '.join(sorted(LIMITS))}"
        ) from None


#: Each budget's environment variable, spelled once (``limit`` runs per decoded image).
_ENV = {name: spec.env for name, spec in LIMITS.items()}


def limit(name: str) -> int:
    """The current value of budget ``name`` (its environment variable, else its default)."""
    env = _ENV.get(name)
    raw = os.environ.get(env) if env is not None else None
    if not raw:
        return _known(name).default
    spec = _known(name)
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        value = -1
    if value < 0:
        raise InvalidArgumentError(
            f"environment variable {spec.env}={raw!r} is not a number of {spec.what} >= 0; "
            f"unset it for the default ({spec.default:,})"
        )
    return value


def set_limit(name: str, value: int | None) -> int:
    """Set budget ``name`` for this process and the workers it starts from now on (None: the
    default); returns the previous value.

    >>> previous = set_limit("max_image_pixels", 4096 * 4096)
    >>> limit("max_image_pixels")
    16777216
    >>> _ = set_limit("max_image_pixels", previous)
    """
    spec = _known(name)
    previous = limit(name)
    if value is None:
        os.environ.pop(spec.env, None)
    else:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidArgumentError(f"set_limit({name!r}, {value!r}): the budget must be an int >= 0")
        os.environ[spec.env] = str(int(value))
    return previous


def how_to_raise(name: str, value: int) -> str:
    """The sentence that ends every budget error."""
    spec = _known(name)
    return (
        f"if the data is right, raise it with headrace.io.set_limit({name!r}, {value}) or the "
        f"environment variable {spec.env}={value}"
    )


def exceeded(name: str, value: int, where: str) -> str:
    """``where`` describes ``value`` of budget ``name``, above its current value: the message."""
    spec = _known(name)
    return (
        f"{where} describes {value:,} {spec.what}, above the budget {name}={limit(name):,}; "
        + how_to_raise(name, value)
    )


def check_size(name: str, value: int, where: str) -> None:
    """Raise :class:`LimitExceededError` when ``value`` exceeds budget ``name``."""
    if value > limit(name):
        raise LimitExceededError(exceeded(name, int(value), where), name, int(value))


# --- metadata JSON ---------------------------------------------------------------------------------
#: Nesting a headrace metadata file can have: an element structure is at most 65 levels of tuples and
#: dicts (``core.state.MAX_DEPTH``), up to 3 JSON levels each, inside a few levels of the file's own.
#: Far below what makes the JSON decoder recurse out of the stack.
MAX_JSON_DEPTH = 256


class DamagedJSONError(ValueError):
    """Metadata JSON that is invalid, nested too deeply or too large; the message says which."""


def json_depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects in ``data`` (UTF-8 JSON), without parsing it.

    Counts the brackets outside strings, in C and numpy: a quote opens or closes a string unless an
    odd run of backslashes precedes it. On valid JSON this is the depth the decoder would recurse
    to; on invalid JSON it is exact up to the first invalid byte, where the decoder stops.

    >>> json_depth(b'{"a": [1, "]]]", {"b": 2}]}')
    3
    """
    raw = np.frombuffer(data, np.uint8)
    quotes = np.flatnonzero(raw == 34)
    if quotes.size:
        slashes = np.flatnonzero(raw == 92)
        if slashes.size:
            first = np.ones(slashes.size, bool)
            first[1:] = np.diff(slashes) != 1
            run_start = slashes[np.maximum.accumulate(np.where(first, np.arange(slashes.size), 0))]
            before = np.maximum(np.searchsorted(slashes, quotes) - 1, 0)
            escaped = (slashes[before] == quotes - 1) & ((quotes - run_start[before]) % 2 == 1)
            quotes = quotes[~escaped]
    opens = np.flatnonzero((raw == 91) | (raw == 123))
    if not opens.size:
        return 0
    closes = np.flatnonzero((raw == 93) | (raw == 125))
    where = np.concatenate([opens, closes])
    steps = np.concatenate([np.ones(opens.size, np.int32), np.full(closes.size, -1, np.int32)])
    order = np.argsort(where, kind="stable")
    where, steps = where[order], steps[order]
    steps[np.searchsorted(quotes, where) % 2 == 1] = 0  # inside a string
    return int(np.cumsum(steps).max(initial=0))


def load_json(data: bytes | str, what: str, max_bytes: int, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse metadata JSON (a manifest, a sidecar header, a lock, a cache file's header): the one
    bounded reader. Size and nesting are checked before parsing, so a hostile file gives
    :class:`DamagedJSONError` naming ``what`` and the reason, never a ``RecursionError`` or
    ``MemoryError``.

    >>> load_json(b'{"a": [1]}', "the lock", 100)
    {'a': [1]}
    >>> load_json(b"[" * 1000 + b"]" * 1000, "the lock", 4096)
    Traceback (most recent call last):
    ...
    headrace.io.limits.DamagedJSONError: the lock is nested 1000 levels deep, more than the 256 a headrace file can have
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > max_bytes:
        raise DamagedJSONError(
            f"{what} holds {len(data):,} bytes of JSON, more than the {max_bytes:,} a headrace file of "
            "its kind can have"
        )
    depth = json_depth(data)
    if depth > max_depth:
        raise DamagedJSONError(
            f"{what} is nested {depth} levels deep, more than the {max_depth} a headrace file can have"
        )
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # RecursionError: only if called already near the limit
        raise DamagedJSONError(f"{what} is not valid JSON ({exc})") from None
