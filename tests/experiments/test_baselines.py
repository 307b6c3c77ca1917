"""The proxy's baselines and its mixture variant (`ubpe.lab.baselines`), against brute-force
oracles on tiny data: every string over a two-letter alphabet up to a length."""

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ubpe.lab.baselines import (
    mixture_bits,
    symbol_document_bits,
    symbol_ids,
    training_subset,
    uniform_bits_per_symbol,
)
from ubpe.lab.downstream import measure
from ubpe.lab.ngram import KneserNeyLM

ALPHABET = ["a", "b"]
TRAIN = ["abab", "aabb", "abba", "bbba", "abababab", "aab"]
MAX_LENGTH = 7


def _every_string():
    return ["".join(p) for n in range(MAX_LENGTH + 1) for p in itertools.product(ALPHABET, repeat=n)]


@pytest.fixture(scope="module")
def tokenizer():
    from ubpe import UBPEClassic

    tok = UBPEClassic(alphabet=ALPHABET, n_tokens=8)  # ends with 5 ids
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fit ends smaller than asked: its size is what it is
        tok.fit(TRAIN, n_candidates=1, quiet=True)
    return tok


def _tokens(tok, docs):
    return [np.asarray(e[0][0], dtype=np.int64)
            for e in tok.encode_batch(docs, encoder="classic", top_n=1, threads=1)]


def test_the_mixture_is_a_code_no_worse_than_the_symbol_model_by_more_than_a_bit(tokenizer):
    """Over every string up to MAX_LENGTH symbols: the mixture's probabilities sum to at most 1
    (so its bits are a code length) and each string's mixture bits lie within one bit above
    the better of the token and symbol models; the direct formula agrees."""
    strings = _every_string()
    train_tokens = _tokens(tokenizer, TRAIN)
    token_lm = KneserNeyLM(3, 0.75).fit(train_tokens, len(tokenizer.vocabulary))
    token_bits = token_lm.document_bits(_tokens(tokenizer, strings))
    symbol_bits = symbol_document_bits(symbol_ids(TRAIN, ALPHABET), symbol_ids(strings, ALPHABET),
                                       len(ALPHABET), 3, 0.75)
    mixed = mixture_bits(token_bits, symbol_bits)
    assert np.exp2(-token_bits).sum() <= 1 + 1e-9  # distinct strings, distinct token sequences
    assert np.exp2(-symbol_bits).sum() <= 1 + 1e-9
    assert np.exp2(-mixed).sum() <= 1 + 1e-9
    best = np.minimum(token_bits, symbol_bits)
    assert np.all(mixed >= best - 1e-9) and np.all(mixed <= best + 1 + 1e-9)
    direct = [-math.log2(0.5 * 2 ** -t + 0.5 * 2 ** -s) for t, s in zip(token_bits, symbol_bits)]
    assert mixed == pytest.approx(direct, rel=1e-12)


@given(st.lists(st.floats(0, 5000), min_size=1, max_size=5), st.lists(st.floats(0, 5000), min_size=5, max_size=5))
def test_mixture_bound_holds_for_any_bits(token, symbol):
    token, symbol = np.array(token), np.array(symbol[:len(token)])
    mixed = mixture_bits(token, symbol)
    best = np.minimum(token, symbol)
    assert np.all(np.isfinite(mixed)) and np.all(mixed >= best - 1e-9) and np.all(mixed <= best + 1 + 1e-9)


def test_symbol_baseline_is_the_token_model_of_a_tokenisation_that_merges_nothing():
    ids = symbol_ids(TRAIN, ALPHABET)
    held = symbol_ids(["abab", "bb"], ALPHABET)
    direct = KneserNeyLM(2, 0.75).fit(ids, 2).document_bits(held)
    assert symbol_document_bits(ids, held, 2, 2, 0.75) == pytest.approx(direct)
    assert [d.tolist() for d in symbol_ids([np.array([7, 3, 7])], [3, 7])] == [[1, 0, 1]]


def test_uniform_baseline_and_training_subsets():
    assert uniform_bits_per_symbol(4) == 2.0 and uniform_bits_per_symbol(1) == 0.0
    docs = list(range(10))
    quarter, half = training_subset(docs, 0.25), training_subset(docs, 0.5)
    assert set(quarter) <= set(half) <= set(docs) and training_subset(docs, 1.0) == docs
    assert len(half) == 5 and training_subset([1], 0.25) == [1]


def test_measure_counts_unseen_tokens_and_their_bits(tokenizer):
    """The unseen tokens' bits and the ends' bits, recomputed position by position."""
    heldout = ["abababba", "bbbbbbbb", "ab"]
    r = measure(tokenizer, TRAIN[:1], heldout, "classic", {}, 2, 0.75, orders=(2, 3), fractions=(0.5, 1.0))
    train = _tokens(tokenizer, TRAIN[:1])
    held = _tokens(tokenizer, heldout)
    lm = KneserNeyLM(2, 0.75).fit(train, int(r["vocab_size"]))
    seen = set(np.concatenate(train).tolist())
    unseen_bits = end_bits = 0.0
    unseen = 0
    for doc in held:
        lp = lm.log2_probabilities(doc)
        end_bits -= lp[-1]
        for token, p in zip(doc.tolist(), lp[:-1]):
            if token not in seen:
                unseen += 1
                unseen_bits -= p
    assert int(r["unseen_tokens"]) == unseen > 0
    assert float(r["unseen_bits"]) == pytest.approx(unseen_bits)
    assert float(r["end_bits"]) == pytest.approx(end_bits)
    assert r["bits_order_2"] == pytest.approx(r["bits"]) and r["bits_fraction_1"] == pytest.approx(r["bits"])
    order3 = KneserNeyLM(3, 0.75).fit(train, int(r["vocab_size"])).document_bits(held)
    assert r["bits_order_3"] == pytest.approx(order3)
