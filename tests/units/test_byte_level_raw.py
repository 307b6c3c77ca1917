"""`ubpe.models.ranked_bpe.byte_level_raw` (all texts at once, by a charmap codec in C) against the one-text
reading: the bytes of a string of GPT-2's byte alphabet, None for any other string."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.models.ranked_bpe import CHAR_TO_BYTE, byte_level_raw
from ubpe.text.byte_chars import chars_bytes

ALPHABET = "".join(CHAR_TO_BYTE)


def _one(text: str) -> bytes | None:
    return chars_bytes(text) if all(c in CHAR_TO_BYTE for c in text) else None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(ALPHABET[:40] + ALPHABET[-40:] + "\0é一\U0001F600 aĠ\ud800"),
                        max_size=6), max_size=20))
def test_byte_level_raw_is_the_one_text_reading(texts):
    assert byte_level_raw(texts) == [_one(text) for text in texts]


def test_every_alphabet_character_and_its_neighbours():
    texts = list(ALPHABET) + [chr(c) for c in range(0x2FE, 0x302)] + ["", "\0", ALPHABET]
    assert byte_level_raw(texts) == [_one(text) for text in texts]
