"""Elements as JSON data, and restored checkpoint values checked field by field.

One codec for element structure, shared by checkpoints and disk cache files: a tuple is
``{"t": [...]}`` (a namedtuple adds ``"nt": [module, qualname, fields]``), a dict is
``{"d": [[key, value], ...]}`` with str or int keys, in the dict's order. What a leaf becomes is up
to the user of the codec: checkpoints store it inline as JSON (:func:`encode_element`), cache files
store leaves column-wise and put their index in the tree.

Safe by construction: decoding never imports or runs code (no pickle); a namedtuple class is only
looked up among modules already imported, and comes back as a plain tuple when it is not there.

:class:`StateFields` checks every value a ``set_state`` reads (type, range, length) so that an edited
or damaged checkpoint raises :class:`CheckpointError` naming the stage and the field, instead of
spinning, silently dropping data or yielding values the pipeline never could.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import sys
from collections.abc import Callable, Iterable
from typing import Any, Literal, overload

import numpy as np

from .errors import CheckpointError, InvalidArgumentError

STATE_VERSION = 2
#: checkpoints of these versions are read too (version 1 identified pipelines by their text).
READABLE_VERSIONS = (1, 2)
MAX_DEPTH = 64


# --- structure -----------------------------------------------------------------------------------------
def encode_structure(
    element: Any, leaf: Callable[[Any, str], Any], where: str = "element", depth: int = 0
) -> Any:
    """``element``'s tuples, namedtuples and dicts as JSON, each leaf replaced by ``leaf(value, where)``.

    >>> encode_structure(({"b": 1}, 2), lambda value, where: value)
    {'t': [{'d': [['b', 1]]}, 2]}
    """
    if depth > MAX_DEPTH:
        raise InvalidArgumentError(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if isinstance(element, tuple):
        tree: dict = {
            "t": [encode_structure(e, leaf, f"{where}[{i}]", depth + 1) for i, e in enumerate(element)]
        }
        kind = type(element)
        if kind is not tuple and hasattr(element, "_fields"):
            tree["nt"] = [kind.__module__, kind.__qualname__, list(element._fields)]
        return tree
    if isinstance(element, dict):
        pairs = []
        for key, value in element.items():
            if type(key) not in (str, int):
                raise InvalidArgumentError(
                    f"{where} has a dict key {key!r} of type {type(key).__name__}; only str and int keys "
                    "can be stored (checkpoints, disk caches): convert the keys in a map"
                )
            pairs.append([key, encode_structure(value, leaf, f"{where}[{key!r}]", depth + 1)])
        return {"d": pairs}
    return leaf(element, where)


def is_structure_node(tree: Any) -> bool:
    return isinstance(tree, dict) and ("t" in tree or "d" in tree)


def decode_structure(tree: Any, leaf: Callable[[Any], Any], depth: int = 0) -> Any:
    """Inverse of :func:`encode_structure`; ``leaf`` decodes each leaf's JSON.

    >>> decode_structure(encode_structure((1, {"k": 2}), lambda v, w: v), lambda v: v)
    (1, {'k': 2})
    """
    if depth > MAX_DEPTH:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
    if not is_structure_node(tree):
        return leaf(tree)
    if "t" in tree:
        values = [decode_structure(e, leaf, depth + 1) for e in _list(tree["t"])]
        if "nt" in tree:
            module, qualname, fields = _list(tree["nt"])
            kind = namedtuple_class(str(module), str(qualname), list(_list(fields)))
            # namedtuple_class checked that the class's _fields are ``fields``
            if kind is not None and len(fields) == len(values):
                return tuple.__new__(kind, values)
        return tuple(values)
    pairs = tree["d"]
    if isinstance(pairs, dict):  # version 1 checkpoints: {"d": {str(key): value}, "k": [key types]}
        kinds = _list(tree.get("k", ["str"] * len(pairs)))
        return {
            (int(key) if kind == "int" else key): decode_structure(value, leaf, depth + 1)
            for (key, value), kind in zip(pairs.items(), kinds)
        }
    out = {}
    for pair in _list(pairs):
        key, value = _list(pair)
        if type(key) not in (str, int):
            raise ValueError(f"dict key {key!r} is not a str or int")
        out[key] = decode_structure(value, leaf, depth + 1)
    return out


def _list(value: Any) -> list:
    if not isinstance(value, list):
        raise ValueError(f"expected a list, got {type(value).__name__}")
    return value


def namedtuple_class(module: str, qualname: str, fields: list) -> type | None:
    """An already-imported namedtuple class with these fields, found by plain dict lookups (no imports,
    no attribute hooks), or None."""
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        namespace = getattr(found, "__dict__", None)
        if not isinstance(namespace, (dict, type(type.__dict__))):
            return None
        found = namespace.get(part)
    if (
        isinstance(found, type)
        and issubclass(found, tuple)
        and found.__dict__.get("_fields") == tuple(fields)
    ):
        return found
    return None


# --- elements in checkpoints ---------------------------------------------------------------------------
def _encode_leaf(element: Any, where: str) -> Any:
    if isinstance(element, bytes):
        return {"b": base64.b64encode(element).decode("ascii")}
    # np.float64 and np.str_ subclass float and str: they go below, or a restore would lose their dtype.
    if (
        isinstance(element, (bool, int, float, str)) and not isinstance(element, np.generic)
    ) or element is None:
        return {"p": element}
    if isinstance(element, (np.ndarray, np.generic)):
        array = np.asarray(element)
        if array.dtype == object:
            return {
                "o": [encode_element(v) for v in array.ravel().tolist()],
                "s": list(array.shape),
                "g": isinstance(element, np.generic),
            }
        if array.dtype.hasobject or array.dtype.fields is not None:
            raise CheckpointError(f"cannot checkpoint {where}: an array of dtype {array.dtype}")
        data = base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")
        return {
            "a": data,
            "dt": array.dtype.str,
            "s": list(array.shape),
            "g": isinstance(element, np.generic),
        }
    raise CheckpointError(
        f"cannot checkpoint {where} of type {type(element).__name__}: use numpy arrays, bytes or numbers"
    )


def encode_element(element: Any) -> Any:
    """Encode an element for a JSON checkpoint (namedtuples stay namedtuples).

    >>> decode_element(encode_element((np.arange(3), {"k": b"v"})))
    (array([0, 1, 2]), {'k': b'v'})
    """
    try:
        return encode_structure(element, _encode_leaf)
    except InvalidArgumentError as exc:
        raise CheckpointError(f"cannot checkpoint this element: {exc}") from None


def _shape(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(type(d) is int and 0 <= d < 2**40 for d in value):
        raise ValueError(f"malformed shape {str(value)[:40]}")
    return tuple(value)


def _decode_leaf(data: Any) -> Any:
    if not isinstance(data, dict) or len(data) == 0:
        raise ValueError("a leaf is not a non-empty object")
    if "b" in data:
        return base64.b64decode(data["b"], validate=True)
    if "p" in data:
        value = data["p"]
        if value is not None and type(value) not in (bool, int, float, str):
            raise ValueError(f"a plain value of type {type(value).__name__}")
        return value
    if "o" in data:
        values = [decode_element(v) for v in _list(data["o"])]
        shape = _shape(data["s"])
        if int(np.prod(shape, dtype=np.int64)) != len(values):
            raise ValueError(f"{len(values)} items do not fill shape {shape}")
        if data.get("g") and shape:
            raise ValueError(f"a numpy scalar with shape {shape}")
        array: np.ndarray = np.empty(len(values), dtype=object)
        array[:] = values
        array = array.reshape(shape)
        return array[()] if data.get("g") else array
    if "a" in data:
        if not isinstance(data["dt"], str):
            raise ValueError("dtype is not a string")
        dtype = np.dtype(data["dt"])
        if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
            raise ValueError(f"dtype {dtype} is never decoded from a checkpoint")
        raw = base64.b64decode(data["a"], validate=True)
        shape = _shape(data["s"])
        if len(raw) != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
            raise ValueError(f"{len(raw)} bytes do not fill shape {shape} of {dtype}")
        if data.get("g") and shape:
            raise ValueError(f"a numpy scalar with shape {shape}")
        array = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        return array[()] if data.get("g") else array
    raise ValueError(f"unknown leaf kind {sorted(data)[:3]}")


def decode_element(data: Any) -> Any:
    """Inverse of :func:`encode_element`; anything malformed raises :class:`CheckpointError`."""
    try:
        return decode_structure(data, _decode_leaf)
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, binascii.Error, RecursionError, OverflowError) as exc:
        raise CheckpointError(f"malformed element in checkpoint ({exc}): {str(data)[:80]}") from None


# --- checking restored values --------------------------------------------------------------------------
class StateFields:
    """The fields of one stage's saved state, each read with a check of its type and range.

    >>> fields = StateFields({"index": -50}, "range(0, 5, 1)", ("index",))
    >>> fields.int("index", high=5)
    Traceback (most recent call last):
    ...
    headrace.core.errors.CheckpointError: range(0, 5, 1): checkpoint field 'index' is -50, expected an int in [0, 5]; the checkpoint was edited, damaged or saved from a different pipeline
    """

    def __init__(self, state: Any, stage: str, keys: tuple[str, ...] = (), prefix: str = ""):
        self.prefix = prefix
        if not isinstance(state, dict) or not all(k in state for k in keys):
            raise CheckpointError(
                f"state{' field ' + repr(prefix[:-1]) if prefix else ''} for {stage} must be a dict with keys {list(keys)}, got "
                f"{sorted(state) if isinstance(state, dict) else type(state).__name__}; was it saved "
                "from a different pipeline?"
            )
        self.state, self.stage = state, stage

    def fail(self, field: str, value: Any, expected: str) -> CheckpointError:
        return CheckpointError(
            f"{self.stage}: checkpoint field {self.prefix + field!r} is {str(value)[:80] if isinstance(value, (list, dict)) else repr(value)}, "
            f"expected {expected}; the checkpoint was edited, damaged or saved from a different pipeline"
        )

    def check_int(self, value: Any, field: str, low: int | None = 0, high: int | None = None) -> int:
        """``value`` as an int in ``[low, high]`` (None: unbounded), else CheckpointError naming ``field``."""
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise self.fail(field, value, f"an int{_bounds(low, high)}")
        value = int(value)
        if (low is not None and value < low) or (high is not None and value > high):
            raise self.fail(field, value, f"an int{_bounds(low, high)}")
        return value

    def int(self, field: str, low: int | None = 0, high: int | None = None) -> int:
        return self.check_int(self.state[field], field, low, high)

    # The readers below are named after the types they return, so from here on ``int`` in the class
    # body is the method: annotations name ``builtins.int`` (and bool, list, dict) instead.
    def seed(self, field: str) -> builtins.int:
        """A random seed: any int numpy's SeedSequence takes (>= 0)."""
        return self.int(field, high=2**128 - 1)

    def check_bool(self, value: Any, field: str) -> builtins.bool:
        if not isinstance(value, (bool, np.bool_)):
            raise self.fail(field, value, "true or false")
        return bool(value)

    def bool(self, field: str) -> builtins.bool:
        return self.check_bool(self.state[field], field)

    def choice(self, field: str, allowed: tuple) -> Any:
        value = self.state[field]
        if not any(type(value) is type(option) and value == option for option in allowed):
            raise self.fail(field, value, f"one of {list(allowed)}")
        return value

    def list(
        self, field: str, length: builtins.int | None = None, max_length: builtins.int | None = None
    ) -> builtins.list:
        """A list field, of exactly ``length`` or at most ``max_length`` items when given."""
        value = self.state[field]
        if not isinstance(value, (list, tuple)):
            raise self.fail(field, value, "a list")
        if length is not None and len(value) != length:
            raise self.fail(field, f"a list of {len(value)} items", f"{length} items")
        if max_length is not None and len(value) > max_length:
            raise self.fail(field, f"a list of {len(value)} items", f"at most {max_length} items")
        return list(value)

    def rows(
        self, field: str, width: builtins.int, max_length: builtins.int | None = None
    ) -> builtins.list[builtins.list]:
        """A list of fixed-width lists (e.g. ``[[position, is_output, element], ...]``); items unchecked."""
        rows = self.list(field, max_length=max_length)
        for i, row in enumerate(rows):
            if not isinstance(row, (list, tuple)) or len(row) != width:
                raise self.fail(f"{field}[{i}]", row, f"a list of {width} items")
        return [list(row) for row in rows]

    def record(self, value: Any, field: str, keys: tuple[str, ...]) -> StateFields:
        """The fields of a nested record (e.g. one interleave slot), checked like the stage's own."""
        return StateFields(value, self.stage, keys, prefix=f"{self.prefix}{field}.")

    @overload
    def dict(self, field: str, optional: Literal[False] = False) -> builtins.dict: ...

    @overload
    def dict(self, field: str, optional: builtins.bool) -> builtins.dict | None: ...

    def dict(self, field: str, optional: builtins.bool = False) -> builtins.dict | None:
        """A nested state (a parent's), checked only for being a dict: its own stage checks the rest."""
        value = self.state[field]
        if value is None and optional:
            return None
        if not isinstance(value, dict):
            raise self.fail(field, value, "a dict (a stage's state)" + (" or null" if optional else ""))
        return value

    def check_element(self, value: Any, field: str) -> Any:
        try:
            return decode_element(value)
        except CheckpointError as exc:
            raise CheckpointError(f"{self.stage}: checkpoint field {self.prefix + field!r}: {exc}") from None

    def element(self, field: str, optional: builtins.bool = False) -> Any:
        value = self.state[field]
        if value is None and optional:
            return None
        return self.check_element(value, field)

    def elements(self, field: str, max_length: builtins.int | None = None) -> builtins.list:
        return [
            self.check_element(value, f"{field}[{i}]")
            for i, value in enumerate(self.list(field, max_length=max_length))
        ]


