"""The facade behind ``headrace.compat.eager`` and ``headrace.compat.eager_v1`` (see their docstrings)."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

import numpy as np

import headrace as _hr

from ..core.closures import freeze
from ..tfops._tensor import EagerTensor, infer, plain, tensor

#: Ops whose function argument is not called with tensors: ``numpy_function`` / ``py_func`` bodies
#: take numpy values (``bytes`` for a string), as in TensorFlow; ``tf.function`` hands its function
#: back, to be called by the user's code with tensors already; ``from_generator``'s generator makes
#: the data and takes none.
_PLAIN_CALLABLES = frozenset({"numpy_function", "py_func", "function", "from_generator"})


_SCALARS = frozenset(
    {np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64}
    | {np.float16, np.float32, np.float64, np.bool_, np.complex64, np.complex128}
)


def _tensors(value: Any) -> Any:
    """A structure of element values as tensors (datasets as this facade's)."""
    kind = type(value)
    if kind is np.ndarray:  # the common leaves first: this runs for every element
        return value.view(EagerTensor)
    if kind in _SCALARS:
        return np.asarray(value).view(EagerTensor)
    if kind is tuple:
        return tuple([_tensors(v) for v in value])
    if kind is dict:
        return {k: _tensors(v) for k, v in value.items()}
    if kind is list:
        return [_tensors(v) for v in value]
    if isinstance(value, _hr.Dataset) and kind is not Dataset:
        return Dataset(value.node)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple keeps its type
        return kind(*(_tensors(v) for v in value))
    return tensor(value)


def _plain(value: Any) -> Any:
    """A structure as ops take it: tensors as numpy values, functions called with tensors."""
    kind = type(value)
    if kind is EagerTensor:
        return plain(value)
    if kind is tuple:
        return tuple(_plain(v) for v in value)
    if kind is list:
        return [_plain(v) for v in value]
    if kind is dict:
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (types.FunctionType, types.MethodType, functools.partial)):
        return EagerFunction(value)
    return value


def _element(value: Any) -> Any:
    """What a function returns, as an element: tensors as numpy values, Python numbers converted as
    TensorFlow converts them (int to int32, float to float32)."""
    kind = type(value)
    if kind is EagerTensor:
        return plain(value)
    if kind is np.ndarray or kind in _SCALARS:
        return value
    if kind is int or kind is float:
        return infer(value)[()]
    if kind is tuple:
        return tuple(_element(v) for v in value)
    if kind is dict:
        return {k: _element(v) for k, v in value.items()}
    if kind is list:
        return [_element(v) for v in value]
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return kind(*(_element(v) for v in value))
    return value


def _state(value: Any) -> Any:
    """A Python value given as data (``from_tensor_slices``, a ``reduce`` state): converted as
    ``tf.convert_to_tensor`` converts it; tuples and dicts stay structure, as in tf.data."""
    kind = type(value)
    if kind is tuple or (isinstance(value, tuple) and hasattr(value, "_fields")):
        items = [_state(v) for v in value]
        return kind(*items) if kind is not tuple else tuple(items)
    if kind is dict:
        return {k: _state(v) for k, v in value.items()}
    if kind is EagerTensor:
        return plain(value)
    if kind in (int, float, bool, list, str, bytes):
        return infer(value) if kind is list else infer(value)[()]
    return value


