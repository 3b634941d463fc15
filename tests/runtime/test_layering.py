"""The layering rule of docs/CONTRIBUTING.md: ``runtime/`` never imports ``ops/`` (nor the facade), so
the parallel machinery can be reused by any op without an import cycle."""

import ast
from pathlib import Path

import headrace.runtime

RUNTIME = Path(headrace.runtime.__file__).parent


def imported_modules(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def test_runtime_never_imports_ops_or_the_facade():
    offenders = {
        path.name: name
        for path in sorted(RUNTIME.glob("*.py"))
        for name in imported_modules(path)
        if name.startswith(("..ops", "..dataset", "headrace.ops", "headrace.dataset"))
    }
    assert offenders == {}
