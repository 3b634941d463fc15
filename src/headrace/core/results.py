"""What a map function's return value becomes, by tf.data's rules: a list is a tuple, str is bytes.

tf.data turns a returned Python list into a tuple of components (it does not stack them) and a str
into a string tensor (bytes in numpy). Only the top level is converted here: str leaves nested in
tuples or dicts become bytes when batched, and nested lists stay lists (tf.data would convert them
to one tensor each). A traced tf.data function returns one structure for every element, so callers
may decide from the first result of a chunk whether a chunk needs converting (``CONVERTED``).
"""

from __future__ import annotations

from typing import Any

#: result types that ``tf_result`` changes.
CONVERTED = (list, str)


def tf_result(value: Any) -> Any:
    """``value`` as tf.data would yield it.

    >>> tf_result([1, "a"]), tf_result("b"), tf_result((1, 2))
    ((1, b'a'), b'b', (1, 2))
    """
    kind = type(value)
    if kind is list:
        return tuple(item.encode() if type(item) is str else item for item in value)
    if kind is str:
        return value.encode()
    return value


def tf_results(values: list) -> list:
    """``tf_result`` of each value of a chunk (checked by its first value, see the module doc)."""
    if values and type(values[0]) in CONVERTED:
        return [tf_result(value) for value in values]
    return values
