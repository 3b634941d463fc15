"""Let Keras take headrace Datasets after a plain ``import headrace``, whichever is imported first.

``import headrace`` calls :func:`install`. If Keras is imported already, ``headrace.keras`` registers
its data adapter at once; otherwise a finder on ``sys.meta_path`` waits for ``import keras`` and
registers it right after Keras's own module has run. Nothing imports Keras, and nothing of Keras is
patched, in a process that never imports it; the finder only compares one module name per import.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType
from typing import Any

from .core.errors import attempt, on_failure


def _register() -> None:
    imported, exc = attempt(importlib.import_module, "headrace.keras")  # registers on import
    # Not imported: never break `import keras` or `import headrace`. An ImportError: Keras 2, or a
    # Keras whose internals moved: only the explicit import says why.
    if not imported and not isinstance(exc, ImportError):
        warnings.warn(
            f"headrace could not teach Keras its Datasets ({type(exc).__name__}: {exc}); pass "
            "headrace.keras.DatasetAdapter(ds) as x instead",
            RuntimeWarning,
            stacklevel=2,
        )


class _Loader:
    """Keras's own loader, then the registration (a plain class: importlib.abc costs ~1 ms to import)."""

    def __init__(self, loader: Any):
        self.loader = loader

    def create_module(self, spec: Any) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        with on_failure(_wait_for_keras):  # Keras failed to import: wait for the next try
            self.loader.exec_module(module)
        module.__loader__ = self.loader  # what Keras's module would have had without the hook
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        _register()

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package ...
        return getattr(self.loader, name)


def _wait_for_keras() -> None:
    sys.meta_path.insert(0, _KerasFinder())


class _KerasFinder:
    """Finds nothing itself: on ``import keras`` it wraps the real finder's loader, once."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "keras":
            return None
        _remove()
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


def _remove() -> None:
    sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, _KerasFinder)]


def install() -> None:
    """Register with Keras now if it is imported, else when it is (idempotent)."""
    if "keras" in sys.modules:
        _register()
    elif not any(isinstance(finder, _KerasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _KerasFinder())
