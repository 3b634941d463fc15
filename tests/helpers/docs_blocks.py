"""The code blocks of README.md and docs/*.md as scripts: parsing the pages, and what those scripts
call while they run (tests/test_docs_examples.py runs them).

A page becomes one Python script that keeps the page's line numbers: every line outside a block that
runs is blank, so a traceback's ``line 142`` is line 142 of the page. In the script

- a plain ``python`` block is its own code, except that a line ``EXPR  # -> VALUE`` becomes a check
  that ``EXPR`` gives ``VALUE`` (a Python literal; a Dataset gives the list of its elements, and
  ``0, 1, 2`` reads as that list), with anything after a further ``  # `` being a remark;
- a ``python`` block of ``>>>`` lines runs as a doctest, its output checked;
- an ``sh`` block runs in bash (``set -euo pipefail``), with ``headrace`` on the PATH;
- an ``output`` block right after a block is what that block prints, checked;
- a block after ``<!-- skip-ci: REASON -->`` does not run; ``text`` blocks are not code.
"""

from __future__ import annotations

import ast
import atexit
import dataclasses
import doctest
import io
import os
import re
import subprocess
import sys
import tempfile
import time
import tokenize

import numpy as np

LANGUAGES = ("python", "sh", "output", "text")
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>.*)$")
SKIP = re.compile(r"^\s*<!--\s*skip-ci:\s*(?P<reason>.+?)\s*-->\s*$")
ARROW = "# -> "


@dataclasses.dataclass
class Block:
    page: str  # relative to the repository root
    number: int  # 1-based among the page's blocks
    line: int  # 1-based line of the opening fence
    end: int  # 1-based line of the closing fence
    language: str
    code: str  # dedented to the fence's indentation
    skip: str | None = None  # the reason given in a skip-ci marker
    output: str | None = None  # the output block that follows, if any

    @property
    def where(self) -> str:
        return f"{self.page} block {self.number} (line {self.line})"

    @property
    def is_doctest(self) -> bool:
        return self.language == "python" and self.code.lstrip().startswith(">>>")

    @property
    def checks(self) -> int:
        """How many outputs this block has checked: doctest examples with output, ``# ->`` lines,
        and an output block."""
        if self.is_doctest:
            examples = doctest.DocTestParser().get_examples(self.code)
            return sum(1 for e in examples if e.want)
        count = sum(1 for _, _ in arrow_lines(self.code)) if self.language == "python" else 0
        return count + (self.output is not None)


