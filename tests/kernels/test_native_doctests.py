"""The kernels' docstring examples are executed, so they cannot rot."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ubpe_native

MODULES = sorted(f"ubpe_native.{m.name}" for m in pkgutil.iter_modules(ubpe_native.__path__))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
