"""The numpy Kneser-Ney model (experiments.ngram) against NLTK's KneserNeyInterpolated."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ubpe.lab.ngram import KneserNeyLM, NgramModelError

nltk_lm = pytest.importorskip("nltk.lm")
from nltk.lm.smoothing import KneserNey  # noqa: E402
from nltk.util import everygrams  # noqa: E402

TOLERANCE = 1e-12  # relative; the largest difference observed is ~2e-16


class FlooredKneserNey(KneserNey):
    """NLTK's smoothing with the two changes ours makes (see `experiments.ngram`): the unigram
    level is discounted and its freed mass spread uniformly over the vocabulary and the end
    symbol; a lower order's back-off weight counts the words with a continuation count."""

    def __init__(self, vocabulary, counter, order, *, discount, vocab_size):
        super().__init__(vocabulary, counter, order, discount=discount)
        self.vocab_size = vocab_size
        # |{w : N1+(. w) > 0}|: the distinct second words of the bigrams
        self.types = len({w for context in counter[2] for w, c in counter[2][context].items() if c > 0})

    def alpha_gamma(self, word, context):
        alpha, gamma = super().alpha_gamma(word, context)
        if len(context) + 1 == self._order:
            return alpha, gamma
        higher = self.counts[len(context) + 2]
        followers = {w for prefix, counts in higher.items() if prefix[1:] == context
                     for w, c in counts.items() if c > 0}
        _, total = self._continuation_counts(word, context)
        return alpha, self.discount * len(followers) / total

    def unigram_score(self, word):
        cont, total = self._continuation_counts(word)
        return (max(cont - self.discount, 0) / total
                + self.discount * self.types / total / (self.vocab_size + 1))


def word(i: int) -> str:
    return f"w{i}"  # NLTK's vocabulary takes strings


def oracle(train: list[list[int]], vocab_size: int, order: int, discount: float):
    lm = nltk_lm.KneserNeyInterpolated(order, discount=discount)
    bos, eos = vocab_size, vocab_size + 1
    padded = [[word(i) for i in [bos] * (order - 1) + doc + [eos]] for doc in train]
    lm.fit([list(everygrams(p, max_len=order)) for p in padded], vocabulary_text=[w for p in padded for w in p])
    lm.estimator = FlooredKneserNey(lm.vocab, lm.counts, order, discount=discount, vocab_size=vocab_size)
    return lm


def corpus(seed: int, vocab_size: int, n_docs: int, length: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    # a skewed unigram plus repeats, so every order has both seen and unseen contexts
    p = rng.dirichlet(np.full(vocab_size, 0.3))
    return [rng.choice(vocab_size, size=int(rng.integers(0, length)), p=p).tolist() for _ in range(n_docs)]


@pytest.mark.parametrize("order", [2, 3, 4])
@pytest.mark.parametrize("seed", [0, 1])
def test_probabilities_match_nltk(order, seed):
    vocab_size, discount = 12, 0.75 if seed == 0 else 0.4
    train = corpus(seed, vocab_size, 8, 30)
    test = corpus(seed + 100, vocab_size, 4, 25)
    ours = KneserNeyLM(order, discount).fit([np.array(d) for d in train], vocab_size)
    lm = oracle(train, vocab_size, order, discount)
    seen = {w for doc in train for w in doc} | {vocab_size + 1}
    checked = 0
    for doc in test:
        got = ours.log2_probabilities(np.array(doc, dtype=np.int64))
        padded = [vocab_size] * (order - 1) + doc + [vocab_size + 1]
        for i, w in enumerate(padded[order - 1:]):
            if w not in seen:  # NLTK maps it to <UNK>; ours scores the id itself
                continue
            context = tuple(word(c) for c in padded[i:i + order - 1])
            want = lm.score(word(w), context)
            assert want > 0
            assert got[i] == pytest.approx(math.log2(want), rel=TOLERANCE, abs=TOLERANCE)
            checked += 1
    assert checked > 20


def test_distribution_sums_to_one():
    vocab_size = 9
    train = corpus(3, vocab_size, 6, 40)
    lm = KneserNeyLM(3, 0.75).fit([np.array(d) for d in train], vocab_size)
    for context in ([], [2], [2, 5], [8, 8]):
        # every symbol the model predicts, after this context (the unigram level also gives
        # the beginning symbol a little mass: it follows itself in the padded counts)
        total = 0.0
        for w in range(vocab_size + 2):
            if w == vocab_size + 1:
                doc = np.array(context, dtype=np.int64)
                total += 2 ** lm.log2_probabilities(doc)[-1]
            elif w < vocab_size:
                doc = np.array(context + [w], dtype=np.int64)
                total += 2 ** lm.log2_probabilities(doc)[-2]
        assert 0.97 < total <= 1 + 1e-9


def test_unseen_ids_get_finite_cost_and_fewer_bits_for_training_text():
    vocab_size = 20
    train = [[1, 2, 3, 1, 2, 3, 1, 2, 3]] * 5
    lm = KneserNeyLM(3, 0.75).fit([np.array(d) for d in train], vocab_size)
    familiar, strange = lm.document_bits([np.array([1, 2, 3, 1, 2, 3]), np.array([7, 11, 19, 4, 5, 6])])
    assert np.isfinite(strange) and strange > familiar > 0


def test_bad_input():
    with pytest.raises(NgramModelError):
        KneserNeyLM(1)
    with pytest.raises(NgramModelError):
        KneserNeyLM(3, discount=1.0)
    lm = KneserNeyLM(3).fit([np.array([0, 1])], vocab_size=2)
    with pytest.raises(NgramModelError):
        lm.log2_probabilities(np.array([2]))
    with pytest.raises(NgramModelError):
        KneserNeyLM(3).log2_probabilities(np.array([0]))