class EagerFunction:
    """A user function called with tensors; what it returns goes back as element values. Keeps the
    function's name, location and signature (stage names, ``rng=``) and its frozen captures
    (``core.closures.freeze``: a captured value changed later is noticed, as for any map)."""

    def __init__(self, fn: Callable):
        self.fn = freeze(fn)
        self.__wrapped__ = self.fn
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)

    @property
    def __code__(self) -> Any:  # where the user's function is (core.naming)
        return getattr(self.fn, "__code__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _element(self.fn(*[_tensors(a) for a in args], **kwargs))

    def __repr__(self) -> str:
        return f"EagerFunction({self.fn!r})"


def _op(fn: Callable, name: str) -> Callable:
    """An op of ``headrace`` taking tensors and giving tensors."""
    wrap_callables = name not in _PLAIN_CALLABLES

    @functools.wraps(fn)
    def op(*args: Any, **kwargs: Any) -> Any:
        if wrap_callables:
            args, kwargs = _plain(args), _plain(kwargs)
        else:
            args = tuple(a if callable(a) else _plain(a) for a in args)
            kwargs = {k: v if callable(v) else _plain(v) for k, v in kwargs.items()}
        result = fn(*args, **kwargs)
        if wrap_callables and isinstance(result, (types.FunctionType, functools.partial)):
            return _op(result, name)  # a decorator (``@tf.py_function(Tout=...)``) or what it made
        return _tensors(result)

    return op


class _EagerIterator:
    """A dataset's iterator yielding tensors; checkpoints, ``stats()`` and ``close()`` are its own."""

    def __init__(self, inner: Any):
        self._inner = inner

    def __iter__(self) -> _EagerIterator:
        return self

    def __next__(self) -> Any:
        return _tensors(next(self._inner))

    def get_next(self) -> Any:
        return next(self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class Dataset(_hr.Dataset):
    """``tf.data.Dataset`` whose functions receive, and whose iteration yields, tensors with
    ``tf.Tensor``'s methods. Every method is ``headrace.Dataset``'s; see the module's docstring."""

    __slots__ = ()

    def __iter__(self) -> Any:
        return _EagerIterator(self._iterate())

    def as_numpy_iterator(self) -> Any:
        """numpy values, as TensorFlow's ``as_numpy_iterator`` gives."""
        return self._iterate()


_DATA_ARGS = {"from_tensor_slices", "from_tensors", "reduce", "scan"}  # Python values become data here


def _dataset_method(name: str, static: bool) -> Any:
    base = getattr(_hr.Dataset, name)
    wrap_callables = name not in _PLAIN_CALLABLES
    data_args = name in _DATA_ARGS

    @functools.wraps(base)
    def method(*args: Any, **kwargs: Any) -> Any:
        if data_args:  # the state or the tensors: the first argument after self
            at = 0 if static else 1
            if len(args) > at:
                args = (*args[:at], _state(args[at]), *args[at + 1 :])
            for key in ("tensors", "initial_state"):
                if key in kwargs:
                    kwargs[key] = _state(kwargs[key])
        if wrap_callables:
            args, kwargs = _plain(args), _plain(kwargs)
        return _tensors(base(*args, **kwargs))

    return staticmethod(method) if static else method


for _name, _value in vars(_hr.Dataset).items():
    if _name.startswith("_") or _name in ("as_numpy_iterator",) or isinstance(_value, property):
        continue
    if isinstance(_value, staticmethod) or callable(_value):
        setattr(Dataset, _name, _dataset_method(_name, isinstance(_value, staticmethod)))


class _Namespace(types.ModuleType):
    """A module of ``headrace`` (``tf.strings``, ``tf.io``, ``tf.data`` ...) seen through this facade."""

    def __init__(self, name: str, target: Any):
        super().__init__(name)
        self._target = target

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = _adapt(getattr(self._target, name), f"{self.__name__}.{name}", name)
        setattr(self, name, value)  # resolved once
        return value

    def __dir__(self) -> list[str]:
        return dir(self._target)


def _adapt(value: Any, path: str, name: str) -> Any:
    if value is _hr.Dataset:
        return Dataset
    if isinstance(value, types.ModuleType):
        return _Namespace(path, value)
    if isinstance(value, type):
        return value  # classes (TensorSpec, FixedLenFeature, SparseTensor ...) as they are
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, functools.partial)):
        return _op(value, name)
    return value


class _KerasPart(types.ModuleType):
    """``tf.keras.layers`` / ``tf.keras.applications``: the preprocessing input functions call, on
    numpy (``tfops.keras_preprocessing``); any other name is the installed Keras's."""

    def __init__(self, name: str, ours: dict, path: tuple[str, ...]):
        super().__init__(name)
        self._ours, self._path = ours, path

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr in self._ours:
            return self._ours[attr]
        return getattr(_keras(self._path, attr), attr)


def _keras(path: tuple[str, ...], attr: str) -> Any:
    import importlib  # noqa: PLC0415

    try:
        module = importlib.import_module(".".join(("keras", *path)))
    except ImportError:
        raise AttributeError(
            f"tf.keras.{'.'.join((*path, attr))}: headrace covers the Keras preprocessing input functions "
            "call (tf.keras.layers.StringLookup / IntegerLookup, tf.keras.applications.<model>."
            "preprocess_input); anything else is Keras's own: install keras"
        ) from None
    return module


def _keras_namespace(name: str) -> types.ModuleType:
    from ..tfops import keras_preprocessing as kp  # noqa: PLC0415

    layers = _KerasPart(f"{name}.layers", kp.LAYERS, ("layers",))
    models = {
        model: types.SimpleNamespace(preprocess_input=_op(part.preprocess_input, "preprocess_input"))
        for model, part in kp.APPLICATIONS.items()
    }
    applications = _KerasPart(f"{name}.applications", models, ("applications",))
    return _KerasPart(name, {"layers": layers, "applications": applications}, ())


def facade(module: Any, name: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of a facade module over ``module`` (``headrace``, ``headrace.compat.v1``)."""
    namespace = _Namespace(name, module)
    keras: list[types.ModuleType] = []

    def get(attr: str) -> Any:
        if attr in ("Tensor", "EagerTensor"):
            return EagerTensor if attr == "EagerTensor" else module.Tensor
        if attr == "keras":
            if not keras:
                keras.append(_keras_namespace(f"{name}.keras"))
            return keras[0]
        return getattr(namespace, attr)

    return get
