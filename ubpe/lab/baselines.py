"""Baselines beside the bits proxy, and a proxy variant that cannot lose to them (issue 27).

The proxy (`ubpe.lab.downstream`) is a Kneser-Ney n-gram model over *token* ids. With
little training data per id (9,600 training symbols for 1,069 ids on the time series) it
overfits: every tokenisation can score worse than a model that never saw a token. So each
tokenisation is shown beside two baselines of the same text:

- **symbol-level n-gram**: the same model (`ubpe.lab.ngram.KneserNeyLM`, same order, same
  discount, same training documents) over the *symbols* (characters, bases, quantized
  levels), i.e. the tokenisation that merges nothing;
- **uniform**: ``log2 |alphabet|`` bits per symbol, the cost of knowing only the alphabet
  (2.000 for DNA).

A setting where a tokenisation's proxy is above a baseline says the token model is worse
than not tokenising at all; the reports mark it and do not rank on it there.

**The variant: a per-document mixture.** Of the two options the issue names - back off to
the symbol model inside each token, or a mixture - the mixture is chosen because it comes
with a guarantee the back-off lacks. The token model gives each held-out document ``d``
probability ``p_tok(d)`` (its encoding's tokens and end; the encoder is deterministic and
lossless, so distinct documents get distinct token sequences and these probabilities sum to
at most 1 over all documents), the symbol model ``p_sym(d)``. Their equal-weight mixture

    p_mix(d) = (p_tok(d) + p_sym(d)) / 2

is again a (sub-)probability over documents, so its bits ``-log2 p_mix(d)`` are an honest
code length, and

    min(bits_tok, bits_sym) <= bits_mix <= min(bits_tok, bits_sym) + 1

per document: never more than one bit per *document* above the better model (0.001 bits per
symbol on a 1,000-symbol DNA piece), wherever data is small. A back-off inside each token
(spelling an unseen token with the symbol model) fixes the unseen tokens' cost only; the
token model's other probabilities can still be worse than the symbol model's, so it promises
nothing against the baseline. ``tests/experiments/test_baselines.py`` checks the mixture on
tiny data against a brute-force oracle: over every string up to a length, the mixture's
probabilities sum to at most 1 and each is within the bound.

>>> bits = mixture_bits(np.array([10.0, 3.0]), np.array([4.0, 3.0]))
>>> [round(float(b), 3) for b in bits]
[4.978, 3.0]
>>> uniform_bits_per_symbol(4)
2.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ubpe.lab.ngram import KneserNeyLM

#: Weight of the token model in the mixture (equal weights: the bound is one bit a document).
MIXTURE_WEIGHT = 0.5


def uniform_bits_per_symbol(alphabet_size: int) -> float:
    """``log2 |alphabet|``: bits per symbol of a model that knows only the alphabet."""
    return math.log2(alphabet_size) if alphabet_size > 1 else 0.0


def symbol_ids(docs: Sequence[Any], alphabet: Sequence[Any]) -> list[np.ndarray]:
    """Each document as indices into the sorted ``alphabet`` (characters or ints).

    >>> [d.tolist() for d in symbol_ids(["ba", "c"], ["a", "b", "c"])]
    [[1, 0], [2]]
    """
    if alphabet and isinstance(alphabet[0], str):
        index = {symbol: i for i, symbol in enumerate(alphabet)}
        return [np.fromiter((index[c] for c in doc), dtype=np.int64, count=len(doc)) for doc in docs]
    values = np.asarray(alphabet, dtype=np.int64)
    return [np.searchsorted(values, np.asarray(doc, dtype=np.int64)).astype(np.int64) for doc in docs]


def training_subset(docs: Sequence[Any], fraction: float) -> list[Any]:
    """A fixed, spread-out share of the training documents: every ``1 / fraction``-th, so
    the subsets of 1/4, 1/2 and all are nested and none is one end of the corpus.

    >>> training_subset(list(range(8)), 0.25), training_subset(list(range(8)), 0.5)
    ([0, 4], [0, 2, 4, 6])
    """
    if fraction >= 1:
        return list(docs)
    picks = sorted({int(k / fraction) for k in range(math.ceil(len(docs) * fraction))})
    return [docs[i] for i in picks if i < len(docs)] or list(docs[:1])


def symbol_document_bits(train_ids: Sequence[np.ndarray], heldout_ids: Sequence[np.ndarray],
                         alphabet_size: int, order: int, discount: float) -> np.ndarray:
    """Per held-out document, its bits under the symbol-level model (its symbols and its end)."""
    lm = KneserNeyLM(order, discount).fit(list(train_ids), alphabet_size)
    return lm.document_bits(list(heldout_ids))


def mixture_bits(token_bits: np.ndarray, symbol_bits: np.ndarray,
                 weight: float = MIXTURE_WEIGHT) -> np.ndarray:
    """Per document, ``-log2(weight 2^-token_bits + (1 - weight) 2^-symbol_bits)`` (stable)."""
    a = np.asarray(token_bits, dtype=np.float64) - math.log2(weight)
    b = np.asarray(symbol_bits, dtype=np.float64) - math.log2(1 - weight)
    low = np.minimum(a, b)
    return low - np.log2(1 + np.exp2(-np.abs(a - b)))
