"""The one way headrace pickles user code for other processes: cloudpickle, keeping file names.

cloudpickle 3.1.3 started writing every code object's ``co_filename`` as ``<dynamic-code>`` (to make
payloads deterministic). A worker's traceback then names no file and shows no source line, so a user's
error in a process map points nowhere. :func:`dumps` sends the original file name beside each code
object and puts it back on load; with older cloudpickle versions (which kept it) it changes nothing.
"""

from __future__ import annotations

import io
import types
from collections.abc import Callable
from typing import Any

_pickler_class: type | None = None


def restore_code(make: Callable[..., types.CodeType], args: tuple, filename: str) -> types.CodeType:
    """Rebuild a code object as cloudpickle's reducer would, then give it back its file name."""
    code = make(*args)
    if code.co_filename != filename:
        code = code.replace(co_filename=filename)
    return code


def _pickler() -> type:
    global _pickler_class
    if _pickler_class is None:
        import cloudpickle  # noqa: PLC0415 (only process work needs it)

        base = cloudpickle.CloudPickler
        reduce_code = base.dispatch_table.get(types.CodeType)

        class Pickler(base):  # type: ignore[misc, valid-type]
            def reducer_override(self, obj: Any) -> Any:
                if type(obj) is types.CodeType and reduce_code is not None:
                    make, args = reduce_code(obj)[:2]
                    return restore_code, (make, args, obj.co_filename)
                return super().reducer_override(obj)

        _pickler_class = Pickler
    return _pickler_class


def dumps(obj: Any, protocol: int | None = None, buffer_callback: Callable | None = None) -> bytes:
    """``cloudpickle.dumps`` that keeps code objects' file names (see the module docstring)."""
    import cloudpickle  # noqa: PLC0415

    out = io.BytesIO()
    _pickler()(
        out,
        protocol=cloudpickle.DEFAULT_PROTOCOL if protocol is None else protocol,
        buffer_callback=buffer_callback,
    ).dump(obj)
    return out.getvalue()
