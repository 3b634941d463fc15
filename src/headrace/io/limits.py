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

import os
from dataclasses import dataclass

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
