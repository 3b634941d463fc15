"""Prints the conformance counts (translated cases, passing, xfail, untranslated) after a run."""

from __future__ import annotations

import os
import re

_HERE = os.path.dirname(os.path.abspath(__file__))


def untranslated_counts() -> tuple[int, int]:
    """(TF test methods listed in UNTRANSLATED.md, whole files listed there without their methods)."""
    with open(os.path.join(_HERE, "UNTRANSLATED.md"), encoding="utf-8") as f:
        text = f.read()
    sections = text[text.index("\n## ") :]  # the introduction names translated methods too
    methods = set(re.findall(r"`(test[A-Z]\w*)`", sections))
    whole = re.search(r"- whole files: (.*?)\. data_service", sections, re.S)
    files = len(re.findall(r"\w+_test\b", whole.group(1))) if whole else 0
    return len(methods), files


def pytest_terminal_summary(terminalreporter) -> None:
    counts = {}
    for outcome in ("passed", "failed", "xfailed", "xpassed", "error", "skipped"):
        reports = terminalreporter.stats.get(outcome, [])
        counts[outcome] = sum(
            1
            for r in reports
            if getattr(r, "nodeid", "").replace(os.sep, "/").startswith("tests/conformance/")
            and getattr(r, "when", "call") in ("call", "setup")
            and not (outcome == "passed" and getattr(r, "when", "call") != "call")
        )
    translated = sum(counts.values())
    if not translated:
        return
    methods, files = untranslated_counts()
    share = 100.0 * counts["passed"] / translated
    terminalreporter.write_line(
        f"conformance: {translated} translated cases (pytest cases), {counts['passed']} passing ({share:.1f}%), "
        f"{counts['xfailed']} xfail, {counts['failed'] + counts['error']} failing, "
        f"{counts['xpassed']} xpass; untranslated: {methods} TF methods and {files} whole files "
        "(tests/conformance/UNTRANSLATED.md)"
    )
