"""Argument checks shared by the image functions: rank, dtype, channels, random generators.

Every message names the public function, what it was given and what it accepts.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from ..core.element_random import ELEMENT_RNG
from ..core.errors import InvalidArgumentError

_RANK_TEXT = {
    2: "an (H, W) image",
    3: "an (H, W, C) image",
    4: "an (N, H, W, C) batch",
}


def as_image(image: Any, fn: str, ranks: tuple[int, ...] = (3, 4), numeric: bool = True) -> np.ndarray:
    """``image`` as an ndarray of one of ``ranks``; ``numeric`` also requires an int or float dtype."""
    array = image if isinstance(image, np.ndarray) else np.asarray(image)
    if array.ndim not in ranks:
        allowed = " or ".join(f"{_RANK_TEXT[r]} (rank {r})" for r in ranks)
        raise InvalidArgumentError(
            f"{fn}: image has shape {array.shape} (rank {array.ndim}); expected {allowed}"
        )
    kinds = "uif" if numeric else "uifb"
    if array.dtype.kind not in kinds:
        allowed = "an integer or float dtype" if numeric else "a numeric or bool dtype"
        raise InvalidArgumentError(f"{fn}: image has dtype {array.dtype}; expected {allowed}")
    return array


def require_channels(image: np.ndarray, fn: str, channels: int, hint: str = "") -> None:
    if image.shape[-1] != channels:
        raise InvalidArgumentError(
            f"{fn}: image has {image.shape[-1]} channels (shape {image.shape}); expected {channels}{hint}"
        )


def per_image(value: Any, image: np.ndarray, fn: str, name: str, dtype=np.float32) -> np.ndarray:
    """A scalar argument, or one value per image of a batch shaped to broadcast against NHWC."""
    array = np.asarray(value, dtype=dtype)
    if array.ndim == 0:
        return array  # a 0-d array: arithmetic with it keeps the working dtype
    if image.ndim == 4 and array.shape == (image.shape[0],):
        return array.reshape(-1, 1, 1, 1)
    expected = (
        f"a scalar or one value per image, shape ({image.shape[0]},)" if image.ndim == 4 else "a scalar"
    )
    raise InvalidArgumentError(
        f"{fn}: {name} has shape {array.shape} for an image of shape {image.shape}; expected {expected}"
    )


def resolve_rng(rng: Any, seed: Any, fn: str) -> np.random.Generator:
    """The generator a random function draws from: ``rng``, else one seeded by ``seed``, else fresh.

    ``seed`` gives ``np.random.default_rng(seed)``'s draws; building that generator costs ~15 us, more
    than a flip, so each thread keeps the last few seeded generators and rewinds one to its initial
    state (~1.5 us). Without either, inside ``map(f, seed=S)`` draws come from the element's own
    stream (the generator ``f`` is given as ``rng``, as ``headrace.random.*`` draw: ported
    ``tf.image.random_*(image)`` calls are reproducible there); elsewhere from a per-thread generator
    seeded once from the OS (again per process after a fork), as unpredictable as a fresh
    ``default_rng()`` per call. The generator returned is used by the calling function only, before
    it returns.
    """
    if rng is not None:
        if seed is not None:
            raise InvalidArgumentError(f"{fn}: pass either rng or seed, not both (got seed={seed!r})")
        if not isinstance(rng, np.random.Generator):
            raise InvalidArgumentError(
                f"{fn}: rng={rng!r} is not allowed: pass a numpy Generator such as "
                "np.random.default_rng(0) (map(..., seed=S) passes one to your function)"
            )
        return rng
    if seed is None:
        element = ELEMENT_RNG.get()
        if element is not None:
            return element
    generators = _thread_generators()
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InvalidArgumentError(f"{fn}: seed={seed!r} is not allowed: a non-negative int or None")
        key = int(seed)
        seeded = generators.seeded.get(key)
        if seeded is None:
            if len(generators.seeded) >= _SEEDED_PER_THREAD:
                del generators.seeded[next(iter(generators.seeded))]
            generator = np.random.default_rng(key)
            generators.seeded[key] = (generator, generator.bit_generator.state)
            return generator
        generator, initial = seeded
        generator.bit_generator.state = initial
        return generator
    if generators.unseeded is None:
        generators.unseeded = np.random.default_rng()
    return generators.unseeded


_SEEDED_PER_THREAD = 16
_local = threading.local()
_forks = 0  # bumped in a forked child, so that it does not repeat its parent's unseeded draws


class _Generators:
    def __init__(self) -> None:
        self.forks = _forks
        self.seeded: dict[int, tuple[np.random.Generator, Any]] = {}
        self.unseeded: np.random.Generator | None = None


def _thread_generators() -> _Generators:
    generators = getattr(_local, "generators", None)
    if generators is None or generators.forks != _forks:
        generators = _local.generators = _Generators()
    return generators


def _after_fork_in_child() -> None:
    global _forks
    _forks += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def batch_size_of(image: np.ndarray) -> tuple[int] | None:
    """Size of the per-image random draws: None (one Python number) for an image, ``(N,)`` for a batch."""
    return (image.shape[0],) if image.ndim == 4 else None


def check_number(condition: bool, fn: str, name: str, value: Any, allowed: str) -> None:
    if not condition:
        raise InvalidArgumentError(f"{fn}: {name}={value!r} is not allowed: {allowed}")


def check_size(value: Any, fn: str, name: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidArgumentError(f"{fn}: {name}={value!r} is not allowed: an int >= {minimum}")
    return int(value)


def spatial_axes(image: np.ndarray) -> tuple[int, int]:
    """Axes of height and width: (0, 1) for HWC, (1, 2) for NHWC."""
    return (image.ndim - 3, image.ndim - 2)


def stateless_rng(seed: Any, fn: str) -> np.random.Generator:
    """The generator of a ``stateless_*`` function: a Philox stream keyed by tf's 2-int ``seed``.

    The same seed always gives the same stream (tf's stateless contract); the stream itself is not
    TensorFlow's, so values are equal in distribution, not bit for bit.
    """
    array = np.asarray(seed)
    if array.shape != (2,) or array.dtype.kind not in "ui":
        raise InvalidArgumentError(
            f"{fn}: seed={seed!r} is not allowed: a shape [2] integer array, e.g. (1, 2) "
            "(stateless functions take tf's 2-int seed; the random_* functions take an int seed or rng)"
        )
    low, high = (int(v) & 0xFFFFFFFFFFFFFFFF for v in array.tolist())
    return np.random.Generator(np.random.Philox(key=low | (high << 64)))


_PIL: Any = None


def pillow(fn: str) -> Any:
    """Pillow's ``PIL`` package with ``Image`` and ``ImageSequence`` loaded, or an ImportError that
    names the function and the extra that installs it (a bare "No module named 'PIL'" told users of
    ``pip install headrace`` nothing). Imported once: the import statements cost ~1 us a call."""
    global _PIL
    if _PIL is None:
        try:
            import PIL.Image  # noqa: PLC0415 (optional dependency: extra `image`)
            import PIL.ImageSequence  # noqa: PLC0415
        except ImportError:
            raise ImportError(
                f"{fn} needs Pillow (and simplejpeg, for fast JPEG), which headrace installs only with its "
                "image extra: pip install 'headrace[image]'"
            ) from None
        _PIL = PIL
    return _PIL
