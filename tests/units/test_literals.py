"""`ubpe.text.literals` finds what `re` finds with the alternation of the literals written
longest first (the matcher every added-token and special-token search used before): random
small alphabets make literals that overlap, nest and repeat."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.text.literals import MAX_LITERALS, Literals, escape, literal_finder

CHARS = st.sampled_from(["a", "b", "<", ">", "s", "é", "\U0001f600", " ", "\\", "|", "."])
LITERALS = st.lists(st.text(CHARS, min_size=1, max_size=4), min_size=1, max_size=8)
TEXTS = st.text(CHARS, max_size=40)


def _oracle(literals: list[str]) -> re.Pattern:
    return re.compile("|".join(re.escape(t) for t in sorted(set(literals), key=len, reverse=True)))


@settings(max_examples=1500, deadline=None)
@given(LITERALS, TEXTS)
def test_finds_what_the_longest_first_alternation_finds(literals, text):
    finder, oracle = Literals(literals), _oracle(literals)
    assert [m.span() for m in finder.finditer(text)] == [m.span() for m in oracle.finditer(text)]
    assert [m.group() for m in finder.finditer(text)] == oracle.findall(text)
    found, expected = finder.search(text), oracle.search(text)
    assert (found and (found.span(), found.start(), found.end(), found.group())) == (
        expected and (expected.span(), expected.start(), expected.end(), expected.group()))
    assert re.compile(finder.pattern).pattern == oracle.pattern


@given(st.text(max_size=20))
def test_escape_is_re_escape(text):
    assert escape(text) == re.escape(text)


def test_many_literals_use_re():
    many = [f"<t{k}>" for k in range(MAX_LITERALS + 1)]
    assert isinstance(literal_finder(many), re.Pattern)
    assert isinstance(literal_finder(many[:MAX_LITERALS]), Literals)
    assert [m.span() for m in literal_finder(many).finditer("x<t3><t16>")] == [(1, 5), (5, 10)]


def test_an_empty_literal_is_refused():
    try:
        Literals(["a", ""])
    except ValueError as exc:
        assert "empty" in str(exc)
    else:
        raise AssertionError("an empty literal was accepted")


def test_copies_and_pickles_find_the_same():
    import copy
    import pickle

    finder = Literals(["<s>", "</s>"])
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(finder, protocol))
        assert again == finder and [m.span() for m in again.finditer("a<s></s>")] == [(1, 4), (4, 8)]
    assert copy.deepcopy(finder) == finder
