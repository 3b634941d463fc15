"""The layering rules of docs/CONTRIBUTING.md, read from the source (lazy imports inside functions too).

``core/`` holds what every stage or the facade needs and never imports ``ops/``; helpers only some ops
use live in ``ops/support/``, and nothing outside ``ops/`` imports them. ``runtime/`` never imports
``ops/`` (ops inject what the parallel machinery needs) and ``tune/`` neither (rewrites ask each stage
through ``Node``; the facade hands in the prefetch stage). None of them imports the facade.

Imports go one way, core -> runtime -> ops -> facade (the modules at the package's top), and no module
takes part in an import cycle, counting imports inside functions (those under ``if TYPE_CHECKING:``
never run, so they do not count)."""

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


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import statements under ``if TYPE_CHECKING:`` (they never run)."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    return skipped


def absolute_imports(path: Path, modules: frozenset[str] = frozenset()) -> list[str]:
    """Every module ``path`` imports, relative imports resolved (lazy imports inside functions too).
    ``from package import name`` counts as importing the module ``package.name`` when ``modules``
    holds it; imports under ``if TYPE_CHECKING:`` are left out."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    return imports_in(path.read_text(), package, modules)


def imports_in(source: str, package: list[str], modules: frozenset[str] = frozenset()) -> list[str]:
    tree = ast.parse(source)
    skipped = _type_checking_only(tree)
    names = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            submodules = [f"{module}.{alias.name}" for alias in node.names]
            found = [name for name in submodules if name in modules]
            names.extend(found)
            if len(found) < len(submodules):
                names.append(module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> the headrace modules it imports (function-level imports included)."""
    paths = {module_name(path): path for path in SRC.rglob("*.py")}
    modules = frozenset(paths)
    return {
        name: {other for other in absolute_imports(path, modules) if other in modules and other != name}
        for name, path in paths.items()
    }


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def layer(name: str) -> int | None:
    """core 0, runtime 1, ops 2, the facade (top-level modules) 3; None for the other packages."""
    for rank, package in enumerate(("headrace.core", "headrace.runtime", "headrace.ops")):
        if name == package or name.startswith(package + "."):
            return rank
    if name == "headrace.version":  # a constant, no imports: any layer may read it
        return None
    if name == "headrace" or (name.count(".") == 1 and (SRC / f"{name.rpartition('.')[2]}.py").exists()):
        return 3
    return None


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


def test_no_module_is_part_of_an_import_cycle():
    assert import_cycles(import_graph()) == []


def test_the_cycle_finder_finds_cycles_through_function_level_imports():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    source = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\ndef f():\n    from . import y\n"
    )
    assert imports_in(source, ["p"], frozenset({"p.y"})) == ["typing", "p.y"]
    assert imports_in(source, ["p"]) == ["typing", "p"]


def test_imports_go_from_core_to_runtime_to_ops_to_the_facade():
    upward = {
        f"{name} imports {other}"
        for name, others in import_graph().items()
        for other in others
        if layer(name) is not None and layer(other) is not None and layer(other) > layer(name)
    }
    assert upward == set()


def test_layers():
    assert [layer(n) for n in ("headrace.core.node", "headrace.runtime.pool", "headrace.ops.map")] == [
        0,
        1,
        2,
    ]
    assert layer("headrace.dataset") == layer("headrace") == 3
    assert layer("headrace.io.records.tfrecord") is None and layer("headrace.version") is None
