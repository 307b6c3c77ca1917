"""llama.cpp's lists of regexes on the kernel's regex VM (``ubpe_native._multipass``,
``ubpe.text.pretokenizers.vm_pattern``): the pieces are :class:`Pretokenizer`'s (the Python
path: collapsed and widened texts, ``re``) on hypothesis text of every script and class, for
every pre-tokenizer type, a document at a time and many back to back; and the kernel's checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.text.pretokenizers import REGEXES, Pretokenizer, scanner_unsafe, vm_pattern
from ubpe.text.regex_program import compile_pattern
from ubpe_native._multipass import split_passes

# scripts, marks, digits of several scripts, whitespace of every kind (llama.cpp's and not),
# punctuation and symbols ASCII and not, the deepseek classes' edges, unassigned code points
TRICKY = ("aZz09 \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000\u200b'$+<=>^~|`!?.,;-_/\\\"#(){}[]*"
          "éßµÀ×÷ǅΣσ\u0301\u0903中文龥ࠀカ한ퟻ١٢½Ⅻ²①€¿！～‘“\u3001。🦙\u0378\ufdd0\U0010ffff")
TEXTS = st.text(st.sampled_from(TRICKY), max_size=40) | st.text(max_size=20)
TYPES = sorted(REGEXES)


def pieces_of(data: bytes, lengths: list[int], pattern_ids: np.ndarray, skip=None) -> list[list[str]]:
    bounds, chars, pieces = split_passes(data, lengths, pattern_ids, skip)
    texts = [data[a:b].decode() for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    assert [len(t) for t in texts] == chars.tolist()
    return [texts[a:b] for a, b in zip(pieces[:-1].tolist(), pieces[1:].tolist())]


@pytest.mark.parametrize("pre_type", TYPES)
def test_every_type_compiles_for_the_vm(pre_type):
    assert Pretokenizer.for_type(pre_type).vm_patterns() is not None


@pytest.mark.parametrize("pre_type", TYPES)
def test_pieces_are_the_python_paths(pre_type):
    """The programs by the `regex` module's Unicode, as the Python path classifies, on any text;
    those the models run (the scanners' patterns by llama.cpp's Unicode) on text without a code
    point that the two classify apart (`scanner_unsafe`: there llama.cpp's is the VM's,
    tests/spec/test_peer_classes.py)."""
    pre = Pretokenizer.for_type(pre_type)
    ids = pre.vm_patterns()
    by_regex = np.array([compile_pattern(vm_pattern(e)).pattern_id for e in pre.expressions], dtype=np.int32)

    @settings(max_examples=150, deadline=None)
    @given(st.lists(TEXTS, min_size=1, max_size=4))
    def check(texts):
        want = [pre.split(text) for text in texts]
        data, lengths = "".join(texts).encode(), [len(t) for t in texts]
        assert pieces_of(data, lengths, by_regex) == want
        if not any(map(scanner_unsafe, texts)):
            assert pieces_of(data, lengths, ids) == want

    check()


def test_skipped_documents_are_one_piece_and_empty_ones_none():
    falcon = Pretokenizer.for_type("falcon")
    texts = ["ab 12345!", "", "x  y", "中文 1"]
    got = pieces_of("".join(texts).encode(), [len(t) for t in texts], falcon.vm_patterns(), skip=[0, 0, 1, 0])
    assert got == [falcon.split(texts[0]), [], ["x  y"], falcon.split(texts[3])]


def test_constructs_outside_the_subset_are_left_to_python():
    assert vm_pattern(r"(?<=a)b") is None and vm_pattern(r"(a)\1") is None
    assert vm_pattern(r"[^\x00-\x7f\xd0-\xd5\p{L}]") is None  # no code point's stand-in: an empty class


def test_bad_input_is_a_clear_error():
    ids = Pretokenizer.for_type("starcoder").vm_patterns()
    with pytest.raises(ValueError, match="registered program"):
        split_passes(b"ab", [2], np.array([ids[0], 5], np.int32))
    with pytest.raises(ValueError, match="char_lengths"):
        split_passes(b"ab", [3], ids)
    with pytest.raises(ValueError):
        split_passes(b"a\xffb", [3], ids)
    with pytest.raises(ValueError, match="skip"):
        split_passes(b"ab", [1, 1], ids, skip=[0])
    assert compile_pattern(vm_pattern(REGEXES["falcon"][0])).total is False  # find_next, not the scanner