def _bounds(low: int | None, high: int | None) -> str:
    if low is None and high is None:
        return ""
    if high is None:
        return f" >= {low}"
    if low is None:
        return f" <= {high}"
    return f" in [{low}, {high}]"


# --- declared state ------------------------------------------------------------------------------------
#: kinds of the entries of a stage's ``owed`` queue: ``(position, kind, value)``
OUTPUT, INPUT, ERROR = 0, 1, 2
#: the value of an ERROR entry whose failing input is gone (the op cannot compute it again)
NO_INPUT: Any = object()

#: a bound on a field: a number, None (unbounded), or computed from the stage and the values read so far
Bound = builtins.int | None | Callable[[Any, builtins.dict], Any]


def _bound(bound: Bound, stage: Any, values: builtins.dict) -> Any:
    return bound(stage, values) if callable(bound) else bound


class Field:
    """One field of a stage's saved state: ``save`` reads it from the stage, ``load`` checks the saved
    value (``values``: the fields read before it), ``restore`` puts it back. Declared on the stage's
    class (``state_fields = (Child("parent"), Int("position"), Owed())``); the base class derives
    ``get_state``, ``set_state`` and the key list from the declaration.

    ``attr`` is the stage's attribute when it differs from the saved key.
    """

    #: fields that are other stages' states are restored first, after every field was checked
    child = False

    def __init__(self, name: str, attr: str | None = None):
        self.name, self.attr = name, attr or name

    def save(self, stage: Any) -> Any:
        return getattr(stage, self.attr)

    def load(self, fields: StateFields, stage: Any, values: builtins.dict) -> Any:
        raise NotImplementedError

    def restore(self, stage: Any, value: Any) -> None:
        setattr(stage, self.attr, value)


