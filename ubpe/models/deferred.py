"""State a model builds when it is first asked for, once, whichever thread asks first:
:class:`Deferred`.

A load keeps what only some calls need as a builder instead of building it: a ``.tiktoken``
file's vocabulary as numpy arrays (`ByteLevelBPE`), a ``.model`` file's texts, scores and dict
of texts (`CharModel`), an HF character file's word path, which only a text holding an added
token takes (`HFCharBPE`). :meth:`Deferred._defer` names the attributes a builder sets, and the
first read of one of them runs it.

>>> class Squares(Deferred):
...     def __init__(self, n):
...         self.n = n
...         self._defer(Squares._build, "squares", "total")
...     def _build(self):
...         self.squares = [k * k for k in range(self.n)]
...         self.total = sum(self.squares)
>>> s = Squares(4)
>>> "total" in s.__dict__, s.total, s.squares, s._pending()
(False, 14, [0, 1, 4, 9], [])
"""

from __future__ import annotations

from _thread import RLock  # threading.RLock without importing threading (~0.4 ms)

TYPE_CHECKING = False  # (typing's, without importing typing)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["Deferred"]

#: one builder runs at a time: a thread that asks for a name another thread is building waits
#: for it; one lock for every model, re-entered by a builder that reads another deferred name,
#: so no two builders can wait for each other
_BUILDING = RLock()
#: where an instance keeps its builders, by the name of each attribute they set
_LATER = "_later"


class Deferred:
    """A mixin: attributes built on first read (:meth:`_defer`).

    Builders live in the instance's ``_later`` dict, which pickling leaves out: a model that
    pickles by its constructor's arguments defers them again when rebuilt, and one whose state
    a builder makes builds it first (:meth:`_build_deferred`).
    """

    def _defer(self, build: Callable[[Any], None], *names: str) -> None:
        """Has ``build(self)`` set ``names`` when one of them is first read. ``build`` is a
        function or an unbound method (``functools.partial`` of one for its arguments): a
        bound method would make the model a cycle of references."""
        later = self.__dict__.setdefault(_LATER, {})
        for name in names:
            later[name] = build

    def _pending(self) -> list[str]:
        """The names whose builder has not run yet."""
        return sorted(self.__dict__.get(_LATER, ()))

    def _is_deferred(self, name: str) -> bool:
        """Whether ``name``'s builder has not run yet (a dict look-up: an encode's check)."""
        return name in self.__dict__.get(_LATER, ())

    def _cancel_deferred(self) -> None:
        """Forgets every builder that has not run (what they would set is being set otherwise)."""
        with _BUILDING:
            self.__dict__.pop(_LATER, None)

    def __getattr__(self, name: str) -> Any:
        # (only for an attribute not set: built now, or by another thread since this lookup
        # missed, which sets the attributes before it forgets its builder)
        state = self.__dict__
        if name in state:
            return state[name]
        if name in state.get(_LATER, ()):
            self._build_deferred(name)
            if name in state:
                return state[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _build_deferred(self, *names: str) -> None:
        """Runs the builders of ``names`` (all that are pending: none given) that have not run."""
        with _BUILDING:
            later = self.__dict__.get(_LATER, {})
            for name in names or list(later):
                build = later.get(name)
                if build is None:  # (built already)
                    continue
                build(self)
                for key in [key for key, other in later.items() if other is build]:
                    del later[key]  # last: a reader that finds no builder finds the attributes
