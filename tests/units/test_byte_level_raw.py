"""`ubpe.models.ranked_bpe.byte_level_raw` (all texts at once, by a charmap codec in C) against the one-text reading: the
bytes of a string of GPT-2's byte alphabet, None for any other string; `byte_level_words` (the whole-word
table of llama.cpp's ``ignore_merges``, without a bytes object per token) against `whole_words` of them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.models.ranked_bpe import CHAR_TO_BYTE, byte_level_raw, byte_level_words, whole_words
from ubpe.text.byte_chars import chars_bytes

ALPHABET = "".join(CHAR_TO_BYTE)


def _one(text: str) -> bytes | None:
    return chars_bytes(text) if all(c in CHAR_TO_BYTE for c in text) else None


# the alphabet's ends, the code points past its last (U+0143) and Latin-1 ones it leaves out (U+00AD)
TEXTS = st.lists(st.text(alphabet=st.sampled_from(ALPHABET[:40] + ALPHABET[-40:] + "\0é一\U0001F600 aĠ\ud800\u0144\u00ad"),
                         max_size=6), max_size=20)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_byte_level_raw_is_the_one_text_reading(texts):
    assert byte_level_raw(texts) == [_one(text) for text in texts]


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_byte_level_words_are_the_whole_words_of_the_raw_bytes(texts):
    blob, offsets, ids = byte_level_words(texts)
    expected = whole_words([(_one(text), k) for k, text in enumerate(texts)])
    assert (blob, offsets.tolist(), ids.tolist()) == (expected[0], expected[1].tolist(), expected[2].tolist())


def test_every_alphabet_character_and_its_neighbours():
    texts = list(ALPHABET) + [chr(c) for c in [*range(0x2FE, 0x302), *range(0x13E, 0x150), *range(0xA0, 0xB0)]]
    texts += ["", "\0", ALPHABET]
    assert byte_level_raw(texts) == [_one(text) for text in texts]
    blob, offsets, ids = byte_level_words(texts)
    assert [blob[a:b] for a, b in zip(offsets.tolist(), offsets[1:].tolist())] == [_one(texts[k]) for k in ids]
    assert sorted(set(range(len(texts))) - set(ids.tolist())) == [k for k, t in enumerate(texts) if not _one(t)]
