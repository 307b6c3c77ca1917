"""llama.cpp's pre-tokenizer regexes rewritten for Python (issue 26 point 1): the ``$`` anchors
of a regex, and nothing else, are rewritten; ``\\p{..}`` classes collapse to their members."""

from __future__ import annotations

import re
import warnings

from hypothesis import given
from hypothesis import strategies as st

from ubpe.text.pretokenizers import REGEXES, _CLASS_ASCII, _CLASS_CHAR, _collapse_regex, _end_anchors, _regex_atoms

_LITERALS = "abcXYZ019 _,;:!@#%&'\"<>=~`"
_ESCAPED = [f"\\{c}" for c in ".^$*+?()[]{}|\\-/"] + ["\\s", "\\d", "\\w", "\\S"]
_PROPERTIES = ["\\p{L}", "\\p{N}", "\\p{P}", "\\p{S}", "\\p{M}", "\\p{Lu}"]


def _collapsed(prop: str, inside: bool) -> str:
    members = _CLASS_CHAR[prop[3]] + _CLASS_ASCII[prop[3]]
    return members if inside else f"[{members}]"


@st.composite
def _class(draw, properties: bool) -> tuple[str, str]:
    """A character class ``[...]`` as ``(pattern, its rewrite)``: escapes, ``$``, ``^`` (not
    first), a leading ``]``, other metacharacters -- all members, all kept."""
    members = [(m, m) for m in draw(st.lists(st.sampled_from(
        [*_LITERALS, *_ESCAPED, "$", ".", "*", "+", "?", "(", ")", "|", "{", "}", "^"]), min_size=1, max_size=5))]
    if properties:
        members += [(p, _collapsed(p, True)) for p in draw(st.lists(st.sampled_from(_PROPERTIES), max_size=2))]
    members = draw(st.permutations(members))
    opening = draw(st.sampled_from(["[", "[^", "[]", "[^]"]))
    if members[0][0] == "^" and opening == "[":
        opening = "[\\"  # a first "^" would negate: escape it (the rewrite keeps the escape)
    return opening + "".join(m for m, _ in members) + "]", opening + "".join(r for _, r in members) + "]"


@st.composite
def _pattern(draw, properties: bool) -> tuple[str, str]:
    """A regex as ``(pattern, the rewrite it must get)``: alternatives of atoms (literals,
    escapes, classes, ``.``, ``\\p{..}``, quantified or not) and ``$`` anchors."""
    atom = st.one_of(
        st.sampled_from(_LITERALS).map(lambda c: (c, c)),
        st.sampled_from(_ESCAPED).map(lambda e: (e, e)),
        st.just((".", ".")),
        _class(properties),
        *([st.sampled_from(_PROPERTIES).map(lambda p: (p, _collapsed(p, False)))] if properties else []),
    )
    quantified = st.tuples(atom, st.sampled_from(["", "", "+", "*", "?"])).map(
        lambda aq: (aq[0][0] + aq[1], aq[0][1] + aq[1]))
    piece = st.one_of(quantified, quantified, st.just(("$", "\\Z")))
    branches = draw(st.lists(st.lists(piece, min_size=1, max_size=6), min_size=1, max_size=3))
    return ("|".join("".join(p for p, _ in b) for b in branches),
            "|".join("".join(r for _, r in b) for b in branches))


@given(_pattern(properties=True))
def test_collapse_keeps_every_escape_and_class(case):
    """`_collapse_regex` rewrites each unescaped ``$`` outside a class to ``\\Z`` and each
    ``\\p{..}`` to its collapsed class; every escaped character and every class member is
    kept (issue 26: ``\\$`` became ``\\\\Z``, a class of ``\\`` and ``Z``)."""
    pattern, rewrite = case
    assert "".join(atom for atom, _ in _regex_atoms(pattern)) == pattern
    assert _collapse_regex(pattern) == rewrite


@given(_pattern(properties=False), st.text(alphabet="abcXYZ019 $\\.^*+?()[]{}|-/_,\t\n", max_size=30))
def test_anchor_rewrite_matches_as_python_does_where_they_agree(case, text):
    """Without Unicode classes the rewrite (`_end_anchors`) is the pattern with ``$`` as
    ``\\Z``, and it matches exactly what the pattern matches on every text that does not end
    in a newline (the one place Python's ``$`` and ECMAScript's differ)."""
    pattern, rewrite = case
    assert _end_anchors(_regex_atoms(pattern)) == rewrite
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "possible nested set" for a "[" member
        original, rewritten = re.compile(pattern, re.ASCII), re.compile(rewrite, re.ASCII)
    subject = text.rstrip("\n")
    assert [m.span() for m in rewritten.finditer(subject)] == [m.span() for m in original.finditer(subject)]


def test_the_default_regex_keeps_its_dollar():
    for expression in REGEXES["default"][:1] + REGEXES["falcon"][:1]:
        rewritten = _collapse_regex(expression)
        assert "\\$" in rewritten and "\\Z" not in rewritten
        assert re.fullmatch(rewritten, "$$") and not re.search(rewritten, "Z")
