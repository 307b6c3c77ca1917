"""Lazy attributes of a package (:pep:`562`): a public name is imported from its module when
first used, so importing the package loads no more than the caller needs.

>>> getattr_, dir_ = lazy_attributes("ubpe", {"Vocabulary": ".vocabulary"}, {})
>>> getattr_("Vocabulary").__name__, "Vocabulary" in dir_()
('Vocabulary', True)
>>> getattr_("nothing")
Traceback (most recent call last):
...
AttributeError: module 'ubpe' has no attribute 'nothing'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(
    package: str, modules: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose public ``name`` lives in the module
    ``modules[name]`` (relative to the package); a name once loaded is cached in ``namespace``
    (the package's globals), so later uses do not come back here."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(modules))

    return __getattr__, __dir__
