"""Every ``>>>`` example in the package runs and shows what it claims."""

import doctest
import importlib
import pkgutil

import pytest

import headrace

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(headrace.__path__, "headrace.")
    if not name.endswith("__main__")
)


# Framework adapters run their examples where their framework is installed (the `test` extra).
OPTIONAL = {
    "headrace.torch": "torch",
    "headrace.demo_torch": "torch",
    "headrace.jax": "jax",
    "headrace.keras": "keras",
    "headrace.tf": "tensorflow",
}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    if name in OPTIONAL:
        pytest.importorskip(OPTIONAL[name], exc_type=ImportError)
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
