"""The Keras preprocessing that input functions call inside tf.data maps, on numpy: the lookup layers
(``tf.keras.layers.StringLookup``, ``IntegerLookup``) and ``tf.keras.applications.<model>.preprocess_input``.

They are reached as ``tf.keras`` through ``import headrace.compat.eager as tf``, where every other
``tf.keras`` name is the installed Keras's (models, training): Keras 3's own lookup layers need
TensorFlow for strings, these do not. Index layout, defaults and dtypes are Keras 3's: with
``vocabulary=["a", "b"]``, ``"a"`` is 1, ``"b"`` 2 and anything else 0 (the OOV index); a
``mask_token`` takes index 0 and moves the rest up by one.

>>> lookup = StringLookup(vocabulary=["a", "b", "c"])
>>> lookup(np.array([b"a", b"c", b"z"], dtype=object)).tolist(), lookup.vocabulary_size()
([1, 3, 0], 4)
>>> StringLookup(vocabulary=["a", "b"], invert=True)(np.array([2, 0])).tolist()
[b'b', b'[UNK]']
>>> IntegerLookup(vocabulary=[12, 36], output_mode="one_hot")(np.array([36])).tolist()
[0, 0, 1]
>>> preprocess_input(np.full((1, 1, 3), 255, np.uint8), mode="tf").tolist()
[[[1.0, 1.0, 1.0]]]
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..io.storage.fs import open_file
from .strings import to_hash_bucket_fast

_OUTPUT_MODES = ("int", "one_hot", "multi_hot", "count")


#: the arguments of Keras' lookup layers that :class:`_Lookup` takes (each layer adds its own)
_SHARED = frozenset(
    {"max_tokens", "num_oov_indices", "mask_token", "oov_token", "vocabulary", "invert", "output_mode"}
    | {"sparse", "pad_to_max_tokens", "name"}
)


class _Lookup:
    """What StringLookup and IntegerLookup share: a vocabulary, its special indices, the output modes."""

    _strings = False  # whether tokens are strings (inverted outputs are then object arrays of bytes)

    def _key(self, value: Any) -> Any:
        """A token as the vocabulary holds it (bytes, or an int)."""
        raise NotImplementedError

    def _out(self, key: Any) -> Any:
        return key

    def _buckets(self, flat: np.ndarray) -> np.ndarray:
        """The OOV bucket of each value, for ``num_oov_indices`` > 1."""
        raise NotImplementedError

    def __init__(
        self,
        *,
        max_tokens: int | None,
        num_oov_indices: int,
        mask_token: Any,
        oov_token: Any,
        vocabulary: Any,
        invert: bool,
        output_mode: str,
        sparse: bool,
        pad_to_max_tokens: bool,
        name: str | None,
    ):
        layer = type(self).__name__
        if output_mode not in _OUTPUT_MODES:
            raise InvalidArgumentError(
                f"{layer}: output_mode={output_mode!r} is not covered here; one of {', '.join(_OUTPUT_MODES)} "
                "('tf_idf' needs Keras with TensorFlow)"
            )
        if invert and output_mode != "int":
            raise InvalidArgumentError(f"{layer}: invert=True only works with output_mode='int'")
        if sparse:
            raise InvalidArgumentError(f"{layer}: sparse=True is not covered here (dense outputs only)")
        if not isinstance(num_oov_indices, int) or num_oov_indices < 0:
            raise InvalidArgumentError(
                f"{layer}: num_oov_indices must be an int >= 0, got {num_oov_indices!r}"
            )
        if vocabulary is None:
            raise InvalidArgumentError(
                f"{layer}: pass vocabulary= (a list, an array or a file with one token per line); adapt() "
                "is not covered here"
            )
        self.name = name
        self.max_tokens, self.pad_to_max_tokens = max_tokens, pad_to_max_tokens
        self.num_oov_indices, self.invert, self.output_mode = num_oov_indices, invert, output_mode
        self.mask_token = None if mask_token is None else self._key(mask_token)
        self.oov_token = self._key(oov_token)
        tokens = [self._key(t) for t in self._read(vocabulary)]
        specials = {self.mask_token, self.oov_token} - {None}
        if len(set(tokens)) != len(tokens):
            raise InvalidArgumentError(f"{layer}: the vocabulary has repeated tokens")
        if specials & set(tokens):
            raise InvalidArgumentError(
                f"{layer}: the vocabulary holds the mask or OOV token {sorted(specials & set(tokens))!r}; "
                "leave the special tokens out (they get indices of their own)"
            )
        self._tokens = tokens
        self._first = (0 if self.mask_token is None else 1) + num_oov_indices  # the first token's index
        self._index = {token: self._first + i for i, token in enumerate(tokens)}
        if max_tokens is not None and self.vocabulary_size() > max_tokens:
            raise InvalidArgumentError(
                f"{layer}: {self.vocabulary_size()} indices (vocabulary and special tokens) exceed "
                f"max_tokens={max_tokens}"
            )

    def _read(self, vocabulary: Any) -> list:
        if isinstance(vocabulary, (str, bytes)) and not isinstance(vocabulary, np.ndarray):
            with open_file(vocabulary if isinstance(vocabulary, str) else vocabulary.decode(), "rb") as f:
                return [line.rstrip(b"\r\n") for line in f.read().split(b"\n") if line.rstrip(b"\r\n")]
        return list(np.asarray(vocabulary).reshape(-1).tolist())

    def get_vocabulary(self, include_special_tokens: bool = True) -> list:
        if not include_special_tokens:
            return [self._out(t) for t in self._tokens]
        special = [] if self.mask_token is None else [self.mask_token]
        return [self._out(t) for t in special + [self.oov_token] * self.num_oov_indices + self._tokens]

    def vocabulary_size(self) -> int:
        size = self._first + len(self._tokens)
        return max(size, self.max_tokens or 0) if self.pad_to_max_tokens else size

    def __call__(self, inputs: Any) -> Any:
        from ._tensor import tensor  # noqa: PLC0415 (TF's element type, what the facade's code expects)

        values = np.asarray(inputs)
        if self.invert:
            return tensor(self._invert(values))
        indices = self._lookup(values)
        if self.output_mode == "int":
            return tensor(indices)
        return tensor(self._encode(indices))

    def _lookup(self, values: np.ndarray) -> np.ndarray:
        flat = values.reshape(-1)
        out = np.empty(flat.shape, np.int64)
        oov_start = 0 if self.mask_token is None else 1
        hashed = None
        for i, value in enumerate(flat.tolist()):
            key = self._key(value)
            index = self._index.get(key)
            if index is not None:
                out[i] = index
            elif self.mask_token is not None and key == self.mask_token:
                out[i] = 0
            elif self.num_oov_indices == 0:
                raise InvalidArgumentError(
                    f"{type(self).__name__}: {value!r} is not in the vocabulary and num_oov_indices=0"
                )
            elif self.num_oov_indices == 1:
                out[i] = oov_start
            else:
                if hashed is None:
                    hashed = self._buckets(flat)
                out[i] = oov_start + int(hashed[i])
        return out.reshape(values.shape)

    def _invert(self, values: np.ndarray) -> np.ndarray:
        table = self.get_vocabulary()
        out = np.empty(values.shape, dtype=object if self._strings else np.int64)
        for index, value in np.ndenumerate(values):
            i = int(value)
            if not 0 <= i < len(table):
                out[index] = self._out(self.oov_token)
            else:
                out[index] = table[i]
        return out

    def _encode(self, indices: np.ndarray) -> np.ndarray:
        depth = self.vocabulary_size()
        if self.output_mode == "one_hot":
            eye = np.eye(depth, dtype=np.int64)
            if indices.ndim and indices.shape[-1] == 1:  # Keras: a trailing dimension of 1 is the value
                indices = indices[..., 0]
            return eye[indices]
        rows = indices if indices.ndim > 1 else indices[None]
        counts = np.zeros((*rows.shape[:-1], depth), np.int64)
        for position in np.ndindex(*rows.shape[:-1]):
            np.add.at(counts[position], rows[position], 1)
        if self.output_mode == "multi_hot":
            counts = np.minimum(counts, 1)
        return counts if indices.ndim > 1 else counts[0]


class StringLookup(_Lookup):
    """``tf.keras.layers.StringLookup``: strings to int64 indices (``invert=True``: back). Keras 3's
    arguments; ``adapt``, ``tf_idf`` and sparse outputs are not covered."""

    _strings = True

    def __init__(
        self,
        max_tokens: int | None = None,
        num_oov_indices: int = 1,
        mask_token: Any = None,
        oov_token: Any = "[UNK]",
        vocabulary: Any = None,
        idf_weights: Any = None,
        invert: bool = False,
        output_mode: str = "int",
        pad_to_max_tokens: bool = False,
        sparse: bool = False,
        encoding: str = "utf-8",
        name: str | None = None,
        **kwargs: Any,
    ):
        self.encoding = encoding
        super().__init__(
            **{k: v for k, v in locals().items() if k in _SHARED}
        )  # the layers' common arguments

    def _key(self, value: Any) -> bytes:
        if isinstance(value, str):
            return value.encode(self.encoding)
        if isinstance(value, (bytes, np.bytes_)):
            return bytes(value)
        raise InvalidArgumentError(f"StringLookup: expected strings, got {type(value).__name__} {value!r}")

    def _buckets(self, flat: np.ndarray) -> np.ndarray:
        keys = np.array([self._key(v) for v in flat.tolist()], dtype=object)
        return np.asarray(to_hash_bucket_fast(keys, self.num_oov_indices))


class IntegerLookup(_Lookup):
    """``tf.keras.layers.IntegerLookup``: integers to int64 indices (``invert=True``: back). Keras 3's
    arguments; ``adapt``, ``tf_idf`` and sparse outputs are not covered."""

    _strings = False

    def __init__(
        self,
        max_tokens: int | None = None,
        num_oov_indices: int = 1,
        mask_token: Any = None,
        oov_token: Any = -1,
        vocabulary: Any = None,
        vocabulary_dtype: str = "int64",
        idf_weights: Any = None,
        invert: bool = False,
        output_mode: str = "int",
        sparse: bool = False,
        pad_to_max_tokens: bool = False,
        name: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(
            **{k: v for k, v in locals().items() if k in _SHARED}
        )  # the layers' common arguments

    def _read(self, vocabulary: Any) -> list:
        if isinstance(vocabulary, (str, bytes)):
            return [int(line) for line in super()._read(vocabulary)]
        return super()._read(vocabulary)

    def _key(self, value: Any) -> int:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise InvalidArgumentError(
                f"IntegerLookup: expected integers, got {type(value).__name__} {value!r}"
            )
        return int(value)

    def _buckets(self, flat: np.ndarray) -> np.ndarray:
        # Keras puts an integer in OOV bucket value mod num_oov_indices (strings: a fingerprint's)
        return np.array([int(v) % self.num_oov_indices for v in flat.tolist()], np.int64)


# --- keras.applications' preprocess_input ------------------------------------------------------------
_CAFFE_MEAN = (103.939, 116.779, 123.68)  # BGR
_TORCH_MEAN, _TORCH_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # RGB


def preprocess_input(x: Any, data_format: str | None = None, mode: str = "caffe") -> np.ndarray:
    """``keras.applications.imagenet_utils.preprocess_input`` on numpy: ``caffe`` (RGB to BGR, less
    ImageNet's BGR mean), ``tf`` (to [-1, 1]) or ``torch`` (to [0, 1], less mean, over std). Integer
    images become float32, float ones keep their dtype; the input is not changed in place."""
    if mode not in ("caffe", "tf", "torch"):
        raise InvalidArgumentError(f"preprocess_input: mode={mode!r}; one of 'caffe', 'tf', 'torch'")
    if data_format not in (None, "channels_last", "channels_first"):
        raise InvalidArgumentError(f"preprocess_input: data_format={data_format!r}")
    array = np.asarray(x)
    array = array.astype(np.float32) if array.dtype.kind not in "f" else array.copy()
    if mode == "tf":
        return array / np.asarray(127.5, array.dtype) - np.asarray(1, array.dtype)
    axis = -1 if data_format != "channels_first" else (0 if array.ndim == 3 else 1)
    if array.shape[axis] != 3:
        raise InvalidArgumentError(
            f"preprocess_input: mode={mode!r} needs 3 colour channels on axis {axis}, got shape {array.shape}"
        )
    shape = [1] * array.ndim
    shape[axis] = 3
    if mode == "torch":
        array = array / np.asarray(255, array.dtype)
        mean = np.asarray(_TORCH_MEAN, array.dtype).reshape(shape)
        return (array - mean) / np.asarray(_TORCH_STD, array.dtype).reshape(shape)
    array = np.flip(array, axis)  # RGB -> BGR
    return array - np.asarray(_CAFFE_MEAN, array.dtype).reshape(shape)


def _identity(x: Any, data_format: str | None = None) -> np.ndarray:
    """The models whose preprocessing is inside the model: ``preprocess_input`` passes ``x`` through."""
    return np.asarray(x)


def _module(name: str, mode: str | None) -> types.SimpleNamespace:
    if mode is None:
        return types.SimpleNamespace(__name__=name, preprocess_input=_identity)

    def preprocess(x: Any, data_format: str | None = None) -> np.ndarray:
        return preprocess_input(x, data_format, mode)

    preprocess.__name__ = preprocess.__qualname__ = "preprocess_input"
    return types.SimpleNamespace(__name__=name, preprocess_input=preprocess)


#: ``tf.keras.applications.<name>``: the preprocessing mode of each model family (None: none needed)
APPLICATIONS = {
    name: _module(name, mode)
    for names, mode in (
        (("resnet", "resnet50", "vgg16", "vgg19"), "caffe"),
        (
            (
                "resnet_v2",
                "mobilenet",
                "mobilenet_v2",
                "inception_v3",
                "inception_resnet_v2",
                "xception",
                "nasnet",
            ),
            "tf",
        ),
        (("densenet",), "torch"),
        (("efficientnet", "efficientnet_v2", "convnext", "mobilenet_v3", "regnet", "resnet_rs"), None),
    )
    for name in names
}
APPLICATIONS["imagenet_utils"] = types.SimpleNamespace(
    __name__="imagenet_utils", preprocess_input=preprocess_input
)

LAYERS = {"StringLookup": StringLookup, "IntegerLookup": IntegerLookup}
