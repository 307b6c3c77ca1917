"""HF's multi-step pre-tokenizers in the kernel (``ubpe_native._hf_pretok``) give the words of
the Python oracle (:class:`ubpe.text.hf_pipeline.PreTokenizer`) exactly: every split behaviour
with and without ``invert``, ``byte_level`` with and without its prefix space and regex, before,
between and after splits, as bytes and as end-of-word units, on texts of digits, punctuation,
CJK, whitespace runs and combining marks; a character model's words with its unknown
characters replaced or dropped; from several threads at once; and the kernel's entry points
refuse what they cannot read."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ubpe.models.clip import word_units
from ubpe.text.hf_pipeline import BEHAVIORS, BYTE_LEVEL_REGEX, PreTokenizer, chars_bytes
from ubpe.text.patterns import code_point_classes
from ubpe.text.regex_program import compile_pattern
from ubpe_native._hf_pretok import GPT2_SPELLING, HFPreTokenizer

TRICKY = "ab Zs'tk09١½Ⅻ²³.,;!?-_/()é\u0301\u0308中文カ한 \t\n\r\u3000\xa0🎉👍🏽\u200d"
texts = st.text(alphabet=st.sampled_from(TRICKY), max_size=40) | st.text(max_size=20) | st.lists(
    st.sampled_from(["Hello", " world", "DON'T", "  ", "\n\n", " 12345", "...", " café", "北京", "😀", "\t \n "]),
    max_size=10).map("".join)
# the published files' split patterns (Digits, Punctuation, Whitespace, CLIP's, DeepSeek's, ...)
# and a few with anchors and lookaheads, which see a word's ends
PATTERNS = [r"\p{N}", r"[\p{P}!-/:-@\[-`{-~]", r"\s+", r"\w+|[^\w\s]+", r"[0-9][0-9][0-9]", r"\s?\p{L}+",
            r"\s?\p{P}+", r"[\r\n]", r"[一-龥ࠀ-一가-\ud7ff]+", r"'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+",
            BYTE_LEVEL_REGEX, r"a$", r"^\p{L}", r"\s+(?!\S)", r"²"]
splits = st.tuples(st.just("split"), st.sampled_from(PATTERNS).map(regex.compile), st.sampled_from(BEHAVIORS),
                   st.booleans())
byte_levels = st.tuples(st.just("byte_level"), st.booleans(), st.booleans())


@st.composite
def step_lists(draw):
    """Up to three splits, a byte_level among them (the kernel needs one), up to two more splits."""
    steps = draw(st.lists(splits, max_size=3))
    steps.insert(draw(st.integers(0, len(steps))), draw(byte_levels))
    return steps + draw(st.lists(splits, max_size=2))


def oracle(steps: list[tuple], text: str, end_of_word: bool) -> list[bytes]:
    """The words a byte-level model merges (``HFByteLevelBPE._words``), as end-of-word units
    with ``end_of_word`` (``EndOfWordBPE._merge_words``)."""
    pre = PreTokenizer(steps)
    if steps[-1][0] == "byte_level":
        words = [w.encode("utf-8") for w in pre.words(text, True, False)]
    else:
        words = [chars_bytes(w) for w in pre.words(text, True)]
    return [word_units(w).encode("utf-8") for w in words] if end_of_word else words


def native(steps: list[tuple], text: str, end_of_word: bool) -> list[bytes]:
    program, reason = PreTokenizer(steps).native(end_of_word, unicode="regex")  # as the oracle, the regex module
    assert reason is None
    buffer, words = program.words(np.frombuffer(text.encode("utf-8"), np.uint8))
    return [buffer[a:b] for a, b in words.tolist()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(step_lists(), texts, st.booleans())
def test_any_steps_give_the_oracles_words(steps, text, end_of_word):
    assert native(steps, text, end_of_word) == oracle(steps, text, end_of_word)


@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("behavior", BEHAVIORS)
def test_every_behaviour_and_invert(behavior, invert):
    """Each behaviour alone (then ByteLevel, as files have it) and after a spelling ByteLevel."""
    @settings(max_examples=60, deadline=None)
    @given(st.sampled_from(PATTERNS), texts, st.booleans())
    def check(pattern, text, prefix_space):
        split = ("split", regex.compile(pattern), behavior, invert)
        for steps in ([split, ("byte_level", prefix_space, False)], [("byte_level", prefix_space, True), split]):
            assert native(steps, text, False) == oracle(steps, text, False)

    check()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(splits, max_size=4), texts, st.sets(st.sampled_from(TRICKY), max_size=30),
       st.sampled_from([-1, ord("Ω"), 0x10FFFF]), st.booleans())
def test_character_models_words_and_unknowns(steps, text, known, sentinel, fuse):
    """A character model's words (no byte_level) with the characters that are no unit
    replaced by the sentinel (one per run with ``fuse``) or dropped: ``HFCharBPE``'s
    ``_unknown.sub`` on the oracle's words."""
    table = np.zeros(0x110000, np.uint8)
    table[[ord(c) for c in known]] = 1
    program, reason = PreTokenizer(steps).native(characters=(table, sentinel, fuse), unicode="regex")  # as the oracle
    assert reason is None
    buffer, words = program.words(np.frombuffer(text.encode("utf-8"), np.uint8))
    chars = "".join(regex.escape(c) for c in sorted(known))
    unknown = regex.compile((f"[^{chars}]" if chars else "(?s:.)") + ("+" if fuse or sentinel < 0 else ""))
    replacement = "" if sentinel < 0 else chr(sentinel)
    want = [unknown.sub(replacement, w).encode("utf-8") for w in PreTokenizer(steps).words(text, True)]
    assert [buffer[a:b] for a, b in words.tolist()] == want


