"""The tools of :mod:`functools` that ubpe uses, without importing :mod:`functools`: its import
builds a namedtuple (``exec`` of generated source) and takes ~1.2 ms of a fresh process, a
twentieth of a small file's whole cold wait (issue 36). `cache`, `lru_cache`, `partial` and
`reduce` are CPython's own (``_functools``, in C, as :mod:`functools` wraps them);
`cached_property` and `wraps` are written here, with :mod:`functools`' behaviour (Python 3.12's
`cached_property`: no lock). And :func:`collections.namedtuple` without ``exec`` (`namedtuple`:
0.12-0.18 ms each, of which a byte-level tokenizer.json's load defined five).

>>> @lru_cache(maxsize=2)
... def square(x):
...     "x times x."
...     return x * x
>>> square(3), square(3), square.cache_info()
(9, 9, CacheInfo(hits=1, misses=1, maxsize=2, currsize=1))
>>> square.__name__, square.__doc__, square.__wrapped__(4)
('square', 'x times x.', 16)
>>> class Box:
...     @cached_property
...     def size(self):
...         "Computed once."
...         print("computing")
...         return 7
>>> box = Box(); box.size
computing
7
>>> box.size, Box.size.__doc__
(7, 'Computed once.')
>>> Point = namedtuple("Point", "x y", defaults=(0,))
>>> Point(1), Point(1, 2)._replace(y=5), Point._make([3, 4])._asdict()
(Point(x=1, y=0), Point(x=1, y=5), {'x': 3, 'y': 4})
"""

from __future__ import annotations

import sys
from _collections import _tuplegetter
from _functools import _lru_cache_wrapper, partial, reduce

TYPE_CHECKING = False  # (typing's, without importing typing)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["cache", "cached_property", "lru_cache", "namedtuple", "partial", "reduce", "wraps"]

#: the attributes a wrapper takes from what it wraps (:data:`functools.WRAPPER_ASSIGNMENTS`)
_ASSIGNED = ("__module__", "__name__", "__qualname__", "__doc__", "__annotations__", "__type_params__")


class CacheInfo(tuple):
    """What ``cache_info()`` returns: ``(hits, misses, maxsize, currsize)``, by name too, as
    :mod:`functools`' namedtuple."""

    __slots__ = ()
    _fields = ("hits", "misses", "maxsize", "currsize")

    def __new__(cls, hits: int, misses: int, maxsize: int | None, currsize: int) -> CacheInfo:
        return tuple.__new__(cls, (hits, misses, maxsize, currsize))

    hits = property(lambda self: self[0])
    misses = property(lambda self: self[1])
    maxsize = property(lambda self: self[2])
    currsize = property(lambda self: self[3])

    def __repr__(self) -> str:
        return "CacheInfo(" + ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self)) + ")"


def update_wrapper(wrapper: Any, wrapped: Callable) -> Any:
    """:func:`functools.update_wrapper`: ``wrapper`` with ``wrapped``'s name, module, qualified
    name, docstring and annotations, its ``__dict__`` merged in, and ``__wrapped__``."""
    for name in _ASSIGNED:
        try:
            value = getattr(wrapped, name)
        except AttributeError:
            continue
        setattr(wrapper, name, value)
    wrapper.__dict__.update(getattr(wrapped, "__dict__", {}))
    wrapper.__wrapped__ = wrapped
    return wrapper


def wraps(wrapped: Callable) -> Callable[[Callable], Any]:
    """:func:`functools.wraps`: a decorator applying `update_wrapper` with ``wrapped``."""
    return partial(_wrap, wrapped)


def _wrap(wrapped: Callable, wrapper: Any) -> Any:
    return update_wrapper(wrapper, wrapped)


def lru_cache(maxsize: int | None | Callable = 128, typed: bool = False) -> Any:
    """:func:`functools.lru_cache`: ``@lru_cache``, ``@lru_cache(maxsize=n)`` or
    ``@lru_cache(maxsize=None)`` (unbounded); the cache is CPython's C one."""
    if callable(maxsize) and isinstance(typed, bool):  # @lru_cache without arguments
        function, maxsize = maxsize, 128
        return _cached(function, maxsize, typed)
    if maxsize is not None:
        if not isinstance(maxsize, int):
            raise TypeError("Expected first argument to be an integer, a callable, or None")
        maxsize = max(maxsize, 0)
    return partial(_cached_by, maxsize, typed)


def _cached_by(maxsize: int | None, typed: bool, function: Callable) -> Any:
    return _cached(function, maxsize, typed)


def _cached(function: Callable, maxsize: int | None, typed: bool) -> Any:
    wrapper = _lru_cache_wrapper(function, maxsize, typed, CacheInfo)
    wrapper.cache_parameters = lambda: {"maxsize": maxsize, "typed": typed}
    return update_wrapper(wrapper, function)


def cache(function: Callable) -> Any:
    """:func:`functools.cache`: an unbounded `lru_cache`."""
    return _cached(function, None, False)


