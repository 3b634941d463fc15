"""``tf.train.Example`` and its parts (``Features``, ``Feature``, ``BytesList``, ``FloatList``,
``Int64List``) as plain Python objects that serialize to, and parse from, the bytes TensorFlow's
protos give: scripts that write TFRecords build them, then call ``SerializeToString()``.

>>> import headrace as tf
>>> example = tf.train.Example(features=tf.train.Features(feature={
...     "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))}))
>>> data = example.SerializeToString()
>>> data == tf.io.serialize_example({"label": 3})
True
>>> tf.train.Example.FromString(data).features.feature["label"].int64_list.value
[3]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..io.codec.example import encode_features, length_delimited
from ..io.codec.schema import NotAMessage, decode_example


class _List:
    """A repeated field: ``value`` is a Python list, as the proto's ``value`` reads."""

    kind = ""

    def __init__(self, value: Iterable[Any] = ()):
        # a 0-d array is a scalar (what a tf op returns for one value: TF code passes `t.numpy()`)
        self.value = [self._one(v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v) for v in value]

    @staticmethod
    def _one(v: Any) -> Any:
        return v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _List) and type(other) is type(self) and other.value == self.value

    def __repr__(self) -> str:
        return f"{type(self).__name__}(value={self.value!r})"


class BytesList(_List):
    kind = "bytes"

    @staticmethod
    def _one(v: Any) -> bytes:
        if isinstance(v, str):
            return v.encode("utf-8")
        if isinstance(v, (bytes, bytearray, memoryview, np.bytes_)):
            return bytes(v)
        raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: bytes")


class FloatList(_List):
    kind = "float"

    @staticmethod
    def _one(v: Any) -> float:
        if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool):
            raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int, float")
        return float(np.float32(v))  # stored as float32, as the proto's field is


class Int64List(_List):
    kind = "int64"

    @staticmethod
    def _one(v: Any) -> int:
        if isinstance(v, (float, np.floating, str, bytes)):
            raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int")
        number = int(v)
        if not -(1 << 63) <= number < 1 << 63:
            raise ValueError(f"Value out of range: {number}")
        return number


_LISTS = {"bytes_list": BytesList, "float_list": FloatList, "int64_list": Int64List}


class Feature:
    """One of ``bytes_list``, ``float_list`` or ``int64_list`` (reading an unset one gives it empty)."""

    def __init__(
        self,
        bytes_list: BytesList | None = None,
        float_list: FloatList | None = None,
        int64_list: Int64List | None = None,
    ):
        given = {k: v for k, v in zip(_LISTS, (bytes_list, float_list, int64_list)) if v is not None}
        if len(given) > 1:
            raise ValueError(f"a Feature holds one list, got {sorted(given)}")
        for name, value in given.items():
            if not isinstance(value, _LISTS[name]):
                raise TypeError(
                    f"{name} must be a tf.train.{_LISTS[name].__name__}, got {type(value).__name__}"
                )
        self._kind: str | None = None
        self._list: _List | None = None
        for name, value in given.items():
            self._kind, self._list = name, value

    def WhichOneof(self, name: str) -> str | None:  # noqa: N802 (the proto API's name)
        if name != "kind":
            raise ValueError(f'Protocol message has no oneof "{name}" field.')
        return self._kind

    def __getattr__(self, name: str) -> Any:
        if name in _LISTS:
            return self._list if self._kind == name else _LISTS[name]()
        raise AttributeError(name)

    def _values(self) -> Any:
        if self._kind is None:
            return []  # no list: parsers treat the feature as missing
        values = self._list.value if self._list is not None else []
        if self._kind == "bytes_list":
            return values if values else np.zeros(0, dtype=object)
        return np.asarray(values, dtype=np.float32 if self._kind == "float_list" else np.int64)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Feature) and (self._kind, self._list) == (other._kind, other._list)

    def __repr__(self) -> str:
        return f"Feature({self._kind}={self._list!r})" if self._kind else "Feature()"


class Features:
    def __init__(self, feature: Mapping[str, Feature] | None = None):
        self.feature: dict[str, Feature] = dict(feature or {})
        for key, value in self.feature.items():
            if not isinstance(value, Feature):
                raise TypeError(f"feature {key!r} must be a tf.train.Feature, got {type(value).__name__}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Features) and other.feature == self.feature

    def __repr__(self) -> str:
        return f"Features(feature={self.feature!r})"


class Example:
    """``tf.train.Example``: ``SerializeToString()``, ``FromString(data)``, ``ParseFromString(data)``."""

    def __init__(self, features: Features | None = None):
        if features is not None and not isinstance(features, Features):
            raise TypeError(f"features must be a tf.train.Features, got {type(features).__name__}")
        self._has_features = features is not None  # a set field is written even when empty
        self.features = features if features is not None else Features()

    def SerializeToString(self, deterministic: bool = False) -> bytes:  # noqa: N802, ARG002
        """The serialized Example; map entries in insertion order (TF's own order is unspecified)."""
        body = encode_features({key: f._values() for key, f in self.features.feature.items()})
        return length_delimited(0x0A, body) if body or self._has_features else b""

    @classmethod
    def FromString(cls, data: bytes) -> Example:  # noqa: N802
        example = cls()
        example.ParseFromString(data)
        return example

    def ParseFromString(self, data: bytes) -> int:  # noqa: N802
        try:
            decoded = decode_example(bytes(data))
        except NotAMessage as exc:
            raise InvalidArgumentError(f"Error parsing message: {exc}") from None
        kinds = {"bytes": "bytes_list", "float": "float_list", "int64": "int64_list"}
        self._has_features = bool(data)
        self.features = Features(
            {
                key: _feature(kinds[kind], values) if kind in kinds else Feature()
                for key, (kind, values) in decoded.items()
            }
        )
        return len(data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Example) and other.features == self.features

    def __repr__(self) -> str:
        return f"Example(features={self.features!r})"


def _feature(kind: str, values: list) -> Feature:
    feature = Feature()
    feature._kind, feature._list = kind, _LISTS[kind](values)
    return feature