def test_threads_share_one_program():
    """``words`` releases the GIL: four threads on one program get what one gets."""
    steps = [("split", regex.compile(r"[\p{P}!-/:-@\[-`{-~]"), "contiguous", False), ("byte_level", False, True),
             ("split", regex.compile(r"\p{N}"), "contiguous", False),
             ("split", regex.compile(r"[0-9][0-9][0-9]"), "isolated", False)]
    program = PreTokenizer(steps).native()[0]
    docs = [f"Item {k}: 1234567 ²³ {'中文' * (k % 5)} x,y--z\n" * (1 + k % 7) for k in range(200)]
    data = [np.frombuffer(d.encode(), np.uint8) for d in docs]
    one = [program.words(d) for d in data]
    for threads in (2, 3, 4):
        with ThreadPoolExecutor(threads) as pool:
            many = list(pool.map(program.words, data))
        assert all(a[0] == b[0] and np.array_equal(a[1], b[1]) for a, b in zip(one, many))
    assert [bytes(b[a:z]) for b, w in one[:3] for a, z in w.tolist()] == \
        [w for d in docs[:3] for w in oracle(steps, d, False)]


def test_steps_the_kernel_does_not_take_say_why():
    assert PreTokenizer([("split", regex.compile(r"(?<=a)b"), "isolated", False),
                         ("byte_level", False, True)]).native()[1].startswith("the regex VM does not take")
    assert PreTokenizer([("metaspace", "▁", "always", True), ("byte_level", False, True)]).native()[1] \
        == "the kernel does not run a 'metaspace' step"
    assert PreTokenizer([("split", regex.compile(r"\s+"), "removed", False)]).native()[1] == "no byte_level step"
    assert PreTokenizer([("split", regex.compile("a", regex.I), "removed", False),
                         ("byte_level", False, True)]).native()[1] == "the split pattern 'a' has flags"


def test_bad_tables_and_text_are_refused():
    classes = code_point_classes()
    digit = compile_pattern(r"\p{N}").pattern_id
    with pytest.raises(ValueError, match="not the id of a compiled pattern"):
        HFPreTokenizer([[0, 3, 1, 0]], classes, GPT2_SPELLING)
    with pytest.raises(ValueError, match="behaviour"):
        HFPreTokenizer([[0, digit, 5, 0]], classes, GPT2_SPELLING)
    with pytest.raises(ValueError, match="byte_level takes"):
        HFPreTokenizer([[1, 2, 0, 0]], classes, GPT2_SPELLING)
    with pytest.raises(ValueError, match="unknown kind"):
        HFPreTokenizer([[7, 0, 0, 0]], classes, GPT2_SPELLING)
    with pytest.raises(ValueError, match="one entry per code point"):
        HFPreTokenizer([[1, 0, 1, 0]], classes[:10], GPT2_SPELLING)
    with pytest.raises(ValueError, match="one entry per code point"):
        HFPreTokenizer([[1, 0, 1, 0]], None, GPT2_SPELLING)
    assert HFPreTokenizer([[1, 1, 0, 0]], None, GPT2_SPELLING).words(np.frombuffer(b"a b", np.uint8))[0] == b" a b"
    with pytest.raises(ValueError, match="distinct code points"):
        HFPreTokenizer([[1, 0, 1, 0]], classes, np.zeros(256, np.uint32))
    with pytest.raises(ValueError, match="spelling must hold 256"):
        HFPreTokenizer([[1, 0, 1, 0]], classes, GPT2_SPELLING[:5])
    with pytest.raises(ValueError, match="known is for a character model"):
        HFPreTokenizer([[1, 0, 1, 0]], classes, GPT2_SPELLING, 0, np.ones(0x110000, np.uint8))
    with pytest.raises(ValueError, match="known must hold one entry per code point"):
        HFPreTokenizer([], classes, GPT2_SPELLING, 0, np.ones(10, np.uint8))
    with pytest.raises(ValueError, match="sentinel must be"):
        HFPreTokenizer([], classes, GPT2_SPELLING, 0, np.ones(0x110000, np.uint8), 0xD800)
    with pytest.raises(ValueError, match="output must be"):
        HFPreTokenizer([[1, 0, 1, 0]], classes, GPT2_SPELLING, 2)
    program = HFPreTokenizer([[1, 0, 1, 0]], classes, GPT2_SPELLING)
    with pytest.raises(ValueError, match="not valid UTF-8"):
        program.words(np.frombuffer(b"a\xff", np.uint8))
    assert program.words(np.zeros(0, np.uint8))[1].shape == (0, 2)
    long = "a1 " * 20_000  # a long text: no recursion, no quadratic work
    buffer, words = program.words(np.frombuffer(long.encode(), np.uint8))
    assert [buffer[a:b] for a, b in words.tolist()] == oracle([("byte_level", False, True)], long, False)


def test_the_behaviours_are_the_kernels():
    """The tables ``PreTokenizer.native`` writes name HF's behaviours by their index in
    ``BEHAVIORS``: the kernel's enum, in that order."""
    from ubpe_native import _hf_pretok

    assert [getattr(_hf_pretok, name.upper()) for name in BEHAVIORS] == list(range(len(BEHAVIORS)))
