"""The worked examples in our docstrings are executed, so they cannot rot."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ubpe

MODULES = ["ubpe"] + [f"ubpe.{m.name}" for m in pkgutil.iter_modules(ubpe.__path__)] + [
    f"ubpe_native.{name}" for name in ("_fit", "_combine", "_pretokenize", "_ranked")
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
