"""Path encoders (fewest, additive, longest prefix / suffix / token) against brute force.

The oracles enumerate every segmentation of short documents and sort them by the documented
order; the greedy encoders are checked against plain transcriptions of their rules.
"""

from __future__ import annotations

import math

import doctest
import itertools
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe_native._paths
from ubpe import UBPE
from ubpe.encoders import TfidfScorer, available_encoders, make_encoder
from ubpe.errors import InvalidParameterError, SymbolTypeError, UnknownSymbolError
from ubpe.encoders.paths import (
    AdditiveEncoder,
    FewestTokensEncoder,
    LongestPrefixEncoder,
    LongestSuffixEncoder,
    LongestTokenEncoder,
)
from ubpe.vocabulary import Vocabulary
from ubpe_native._paths import kbest_paths, longest_prefix
from ubpe_native._radix import RadixTree


NAMES = ("fewest", "additive", "longest_prefix", "longest_suffix", "longest_token")
MAX_WORD = 12
# scores on a grid of halves: sums are exact in floating point, so ties are real ties
HALF_STEPS = [-2.0, -1.5, -1.0, -0.5, 0.0, 0.5]


# -- references -------------------------------------------------------------------------------


def piece_table(vocabulary: Vocabulary, preference=None) -> dict[tuple[int, ...], int]:
    """piece -> the token that stands for it: the best ``(preference, id)`` among those
    sharing it (highest id when there is no preference); base ids stand for themselves."""
    table = {(b,): b for b in range(vocabulary.n_base)}
    key = {}
    for token, piece in vocabulary.pieces().items():
        rank = (0.0 if preference is None else preference[token], token)
        if piece not in key or rank > key[piece]:
            key[piece], table[piece] = rank, token
    return table


def segmentations(word: list[int], table) -> list[list[tuple[int, int]]]:
    """Every segmentation of ``word`` as ``[(token, length)]``."""
    if not word:
        return [[]]
    out = []
    for length in range(1, len(word) + 1):
        token = table.get(tuple(word[:length]))
        if token is not None:
            out.extend([(token, length)] + rest for rest in segmentations(word[length:], table))
    return out


def document_segmentations(parts, table):
    for choice in itertools.product(*(segmentations(p, table) for p in parts)):
        yield [step for part in choice for step in part]


def right_to_left_sum(values) -> float:
    """The sum as the kernel forms it: each tail's cost added to its first token's."""
    total = 0.0
    for value in reversed(values):
        total = value + total
    return total


def order_key(cost: float, path) -> tuple:
    """The documented order: cost, then token lengths longest-first from the left."""
    return (cost, tuple(-length for _, length in path))


def reference_kbest(parts, table, costs, top_n):
    ranked = sorted(
        (order_key(right_to_left_sum([costs[t] for t, _ in path]), path), [t for t, _ in path])
        for path in document_segmentations(parts, table)
    )
    return [(tokens, key[0]) for key, tokens in ranked[:top_n]]


def reference_longest_prefix(word, table):
    out, i = [], 0
    while i < len(word):
        length = max(n for n in range(1, len(word) - i + 1) if tuple(word[i : i + n]) in table)
        out.append(table[tuple(word[i : i + length])])
        i += length
    return out


def reference_longest_suffix(word, table):
    out, j = [], len(word)
    while j > 0:
        length = max(n for n in range(1, j + 1) if tuple(word[j - n : j]) in table)
        out.append(table[tuple(word[j - length : j])])
        j -= length
    return out[::-1]


def reference_longest_token(word, table):
    """FLOTA without its cut-off: the longest token anywhere (leftmost), then both sides."""
    if not word:
        return []
    for length in range(len(word), 0, -1):
        for i in range(len(word) - length + 1):
            if tuple(word[i : i + length]) in table:
                return (
                    reference_longest_token(word[:i], table)
                    + [table[tuple(word[i : i + length])]]
                    + reference_longest_token(word[i + length :], table)
                )
    raise AssertionError("base ids always match")


# -- strategies -------------------------------------------------------------------------------


