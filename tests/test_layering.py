"""The layering rules of docs/CONTRIBUTING.md, read from the source (lazy imports inside functions too).

``core/`` holds what every stage or the facade needs and never imports ``ops/``; helpers only some ops
use live in ``ops/support/``, and nothing outside ``ops/`` imports them. ``runtime/`` never imports
``ops/`` (ops inject what the parallel machinery needs) and ``tune/`` neither (rewrites ask each stage
through ``Node``; the facade hands in the prefetch stage). None of them imports the facade."""

import ast
import importlib
from pathlib import Path

import pytest

import headrace
import headrace.ops.support

SRC = Path(headrace.__file__).parent
CORE = SRC / "core"
SUPPORT = Path(headrace.ops.support.__file__).parent
MOVED = ("batch_iterator", "batching", "padding", "permutation", "user_state")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute_imports(path: Path) -> list[str]:
    """Every module ``path`` imports, relative imports resolved (lazy imports inside functions too)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            names.append(".".join([*base, *([node.module] if node.module else [])]))
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def test_absolute_imports_resolves_relative_ones():
    names = absolute_imports(SUPPORT / "padding.py")
    assert "headrace.core.errors" in names and "headrace.ops.support.batching" in names


@pytest.mark.parametrize("package", ["core", "runtime", "tune"])
def test_lower_layers_never_import_ops_or_the_facade(package):
    offenders = {
        f"{path.relative_to(SRC)}: {name}"
        for path in sorted((SRC / package).rglob("*.py"))
        for name in absolute_imports(path)
        if name.startswith(("headrace.ops", "headrace.dataset"))
    }
    assert offenders == set()


@pytest.mark.parametrize("name", MOVED)
def test_op_private_helpers_live_with_the_ops(name):
    assert not (CORE / f"{name}.py").exists()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"headrace.core.{name}")
    assert importlib.import_module(f"headrace.ops.support.{name}").__file__ == str(SUPPORT / f"{name}.py")


def test_only_ops_use_the_support_helpers():
    # A helper that something outside ops/ needs belongs in core/ instead.
    offenders = {
        f"{path.relative_to(SRC)}: {name}"
        for path in sorted(SRC.rglob("*.py"))
        if not module_name(path).startswith("headrace.ops")
        for name in absolute_imports(path)
        if name.startswith("headrace.ops.support")
    }
    assert offenders == set()
