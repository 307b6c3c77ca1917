"""The native scanner (``ubpe_native._pretokenize.split_text``) splits as the ``regex`` module
does, for every preset pattern."""

from __future__ import annotations

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.text.patterns import NATIVE_PATTERNS, PATTERNS, code_point_classes
from ubpe_native._pretokenize import split_text

from tricky_text import TRICKY, o200k_texts

@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=TRICKY, max_size=60), st.sampled_from(sorted(NATIVE_PATTERNS)))
def test_scanner_splits_like_regex(text, pattern):
    data = text.encode("utf-8")
    bounds = split_text(np.frombuffer(data, np.uint8), code_point_classes(), NATIVE_PATTERNS[pattern])
    pieces = [data[a:b].decode("utf-8") for a, b in zip(bounds[:-1], bounds[1:])]
    assert pieces == regex.findall(pattern, text)




def o200k_pieces(text: str) -> list[str]:
    data = text.encode("utf-8")
    bounds = split_text(np.frombuffer(data, np.uint8), code_point_classes(), NATIVE_PATTERNS[PATTERNS["o200k"]])
    return [data[a:b].decode("utf-8") for a, b in zip(bounds[:-1], bounds[1:])]


@settings(max_examples=1500, deadline=None)
@given(o200k_texts)
def test_o200k_scanner_splits_like_regex(text):
    assert o200k_pieces(text) == regex.findall(PATTERNS["o200k"], text)


@pytest.mark.parametrize(
    "text, pieces",
    [
        ("ʰAB", ["ʰ", "AB"]),  # the star gives back the run up to its last caseless letter
        ("ABʰC.", ["ABʰ", "C", "."]),
        ("ABCdef", ["ABCdef"]),
        ("\u0301ABC", ["\u0301", "ABC"]),  # without the prefix a mark still starts a word
        (" \u0301ABC", [" \u0301", "ABC"]),
        ("YOU'Re I'lL", ["YOU'Re", " I'lL"]),
        ("ǅemal", ["ǅemal"]),
        ("1234567", ["123", "456", "7"]),
        ("a !/\n/b", ["a", " !/\n/", "b"]),
        ("a  \n\n  b", ["a", "  \n\n", " ", " b"]),
    ],
)
def test_o200k_scanner_on_worked_examples(text, pieces):
    assert regex.findall(PATTERNS["o200k"], text) == pieces
    assert o200k_pieces(text) == pieces
