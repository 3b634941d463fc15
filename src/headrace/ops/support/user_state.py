"""Values a user function carries from element to element (``scan``'s and ``reduce``'s state)."""

from __future__ import annotations

from typing import Any

from ...core.errors import InvalidArgumentError, StructureError
from ...core.spec import to_array
from ...core.state import StateFields
from ...core.structure import describe_structure, flatten, map_structure


def _as_state_leaf(leaf: Any) -> Any:
    array = to_array(leaf)
    return array[()] if array.ndim == 0 else array


def as_state(value: Any, argument: str) -> Any:
    """``initial_state`` as tf.data holds it: Python numbers become numpy scalars (int64, float32)."""
    try:
        return map_structure(_as_state_leaf, value)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(f"{argument}={value!r} cannot be a state: {exc}") from None


def restored_state(fields: StateFields, field: str, initial: Any) -> Any:
    """A state value read from a checkpoint; it must have ``initial``'s structure and dtypes."""
    value = fields.element(field)
    try:
        return check_new_state(initial, value, fields.stage, -1)
    except StructureError:
        raise fields.fail(
            field,
            f"a state of structure {describe_structure(value)}",
            f"initial_state's structure {describe_structure(initial)} and dtypes",
        ) from None


def check_new_state(previous: Any, new: Any, stage: str, position: int) -> Any:
    """The state a user function returned, converted like the initial one; its structure and dtypes
    must not change (as in tf.data, where the state is a fixed set of tensors)."""
    old_dtypes = [str(to_array(leaf).dtype) for leaf in flatten(previous)]
    try:
        converted = map_structure(lambda _, leaf: _as_state_leaf(leaf), previous, new)
    except StructureError:
        converted = None
    new_dtypes = [str(to_array(leaf).dtype) for leaf in flatten(new if converted is None else converted)]
    if converted is None or new_dtypes != old_dtypes:
        raise StructureError(
            f"{stage}: the function returned a state of structure {describe_structure(new)} with dtypes "
            f"{new_dtypes} for input element {position}, but the state started as "
            f"{describe_structure(previous)} with dtypes {old_dtypes}; keep the state's structure and "
            "dtypes fixed (e.g. np.int64(...), np.float32(...))"
        )
    return converted