class Int(Field):
    """An int in ``[low, high]`` (None: unbounded)."""

    def __init__(self, name: str, attr: str | None = None, *, low: Bound = 0, high: Bound = None):
        super().__init__(name, attr)
        self.low, self.high = low, high

    def load(self, fields: StateFields, stage: Any, values: builtins.dict) -> builtins.int:
        return fields.int(self.name, _bound(self.low, stage, values), _bound(self.high, stage, values))


class Seed(Field):
    def load(self, fields: StateFields, stage: Any, values: builtins.dict) -> builtins.int:
        return fields.seed(self.name)


class Bool(Field):
    def load(self, fields: StateFields, stage: Any, values: builtins.dict) -> builtins.bool:
        return fields.bool(self.name)


class Choice(Field):
    """One of the ``allowed`` values (same type and value), e.g. a mode: ``Choice("mode", ("read", "write"))``."""

    def __init__(self, name: str, allowed: tuple, attr: str | None = None):
        super().__init__(name, attr)
        self.allowed = allowed

    def load(self, fields: StateFields, stage: Any, values: builtins.dict) -> Any:
        return fields.choice(self.name, self.allowed)


class SavedState(Field):
    """A stage's state kept as a value (``optional``: or None), not restored into an input: e.g. the
    input's state where a cache's pass began, to replay it from. Checked only for being a dict (the
    stage it is given to checks the rest)."""

    def __init__(self, name: str, attr: str | None = None, *, optional: builtins.bool = False):
        super().__init__(name, attr)
        self.optional = optional

    def load(self, fields: StateFields, stage: Any, values: builtins.dict) -> builtins.dict | None:
        return fields.dict(self.name, optional=self.optional)


