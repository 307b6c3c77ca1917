"""`ubpe._fntools` behaves as the :mod:`functools` it stands in for (on the load paths ubpe
does not import functools: ~1.2 ms of a cold start; `test_load`'s spy checks that): the same
caches, the same metadata on wrappers (doctest, mkdocstrings and `tests/conftest.py`'s
``cache_clear`` read it), the same cached properties."""

from __future__ import annotations

import functools
import copy
import inspect

import pytest

from ubpe import _fntools


def _square(x: int) -> int:
    """x times x."""
    return x * x


@pytest.mark.parametrize("maxsize", [None, 0, 1, 2, 128])
@pytest.mark.parametrize("typed", [False, True])
def test_lru_cache_counts_and_evicts_as_functools(maxsize, typed):
    ours = _fntools.lru_cache(maxsize=maxsize, typed=typed)(_square)
    theirs = functools.lru_cache(maxsize=maxsize, typed=typed)(_square)
    for x in [1, 2, 1, 3, 1.0, 2, 4, 1, 1, 3, True]:
        assert ours(x) == theirs(x)
        assert tuple(ours.cache_info()) == tuple(theirs.cache_info())
    assert ours.cache_parameters() == theirs.cache_parameters()
    info = ours.cache_info()
    assert (info.hits, info.misses, info.maxsize, info.currsize) == tuple(theirs.cache_info())
    assert repr(info) == repr(theirs.cache_info())
    ours.cache_clear()
    theirs.cache_clear()
    assert tuple(ours.cache_info()) == tuple(theirs.cache_info())


def test_the_decorators_forms_and_metadata_are_functools():
    bare = _fntools.lru_cache(_square)
    assert bare.cache_parameters() == {"maxsize": 128, "typed": False}
    for made in (bare, _fntools.cache(_square), _fntools.lru_cache(maxsize=None)(_square)):
        for name in ("__module__", "__name__", "__qualname__", "__doc__", "__annotations__"):
            assert getattr(made, name) == getattr(_square, name)
        assert made.__wrapped__ is _square
        assert inspect.signature(made) == inspect.signature(_square)
    assert _fntools.cache(_square).cache_parameters() == functools.cache(_square).cache_parameters()
    with pytest.raises(TypeError, match="integer, a callable, or None"):
        _fntools.lru_cache("10")
    with pytest.raises(TypeError):
        functools.lru_cache("10")


def test_a_cached_method_binds_to_its_instance():
    class Counter:
        def __init__(self, base: int):
            self.base = base

        @_fntools.lru_cache(maxsize=None)
        def plus(self, x: int) -> int:
            return self.base + x

    a, b = Counter(1), Counter(10)
    assert (a.plus(1), b.plus(1), a.plus(1)) == (2, 11, 2)
    assert Counter.plus.cache_info().hits == 1


def test_wraps_is_functools_wraps():
    def inner(x):
        """inner's doc."""
        return x

    inner.extra = "kept"

    @_fntools.wraps(inner)
    def ours(*args):
        return inner(*args)

    @functools.wraps(inner)
    def theirs(*args):
        return inner(*args)

    for name in ("__module__", "__name__", "__qualname__", "__doc__", "__wrapped__", "extra"):
        assert getattr(ours, name) == getattr(theirs, name)
    assert inspect.signature(ours) == inspect.signature(theirs)


def test_cached_property_is_computed_once_per_instance_and_can_be_set():
    calls = []

    class Box:
        def __init__(self, size: int):
            self.size_in = size

        @_fntools.cached_property
        def size(self) -> int:
            """The size, once."""
            calls.append(self.size_in)
            return self.size_in * 2

    one, two = Box(1), Box(2)
    assert (one.size, one.size, two.size) == (2, 2, 4)
    assert calls == [1, 2]
    one.size = 9
    assert one.size == 9
    del one.size
    assert one.size == 2 and calls == [1, 2, 1]
    assert Box.size.__doc__ == "The size, once." and Box.size.attrname == "size"
    assert isinstance(Box.size, _fntools.cached_property)
    assert copy.copy(two).__dict__["size"] == 4  # the value travels in __dict__


