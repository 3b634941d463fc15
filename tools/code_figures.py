"""Code figures of issue 20 ("one mechanism for each concern"), counted from the source tree.

    python tools/code_figures.py [ROOT ...]

ROOT is a checkout (default: this one); give several to compare, e.g. ``tools/code_figures.py
/work/main .``. Counted with the ``ast`` module, so comments and strings do not count:

- ``next_chunk`` implementations in ``src/headrace/ops`` (target <= 12);
- names for held elements and errors: the attribute names, among the ones the issue lists and the
  one that replaces them (``owed``), assigned as ``self.<name>`` in a stage iterator class (one whose
  base's name ends in ``Iterator``; executors' own queues are not counted) (target 1);
- broad ``except``: bare, ``Exception``, ``BaseException`` (alone or in a tuple) in the package;
- hand-written ``get_state``/``set_state``: classes defining either, the base ``NodeIterator`` (whose
  pair is derived from ``state_fields``) excepted (target <= 10).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

#: names a stage used for "elements owed, plus an error held back" (issue 20), and the one kept.
HELD_NAMES = (
    "pending",
    "ready",
    "partial",
    "pending_error",
    "parent_error",
    "_deferred_error",
    "passed",
    "untested",
    "owed",
)
BROAD = {"Exception", "BaseException"}


def _modules(root: Path, under: str) -> list[tuple[Path, ast.Module]]:
    out = []
    for path in sorted((root / under).rglob("*.py")):
        out.append((path, ast.parse(path.read_text(), str(path))))
    return out


def _is_broad(handler: ast.ExceptHandler) -> bool:
    kind = handler.type
    if kind is None:
        return True
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any(isinstance(n, ast.Name) and n.id in BROAD for n in names)


def _is_stage_iterator(node: ast.ClassDef) -> bool:
    """A stage's iterator: ``NodeIterator`` or a class whose base's name ends in ``Iterator``."""
    return node.name == "NodeIterator" or any(
        ast.unparse(base).split("[")[0].endswith("Iterator") for base in node.bases
    )


def _held_names(node: ast.ClassDef) -> set[str]:
    return {
        n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute)
        and isinstance(n.ctx, ast.Store)
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
        and n.attr in HELD_NAMES
    }


def figures(root: Path) -> dict[str, object]:
    package = _modules(root, "src/headrace")
    ops = [m for p, m in package if "/ops/" in p.as_posix()]
    next_chunks = sum(
        isinstance(node, ast.FunctionDef) and node.name == "next_chunk"
        for module in ops
        for node in ast.walk(module)
    )
    held: set[str] = set()
    broad = 0
    state_classes = 0
    for _, module in package:
        for node in ast.walk(module):
            if isinstance(node, ast.ClassDef) and _is_stage_iterator(node):
                held.update(_held_names(node))
            if isinstance(node, ast.ExceptHandler) and _is_broad(node):
                broad += 1
            elif isinstance(node, ast.ClassDef):
                methods = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
                # NodeIterator's own pair is the one derived from state_fields, not hand-written
                state_classes += bool(methods & {"get_state", "set_state"}) and node.name != "NodeIterator"
    return {
        "next_chunk implementations in ops": next_chunks,
        "names for held elements and errors": f"{len(held)} {sorted(held)}",
        "broad excepts": broad,
        "classes with hand-written get_state/set_state": state_classes,
    }


def main(argv: list[str]) -> None:
    roots = [Path(a) for a in argv] or [Path(__file__).resolve().parent.parent]
    for root in roots:
        print(f"{root}:")
        for name, value in figures(root).items():
            print(f"  {name}: {value}")


if __name__ == "__main__":
    main(sys.argv[1:])