class Element(Field):
    """One element (``optional``: or None)."""

    def __init__(self, name: str, attr: str | None = None, *, optional: builtins.bool = False):
        super().__init__(name, attr)
        self.optional = optional

    def save(self, stage: Any) -> Any:
        value = getattr(stage, self.attr)
        return None if value is None and self.optional else encode_element(value)

    def load(self, fields: StateFields, stage: Any, values: builtins.dict) -> Any:
        return fields.element(self.name, optional=self.optional)


class Elements(Field):
    """A list of elements, of at most ``max_length``."""

    def __init__(self, name: str, attr: str | None = None, *, max_length: Bound = None):
        super().__init__(name, attr)
        self.max_length = max_length

    def save(self, stage: Any) -> builtins.list:
        return [encode_element(e) for e in getattr(stage, self.attr)]

    def load(self, fields: StateFields, stage: Any, values: builtins.dict) -> builtins.list:
        return fields.elements(self.name, max_length=_bound(self.max_length, stage, values))


class Child(Field):
    """The state of an input stage (``attr``: the attribute holding its iterator; ``optional``: it may
    be None, an input the stage does not have, saved as None)."""

    child = True

    def __init__(self, name: str, attr: str | None = None, *, optional: builtins.bool = False):
        super().__init__(name, attr)
        self.optional = optional

    def save(self, stage: Any) -> builtins.dict | None:
        child = getattr(stage, self.attr)
        return None if child is None and self.optional else child.get_state()

    def load(self, fields: StateFields, stage: Any, values: builtins.dict) -> builtins.dict | None:
        if self.optional and getattr(stage, self.attr) is None:
            if fields.state.get(self.name) is not None:
                raise fields.fail(self.name, fields.state[self.name], "None (this stage has no such input)")
            return None
        return fields.dict(self.name)

    def restore(self, stage: Any, value: Any) -> None:
        if value is not None:
            getattr(stage, self.attr).set_state(value)