def test_cached_property_refuses_what_functools_refuses():
    class Slotted:
        __slots__ = ()

        @_fntools.cached_property
        def value(self):
            return 1

    with pytest.raises(TypeError, match="No '__dict__' attribute"):
        Slotted().value

    def twice(self):
        return 0

    raised = []
    for module in (_fntools, functools):  # (3.11 wraps __set_name__'s error in a RuntimeError)
        shared = module.cached_property(twice)
        with pytest.raises((TypeError, RuntimeError)) as error:
            type("Twice", (), {"a": shared, "b": shared})
        cause = error.value.__cause__ or error.value
        raised.append((type(error.value), type(cause), str(cause)))
    assert raised[0] == raised[1] and "two different names" in raised[0][2]


def test_partial_and_reduce_are_the_c_ones():
    assert _fntools.partial is functools.partial
    assert _fntools.reduce is functools.reduce


@pytest.mark.parametrize("defaults", [(), (9,), ("b", None), (1, 2, 3)])
def test_namedtuple_is_collections_namedtuple(defaults):
    import collections

    ours = _fntools.namedtuple("Row", "left right top", defaults=defaults)
    theirs = collections.namedtuple("Row", "left right top", defaults=defaults)
    assert ours._fields == theirs._fields and ours._field_defaults == theirs._field_defaults
    assert ours.__match_args__ == theirs.__match_args__ and ours.__doc__ == theirs.__doc__
    assert ours.__module__ == __name__ == theirs.__module__
    calls = [((1, 2, 3), {}), ((1,), {"right": 2, "top": 3}), ((), {"top": 3, "left": 1, "right": 2}),
             ((1, 2), {}), ((1,), {}), ((), {}), ((1, 2, 3, 4), {}), ((1, 2), {"left": 0}),
             ((1, 2, 3), {"other": 0}), ((1, 2), {"bottom": 0}), ((), {"left": 1})]
    for args, kwargs in calls:
        outcome = []
        for made in (ours, theirs):
            try:
                value = made(*args, **kwargs)
            except TypeError as error:
                outcome.append(("TypeError", str(error)))
            else:
                outcome.append((repr(value), tuple(value), value._asdict(), hash(value), value.left))
        assert outcome[0] == outcome[1], (args, kwargs)
    row, want = ours(1, 2, 3), theirs(1, 2, 3)
    assert row == want == (1, 2, 3) and isinstance(row, tuple)
    assert repr(row._replace(top=7)) == repr(want._replace(top=7))
    assert repr(ours._make([4, 5, 6])) == repr(theirs._make([4, 5, 6]))
    for bad in ([1, 2], [1, 2, 3, 4]):
        with pytest.raises(TypeError) as a:
            ours._make(bad)
        with pytest.raises(TypeError) as b:
            theirs._make(bad)
        assert str(a.value) == str(b.value)
    with pytest.raises((TypeError, ValueError)) as a:
        row._replace(bottom=1)
    with pytest.raises((TypeError, ValueError)) as b:
        want._replace(bottom=1)
    assert (type(a.value), str(a.value)) == (type(b.value), str(b.value))
    assert type(ours.left).__name__ == type(theirs.left).__name__ and ours.left.__doc__ == theirs.left.__doc__
    with pytest.raises(AttributeError):
        row.extra = 1  # (no __dict__: __slots__ = ())
    match row:
        case ours(a, b, c):
            assert (a, b, c) == (1, 2, 3)


class Pickled(_fntools.namedtuple("Pickled", "a b")):
    """A subclass at module level, as ubpe's are (pickle finds it by name)."""

    __slots__ = ()


def test_a_namedtuple_subclass_pickles_and_copies():
    import pickle

    value = Pickled(1, [2])
    assert pickle.loads(pickle.dumps(value)) == value and type(pickle.loads(pickle.dumps(value))) is Pickled
    assert copy.copy(value) == value and copy.deepcopy(value) == value and copy.deepcopy(value).b is not value.b


@pytest.mark.parametrize("names", ["a a", "a _b", "a 1b", ""])
def test_namedtuple_refuses_bad_names(names):
    import collections

    if names:
        with pytest.raises(ValueError):
            collections.namedtuple("Bad", names)
        with pytest.raises(ValueError):
            _fntools.namedtuple("Bad", names)
    else:
        assert _fntools.namedtuple("Empty", names)() == collections.namedtuple("Empty", names)() == ()
