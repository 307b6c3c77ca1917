"""What the optional parts of the engine need beyond ubpe's own dependencies, and the one error
that names the extra to install (a leaf module: the readers and the model modules import it
without importing the engine)."""

from __future__ import annotations

import importlib.util

#: The libraries the engine needs beyond ubpe's own dependencies (the ``lab`` extra).
LAB_REQUIREMENTS: tuple[str, ...] = ("pandas", "scipy", "matplotlib")


class MissingExtraError(ImportError):
    """A library an optional part of ubpe needs is not installed; the message names the extra."""


def require(modules: tuple[str, ...] = LAB_REQUIREMENTS, extra: str = "lab") -> None:
    """Raise `MissingExtraError` naming ``pip install 'ubpe[<extra>]'`` when a module is missing.

    >>> require(("json",))
    >>> require(("no_such_module_xyz",), "midi")
    Traceback (most recent call last):
    ...
    ubpe.lab.extras.MissingExtraError: no_such_module_xyz is not installed: pip install 'ubpe[midi]'
    """
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not "
                                f"installed: pip install 'ubpe[{extra}]'")
