"""Lazy attributes of a package (:pep:`562`): a public name is imported from its module when
first used, so importing the package loads no more than the caller needs; and lazy numpy
views of dataclass fields kept as ``array.array`` (:class:`BufferField`).

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
from array import array
from collections.abc import Callable, Mapping
from itertools import chain

from ubpe_native._numpy import LazyModule, numpy_types

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

#: ``regex``, imported on first use: 8 ms that a load whose text needs no regex (a ``.tiktoken``
#: file with its preset, a tokenizer.json the kernel's scanner splits) does not pay
regex: Any = LazyModule("regex")
#: the standard library's ``re``, imported on first use: with ``enum``, ~2 ms of a small file's
#: cold load, which a load that compiles no pattern (a tokenizer.json with a few added tokens,
#: :mod:`ubpe.text.literals`) does not pay
re: Any = LazyModule("re")


class LazyPattern:
    """``regex.compile(pattern, flags)`` when first used, for a module-level pattern of a module
    on a load's path (its methods and attributes are the compiled pattern's).

    >>> words = LazyPattern(r"\\w+")
    >>> words.findall("a bc"), words.pattern
    (['a', 'bc'], '\\\\w+')
    >>> import copy, pickle
    >>> pickle.loads(pickle.dumps(words, 0)).findall("x y"), type(copy.deepcopy(words)).__name__
    (['x', 'y'], 'LazyPattern')
    """

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)
        self._compiled = None

    @property
    def pattern(self) -> str:
        """The source, as the compiled pattern's (without compiling it)."""
        return self._args[0]

    def __getattr__(self, name: str) -> Any:
        if name in LazyPattern.__slots__ or name.startswith("__"):  # (a copy being made, copy's
            raise AttributeError(name)  # __deepcopy__...: never recurse, never compile for it)
        compiled = self._compiled
        if compiled is None:  # (two threads may both compile: the same pattern)
            compiled = self._compiled = regex.compile(*self._args)
        return getattr(compiled, name)

    def __reduce__(self) -> tuple:
        """Pickled (and copied) as its arguments, compiled again when used."""
        return LazyPattern, self._args


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


#: numpy's dtype of each ``array.array`` typecode a :class:`BufferField` uses
DTYPES = {"i": "int32", "q": "int64", "d": "float64"}


class BufferField:
    """A field of a (frozen) dataclass kept as an ``array.array`` of ``typecode`` - built,
    compared and walked without numpy (see :mod:`ubpe_native._numpy`) - and read as a numpy
    array (of ``columns`` columns, if given) made when first read and sharing its memory.

    Setting it takes an ``array.array`` of the typecode as it is, a numpy array (converted
    like ``astype``) or a sequence (of rows, with ``columns``). The stored buffer is the
    instance's ``_<name>``; :func:`drop_views` leaves only buffers (for pickling).

    >>> from array import array
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Pairs:
    ...     rows: object = BufferField("i", columns=2)
    >>> pairs = Pairs([(1, 2), (3, 4)])
    >>> pairs._rows, pairs.rows.shape
    (array('i', [1, 2, 3, 4]), (2, 2))
    """

    def __init__(self, typecode: str, *, columns: int = 0):
        self.typecode, self.columns = typecode, columns

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.slot, self.view = name, "_" + name, "_" + name + "_view"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:  # no class-level value: the dataclass field has no default
            raise AttributeError(self.name)
        state = obj.__dict__
        view = state.get(self.view)
        if view is None:
            from ubpe_native._numpy import np

            view = np.frombuffer(state[self.slot], dtype=DTYPES[self.typecode])
            view = view.reshape(-1, self.columns) if self.columns else view
            state[self.view] = view
        return view

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.slot] = as_buffer(value, self.typecode, self.columns)
        obj.__dict__.pop(self.view, None)


def as_buffer(values: Any, typecode: str, columns: int = 0) -> array:
    """``values`` (an ``array.array``, a numpy array, a sequence - of rows with ``columns``)
    as a flat ``array.array`` of ``typecode``; one of that typecode is returned as it is."""
    if isinstance(values, array) and values.typecode == typecode:
        return values
    if isinstance(values, numpy_types("ndarray")):
        return array(typecode, values.astype(DTYPES[typecode], copy=False).tobytes())
    return array(typecode, chain.from_iterable(values) if columns else values)


def drop_views(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` (an instance's ``__dict__``) without the numpy views of its buffer fields."""
    return {k: v for k, v in state.items() if not k.endswith("_view")}
