"""What the lower layers reach above them, wired by the package root (``ubpe/__init__.py``).

The house is layered (``tests/spec/test_layers.py`` checks it): the text stages, our fit and the
encoders at the bottom, the models above them, the file formats (:mod:`ubpe.io`) above the
models (their readers build models), scale-out (:mod:`ubpe.distributed`) and the command line
on top. Two calls go the other way, and they go through here instead of an import:

* a model's own file methods (``save``, ``load``, ``to_json``, ``dumps``, ...) write and read
  through :func:`file_formats`, the :mod:`ubpe.io` package;
* the fit counts a corpus it cannot hold (a Dask collection) with the counter registered for
  it (:func:`scale_out_counter`), so that the in-memory path never imports Dask.

The package root sets both when ``ubpe`` is imported (a submodule import runs it first), so
they are always set when a model or the fit runs.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

_file_formats: Callable[[], ModuleType] | None = None
_counters: list[tuple[Callable[[Any], bool], Callable[..., Any]]] = []


def set_file_formats(loader: Callable[[], ModuleType]) -> None:
    """Name the function that returns :mod:`ubpe.io` (imported when first needed)."""
    global _file_formats
    _file_formats = loader


def file_formats() -> ModuleType:
    """The :mod:`ubpe.io` package, for a model's own file methods."""
    if _file_formats is None:  # only if ubpe/__init__.py did not run, which Python does not allow
        raise RuntimeError("ubpe's file formats are not registered: import ubpe")
    return _file_formats()


def register_counter(accepts: Callable[[Any], bool], count: Callable[..., Any]) -> None:
    """Count a corpus that ``accepts(corpus)`` with ``count(corpus, split, empty_message=...)``."""
    _counters.append((accepts, count))


def scale_out_counter(corpus: Any) -> Callable[..., Any] | None:
    """The registered counter for ``corpus``, or None (then the fit counts it in memory)."""
    for accepts, count in _counters:
        if accepts(corpus):
            return count
    return None
