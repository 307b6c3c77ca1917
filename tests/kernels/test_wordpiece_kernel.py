"""`ubpe_native._wordpiece`: the greedy longest match against a readable reference (hypothesis
over small random vocabularies), and every ``def`` entry called with hostile arguments (each a
clear ValueError or TypeError, never a crash)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe_native._wordpiece import WordPieceKernel, utf8_pieces

CODE_POINTS = 0x110000
SPACE, ALONE = 1, 2
UNK = 0


def _classes() -> np.ndarray:
    table = np.zeros(CODE_POINTS, np.uint8)
    table[ord(" ")] = SPACE
    table[ord(",")] = ALONE
    return table


def _kernel(initial: dict[str, int], continuation: dict[str, int], max_chars: int = -1,
            empty_initial: int = -1, **changes) -> WordPieceKernel:
    args = dict(initial=[t.encode() for t in initial], initial_ids=list(initial.values()),
                continuation=[t.encode() for t in continuation], continuation_ids=list(continuation.values()),
                unk=UNK, max_chars=max_chars, empty_initial=empty_initial, classes=_classes())
    args.update(changes)
    return WordPieceKernel(*args.values())


def reference(word: str, initial: dict[str, int], continuation: dict[str, int], max_chars: int,
              empty_initial: int) -> list[int]:
    """WordPiece as HF's ``WordPiece::tokenize`` reads: from each start the longest piece of
    the table (initial at the word's start, continuation after), or the unknown token, whole."""
    if 0 <= max_chars < len(word):
        return [UNK]
    out, start, table = [], 0, initial
    while start < len(word):
        end = next((end for end in range(len(word), start, -1) if word[start:end] in table), None)
        if end is None:
            if table is initial and empty_initial >= 0:
                out.append(empty_initial)
                table = continuation
                continue
            return [UNK]
        out.append(table[word[start:end]])
        start, table = end, continuation
    return out


_PIECES = st.text(alphabet="abé中", min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(initial=st.lists(_PIECES, max_size=8), continuation=st.lists(_PIECES, max_size=8),
       words=st.lists(st.text(alphabet="abé中", min_size=1, max_size=8), max_size=6),
       max_chars=st.integers(-1, 6), empty=st.booleans())
def test_the_greedy_match_is_the_references(initial, continuation, words, max_chars, empty):
    first = {text: 1 + k for k, text in enumerate(initial)}
    rest = {text: 100 + k for k, text in enumerate(continuation)}
    empty_initial = 99 if empty else -1
    kernel = _kernel(first, rest, max_chars, empty_initial)
    want = [token for word in words for token in reference(word, first, rest, max_chars, empty_initial)]
    assert kernel.encode_words(words).tolist() == want
    # the same words as documents: spaces and "," cut them, every document apart
    ids, offsets = kernel.encode_texts(" ".join(words).encode(), [len(" ".join(words))])
    assert ids.tolist() == want and offsets.tolist() == [0, len(want)]


# Pieces as the kernel's lists take them: duplicates (the last counts), empty ones (never
# matched), pieces that are prefixes of others, 1- to 4-byte UTF-8 and NUL
_ALPHABET = "ab\0é中😀"
_RAW_PIECES = st.lists(st.text(alphabet=_ALPHABET, max_size=4), max_size=12)


def _last_counts(pieces: list[str], first_id: int) -> dict[str, int]:
    """The oracle's table: a plain dict of the non-empty pieces, a later equal piece's id
    replacing the earlier one's."""
    return {text: first_id + k for k, text in enumerate(pieces) if text}


@settings(max_examples=300, deadline=None)
@given(initial=_RAW_PIECES, continuation=_RAW_PIECES,
       words=st.lists(st.text(alphabet=_ALPHABET, min_size=1, max_size=10), max_size=6), empty=st.booleans())
def test_the_trie_is_a_dict_of_the_pieces(initial, continuation, words, empty):
    kernel = WordPieceKernel([t.encode() for t in initial], [1 + k for k in range(len(initial))],
                             [t.encode() for t in continuation], [100 + k for k in range(len(continuation))],
                             UNK, -1, 99 if empty else -1, _classes())
    first, rest = _last_counts(initial, 1), _last_counts(continuation, 100)
    want = [token for word in words for token in reference(word, first, rest, -1, 99 if empty else -1)]
    assert kernel.encode_words(words).tolist() == want


_CHANGES = st.dictionaries(st.sampled_from([0x41, 0x42, 0xC9, 0x4E2D, 0x1F600, 0x10FFFF]),
                           st.sampled_from([0x61, 0x62, 0xE9, 0x4E2D, 0xD800, 0x10FFFF]), max_size=4)


@settings(max_examples=100, deadline=None)
@given(fold=_CHANGES, lower=_CHANGES, text=st.text(alphabet="aAbBÉé中😀\U0010FFFF ,", max_size=20))
def test_a_dict_map_is_its_full_table(fold, lower, text):
    """A ``fold`` or ``lower`` dict is built only up to its largest code point: the same
    encoding as the full table of 0x110000 entries (a surrogate only to itself)."""
    fold = {key: value for key, value in fold.items() if not 0xD800 <= value < 0xE000}
    lower = {key: value for key, value in lower.items() if not 0xD800 <= value < 0xE000}

    def full(changes):
        table = np.arange(CODE_POINTS, dtype=np.int32)
        table[list(changes)] = list(changes.values())
        return table

    pieces = {"a": 1, "b": 2, "é": 3, "中": 4, "\U0010FFFF": 5, ",": 6}
    by_dict = _kernel(pieces, {"a": 7, "b": 8}, fold=fold or None, lower=lower or None)
    by_table = _kernel(pieces, {"a": 7, "b": 8}, fold=full(fold), lower=full(lower))
    data = text.encode()
    assert by_dict.encode_texts(data, [len(text)])[0].tolist() == by_table.encode_texts(data, [len(text)])[0].tolist()


def test_a_word_of_its_own_and_the_documents_offsets():
    kernel = _kernel({"ab": 1, ",": 2}, {"b": 3})
    ids, offsets = kernel.encode_texts("ab,abb  ,x".encode(), [3, 0, 7], skip=[0, 0, 0])
    assert ids.tolist() == [1, 2, 1, 3, 2, UNK] and offsets.tolist() == [0, 2, 2, 6]
    ids, offsets = kernel.encode_texts(b"ab,ab", [2, 3], skip=np.array([1, 0], np.uint8))
    assert ids.tolist() == [2, 1] and offsets.tolist() == [0, 0, 2]


GOOD = dict(initial=[b"a"], initial_ids=[1], continuation=[b"b"], continuation_ids=[2], unk=0, max_chars=-1,
            empty_initial=-1, classes=np.zeros(CODE_POINTS, np.uint8))
HOSTILE = {
    "ids short": (dict(initial_ids=[]), ValueError),
    "negative id": (dict(continuation_ids=[-1]), ValueError),
    "id past int32": (dict(initial_ids=[2**40]), ValueError),
    "id past int64": (dict(initial_ids=[2**70]), ValueError),
    "id below int32": (dict(initial_ids=[-2**31 - 1]), ValueError),
    "id a float": (dict(initial_ids=[1.5]), TypeError),
    "negative unk": (dict(unk=-3), ValueError),
    "max_chars below -1": (dict(max_chars=-2), ValueError),
    "classes short": (dict(classes=np.zeros(10, np.uint8)), ValueError),
    "class past the last": (dict(classes=np.full(CODE_POINTS, 9, np.uint8)), ValueError),
    "classes of floats": (dict(classes=np.zeros(CODE_POINTS)), TypeError),
    "piece not UTF-8": (dict(initial=[b"\xff"]), ValueError),
    "pieces that split a character": (dict(initial=[b"\xc3", b"\xa9"], initial_ids=[1, 2]), ValueError),
    "a piece cut short after an empty one": (dict(initial=[b"\xc3", b"", b"\xa9"], initial_ids=[1, 2, 3]), ValueError),
    "piece not bytes": (dict(initial=[5]), TypeError),
    "pieces None": (dict(initial=None), TypeError),
    "fold short": (dict(fold=np.arange(5, dtype=np.int32)), ValueError),
    "fold past the last code point": (dict(fold=np.full(CODE_POINTS, CODE_POINTS, np.int32)), ValueError),
    "lower to a surrogate": (dict(lower=np.full(CODE_POINTS, 0xD800, np.int32)), ValueError),
    "lower as a dict, to a surrogate": (dict(lower={0x41: 0xD800}), ValueError),
    "fold as a dict, past the last code point": (dict(fold={CODE_POINTS: 0x41}), ValueError),
    "fold as a dict of str": (dict(fold={"A": "a"}), TypeError),
}


@pytest.mark.parametrize("ids", [[True], [np.int64(7)], (7,), [2**31 - 1], np.array([7], np.int64)])
def test_ids_are_any_integers(ids):
    """Plain ints take a fast path; anything else what ``array('i')`` or numpy takes."""
    kernel = WordPieceKernel(*{**GOOD, "initial_ids": ids}.values())
    assert kernel.encode_words(["a"]).tolist() == [int(ids[0])]


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_tables_are_refused(case):
    changes, error = HOSTILE[case]
    with pytest.raises(error):
        WordPieceKernel(*{**GOOD, **changes}.values())


@pytest.mark.parametrize("data, lengths, skip, error", [
    (b"\xff", [1], None, ValueError),  # not UTF-8
    (b"\xc3", [1], None, ValueError),  # cut short
    (b"ab", [1], None, ValueError),  # lengths short of the text
    (b"ab", [3], None, ValueError),  # past it
    (b"ab", [-1, 3], None, ValueError),
    (b"ab", [2], [0, 0], ValueError),  # a skip per document
    (b"ab", [2.5], None, TypeError),
    (None, [0], None, TypeError),
])
def test_hostile_texts_are_refused(data, lengths, skip, error):
    kernel = WordPieceKernel(*GOOD.values())
    with pytest.raises(error):
        kernel.encode_texts(data, lengths, skip)


def _split(source: dict[str, int], prefix: str) -> dict[str, int]:
    """The oracle's table of one side: the tokens spelled ``prefix`` + text, by that text."""
    return {text[len(prefix):]: i for text, i in source.items() if text.startswith(prefix) and len(text) > len(prefix)}


_VOCAB_ALPHABET = "ab#▁é中😀"


@settings(max_examples=300, deadline=None)
@given(tokens=st.lists(st.text(alphabet=_VOCAB_ALPHABET, max_size=5), max_size=14),
       prefixes=st.sampled_from([("", "##"), ("▁", ""), ("#", "#"), ("", ""), ("▁", "##"), ("é", "😀")]),
       words=st.lists(st.text(alphabet=_VOCAB_ALPHABET, min_size=1, max_size=10), max_size=6),
       empty=st.booleans(), max_chars=st.integers(-1, 6))
def test_a_vocabulary_is_split_as_two_tables(tokens, prefixes, words, empty, max_chars):
    """``from_vocabulary`` (one blob, split in C) encodes as the oracle's two tables: the
    tokens spelled with each prefix, an empty piece left out, of equal texts the last id."""
    source = {text: 3 + k for k, text in enumerate(tokens)}  # (a dict: one id per text, the last)
    initial_prefix, continuation_prefix = prefixes
    kernel = WordPieceKernel.from_vocabulary("\0".join(source).encode(), list(source.values()),
                                             initial_prefix.encode(), continuation_prefix.encode(),
                                             UNK, max_chars, 99 if empty else -1, _classes())
    first, rest = _split(source, initial_prefix), _split(source, continuation_prefix)
    want = [token for word in words for token in reference(word, first, rest, max_chars, 99 if empty else -1)]
    assert kernel.encode_words(words).tolist() == want
    ids, offsets = kernel.encode_texts(" ".join(words).encode(), [len(" ".join(words))])
    assert ids.tolist() == want and offsets.tolist() == [0, len(want)]


_KEYS = st.one_of(st.text(alphabet=_VOCAB_ALPHABET + "\0", max_size=5), st.text(max_size=4),
                  st.sampled_from(["\ud800", "a\udfff", "\0"]), st.integers(), st.binary(max_size=2))
_VALUES = st.one_of(st.integers(0, 2**31 - 1), st.integers(-(2**63) - 1, 2**64), st.booleans(),
                    st.floats(allow_nan=False), st.none())


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=8))
def test_utf8_pieces_is_the_join_or_none(vocab):
    """The pieces in one pass are ``"\\0".join`` of the keys encoded and their ids; None exactly
    where a key is not a str, holds a NUL or a lone surrogate, or an id is not an int in
    ``0 .. 2**31 - 1`` (bools are not ids)."""
    def plain(key) -> bool:
        if type(key) is not str or "\0" in key:
            return False
        try:
            key.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True

    takes = all(plain(key) and type(value) is int and 0 <= value < 2**31 for key, value in vocab.items())
    found = utf8_pieces(vocab)
    if not takes:
        assert found is None
        return
    blob, ids = found
    assert blob == "\0".join(vocab).encode("utf-8") and ids.typecode == "i" and ids.tolist() == list(vocab.values())


def test_a_vocabulary_of_one_empty_token_and_of_none():
    none = WordPieceKernel.from_vocabulary(b"", [], b"", b"##", UNK, -1, -1, _classes())
    assert none.encode_words(["ab"]).tolist() == [UNK]
    empty = WordPieceKernel.from_vocabulary(b"", [7], b"", b"##", UNK, -1, -1, _classes())
    assert empty.encode_words(["ab"]).tolist() == [UNK]


def test_a_failed_build_leaves_no_half_built_kernel():
    """``__init__`` refused after the object was claimed: its encoders refuse too (no table to read)."""
    kernel = WordPieceKernel.__new__(WordPieceKernel)
    with pytest.raises(ValueError):
        kernel.__init__(*{**GOOD, "classes": np.zeros(10, np.uint8)}.values())
    with pytest.raises(ValueError, match="never built"):
        kernel.encode_words(["a"])
    with pytest.raises(ValueError, match="never built"):
        kernel.text_ids(b"a")