@st.composite
def vocabularies(draw, max_base=4, max_merged=14):
    """Random merge lists, shared pieces included."""
    n_base = draw(st.integers(1, max_base))
    n_merged = draw(st.integers(0, max_merged))
    left, right = [], []
    for t in range(n_merged):
        left.append(draw(st.integers(0, n_base + t - 1)))
        right.append(draw(st.integers(0, n_base + t - 1)))
    return Vocabulary.from_merges(n_base, left, right, documents=[1] * n_merged, n_docs=1)


@st.composite
def documents(draw, max_parts=3, max_symbols=MAX_WORD):
    """A vocabulary and a document of up to ``max_symbols`` symbols in up to ``max_parts`` parts."""
    vocabulary = draw(vocabularies())
    symbols = draw(st.lists(st.integers(0, vocabulary.n_base - 1), max_size=max_symbols))
    cuts = sorted(draw(st.lists(st.integers(0, len(symbols)), max_size=max_parts - 1)))
    edges = [0, *cuts, len(symbols)]
    parts = [symbols[a:b] for a, b in zip(edges[:-1], edges[1:])]
    return vocabulary, parts


def as_arrays(parts):
    return [np.array(p, dtype=np.int32) for p in parts]


def fitted_vocabulary(n_tokens=40, seed=0) -> Vocabulary:
    """A small vocabulary fitted by UBPE on random words over three letters."""
    rng = np.random.default_rng(seed)
    corpus = ["".join(rng.choice(list("abc"), size=rng.integers(3, 30))) for _ in range(60)]
    tok = UBPE(alphabet="abc", n_tokens=n_tokens)
    tok.fit(corpus, quiet=True)
    return tok.vocabulary


def decode_parts(vocabulary, tokens, parts):
    """Checks that the tokens spell every part without crossing a part; returns the pieces."""
    pieces = [vocabulary.piece(t).tolist() for t in tokens]
    out, k = [], 0
    for part in parts:
        spelled = []
        while len(spelled) < len(part):
            spelled += pieces[k]
            k += 1
        assert spelled == list(part)
        out.append(spelled)
    assert k == len(tokens)
    return out


# -- fewest -----------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(documents(), st.integers(1, 8))
def test_fewest_kbest_equals_exhaustive_enumeration(case, top_n):
    vocabulary, parts = case
    table = piece_table(vocabulary)
    expected = reference_kbest(parts, table, [1.0] * len(vocabulary), top_n)
    got = FewestTokensEncoder(vocabulary).encode_paths(as_arrays(parts), top_n)
    assert got == [(tokens, int(cost)) for tokens, cost in expected]
    assert got[0][1] == min(len(path) for path in document_segmentations(parts, table))


@settings(max_examples=200, deadline=None)
@given(documents(), st.integers(1, 12))
def test_kbest_lists_are_sorted_distinct_and_start_with_the_best(case, top_n):
    vocabulary, parts = case
    encoder = FewestTokensEncoder(vocabulary)
    paths = encoder.encode_paths(as_arrays(parts), top_n)
    n_segmentations = sum(1 for _ in document_segmentations(parts, piece_table(vocabulary)))
    assert len(paths) == min(top_n, n_segmentations)
    assert paths[0] == encoder.encode_paths(as_arrays(parts), 1)[0]
    assert [n for _, n in paths] == sorted(n for _, n in paths)
    assert len({tuple(tokens) for tokens, _ in paths}) == len(paths)
    # the tf-idf scores reported by encode belong to the same paths
    scorer = TfidfScorer(vocabulary)
    bounds = np.cumsum([0] + [len(p) for p in parts])
    for (tokens, score), (same, _) in zip(encoder.encode(as_arrays(parts), top_n), paths):
        assert tokens == same
        assert score == scorer.score(np.array(tokens, dtype=np.int64), bounds)


def test_fewest_on_a_fitted_vocabulary_equals_enumeration():
    vocabulary = fitted_vocabulary()
    table = piece_table(vocabulary)
    encoder = FewestTokensEncoder(vocabulary)
    rng = np.random.default_rng(1)
    for _ in range(40):
        word = rng.integers(0, vocabulary.n_base, size=rng.integers(1, MAX_WORD + 1)).tolist()
        expected = reference_kbest([word], table, [1.0] * len(vocabulary), 10)
        assert encoder.encode_paths([np.array(word)], 10) == [(t, int(c)) for t, c in expected]


