"""``tune/`` never imports ``ops/`` or the facade: rewrites ask each stage what it allows
(``Node.is_noop``, ``fused_with``, ``swapped_with``), and the facade hands in the prefetch stage."""

from pathlib import Path

import headrace.tune
from tests.runtime.test_layering import imported_modules

TUNE = Path(headrace.tune.__file__).parent


def test_tune_never_imports_ops_or_the_facade():
    offenders = {
        path.name: name
        for path in sorted(TUNE.glob("*.py"))
        for name in imported_modules(path)
        if name.startswith(("..ops", "..dataset", "headrace.ops", "headrace.dataset"))
    }
    assert offenders == {}
