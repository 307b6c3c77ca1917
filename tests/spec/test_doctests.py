"""The worked examples in our docstrings are executed, so they cannot rot."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ubpe
import ubpe_native

# every module of both packages, found by walking them: a new module's examples run unasked
MODULES = (
    ["ubpe"]
    + sorted(m.name for m in pkgutil.walk_packages(ubpe.__path__, "ubpe."))
    + sorted(f"ubpe_native.{m.name}" for m in pkgutil.iter_modules(ubpe_native.__path__))
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