def parse_page(root: str, page: str) -> list[Block]:
    """Every fenced block of ``page`` in order, an ``output`` block attached to the block before it."""
    with open(os.path.join(root, page), encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, info = match["indent"], match["info"].strip()
        start = i
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            i += 1
        if i == len(lines):
            raise ValueError(f"{page}:{start + 1}: a fence that is never closed")
        body = [
            line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[start + 1 : i]
        ]
        code = "\n".join(body) + "\n"
        previous = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        skip = SKIP.match(previous)
        if info == "output":
            if not blocks or blocks[-1].end != _previous_content(lines, start):
                raise ValueError(f"{page}:{start + 1}: an output block must follow the block it shows")
            blocks[-1].output = code
        else:
            blocks.append(
                Block(page, len(blocks) + 1, start + 1, i + 1, info, code, skip["reason"] if skip else None)
            )
        i += 1
    return blocks


def _previous_content(lines: list[str], start: int) -> int:
    """1-based line of the last non-blank line before ``start`` (0-based)."""
    return next((j + 1 for j in range(start - 1, -1, -1) if lines[j].strip()), 0)


def arrow_lines(code: str):
    """(0-based line, column of the comment) of every ``# ->`` comment in ``code``."""
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT and token.string.startswith(ARROW):
            yield token.start


def script(blocks: list[Block], total_lines: int, prelude: str) -> str:
    """The page as one script, each block at its own lines (see the module docstring)."""
    out = [""] * (total_lines + 1)
    page = blocks[0].page if blocks else ""
    out[0] = f"import tests.helpers.docs_blocks as _docs; _docs.setup({page!r}, {prelude!r}, globals())"
    for block in blocks:
        if block.language not in ("python", "sh") or block.skip:
            continue
        call = f"_docs.begin({block.where!r}, {block.output is not None})"
        if block.language == "sh":
            call += f"; _docs.shell({block.code!r}, {block.where!r})"
        elif block.is_doctest:
            call += f"; _docs.run_doctest({block.code!r}, {block.page!r}, {block.line}, globals())"
        else:
            for offset, line in enumerate(_python_lines(block)):
                out[block.line + offset] = line
        out[block.line - 1] = f"{out[block.line - 1]}; {call}" if out[block.line - 1] else call  # the setup
        out[block.end - 1] = f"_docs.end({block.where!r}, {block.output!r})"
    return "\n".join(out[:total_lines]) + "\n"


def _python_lines(block: Block) -> list[str]:
    lines = block.code.split("\n")[:-1]
    for row, column in arrow_lines(block.code):
        line = lines[row - 1]
        expression, comment = line[:column].rstrip(), line[column + len(ARROW) :]
        expected = comment.split("  # ")[0].strip()
        indent = expression[: len(expression) - len(expression.lstrip())]
        try:
            tree = ast.parse(expression.strip())
        except SyntaxError:
            tree = None
        if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
            raise ValueError(f"{block.where}: '# ->' must end a one-line expression: {line!r}")
        where = f"{block.page}:{block.line + row}"
        lines[row - 1] = f"{indent}_docs.check(({expression.strip()}), {expected!r}, {where!r})"
    return lines


# --- what the scripts call ----------------------------------------------------------------------------
_started: dict[str, float] = {}
_captured: list = []  # (saved stdout descriptor, file) while a block's output is captured


def setup(page: str, prelude: str, namespace: dict) -> None:
    """Run the page's prelude (what the page leaves to the reader: their data, model, training step)."""
    if prelude:
        exec(compile(prelude, f"<setup of {page}>", "exec"), namespace)


def _in_child() -> bool:
    """True where the page's script runs as ``__mp_main__``: multiprocessing's spawn runs the main
    script again in each child (as it would a reader's), whose blocks are not reported twice."""
    return sys._getframe(2).f_globals.get("__name__") != "__main__"


def begin(where: str, capture: bool = False) -> None:
    if _in_child():
        return
    _started[where] = time.perf_counter()
    print(f"[docs] running {where}", file=sys.stderr, flush=True)
    if capture:  # at the descriptor, so that what child processes and threads print counts too
        sys.stdout.flush()
        saved, file = os.dup(1), tempfile.TemporaryFile()
        os.dup2(file.fileno(), 1)
        _captured.append((saved, file))


def _release() -> str:
    """Stop capturing; pass on what was captured and return it."""
    sys.stdout.flush()
    saved, file = _captured.pop()
    os.dup2(saved, 1)
    os.close(saved)
    file.seek(0)
    seen = file.read().decode(errors="replace")
    file.close()
    sys.stdout.write(seen)
    sys.stdout.flush()
    return seen


atexit.register(lambda: _captured and _release())  # a block that failed: its output still shows


def end(where: str, expected: str | None) -> None:
    if _in_child():
        return
    seen = _release() if _captured else ""
    if expected is not None and not doctest.OutputChecker().check_output(
        expected, seen, doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    ):
        raise AssertionError(f"{where} printed\n{seen}\nbut its output block shows\n{expected}")
    seconds = time.perf_counter() - _started[where]
    print(f"[docs] passed {where} in {seconds:.1f} s", file=sys.stderr, flush=True)


def run_doctest(code: str, page: str, line: int, namespace: dict) -> None:
    test = doctest.DocTestParser().get_doctest(code, namespace, page, page, line)
    test.globs = namespace  # not the copy DocTest makes: the page's later blocks see these names
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = io.StringIO()
    runner.run(test, out=report.write, clear_globs=False)
    if runner.failures:
        raise AssertionError(f"{runner.failures} doctest example(s) failed:\n{report.getvalue()}")


def shell(code: str, where: str) -> None:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], capture_output=True, text=True)
    sys.stdout.write(done.stdout)
    if done.returncode:
        raise AssertionError(
            f"{where}: the shell block exited with {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )
    sys.stderr.write(done.stderr)


def plain(value):
    """``value`` as Python literals: datasets as lists of elements, arrays as lists, numpy scalars as
    Python numbers, tuples, lists and dicts element by element."""
    from headrace import Dataset

    if isinstance(value, Dataset):
        return [plain(element) for element in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def check(value, expected: str, where: str) -> None:
    from headrace import Dataset

    want = ast.literal_eval(expected)
    got = plain(value)
    if isinstance(value, Dataset) and isinstance(want, tuple):
        want = list(want)  # "0, 1, 2" shows the elements
    if got != want:
        raise AssertionError(f"{where}: the page shows {expected} but the code gives {got!r}")
