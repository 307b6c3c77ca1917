"""Rank-ordered merging and BPE-dropout against a transcription of tiktoken's educational BPE."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.errors import InvalidParameterError, UnknownSymbolError, UnknownTokenError
from ubpe.encoders.ranked import DropoutEncoder, RankedEncoder
from ubpe.vocabulary import Vocabulary


def reference_ranked(vocabulary: Vocabulary, priorities: list[int], word: list[int]) -> list[int]:
    """tiktoken ``_educational.bpe_encode`` over base-id tuples instead of bytes.

    Every step rescans the word for the adjacent pair whose concatenation is the piece of
    lowest priority, merges the leftmost such pair, and repeats until no pair forms a piece.
    Where tokens share a piece, the lowest (priority, id) stands for it.
    """
    best: dict[tuple[int, ...], tuple[int, int]] = {}
    for token, piece in vocabulary.pieces().items():
        key = (priorities[token - vocabulary.n_base], token)
        if piece not in best or key < best[piece]:
            best[piece] = key
    parts = [(s,) for s in word]
    while True:
        min_idx, min_rank = None, None
        for i, (a, b) in enumerate(zip(parts[:-1], parts[1:])):
            rank = best.get(a + b)
            if rank is not None and (min_rank is None or rank[0] < min_rank):
                min_idx, min_rank = i, rank[0]
        if min_rank is None:
            break
        parts = parts[:min_idx] + [parts[min_idx] + parts[min_idx + 1]] + parts[min_idx + 2 :]
    return [p[0] if len(p) == 1 else best[p][1] for p in parts]


@st.composite
def vocabularies(draw):
    """Random merge lists (shared pieces included) with shuffled creation ranks."""
    n_base = draw(st.integers(1, 4))
    n_merged = draw(st.integers(0, 12))
    left, right = [], []
    for t in range(n_merged):
        left.append(draw(st.integers(0, n_base + t - 1)))
        right.append(draw(st.integers(0, n_base + t - 1)))
    vocabulary = Vocabulary.from_merges(n_base, left, right, documents=[1] * n_merged, n_docs=1)
    ranks = draw(st.permutations(range(n_merged)))
    return vocabulary.replace(ranks=np.array(ranks, dtype=np.int64))


@st.composite
def vocabulary_and_word(draw):
    vocabulary = draw(vocabularies())
    word = draw(st.lists(st.integers(0, vocabulary.n_base - 1), max_size=40))
    return vocabulary, word


@settings(max_examples=300, deadline=None)
@given(vocabulary_and_word())
def test_ranked_equals_educational_bpe(case):
    vocabulary, word = case
    ranks = vocabulary.ranks.tolist()
    assert RankedEncoder(vocabulary).encode_word(word).tolist() == reference_ranked(
        vocabulary, ranks, word
    )
    ids = list(range(vocabulary.n_merged))
    assert RankedEncoder(vocabulary, priority="id").encode_word(word).tolist() == reference_ranked(
        vocabulary, ids, word
    )


@settings(max_examples=100, deadline=None)
@given(vocabulary_and_word(), st.integers(0, 40))
def test_parts_are_encoded_separately_and_decode_inverts(case, cut):
    vocabulary, word = case
    cut = min(cut, len(word))
    encoder = RankedEncoder(vocabulary)
    tokens = encoder.encode_parts([word[:cut], word[cut:]])
    assert tokens == encoder.encode_word(word[:cut]).tolist() + encoder.encode_word(word[cut:]).tolist()
    assert encoder.decode(tokens).tolist() == word


@settings(max_examples=100, deadline=None)
@given(vocabulary_and_word(), st.integers(0, 2**32))
def test_dropout_zero_equals_ranked_and_seed_reproduces(case, seed):
    vocabulary, word = case
    ranked = RankedEncoder(vocabulary).encode_word(word).tolist()
    assert DropoutEncoder(vocabulary, 0.0, seed=seed).encode_word(word).tolist() == ranked
    first, second = (DropoutEncoder(vocabulary, 0.3, seed=seed) for _ in range(2))
    for _ in range(3):
        tokens = first.encode_word(word)
        assert tokens.tolist() == second.encode_word(word).tolist()
        assert first.decode(tokens).tolist() == word
    assert DropoutEncoder(vocabulary, 1.0, seed=seed).encode_word(word).tolist() == word


def test_dropout_samples_several_segmentations():
    vocabulary = Vocabulary.from_merges(1, [0, 1, 2], [0, 1, 2], documents=[1, 1, 1], n_docs=1)
    encoder = DropoutEncoder(vocabulary, 0.5, seed=0)
    seen = {tuple(encoder.encode_word([0] * 8).tolist()) for _ in range(200)}
    assert (3,) in seen and len(seen) > 5
    assert all(encoder.decode(s).tolist() == [0] * 8 for s in seen)


def test_long_runs_merge_pairwise_from_the_left():
    """``"a" * n`` over the vocabulary a, aa, aaaa, ..., a*1024 (rank k doubles rank k-1):
    each rank merges the run pairwise from the left, so the tokens are n // 1024 pieces of
    1,024 then the binary digits of the rest, largest first - on a run long enough that a
    per-merge rescan would be quadratic. (Speed is measured by the benchmarks; no test
    times anything.)"""
    vocabulary = Vocabulary.from_merges(
        1, list(range(0, 10)), list(range(0, 10)), documents=[1] * 10, n_docs=1
    )
    encoder = RankedEncoder(vocabulary)
    tokens = encoder.encode_word(np.zeros(100_000, dtype=np.int32))
    assert [len(vocabulary.piece(t)) for t in tokens] == [1024] * 97 + [512, 128, 32]
    assert encoder.decode(tokens).tolist() == [0] * 100_000
    short = [0] * 1_000
    assert list(encoder.encode_word(np.array(short, dtype=np.int32))) == reference_ranked(
        vocabulary, list(range(10)), short)


def test_unknown_ranks_fall_back_to_id_order():
    vocabulary = Vocabulary.from_merges(2, [0, 1], [1, 0], documents=[1, 1], n_docs=1)
    unknown = vocabulary.replace(ranks=np.full(2, -1, dtype=np.int64))
    assert RankedEncoder(unknown).priority == "id"
    mixed = vocabulary.replace(ranks=np.array([0, -1], dtype=np.int64))
    with pytest.raises(InvalidParameterError):
        RankedEncoder(mixed)


def test_bad_input_raises_our_errors():
    vocabulary = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=1)
    encoder = RankedEncoder(vocabulary)
    with pytest.raises(UnknownSymbolError):
        encoder.encode_word([0, 2])
    with pytest.raises(UnknownTokenError):
        encoder.decode([3])
    with pytest.raises(InvalidParameterError):
        RankedEncoder(vocabulary, priority="weight")
    with pytest.raises(InvalidParameterError):
        DropoutEncoder(vocabulary, 1.5)
    assert encoder.encode_word([]).tolist() == []
    assert encoder.encode_parts([]) == []


# -- the word cache of byte-level text (encode_text / encode_texts) ------------------------------


@st.composite
def byte_vocabulary_and_text(draw):
    """A byte-level merge table over a few letters, and a text drawn from a few words (so words
    repeat, as in real text) with the letters, spaces and a multi-byte letter."""
    letters = "abé"
    n_merged = draw(st.integers(0, 10))
    left, right = [], []
    alphabet = sorted({b for ch in letters for b in ch.encode("utf-8")})
    for t in range(n_merged):
        left.append(draw(st.sampled_from(alphabet + [256 + k for k in range(t)])))
        right.append(draw(st.sampled_from(alphabet + [256 + k for k in range(t)])))
    vocabulary = Vocabulary.from_merges(256, left, right, documents=[1] * n_merged, n_docs=1)
    vocabulary = vocabulary.replace(ranks=np.array(draw(st.permutations(range(n_merged))), dtype=np.int64))
    words = draw(st.lists(st.text(letters, min_size=1, max_size=8), min_size=1, max_size=4))
    text = " ".join(draw(st.lists(st.sampled_from(words), max_size=30)))
    return vocabulary, text


def _byte_level_tables(vocabulary):
    from ubpe_native._ranked import MergeTable

    def table():
        return MergeTable(256, np.asarray(vocabulary.piece_offsets, np.int64),
                          np.asarray(vocabulary.piece_symbols, np.int32), np.asarray(vocabulary.ranks, np.int64))
    return table


@settings(max_examples=150, deadline=None)
@given(byte_vocabulary_and_text(), st.integers(1, 3))
def test_the_word_cache_changes_no_result(case, limit):
    """encode_text and encode_texts with the word cache (a tiny limit that makes it start over
    within a call, or the default) give what no cache gives, on a first call and on a repeat,
    and each word is what merging it alone gives (the uncached `encode` with the shortcut)."""
    from ubpe.text.patterns import PATTERNS, code_point_classes, native_pattern_id

    vocabulary, text = case
    make = _byte_level_tables(vocabulary)
    data, classes, pattern = text.encode("utf-8"), code_point_classes(), native_pattern_id(PATTERNS["gpt2"])
    uncached = make()
    uncached.set_cache_limit(0)
    want = uncached.encode_text(data, classes, pattern).tolist()
    tiny, default = make(), make()
    tiny.set_cache_limit(limit)
    for table in (tiny, default):
        for _ in range(2):  # a first pass, then one with the cache filled
            assert table.encode_text(data, classes, pattern).tolist() == want
            tokens, offsets = table.encode_texts(data, [len(text)], classes, pattern)
            assert tokens.tolist() == want and offsets.tolist() == [0, len(want)]
    assert uncached.cache_size() == 0 and tiny.cache_size() <= limit
    symbols = np.frombuffer(data, np.uint8).astype(np.int32)
    from ubpe_native._pretokenize import split_text

    bounds = np.asarray(split_text(data, classes, pattern), np.int64)
    assert uncached.encode(symbols, bounds, True, 0.0, 0).tolist() == want


def test_the_word_cache_is_one_per_thread():
    """Threads encoding at once with one table (each call takes its own scratch and cache)
    give the ids of one thread alone."""
    from concurrent.futures import ThreadPoolExecutor

    from ubpe.text.patterns import PATTERNS, code_point_classes, native_pattern_id

    words = ["ab", "ba", "aab", "abab", "b"]
    vocabulary = Vocabulary.from_merges(256, [97, 256, 98], [98, 97, 256], documents=[1] * 3, n_docs=1)
    table = _byte_level_tables(vocabulary.replace(ranks=np.array([2, 0, 1])))()
    classes, pattern = code_point_classes(), native_pattern_id(PATTERNS["gpt2"])
    texts = [" ".join(words[(k + j) % len(words)] for j in range(400)).encode() for k in range(8)]
    alone = [table.encode_text(text, classes, pattern).tolist() for text in texts]
    table.clear_cache()
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(lambda t: table.encode_text(t, classes, pattern).tolist(), texts)) == alone
