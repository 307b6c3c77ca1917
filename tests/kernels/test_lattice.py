"""The universal encoder (lattice kernel + document combination) vs the transcription."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import reference_encode as ref
from ubpe.encoders.tfidf import TfidfEncoder, best_sums
from ubpe.errors import InvalidParameterError
from ubpe.vocabulary import Vocabulary
from ubpe_native._lattice_cache import Lattice, encode_parts
from ubpe_native._radix import RadixTree

MAX_ALPHABET = 4
# scores from the incremental sums (no exact sum) may be a few ulps off; observed: within 2 ulps
# (relative 4e-16) over repeated hypothesis runs, so the bound is 4 ulps, not the 1e-9 it was
TOLERANCE = 8e-16

# (n_base, documents, rearrangement): corpora with few symbols, so that tokens repeat and
# many weights coincide - the cases where ties decide
corpora = ref.random_corpora("universal", 4, MAX_ALPHABET)


def words_over(n_base, max_size=14):
    return st.lists(st.lists(st.integers(0, n_base - 1), max_size=max_size), min_size=1, max_size=4)


def kernel_candidates(vocab, word, top_n, exact_max_length=256, **options):
    tree = RadixTree(vocab.n_base, vocab.piece_offsets, vocab.piece_symbols)
    weights = np.concatenate([np.zeros(vocab.n_base), vocab.weights])
    tokens, token_offsets, candidate_offsets, scores = encode_parts(
        tree, weights, np.array(word, np.int32), np.array([0, len(word)]), top_n, exact_max_length, **options
    )
    return [
        (tokens[token_offsets[j] : token_offsets[j + 1]].tolist(), float(scores[j]))
        for j in range(candidate_offsets[0], candidate_offsets[1])
    ]


def reference_candidates(vocab, word, top_n):
    lookup, weights = ref.universal_tables(vocab)
    return ref.encode_word(lookup, weights, word, top_n)


def spells(vocab, tokens, word):
    return [s for t in tokens for s in vocab.piece(t).tolist()] == list(word)


def recomputed_score(vocab, tokens):
    counter = Counter(reversed(tokens))  # the reference's key order: built from the end
    return ref.score_of(counter, vocab.weight_of())


@settings(max_examples=150, deadline=None)
@given(corpora, st.data())
def test_parts_match_the_reference_exactly(corpus, data):
    n_base, documents, rearrange, n_candidates = corpus
    vocab = ref.fitted_vocabulary(documents, n_base, 12, n_candidates, rearrange)
    for word in data.draw(words_over(n_base)):
        for top_n in (1, 2, 3, 5):
            assert kernel_candidates(vocab, word, top_n) == reference_candidates(vocab, word, top_n)


@st.composite
def corpora_with_words(draw, max_size=30):
    corpus = draw(corpora)
    return corpus, draw(words_over(corpus[0], max_size))


@settings(max_examples=100, deadline=None)
@given(corpora_with_words())
# Once the incremental ranking put [2 0 3 3 3 3] (1.941735280848129) before [2 2 0 3 3 3]
# (1.9417352808481292, one rounding step more): candidates are now re-ranked by the exact
# scores they report (as the reference ranks them).
@example(((2, [[[0, 1]], [[0, 1]], [[1, 0]]], None, 1), [[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]]))
def test_incremental_scores_stay_within_tolerance(corpus_and_words):
    """Without the exact sums (and with tries compacted all the time) scores may be an ulp
    off, but every candidate still spells the word with the score it claims, best first."""
    (n_base, documents, rearrange, n_candidates), words = corpus_and_words
    vocab = ref.fitted_vocabulary(documents, n_base, 12, n_candidates, rearrange)
    for word in words:
        for top_n in (1, 3):
            got = kernel_candidates(vocab, word, top_n, exact_max_length=0, _min_compaction=1)
            want = reference_candidates(vocab, word, top_n)
            assert len(got) == len(want)
            assert got[0][1] == pytest.approx(want[0][1], rel=TOLERANCE, abs=TOLERANCE)
            for tokens, score in got:
                assert spells(vocab, tokens, word)
                assert score == pytest.approx(recomputed_score(vocab, tokens), rel=TOLERANCE, abs=TOLERANCE)
            ranks = [(-s, len(t)) for t, s in got]
            assert ranks == sorted(ranks)


@settings(max_examples=100, deadline=None)
@given(corpora, st.data(), st.integers(1, 4))
def test_documents_combine_parts_like_the_reference(corpus, data, top_n):
    n_base, documents, rearrange, n_candidates = corpus
    vocab = ref.fitted_vocabulary(documents, n_base, 12, n_candidates, rearrange)
    parts = data.draw(st.lists(st.lists(st.integers(0, n_base - 1), min_size=1, max_size=8), max_size=5))
    encoder = TfidfEncoder(vocab)
    got = encoder.encode([np.array(p, np.int32) for p in parts], top_n)
    lookup, weights = ref.universal_tables(vocab)
    want = ref.combine_parts(lambda p: ref.encode_word(lookup, weights, p, top_n), parts, top_n)
    assert got == want


@settings(max_examples=60, deadline=None)
@given(corpora, st.data(), st.integers(1, 5))
def test_exact_combination_is_the_k_best_of_all_sums(corpus, data, top_n):
    n_base, documents, rearrange, n_candidates = corpus
    vocab = ref.fitted_vocabulary(documents, n_base, 12, n_candidates, rearrange)
    parts = data.draw(st.lists(st.lists(st.integers(0, n_base - 1), min_size=1, max_size=6), min_size=2, max_size=4))
    encoder = TfidfEncoder(vocab)
    got = TfidfEncoder(vocab, exact=True).encode([np.array(p, np.int32) for p in parts], top_n)
    per_part = encoder.part_candidates([np.array(p, np.int32) for p in parts], top_n)
    everything = []
    for combination in itertools.product(*per_part):
        score = 0.0
        for _, s in reversed(combination):  # folded from the last part, like best_sums
            score = s + score
        everything.append((-score, sum(len(t) for t, _ in combination)))
    best = sorted(everything)[:top_n]
    # (top-1 adds the parts left to right, as the reference does: the last bit may differ)
    assert [s for _, s in got] == pytest.approx([-s for s, _ in best], rel=TOLERANCE)
    # sums that differ only in the last bits may come in either order (each order adds them
    # differently): each answer's length is that of a combination with the same score
    for (tokens, score), (_, length) in zip(got, best, strict=True):
        tied = {n for s, n in everything if -s == pytest.approx(score, rel=TOLERANCE)}
        assert length in tied and len(tokens) in tied


def test_best_sums_on_a_worked_example():
    parts = [[([1], 2.0), ([2, 2], 1.0)], [([3], 0.5), ([4], 0.4)]]
    assert best_sums(parts, 3) == [([1, 3], 2.5), ([1, 4], 2.4), ([2, 2, 3], 1.5)]


def long_vocabulary():
    rng = np.random.default_rng(1)
    docs = [[rng.integers(0, 3, size=40).tolist()] for _ in range(30)]
    return ref.fitted_vocabulary(docs, 3, 40, 5, "universal")


@pytest.mark.parametrize("top_n", [1, 2])
def test_a_long_run_of_one_symbol(top_n):
    vocab = long_vocabulary()
    word = [0] * 600
    assert kernel_candidates(vocab, word, top_n, exact_max_length=10**6) == reference_candidates(vocab, word, top_n)
    got = kernel_candidates(vocab, [0] * 20_000, top_n)
    assert all(spells(vocab, tokens, [0] * 20_000) for tokens, _ in got)


def test_a_20k_sequence_spells_itself_with_the_score_it_claims():
    vocab = long_vocabulary()
    word = np.random.default_rng(2).integers(0, 3, size=20_000).tolist()
    for top_n in (1, 3):
        got = kernel_candidates(vocab, word, top_n, _min_compaction=64)
        assert len(got) == top_n
        for tokens, score in got:
            assert spells(vocab, tokens, word)
            assert score == pytest.approx(recomputed_score(vocab, tokens), rel=TOLERANCE)
    # compaction changes memory, never the result
    assert kernel_candidates(vocab, word, 3, _min_compaction=1) == kernel_candidates(vocab, word, 3)


def test_a_2k_sequence_matches_the_reference():
    vocab = long_vocabulary()
    word = np.random.default_rng(3).integers(0, 3, size=2_000).tolist()
    assert kernel_candidates(vocab, word, 2, exact_max_length=10**6, _min_compaction=16) == reference_candidates(vocab, word, 2)


def test_empty_inputs():
    vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    encoder = TfidfEncoder(vocab)
    assert encoder.encode([np.zeros(0, np.int32)], 3) == [([], 0.0)]
    assert encoder.encode([], 1) == [([], 0.0)]
    assert encoder.encode([], 2) == [([], 0.0)]


def test_invalid_arguments_raise():
    vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    encoder = TfidfEncoder(vocab)
    with pytest.raises(InvalidParameterError):
        encoder.encode([np.array([0, 1])], 0)
    with pytest.raises(ValueError):
        encoder.encode([np.array([0, 2])])  # 2 is no base id
    tree = RadixTree(2, vocab.piece_offsets, vocab.piece_symbols)
    with pytest.raises(ValueError):
        encode_parts(tree, np.zeros(2), np.array([0, 1], np.int32), np.array([0, 2]))  # token 2 has no weight
    with pytest.raises(ValueError):
        encode_parts(tree, np.ones(3), np.array([0, 1], np.int32), np.array([0, 2]))  # base ids weigh 0
    with pytest.raises(ValueError):
        encode_parts(tree, np.zeros(3), np.array([0, 1], np.int32), np.array([0, 3]))


def _flat(docs):
    """Documents of parts as (tokens, part_offsets, doc_part_offsets)."""
    parts = [p for doc in docs for p in doc]
    tokens = np.array([s for p in parts for s in p], dtype=np.int32)
    part_offsets = np.cumsum([0] + [len(p) for p in parts]).astype(np.int64)
    doc_part_offsets = np.cumsum([0] + [len(doc) for doc in docs]).astype(np.int64)
    return tokens, part_offsets, doc_part_offsets


@settings(max_examples=80, deadline=None)
@given(corpora, st.data(), st.sampled_from([(1 << 16, 1 << 22), (3, 20), (0, 0)]))
def test_the_part_cache_changes_no_result(corpus, data, limits):
    """A Lattice's cache of parts (hit often here: documents draw from a few parts; small
    limits make it start over between calls) gives what no cache and the reference give,
    call after call, whatever top_n each call asks."""
    n_base, documents, rearrange, n_candidates = corpus
    vocab = ref.fitted_vocabulary(documents, n_base, 12, n_candidates, rearrange)
    tree = RadixTree(vocab.n_base, vocab.piece_offsets, vocab.piece_symbols)
    weights = np.concatenate([np.zeros(vocab.n_base), vocab.weights])
    cached = Lattice(tree, weights, _cache_entries=limits[0], _cache_tokens=limits[1])
    plain = Lattice(tree, weights, cache=False)
    lookup, reference_weights = ref.universal_tables(vocab)
    pool = data.draw(st.lists(st.lists(st.integers(0, n_base - 1), min_size=1, max_size=8), min_size=1, max_size=4))
    for _ in range(3):
        docs = data.draw(st.lists(st.lists(st.sampled_from(pool), max_size=5), max_size=4))
        top_n = data.draw(st.integers(1, 4))
        flat = _flat(docs)
        got = cached.encode_documents(*flat, top_n=top_n)
        assert got == plain.encode_documents(*flat, top_n=top_n)
        assert got == [ref.combine_parts(lambda p: ref.encode_word(lookup, reference_weights, p, top_n), doc, top_n)
                       for doc in docs]
        for mine, theirs in zip(cached.encode_parts(flat[0], flat[1], top_n), plain.encode_parts(flat[0], flat[1], top_n)):
            assert mine.dtype == theirs.dtype and mine.tolist() == theirs.tolist()


def test_the_part_cache_starts_over_when_full():
    vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    tree = RadixTree(vocab.n_base, vocab.piece_offsets, vocab.piece_symbols)
    lattice = Lattice(tree, np.array([0.0, 0.0, 0.5]), _cache_entries=2)
    flat = _flat([[[0, 1], [1, 0], [0, 1]], [[0, 1, 1]]])
    want = [[([2, 1, 0, 2], 1.0)], [([2, 1], 0.5)]]  # part scores added: 0.5 + 0 + 0.5
    assert Lattice(tree, np.array([0.0, 0.0, 0.5]), cache=False).encode_documents(*flat) == want
    for _ in range(2):  # 3 entries: over the limit, emptied after each call
        assert lattice.encode_documents(*flat) == want
    lattice.clear_cache()
    assert lattice.encode_documents(*flat, top_n=2)[1] == [([2, 1], 0.5), ([0, 1, 1], 0.0)]
