"""Count the TensorFlow names public tf.data input functions use inside their map functions.

``python tools/scan_tf_names.py REPO_GIT_DIR ... [--json OUT]`` reads each repository's ``HEAD`` (``.py``
files and notebooks' code cells; tests skipped), finds the functions handed to ``map``, ``filter``,
``flat_map``, ``interleave``, ``map_and_batch``, ``parallel_interleave``, ``scan``, ``take_while`` and
``group_by_window`` (lambdas, named functions, ``functools.partial`` of one) and the module's functions
they call (two levels deep), and counts each ``tf.X.Y`` name in them, plus tensor methods that numpy
arrays lack (``.set_shape``, ``.get_shape``, ``.shape.as_list`` ...). With headrace importable, it says
which names ``headrace`` (or ``headrace.compat.v1``) covers. docs/porting.md holds the result.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import subprocess
import sys

MAP_METHODS = {
    "map",
    "filter",
    "flat_map",
    "interleave",
    "map_and_batch",
    "parallel_interleave",
    "take_while",
    "scan",
    "group_by_window",
}
FUNCTION_ARGS = ("map_func", "predicate", "fn", "key_func", "reduce_func", "scan_func")
TENSOR_METHODS = ("set_shape", "get_shape", "numpy", "to_tensor")
SHAPE_METHODS = ("as_list", "rank", "ndims")


def sources(git_dir: str):
    """(path, Python source) of each file at HEAD that mentions tf.data or Dataset."""
    listing = subprocess.run(
        ["git", "-C", git_dir, "ls-tree", "-r", "HEAD", "--name-only"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for path in listing:
        if not path.endswith((".py", ".ipynb")) or "/test" in path or path.endswith("_test.py"):
            continue
        raw = subprocess.run(["git", "-C", git_dir, "show", f"HEAD:{path}"], capture_output=True).stdout
        text = raw.decode("utf-8", "replace")
        if path.endswith(".ipynb"):
            try:
                cells = [
                    "".join(c["source"])
                    for c in json.loads(text).get("cells", [])
                    if c.get("cell_type") == "code"
                ]
            except (ValueError, KeyError, TypeError):
                continue
            # shell and magic lines are not Python
            text = "\n".join(
                line
                for cell in cells
                for line in cell.split("\n")
                if not line.lstrip().startswith(("!", "%"))
            )
        if "tf.data" in text or "Dataset" in text:
            yield path, text


def dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def names_in(node: ast.AST, parents: dict) -> list[str]:
    found = []
    for n in ast.walk(node):
        if not isinstance(n, ast.Attribute):
            continue
        name = dotted(n)
        if name and name.startswith("tf.") and not isinstance(parents.get(n), ast.Attribute):
            found.append(name[3:])
        elif name and name.split(".")[0] in ("tf", "np", "numpy"):
            continue
        elif n.attr in TENSOR_METHODS:
            found.append("." + n.attr)
        elif n.attr in SHAPE_METHODS and isinstance(n.value, ast.Attribute) and n.value.attr == "shape":
            found.append(".shape." + n.attr)
    return found


def scan(text: str) -> list[str] | None:
    """The tf names used by the module's map functions, or None when it maps nothing."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    defs = collections.defaultdict(list)
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs[n.name].append(n)

    def named(node: ast.AST) -> str | None:
        return node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)

    roots: list = []
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MAP_METHODS):
            continue
        args = list(n.args[:2]) + [k.value for k in n.keywords if k.arg in FUNCTION_ARGS]
        for arg in args:
            if isinstance(arg, ast.Lambda):
                roots.append(arg)
            elif isinstance(arg, ast.Call) and arg.args:  # functools.partial(f, ...)
                roots += defs.get(named(arg.args[0]) or "", [])
            else:
                roots += defs.get(named(arg) or "", [])
    if not roots:
        return None
    depth = {id(r): 0 for r in roots}
    seen: set = set()
    found: list[str] = []
    todo = list(roots)
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        found += names_in(fn, parents)
        if depth[id(fn)] >= 2:
            continue
        for call in ast.walk(fn):
            if isinstance(call, ast.Call):
                for callee in defs.get(named(call.func) or "", []):
                    depth.setdefault(id(callee), depth[id(fn)] + 1)
                    todo.append(callee)
    return found


def covered(name: str) -> bool | None:
    try:
        import headrace
        import headrace.compat.v1 as v1
    except ImportError:
        return None
    if name.startswith("."):
        return False
    for module in (headrace, v1):
        target = module
        try:
            for part in name.split("."):
                target = getattr(target, part)
            return True
        except AttributeError:
            continue
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "git_dirs", nargs="+", help="git directories (bare or not) of the repositories to scan"
    )
    parser.add_argument("--json", help="write the counts here")
    args = parser.parse_args()
    files: collections.Counter = collections.Counter()
    uses: collections.Counter = collections.Counter()
    scanned = 0
    for git_dir in args.git_dirs:
        for _path, text in sources(git_dir):
            found = scan(text)
            if found:
                scanned += 1
                files.update(set(found))
                uses.update(found)
    rows = [
        {"name": name, "files": count, "uses": uses[name], "covered": covered(name)}
        for name, count in sorted(files.items(), key=lambda kv: (-kv[1], -uses[kv[0]], kv[0]))
    ]
    print(f"{scanned} files with map functions; {len(rows)} names")
    for row in rows:
        print(f"{row['files']:4d} {row['uses']:4d}  {'yes' if row['covered'] else 'NO '}  {row['name']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"files": scanned, "names": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
