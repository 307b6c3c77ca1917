"""numpy, imported when first used: what lets a process fit and save a model without it.

``import numpy`` alone costs ~14 MB of resident memory, more than a fit of a few MB of text
needs (issue 12: a fit's peak memory no higher than HF tokenizers'). The kernels and the
modules on the fit path read their arrays as buffers (``array.array``, ``bytes``) and name
numpy through :data:`np`, a stand-in that imports numpy on its first attribute look-up (then
each name it was asked for is cached on it, so later look-ups cost what a module's do).

An object can be a numpy array or scalar only once numpy is imported: :func:`numpy_types`
gives the types to test ``isinstance`` against, without importing numpy to do so.

>>> import sys
>>> np.int32 is sys.modules["numpy"].int32
True
>>> numpy_types("integer", "ndarray") == (np.integer, np.ndarray)
True
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

#: numpy's name of the kernels' id type (``_typedefs.pxd``'s ``id_t``): every array of ids has it
ID_DTYPE = "int32"


class LazyModule:
    """A module imported on the first attribute look-up; names are then cached here (numpy
    here; :mod:`ubpe._lazy` makes ``regex`` one too)."""

    def __init__(self, name: str):
        self.__name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(importlib.import_module(self.__name), attribute)
        setattr(self, attribute, value)
        return value

    def __repr__(self) -> str:
        return f"<module {self.__name!r}, imported when first used>"


#: ``numpy``, imported on first use (``np.ndarray``, ``np.empty``...)
np: Any = LazyModule("numpy")


def numpy_types(*names: str) -> tuple[type, ...]:
    """numpy's types ``names`` (``"integer"``, ``"ndarray"``...) if numpy is imported, else
    ``()``: ``isinstance(x, (int, *numpy_types("integer")))`` imports nothing."""
    module = sys.modules.get("numpy")
    if module is None:
        return ()
    return tuple(getattr(module, name) for name in names)
