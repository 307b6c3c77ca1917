"""The classic encoder (pair-merge kernel + document combination) vs the transcription."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_encode as ref
from ubpe.encoders.classic import ClassicEncoder
from ubpe.vocabulary import Vocabulary
from ubpe_native._classic import PairTable, encode_words

MAX_ALPHABET = 4

corpora = ref.random_corpora("classic", 5, MAX_ALPHABET)


def kernel_words(vocab, words):
    encoder = ClassicEncoder(vocab)
    return [c[0] for c in encoder.part_candidates([np.array(w, np.int32) for w in words])]


def reference_word(vocab, word):
    pairs, pair_token, weights = ref.classic_tables(vocab)
    return ref.classic_encode_word(pairs, pair_token, weights, word)[0]


@settings(max_examples=200, deadline=None)
@given(corpora, st.data())
def test_words_match_the_reference_exactly(corpus, data):
    n_base, documents, rearrange, n_candidates = corpus
    vocab = ref.fitted_vocabulary(documents, n_base, 14, n_candidates, rearrange)
    words = data.draw(st.lists(st.lists(st.integers(0, n_base - 1), max_size=20), min_size=1, max_size=6))
    assert kernel_words(vocab, words) == [reference_word(vocab, w) for w in words]


@settings(max_examples=100, deadline=None)
@given(corpora, st.data())
def test_documents_concatenate_like_the_reference(corpus, data):
    n_base, documents, rearrange, n_candidates = corpus
    vocab = ref.fitted_vocabulary(documents, n_base, 14, n_candidates, rearrange)
    parts = data.draw(st.lists(st.lists(st.integers(0, n_base - 1), min_size=1, max_size=8), max_size=5))
    got = ClassicEncoder(vocab).encode([np.array(p, np.int32) for p in parts])
    pairs, pair_token, weights = ref.classic_tables(vocab)
    want = ref.combine_parts(lambda p: ref.classic_encode_word(pairs, pair_token, weights, p), parts, 1)
    assert got == want


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=25))
def test_stops_are_the_first_later_pair_sharing_a_token(pairs):
    table = PairTable([l for l, _ in pairs], [r for _, r in pairs], list(range(7, 7 + len(pairs))))
    unique = list(dict.fromkeys(pairs))
    expected = [
        next((j for j in range(k + 1, len(unique)) if set(unique[j]) & set(unique[k])), len(unique))
        for k in range(len(unique))
    ]
    assert len(table) == len(unique)
    assert table.stops().tolist() == expected


def test_a_repeated_pair_keeps_its_first_place_and_the_later_token():
    # pairs (0 1) -> 3, (1 2) -> 4, (0 1) -> 5: priority order (0 1), (1 2); (0 1) maps to 5
    table = PairTable([0, 1, 0], [1, 2, 1], [3, 4, 5])
    weights = np.zeros(6)
    out, offsets, _ = encode_words(table, weights, np.array([0, 1, 2], np.int32), np.array([0, 3]))
    assert out.tolist() == [5, 2]


def test_a_new_occurrence_of_a_taken_pair_waits_for_the_next_step():
    # (0 1) -> 3 and (3 2) -> 4 are taken together; "0 1 2" forms (3 2) only by merging, and
    # the reference replaces it on the next step
    vocab = Vocabulary.from_pairs(3, np.array([[0, 1], [3, 2]]), [1.0, 2.0])
    # the second word holds a merged id: past the encoder's base-id check, straight to the kernel
    encoder = ClassicEncoder(vocab)
    words = [[0, 1, 2], [3, 2, 0, 1, 2]]
    out, offsets, scores = encode_words(encoder._table, encoder._weights,
                                        np.array(sum(words, []), np.int32), np.array([0, 3, 8]))
    got = [(out[a:b].tolist(), s) for a, b, s in zip(offsets[:-1], offsets[1:], scores.tolist())]
    assert got == [
        reference_word(vocab, [0, 1, 2]),
        reference_word(vocab, [3, 2, 0, 1, 2]),
    ]


def doubling_vocabulary(levels=12):
    """(0 0) -> 1, (1 1) -> 2, ...: a run of 0s halves at each step."""
    merges = np.array([[t, t] for t in range(levels)])
    return Vocabulary.from_pairs(1, merges, [0.1 * (t + 1) for t in range(levels)])


def test_a_long_run_of_one_symbol():
    vocab = doubling_vocabulary()
    for n in (1, 2, 3, 7, 1000, 20_001):
        assert kernel_words(vocab, [[0] * n]) == [reference_word(vocab, [0] * n)]


def test_a_20k_sequence_matches_the_reference():
    rng = np.random.default_rng(0)
    docs = [[rng.integers(0, 4, size=60).tolist()] for _ in range(40)]
    vocab = ref.fitted_vocabulary(docs, 4, 60, 8, "classic")
    word = rng.integers(0, 4, size=20_000).tolist()
    assert kernel_words(vocab, [word]) == [reference_word(vocab, word)]


def test_empty_inputs():
    vocab = doubling_vocabulary(2)
    encoder = ClassicEncoder(vocab)
    assert encoder.encode([]) == [([], 0.0)]
    assert encoder.encode([np.zeros(0, np.int32)]) == [([], 0.0)]


def test_invalid_inputs_raise():
    with pytest.raises(ValueError):
        PairTable([0, -1], [1, 2], [3, 4])  # a component the vocabulary does not know
    with pytest.raises(ValueError):
        PairTable([0], [1, 2], [3])
    table = PairTable([0], [1], [2])
    with pytest.raises(ValueError):
        encode_words(table, np.zeros(2), np.array([0, 1], np.int32), np.array([0, 2]))  # no weight for 2
    with pytest.raises(ValueError):
        encode_words(table, np.zeros(3), np.array([0, 3], np.int32), np.array([0, 2]))
    with pytest.raises(ValueError):
        encode_words(table, np.zeros(3), np.array([0, 1], np.int32), np.array([0, 1]))


def _words_call(words):
    return [np.array(w, np.int32) for w in words]


@settings(max_examples=60, deadline=None)
@given(corpora, st.data())
def test_one_table_over_many_calls_is_a_fresh_table_each_call(corpus, data):
    """A table keeps the work space of its last call for the next (``_classic._new_word``):
    calls over other words, other lengths and other weights, one after the other on one
    encoder, give what a fresh encoder gives each of them."""
    n_base, documents, rearrange, n_candidates = corpus
    vocab = ref.fitted_vocabulary(documents, n_base, 14, n_candidates, rearrange)
    calls = data.draw(st.lists(st.lists(st.lists(st.integers(0, n_base - 1), max_size=12), max_size=5),
                               min_size=2, max_size=8))
    shared = ClassicEncoder(vocab)
    for words in calls:
        assert shared.part_candidates(_words_call(words)) == ClassicEncoder(vocab).part_candidates(_words_call(words))
    table = shared._table
    for words in calls:  # other weights (a longer table of them) take a new work space, then keep it
        symbols = np.concatenate([np.zeros(0, np.int32)] + _words_call(words))
        bounds = np.cumsum([0] + [len(w) for w in words])
        weights = np.concatenate([shared._weights, np.ones(3)])
        fresh = ClassicEncoder(vocab)._table
        assert [a.tolist() for a in encode_words(table, weights, symbols, bounds)] == \
            [a.tolist() for a in encode_words(fresh, weights, symbols, bounds)]


def test_a_long_call_between_short_ones():
    """A call longer than the work space a table keeps (``KEEP_LIMIT``, 65,536 symbols) frees
    its own; the short calls around it give the same as on a fresh table."""
    vocab = doubling_vocabulary()
    encoder = ClassicEncoder(vocab)
    short = [[0] * 5, [0, 0, 0]]
    want = ClassicEncoder(vocab).part_candidates(_words_call(short))
    assert encoder.part_candidates(_words_call(short)) == want
    assert [kernel_words(vocab, [[0] * 70_000])] == encoder.part_candidates(_words_call([[0] * 70_000]))
    assert encoder.part_candidates(_words_call(short)) == want


def test_threads_sharing_a_table():
    """Threads calling one table at once: each call takes the spare work space or makes its own."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(3)
    docs = [[rng.integers(0, 4, size=40).tolist()] for _ in range(30)]
    vocab = ref.fitted_vocabulary(docs, 4, 40, 8, "classic")
    calls = [[rng.integers(0, 4, size=int(n)).tolist() for n in rng.integers(0, 300, size=4)] for _ in range(200)]
    want = [ClassicEncoder(vocab).part_candidates(_words_call(words)) for words in calls]
    shared = ClassicEncoder(vocab)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda words: shared.part_candidates(_words_call(words)), calls))
    assert got == want


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4), st.lists(st.tuples(st.integers(-1, 9), st.integers(-1, 9)), min_size=1, max_size=8),
       st.data())
