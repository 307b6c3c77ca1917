"""``ubpe.text.unicode._Differ``: whether a text holds a code point where this Python's Unicode
data is not ``tokenizers``' decides which of two normalizers runs, so a wrong "no" is a wrong
id. Against a brute-force oracle, with ranges below and above Latin-1 (the first skip the
Latin-1 shortcut) and texts of every width (one, two and four bytes per code point)."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.text import unicode, unicode_tables

_POINTS = st.sampled_from([0x41, 0xE9, 0xFF, 0x100, 0x7FC, 0x7FD, 0x7FE, 0x1AC1, 0xFFFF, 0x10000, 0x1D000, 0x10FFFF])
_RANGES = st.lists(st.tuples(_POINTS, st.integers(0, 3)).map(lambda p: (p[0], min(p[0] + p[1], 0x10FFFF))),
                   min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(ranges=_RANGES, text=st.lists(_POINTS, max_size=12).map(lambda cps: "".join(map(chr, cps))))
def test_search_is_the_brute_force_answer(ranges, text):
    finder = unicode._Differ(sorted(ranges))
    want = any(a <= ord(c) <= b for c in text for a, b in ranges)
    assert finder.search(text) is want
    assert finder.search(text) is want  # (compiled by now, or still not: the same answer)


def test_the_tables_finders_are_above_latin1():
    """What makes a first Latin-1 text need no regex: on every Python the tables list, no code
    point of Latin-1 differs (if one ever does, the shortcut switches itself off: this test says so)."""
    for table in (unicode_tables.DIFFER_NORMALIZE, unicode_tables.DIFFER_LOWER):
        for ranges in table.values():
            assert min(a for a, _ in ranges) > 0xFF
    ranges = unicode_tables.DIFFER_NORMALIZE.get(unicodedata.unidata_version)
    if ranges:
        finder = unicode._Differ(sorted(ranges))
        assert not finder.search("naïve café ÿ") and finder._quick is None  # (no regex compiled)
        assert finder.search("x\u07fd") is (0x7FD in {cp for a, b in ranges for cp in range(a, b + 1)})


def test_a_short_text_below_the_first_range_compiles_nothing():
    """(BERT's first text: accents after NFD, then lowercased)"""
    finder = unicode._Differ([(0x1C89, 0x1C89), (0xA7CB, 0xA7CC)])
    assert not finder.search("nai\u0308ve cafe\u0301 ΑΣ") and finder._quick is None
    assert not finder.search("\u1c88" * unicode._SHORT_TEXT) and finder._quick is None
    assert finder.search("\u1c88" * unicode._SHORT_TEXT + "\u1c89") and finder._quick is not None
