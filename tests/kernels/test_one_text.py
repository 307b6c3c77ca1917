"""``PairMerges.encode_one_text`` (one str to its id list: what a GGUF or tokenizer.json
byte-level model's ``encode`` of a short text runs) gives what ``encode_texts`` gives for that
text as a one-document batch, with every option; None exactly where that batch flags it."""

from __future__ import annotations

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.text.hf_pipeline import PreTokenizer
from ubpe.text.patterns import NATIVE_PATTERNS, code_point_classes
from ubpe_native._merges import PairMerges, pack_units

I32, I64 = np.int32, np.int64
# a byte-level kernel whose merges fire on the texts below: "ab", "abc", " a", "12"
RULES = [(97, 98), (256, 99), (32, 97), (49, 50)]
TEXTS = st.text(alphabet=st.sampled_from("abc 12\n\t'sé\u0928\U0001f600\u0378Z")
                | st.characters(blacklist_categories=("Cs",)), max_size=40)


@pytest.fixture(scope="module")
def kernel() -> PairMerges:
    return _fresh_kernel()


def _fresh_kernel() -> PairMerges:
    n = len(RULES)
    return PairMerges(256 + n, np.array([r[0] for r in RULES], I32), np.array([r[1] for r in RULES], I32),
                      np.arange(256, 256 + n, dtype=I32), np.arange(n, dtype=I64), np.zeros(1, I64),
                      np.zeros(0, I32), pack_units([bytes([b]) for b in range(256)]), np.arange(256, dtype=I32),
                      np.full(256, -1, I32), False, np.zeros(0, np.uint8), np.zeros(1, I64), np.zeros(0, I32))


def _flagged() -> np.ndarray:
    table = np.zeros(0x110000, np.uint8)
    table[[0x378, 0xE9]] = 1  # an unassigned code point and "é"
    return table


@settings(max_examples=200, deadline=None)
@given(text=TEXTS, pattern=st.sampled_from(sorted(NATIVE_PATTERNS.values())), single_digits=st.booleans(),
       prefix_space=st.booleans(), flag=st.booleans())
def test_one_text_is_a_one_document_batch(kernel, text, pattern, single_digits, prefix_space, flag):
    flagged = _flagged() if flag else None
    options = dict(single_digits=single_digits, prefix_space=prefix_space, flagged=flagged)
    ids, offsets, status = kernel.encode_texts(text.encode("utf-8"), [len(text)], code_point_classes(), pattern,
                                               **options)
    one = kernel.encode_one_text(text, code_point_classes(), pattern, **options)
    bound = kernel.text_ids(code_point_classes(), pattern, **options)(text)  # the arguments bound once
    if status[0]:
        assert one is None and bound is None and flag
    else:
        assert one == bound == ids.tolist()
        assert all(type(i) is int for i in one)


def test_bound_text_ids_hold_the_gil_on_short_texts_only_and_agree_past_the_limit(kernel):
    """A text over 256 UTF-8 bytes is encoded without the GIL: the same ids either side."""
    call = kernel.text_ids(code_point_classes(), NATIVE_PATTERNS[sorted(NATIVE_PATTERNS)[0]])
    for n in (0, 1, 255, 256, 257, 5000):
        text = ("ab c12 é " * 700)[:n]
        ids, _, _ = kernel.encode_texts(text.encode("utf-8"), [len(text)], code_point_classes(),
                                        NATIVE_PATTERNS[sorted(NATIVE_PATTERNS)[0]])
        assert call(text) == ids.tolist()



# pre-tokenizer programs like Falcon's (a punctuation split, GPT-2's regex with the words spelled
# for the next steps, digits, a three-digit split) and one that puts a blank in front: every
# buffer of the program's working space in use
PROGRAM_STEPS = [
    [("split", regex.compile(r"\p{P}"), "contiguous", False), ("byte_level", False, True),
     ("split", regex.compile(r"\p{N}+"), "isolated", False), ("split", regex.compile("[0-9][0-9][0-9]"), "isolated", False)],
    [("byte_level", True, True), ("split", regex.compile(r"\p{N}"), "isolated", False)],
]
# short and long, ASCII and not (a long ASCII str's own bytes are read, a long other one's are
# copied), past the size whose buffers a call gives back (1 MiB), then short again
SEQUENCE = ["the cat", "", "ab c12 é 1234567 'sé", "x" * 300, "ab, c12. é!" * 120_000, "the cat",
            "é" * 400, "ab 12 ab" * 200_000, " 123 abc", "\U0001f600 ab"]


@pytest.mark.parametrize("steps", [None, *PROGRAM_STEPS], ids=["scanner", "falcon-like", "prefix-space"])
def test_a_call_after_any_other_gives_a_fresh_kernels_ids(steps):
    """The working space a call keeps for the next (`TextScratch`: the program's buffers, the
    scanner's bounds, the ids; those a long text grew given back) never shows in the ids: each
    text of a sequence gets what a kernel that never encoded anything gives it."""
    pattern = NATIVE_PATTERNS[sorted(NATIVE_PATTERNS)[0]]
    options = dict(prefix_space=True) if steps is None else dict(pretokenizer=PreTokenizer(steps).native()[0])
    used = _fresh_kernel()
    call = used.text_ids(code_point_classes(), pattern, **options)
    for text in SEQUENCE:
        fresh = _fresh_kernel().encode_one_text(text, code_point_classes(), pattern, **options)
        assert call(text) == fresh
        assert used.encode_one_text(text, code_point_classes(), pattern, **options) == fresh
        ids, _, _ = used.encode_texts(text.encode("utf-8"), [len(text)], code_point_classes(), pattern, **options)
        assert ids.tolist() == fresh
    for text in ("a\ud800b", "a\ud800" + "b" * 300):  # a lone surrogate, short and long, then a good text
        with pytest.raises(UnicodeEncodeError):
            call(text)
        assert call("the cat") == _fresh_kernel().encode_one_text("the cat", code_point_classes(), pattern, **options)
