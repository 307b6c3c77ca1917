"""Reranking alternatives: re-order any encoder's top-n list by a function of the tokens.

A *key* maps a token sequence to a number, **higher first** (a language model's
log-probability is a key). Named keys:

==================  ==========================================================================
``fewest``          ``-len(tokens)``: the fewest tokens first
``mean_frequency``  the mean frequency of the tokens: ``frequencies=`` (one per id), or from
                    the vocabulary's idf weights ``w`` as the smoothed document frequency
                    ``exp(-w) = (1 + df) / (1 + D)`` (base ids: 1, they occur everywhere)
==================  ==========================================================================

The sort is stable: alternatives with equal keys keep the encoder's order. Each result keeps
the encoder's score beside the key's.

>>> alternatives = [([5, 1], 0.9), ([2, 3, 1], 0.7), ([4], 0.2)]
>>> rerank(alternatives, "fewest")
[Reranked(tokens=[4], score=-1.0, original=0.2), Reranked(tokens=[5, 1], score=-2.0, original=0.9), Reranked(tokens=[2, 3, 1], score=-3.0, original=0.7)]
>>> [r.tokens for r in rerank(alternatives, lambda tokens: -abs(sum(tokens) - 6))]
[[5, 1], [2, 3, 1], [4]]
"""

from __future__ import annotations

import math
from .._fntools import namedtuple  # (collections.namedtuple without exec: ubpe._fntools)
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ..vocabulary import Vocabulary

Key = Callable[[list[int]], float]


class Reranked(namedtuple("Reranked", "tokens score original")):
    """An alternative after reranking: its tokens, the key's value, the encoder's score."""

    __slots__ = ()

    tokens: list[int]
    score: float
    original: float


def document_frequencies(vocabulary: Vocabulary) -> np.ndarray:
    """Per id, the smoothed share of documents holding it, ``(1 + df) / (1 + D)``, recovered
    from the idf weights (base ids: 1).

    >>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=3)
    >>> document_frequencies(vocab).tolist()   # (1 + 1) / (1 + 3)
    [1.0, 1.0, 0.5]
    """
    return np.exp(-np.concatenate([np.zeros(vocabulary.n_base), np.asarray(vocabulary.weights, np.float64)]))


def mean_frequency_key(frequencies: np.ndarray) -> Key:
    """The key ``tokens -> mean of frequencies[tokens]`` (0 for no tokens)."""
    table = np.asarray(frequencies, dtype=np.float64)

    def key(tokens: list[int]) -> float:
        if not len(tokens):
            return 0.0
        ids = np.asarray(tokens, dtype=np.int64)
        if ids.min() < 0 or ids.max() >= len(table):
            raise InvalidParameterError(f"no frequency for token {ids.max()} ({len(table)} given)")
        return float(table[ids].mean())

    return key


def fewest_key(tokens: list[int]) -> float:
    """The key of ``rerank="fewest"``: the fewer the tokens, the higher.

    >>> fewest_key([4, 2]) > fewest_key([4, 0, 1])
    True
    """
    return -float(len(tokens))


def make_key(key: str | Key, *, vocabulary: Vocabulary | None = None,
             frequencies: Sequence[float] | np.ndarray | None = None) -> Key:
    """A key by name (see the module docstring) or the callable itself."""
    if callable(key):
        return key
    if key == "fewest":
        return fewest_key
    if key == "mean_frequency":
        if frequencies is None:
            if vocabulary is None:
                raise InvalidParameterError("`mean_frequency` needs `frequencies=` or `vocabulary=`")
            frequencies = document_frequencies(vocabulary)
        return mean_frequency_key(np.asarray(frequencies, dtype=np.float64))
    raise InvalidParameterError(f"unknown rerank key {key!r}: use 'fewest', 'mean_frequency' or a callable")


def rerank(alternatives: Sequence[tuple[Sequence[int], float]], key: str | Key, *,
           vocabulary: Vocabulary | None = None,
           frequencies: Sequence[float] | np.ndarray | None = None) -> list[Reranked]:
    """``alternatives`` (``[(tokens, score)]``, as any encoder returns them) ordered by
    ``key`` (higher first, stable), each with the key's value and its original score."""
    score_of = make_key(key, vocabulary=vocabulary, frequencies=frequencies)
    out = []
    for item in alternatives:
        try:
            tokens, original = item
        except (TypeError, ValueError):
            raise InvalidParameterError("alternatives are (tokens, score) pairs") from None
        tokens = list(tokens)
        value = _number(score_of(tokens))
        out.append(Reranked(tokens, value, original))
    return sorted(out, key=lambda r: -r.score)


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidParameterError(f"a rerank key must return a number, not {type(value).__name__}")
    if math.isnan(value):
        raise InvalidParameterError("a rerank key returned NaN")
    return float(value)
