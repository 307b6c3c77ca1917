"""``BertNormalizer.rewrite``'s ``clean_text`` skips its regex for a text that holds nothing it
removes, tested by ``str.isprintable`` (`_may_remove`): the skip never changes a result. Checked
against the regex on texts of every boundary of ``tokenizers``' removed ranges, line ends,
U+FFFD and characters whose Unicode moved, and against brute force: a text let through holds
no removed character."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.text import bert_tables
from ubpe.text import normalizers
from ubpe.text.normalizers import BertNormalizer

_EDGES = sorted({c for first, last in bert_tables.OTHER for c in (first - 1, first, last, last + 1)
                 if 0 < c <= 0x10FFFF})
_CHARS = [chr(c) for c in _EDGES] + list("\n\t\r aé中\ufffd\u0890\u2028\u00a0") + ["\U0001F600"]


def _removed(text: str) -> bool:
    return any(first <= ord(char) <= last for char in text for first, last in bert_tables.OTHER)


def test_the_private_use_ranges_are_never_printable():
    """(`_printable_removed` leaves them out on that ground)"""
    assert all(span in bert_tables.OTHER for span in normalizers._PRIVATE_USE)
    assert not any(chr(c).isprintable() for first, last in normalizers._PRIVATE_USE for c in range(first, last + 1))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_CHARS), max_size=8).map("".join))
def test_the_skip_is_the_regex(text):
    normalizer = BertNormalizer()
    fast = normalizer.rewrite(text)
    assert normalizer._may_remove(text) or not _removed(text)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(BertNormalizer, "_may_remove", lambda self, text: True)
        assert fast == normalizer.rewrite(text)


@pytest.mark.parametrize("text", ["café\ufffd", "naïve\ncafé\x0b", "中\u200b文", "é\U000F0000"])
def test_texts_with_something_removed_go_through_the_regex(text):
    assert BertNormalizer()._may_remove(text)
    assert BertNormalizer(lowercase=False).rewrite(text) == "".join(c for c in text if not _removed(c))