class cached_property:  # noqa: N801 (functools' name)
    """:class:`functools.cached_property`: a method computed once per instance, its value then
    kept in the instance's ``__dict__`` (which later reads find first)."""

    def __init__(self, func: Callable) -> None:
        self.func = func
        self.attrname: str | None = None
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__

    def __set_name__(self, owner: type, name: str) -> None:
        if self.attrname is None:
            self.attrname = name
        elif name != self.attrname:
            raise TypeError("Cannot assign the same cached_property to two different names "
                            f"({self.attrname!r} and {name!r}).")

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        if self.attrname is None:
            raise TypeError("Cannot use cached_property instance without calling __set_name__ on it.")
        try:
            stored = instance.__dict__
        except AttributeError:
            raise TypeError(f"No '__dict__' attribute on {type(instance).__name__!r} "
                            f"instance to cache {self.attrname!r} property.") from None
        value = self.func(instance)
        stored[self.attrname] = value
        return value


_REPLACE_ERROR = TypeError if sys.version_info >= (3, 13) else ValueError


def namedtuple(typename: str, field_names: str, *, defaults: tuple = ()) -> type:
    """:func:`collections.namedtuple` (``field_names`` a string of names; ``defaults`` for the
    last fields), made without generating source: the same fields (CPython's ``_tuplegetter``),
    ``_make``, ``_replace``, ``_asdict``, ``_fields``, ``_field_defaults``, repr, pickling and
    errors; its ``__new__`` takes ``*args, **kwargs`` (a signature that names no field)."""
    fields = tuple(field_names.replace(",", " ").split())
    for name in (typename, *fields):
        if not name.isidentifier() or name.startswith("_") and name != typename:
            raise ValueError(f"invalid name for a namedtuple: {name!r}")
    if len(set(fields)) != len(fields):
        raise ValueError(f"namedtuple {typename!r} names a field twice")
    n = len(fields)
    defaults = tuple(defaults)
    if len(defaults) > n:
        raise TypeError("Got more default values than field names")
    field_defaults = dict(zip(fields[n - len(defaults):], defaults))

    def __new__(cls, *args, **kwargs):
        if kwargs or len(args) != n:
            args = _bound(typename, fields, field_defaults, args, kwargs)
        return tuple.__new__(cls, args)

    def _make(cls, iterable):
        made = tuple.__new__(cls, iterable)
        if len(made) != n:
            raise TypeError(f"Expected {n} arguments, got {len(made)}")
        return made

    def _replace(self, /, **changes):
        made = self._make(map(changes.pop, fields, self))
        if changes:  # (ValueError before Python 3.13, as collections')
            raise _REPLACE_ERROR(f"Got unexpected field names: {list(changes)!r}")
        return made

    def __repr__(self):
        return self.__class__.__name__ + "(" + ", ".join(f"{name}={value!r}" for name, value in zip(fields, self)) + ")"

    def _asdict(self):
        return dict(zip(self._fields, self))

    def __getnewargs__(self):
        return tuple(self)

    __new__.__qualname__ = f"{typename}.__new__"
    namespace = {
        "__doc__": f"{typename}({', '.join(fields)})", "__slots__": (), "_fields": fields,
        "_field_defaults": field_defaults, "__new__": __new__, "_make": classmethod(_make),
        "_replace": _replace, "__repr__": __repr__, "_asdict": _asdict, "__getnewargs__": __getnewargs__,
        "__match_args__": fields,
    }
    for index, name in enumerate(fields):
        namespace[name] = _tuplegetter(index, f"Alias for field number {index}")
    made = type(typename, (tuple,), namespace)
    made.__module__ = sys._getframe(1).f_globals.get("__name__", "__main__")
    return made


def _bound(typename: str, fields: tuple, field_defaults: dict, args: tuple, kwargs: dict) -> tuple:
    """A namedtuple's fields from the arguments of its ``__new__``, or the TypeError Python
    raises for a function of those parameters."""
    if len(args) > len(fields):
        most = len(fields) + 1
        takes = f"from {most - len(field_defaults)} to {most}" if field_defaults else str(most)
        raise TypeError(f"{typename}.__new__() takes {takes} positional argument{'s' if most > 1 else ''} "
                        f"but {len(args) + 1} were given")
    kwargs = dict(kwargs)
    for name in fields[:len(args)]:
        if name in kwargs:
            raise TypeError(f"{typename}.__new__() got multiple values for argument {name!r}")
    values = list(args)
    missing = []
    for name in fields[len(args):]:
        if name in kwargs:
            values.append(kwargs.pop(name))
        elif name in field_defaults:
            values.append(field_defaults[name])
        else:
            missing.append(name)
    if kwargs:
        raise TypeError(f"{typename}.__new__() got an unexpected keyword argument {next(iter(kwargs))!r}")
    if missing:
        names = list(map(repr, missing))
        listed = names[0] if len(names) == 1 else (
            f"{names[0]} and {names[1]}" if len(names) == 2 else ", ".join(names[:-1]) + f", and {names[-1]}")
        raise TypeError(f"{typename}.__new__() missing {len(missing)} required positional argument"
                        f"{'s' if len(missing) > 1 else ''}: {listed}")
    return tuple(values)