class Children(Field):
    """The states of a list of input stages (``attr``: the attribute holding the list)."""

    child = True

    def save(self, stage: Any) -> builtins.list:
        return [it.get_state() for it in getattr(stage, self.attr)]

    def load(self, fields: StateFields, stage: Any, values: builtins.dict) -> builtins.list:
        states = fields.list(self.name, length=len(getattr(stage, self.attr)))
        for i, sub in enumerate(states):
            if not isinstance(sub, builtins.dict):
                raise fields.fail(f"{self.name}[{i}]", sub, "a dict (a stage's state)")
        return states

    def restore(self, stage: Any, value: Any) -> None:
        for it, sub in zip(getattr(stage, self.attr), value):
            it.set_state(sub)


def owed_rows(owed: Iterable[tuple[builtins.int, builtins.int, Any]]) -> builtins.list:
    """``(position, kind, value)`` entries as saved ``[position, is_output, element]`` rows: a held
    error as its failing input (computed again after a restore), left out when that input is gone."""
    rows = []
    for position, kind, value in owed:
        if kind == ERROR:
            value = value[1]
            if value is NO_INPUT:
                continue
        rows.append([position, kind == OUTPUT, encode_element(value)])
    return rows


class Owed(Field):
    """The stage's ``owed`` queue (see ``NodeIterator.owed``), saved as ``[position, is_output,
    element]`` rows: an output computed and not yet returned, or an input taken and not yet computed.
    A held error is saved as its failing input, so a restore computes that input again (and raises
    again); an error whose input is gone is not saved. Positions are at most the stage's
    ``position`` field when it declares one, and there are at most ``max_length`` rows."""

    def __init__(self, name: str = "owed", *, max_length: Bound = None):
        super().__init__(name, "owed")
        self.max_length = max_length

    def save(self, stage: Any) -> builtins.list:
        return owed_rows(stage.owed)

    def load(self, fields: StateFields, stage: Any, values: builtins.dict) -> builtins.list:
        high = values.get("position")
        max_length = _bound(self.max_length, stage, values)
        if max_length is None:
            max_length = high
        return [
            (
                fields.check_int(at, f"{self.name}[{i}][0]", high=high),
                OUTPUT if fields.check_bool(is_output, f"{self.name}[{i}][1]") else INPUT,
                fields.check_element(v, f"{self.name}[{i}][2]"),
            )
            for i, (at, is_output, v) in enumerate(fields.rows(self.name, 3, max_length=max_length))
        ]

    def restore(self, stage: Any, value: Any) -> None:
        stage.owed.clear()
        stage.owed.extend(value)


def save_fields(stage: Any, declared: tuple[Field, ...]) -> builtins.dict:
    return {field.name: field.save(stage) for field in declared}


def restore_fields(stage: Any, declared: tuple[Field, ...], state: Any) -> None:
    """Check every field of ``state`` first (a bad checkpoint changes nothing), then restore the input
    stages, then the stage's own fields."""
    fields = StateFields(state, stage.name, tuple(field.name for field in declared))
    values: builtins.dict = {}
    for field in declared:
        values[field.name] = field.load(fields, stage, values)
    for field in declared:
        if field.child:
            field.restore(stage, values[field.name])
    for field in declared:
        if not field.child:
            field.restore(stage, values[field.name])