def test_first_misspelled_is_the_numpy_check(n_base, pairs, data):
    """The C check a load runs on a model's merges (``first_misspelled``) finds a bad merge
    exactly when the numpy check does (``_check_merges_build_pieces``, which names it): random
    pairs over random pieces, some true to their pieces, some not, some unrecorded (-1)."""
    from array import array

    from ubpe.errors import ModelFormatError
    from ubpe.vocabulary import _check_merges_build_pieces, _flatten
    from ubpe_native._pieces import first_misspelled

    pairs = [(min(left, n_base + t - 1), min(right, n_base + t - 1)) for t, (left, right) in enumerate(pairs)]
    true = [(max(left, 0), max(right, 0)) for left, right in pairs]  # creation order: each spells a piece
    offsets, symbols = _flatten(n_base, true)
    if data.draw(st.booleans()):  # a piece changed: the merges that spell it no longer do
        symbols = array("i", symbols)
        k = data.draw(st.integers(0, len(symbols) - 1))
        symbols[k] = (symbols[k] + 1) % n_base
    merges = data.draw(st.sampled_from([pairs, true]))
    flat = array("i", [i for pair in merges for i in pair])
    bad = first_misspelled(n_base, flat, offsets, symbols)
    try:
        _check_merges_build_pieces(n_base, np.array(merges).reshape(-1, 2), np.frombuffer(offsets, np.int64),
                                   np.frombuffer(symbols, np.int32))
        assert bad == -1
    except ModelFormatError as exc:
        assert bad >= 0 and f"token {n_base + bad} " in str(exc)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5), st.lists(st.tuples(st.integers(-2, 14), st.integers(-2, 14)), max_size=10))