# -- additive ---------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(documents(), st.integers(1, 8), st.data())
def test_additive_kbest_equals_exhaustive_enumeration(case, top_n, data):
    vocabulary, parts = case
    scores = data.draw(st.lists(st.sampled_from(HALF_STEPS), min_size=len(vocabulary),
                                max_size=len(vocabulary)))
    table = piece_table(vocabulary, scores)
    expected = reference_kbest(parts, table, [-s for s in scores], top_n)
    got = AdditiveEncoder(vocabulary, weights=np.array(scores)).encode_paths(as_arrays(parts), top_n)
    assert got == [(tokens, -cost) for tokens, cost in expected]


def _next_cost(parts, table, scores, expected):
    """The cost of the best path just beyond the expected list (inf if there is none)."""
    more = reference_kbest(parts, table, (-scores).tolist(), len(expected) + 1)
    return more[len(expected)][1] if len(more) > len(expected) else math.inf


@settings(max_examples=100, deadline=None)
@given(documents(), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_additive_with_real_valued_scores_equals_enumeration(case, top_n, seed):
    vocabulary, parts = case
    scores = np.random.default_rng(seed).normal(size=len(vocabulary))
    table = piece_table(vocabulary, scores.tolist())
    expected = reference_kbest(parts, table, (-scores).tolist(), top_n)
    got = AdditiveEncoder(vocabulary, weights=scores).encode_paths(as_arrays(parts), top_n)
    # Mathematically equal sums may round differently in another summation order, so paths
    # whose scores tie within rounding may swap places: compare scores rank by rank with a
    # tolerance, and the paths as a set wherever no tie straddles the end of the list.
    assert len(got) == len(expected)
    for (_, score), (_, cost) in zip(got, expected):
        assert math.isclose(score, -cost, rel_tol=1e-9, abs_tol=1e-9)
    assert len({tuple(tokens) for tokens, _ in got}) == len(got)
    if len(expected) < top_n or not math.isclose(expected[-1][1], _next_cost(parts, table, scores, expected), abs_tol=1e-9):
        assert {tuple(t) for t, _ in got} == {tuple(t) for t, _ in expected}


@settings(max_examples=100, deadline=None)
@given(documents(), st.integers(1, 6))
def test_additive_with_unit_cost_is_fewest_and_callable_equals_array(case, top_n):
    vocabulary, parts = case
    words = as_arrays(parts)
    fewest = FewestTokensEncoder(vocabulary).encode(words, top_n)
    assert AdditiveEncoder(vocabulary, weights=-np.ones(len(vocabulary))).encode(words, top_n) == fewest
    assert AdditiveEncoder(vocabulary, score=lambda t: -1.0).encode(words, top_n) == fewest
    lengths = {t: len(vocabulary.piece(t)) for t in range(len(vocabulary))}
    by_callable = AdditiveEncoder(vocabulary, score=lambda t: lengths[t] ** 2)
    by_array = AdditiveEncoder(vocabulary, weights=[lengths[t] ** 2 for t in range(len(vocabulary))])
    assert by_callable.encode_paths(words, top_n) == by_array.encode_paths(words, top_n)


def test_additive_options_are_checked():
    vocabulary = fitted_vocabulary()
    n = len(vocabulary)
    with pytest.raises(InvalidParameterError):
        AdditiveEncoder(vocabulary)
    with pytest.raises(InvalidParameterError):
        AdditiveEncoder(vocabulary, weights=np.zeros(n), score=lambda t: 0.0)
    with pytest.raises(InvalidParameterError):
        AdditiveEncoder(vocabulary, weights=np.zeros(n - 1))
    with pytest.raises(InvalidParameterError):
        AdditiveEncoder(vocabulary, weights=np.full(n, np.nan))
    with pytest.raises(InvalidParameterError):
        AdditiveEncoder(vocabulary, score=lambda t: float("-inf"))
    with pytest.raises(SymbolTypeError):
        AdditiveEncoder(vocabulary, weights=["x"] * n)
    with pytest.raises(SymbolTypeError):
        AdditiveEncoder(vocabulary, score="not callable")


# -- longest matches --------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(documents(max_symbols=30))
def test_longest_matches_equal_their_transcriptions(case):
    vocabulary, parts = case
    table = piece_table(vocabulary)
    words = as_arrays(parts)
    for encoder, reference in (
        (LongestPrefixEncoder, reference_longest_prefix),
        (LongestSuffixEncoder, reference_longest_suffix),
        (LongestTokenEncoder, reference_longest_token),
    ):
        expected = [t for part in parts for t in reference(part, table)]
        assert encoder(vocabulary).encode_paths(words) == [(expected, len(expected))]


def test_longest_token_on_a_fitted_vocabulary():
    vocabulary = fitted_vocabulary(n_tokens=60, seed=3)
    table = piece_table(vocabulary)
    encoder = LongestTokenEncoder(vocabulary)
    rng = np.random.default_rng(4)
    for _ in range(100):
        word = rng.integers(0, vocabulary.n_base, size=rng.integers(1, 60)).tolist()
        assert encoder.encode_paths([np.array(word)])[0][0] == reference_longest_token(word, table)


def test_longest_encoders_are_top_1():
    vocabulary = fitted_vocabulary()
    for name in ("longest_prefix", "longest_suffix", "longest_token"):
        encoder = make_encoder(name, vocabulary)
        with pytest.raises(InvalidParameterError):
            encoder.encode([np.array([0, 1])], top_n=2)


# -- every encoder ----------------------------------------------------------------------------


def build(name, vocabulary):
    if name == "additive":
        lengths = np.ones(len(vocabulary))
        lengths[vocabulary.n_base :] = np.diff(vocabulary.piece_offsets)
        return make_encoder(name, vocabulary, weights=np.log(lengths))
    return make_encoder(name, vocabulary)


@settings(max_examples=200, deadline=None)
@given(documents(max_parts=5, max_symbols=80), st.sampled_from(NAMES))
def test_round_trip(case, name):
    vocabulary, parts = case
    encoder = build(name, vocabulary)
    top_n = 3 if encoder.supports_nbest else 1
    for tokens, score in encoder.encode(as_arrays(parts), top_n):
        assert decode_parts(vocabulary, tokens, parts) == [list(p) for p in parts]
        assert np.isfinite(score)


def test_registry_and_tokenizer():
    assert set(NAMES) <= set(available_encoders())
    tok = UBPE(alphabet="abcd ", n_tokens=30)
    tok.fit(["abc abcd dcba", "abab cdcd", "aabbccdd abcd"], quiet=True)
    for name in ("fewest", "longest_prefix", "longest_suffix", "longest_token"):
        encodings = tok.encode("abcd abab dcba", encoder=name, top_n=3 if name == "fewest" else 1)
        for tokens, _ in encodings:
            assert tok.decode(tokens) == "abcd abab dcba"
    scores = (lambda t: -1.0)  # hashable, so the tokenizer can cache the encoder
    assert tok.encode("abcd", encoder="additive", score=scores, top_n=2) == tok.encode(
        "abcd", encoder="fewest", top_n=2
    )
    for encoder in (FewestTokensEncoder, LongestTokenEncoder):
        assert encoder(tok.vocabulary).deterministic


def test_empty_documents_and_parts():
    vocabulary = fitted_vocabulary()
    for encoder in (FewestTokensEncoder(vocabulary), LongestPrefixEncoder(vocabulary),
                    LongestSuffixEncoder(vocabulary), LongestTokenEncoder(vocabulary)):
        assert encoder.encode([]) == [([], 0.0)]
        assert encoder.encode([np.zeros(0, np.int32), np.zeros(0, np.int32)]) == [([], 0.0)]
    assert FewestTokensEncoder(vocabulary).encode([], top_n=5) == [([], 0.0)]


def test_unknown_symbols_and_bad_bounds_are_rejected():
    vocabulary = fitted_vocabulary()
    for name in NAMES:
        encoder = build(name, vocabulary)
        with pytest.raises(UnknownSymbolError):
            encoder.encode([np.array([0, vocabulary.n_base])])
        with pytest.raises(UnknownSymbolError):
            encoder.encode([np.array([-1])])
        with pytest.raises(UnknownSymbolError):
            encoder.encode([np.array([2**32], dtype=np.int64)])  # would wrap to 0 in int32
        with pytest.raises(SymbolTypeError):
            encoder.encode([np.array([0.0, 1.0])])
    tree = RadixTree(2)
    with pytest.raises(ValueError):
        kbest_paths(tree, np.ones(2), np.array([0, 1], np.int32), np.array([0, 1]))
    with pytest.raises(ValueError):
        longest_prefix(tree, np.array([0, 1], np.int32), np.array([0, 2, 1, 2]))
    with pytest.raises(ValueError):
        kbest_paths(tree, np.ones(1), np.array([0, 1], np.int32), np.array([0, 2]))
    with pytest.raises(ValueError):
        kbest_paths(tree, np.array([1.0, np.inf]), np.array([0, 1], np.int32), np.array([0, 2]))


def test_kernel_docstring_examples():
    failures, _ = doctest.testmod(ubpe_native._paths)
    assert failures == 0


# -- pathological inputs: run them (linear time is reported, not asserted) --------------------


def run_vocabulary() -> Vocabulary:
    """Runs of symbol 0 of length 2, 3, 4, 6, 8, 16, and some pieces with symbol 1."""
    left, right = [0, 2, 2, 3, 4, 6, 0, 1], [0, 0, 2, 2, 4, 6, 1, 0]
    return Vocabulary.from_merges(2, left, right, documents=[1] * len(left), n_docs=1)


@pytest.mark.parametrize("name", NAMES)
def test_long_run_of_one_symbol(name):
    vocabulary = run_vocabulary()
    run = np.zeros(100_000, dtype=np.int32)
    encoder = build(name, vocabulary)
    top_n = 4 if encoder.supports_nbest else 1
    started = time.perf_counter()
    encodings = encoder.encode([run], top_n)
    elapsed = time.perf_counter() - started
    print(f"{name}: 100k run in {elapsed:.3f} s")
    assert len(encodings) == top_n
    tokens = np.array(encodings[0][0])
    assert np.diff(vocabulary.piece_offsets)[tokens - vocabulary.n_base].sum() == len(run)
    if name in ("fewest", "longest_prefix", "longest_suffix", "longest_token"):
        assert len(tokens) == len(run) // 16


@pytest.mark.parametrize("name", NAMES)
def test_a_million_random_symbols(name):
    vocabulary = fitted_vocabulary(n_tokens=200, seed=5)
    symbols = np.random.default_rng(6).integers(0, vocabulary.n_base, 1_000_000).astype(np.int32)
    encoder = build(name, vocabulary)
    started = time.perf_counter()
    tokens = encoder.encode([symbols])[0][0]
    elapsed = time.perf_counter() - started
    print(f"{name}: 1M random symbols in {elapsed:.3f} s")
    pieces = [vocabulary.piece(t) for t in tokens[:1000]]
    prefix = np.concatenate(pieces)
    assert np.array_equal(prefix, symbols[: len(prefix)])
    lengths = np.ones(len(vocabulary), dtype=np.int64)
    lengths[vocabulary.n_base :] = np.diff(vocabulary.piece_offsets)
    assert lengths[np.array(tokens)].sum() == len(symbols)


def test_tokens_sharing_a_piece():
    # tokens 2 = (0 1), 3 = (2 0) and 4 = (0 1) again: 2 and 4 share the piece [0 1]
    vocabulary = Vocabulary.from_merges(2, [0, 2, 0], [1, 0, 1], documents=[1, 1, 1], n_docs=1)
    assert vocabulary.piece(2).tolist() == vocabulary.piece(4).tolist() == [0, 1]
    word = [np.array([0, 1, 0], np.int32)]
    assert FewestTokensEncoder(vocabulary).encode_paths(word) == [([3], 1)]
    assert LongestPrefixEncoder(vocabulary).encode_paths(word, 1)[0][0] == [3]
    # [0 1] is spelled by 2 and 4: the highest id, unless a score prefers the other
    short = [np.array([0, 1], np.int32)]
    assert FewestTokensEncoder(vocabulary).encode_paths(short) == [([4], 1)]
    prefer_2 = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    assert AdditiveEncoder(vocabulary, weights=prefer_2).encode_paths(short) == [([2], 1.0)]


def test_encoders_accept_lists_and_other_integer_types():
    vocabulary = fitted_vocabulary()
    parts = [[0, 1, 2, 0], [], np.array([1, 1, 2], dtype=np.int64), np.array([2], dtype=np.uint8)]
    for name in NAMES:
        encoder = build(name, vocabulary)
        tokens = encoder.encode(parts)[0][0]
        assert decode_parts(vocabulary, tokens, parts) == [list(p) for p in parts]
