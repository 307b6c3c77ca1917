"""The worked examples in our docstrings are executed, so they cannot rot (the kernels' own
examples run in ``tests/kernels/test_native_doctests.py``)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ubpe

#: modules that import an extra the [test] extra leaves out (PyTorch: the [lm] extra, installed
#: by .ci/run before the experiments layer), with the test module that runs their examples
EXTRA_ONLY = {"ubpe.lab.transformer": "tests/experiments/test_transformer.py"}
# every module of the package, found by walking it: a new module's examples run unasked
MODULES = ["ubpe"] + sorted(m.name for m in pkgutil.walk_packages(ubpe.__path__, "ubpe.")
                            if m.name not in EXTRA_ONLY)


#: modules of an optional extra -> the library they need (their examples skip without it)
OPTIONAL = {"ubpe.integrations.transformers": "transformers", "ubpe.integrations.datasets": "datasets"}


def run_examples(name: str) -> int:
    """How many of module ``name``'s docstring examples fail."""
    if name in OPTIONAL:
        pytest.importorskip(OPTIONAL[name], reason=f"{name} needs the [transformers] extra")
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    return failures


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    assert run_examples(name) == 0