def test_flatten_pairs_is_the_python_walk(n_base, pairs):
    """The kernel that expands a classic model's pairs into pieces (``flatten_pairs``) gives
    the pieces the Python walk gives, in any order of components (after rearrangement a
    token may be built from later ids), and refuses what the walk refuses: an id outside the
    vocabulary, a token built from itself (``_flatten`` then names the token as the walk does)."""
    from array import array

    from ubpe.errors import ModelFormatError
    from ubpe.vocabulary import _flatten, _flatten_walk
    from ubpe_native._pieces import FLATTEN_CORRUPT, flatten_pairs

    flat = flatten_pairs(n_base, array("i", [i for pair in pairs for i in pair]))
    try:
        expected = _flatten_walk(n_base, pairs)
    except ModelFormatError as exc:
        assert flat == FLATTEN_CORRUPT
        with pytest.raises(ModelFormatError) as raised:
            _flatten(n_base, pairs)
        assert str(raised.value) == str(exc)
        return
    assert flat == expected and _flatten(n_base, pairs) == expected


def test_pieces_that_double_are_refused_before_they_are_made():
    """A chain of pairs that each double their component spells 2**k symbols from a few
    bytes: refused at once, by its length in all, before anything is allocated (the walk in
    Python would build it and never return)."""
    from array import array

    from ubpe.errors import ModelFormatError
    from ubpe.vocabulary import Vocabulary
    from ubpe_native._pieces import FLATTEN_TOO_LONG, MAX_PIECE_SYMBOLS, flatten_pairs

    doubling = [(0, 1)] + [(t, t) for t in range(2, 2 + 80)]
    assert flatten_pairs(2, array("i", [i for pair in doubling for i in pair])) == FLATTEN_TOO_LONG
    with pytest.raises(ModelFormatError, match="more than 268,435,456 symbols"):
        Vocabulary.from_pairs(2, doubling, [0.0] * len(doubling))
    k = MAX_PIECE_SYMBOLS.bit_length() - 2  # the longest chain that fits: 2**(k + 1) symbols
    offsets, _ = flatten_pairs(2, array("i", [i for pair in doubling[:k] for i in pair]))
    assert offsets[-1] == sum(2 ** (t + 1) for t in range(k)) <= MAX_PIECE_SYMBOLS
