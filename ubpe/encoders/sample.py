"""Sampling segmentations: subword regularization on any vocabulary (Kudo 2018).

``SampleEncoder`` draws segmentations of a document with probability
``∝ exp(score / temperature)``, ``score`` the sum of its tokens' weights (by default the
vocabulary's idf weights; any per-token score, e.g. log-probabilities of a unigram model):

* ``nbest_size=-1`` (the default): from *all* segmentations, exactly, by backward filtering
  and forward sampling on the lattice (linear in the lattice per draw; no enumeration);
* ``nbest_size=k > 1``: from the ``k`` best segmentations only, as sentencepiece's
  ``nbest_size > 1`` does;
* ``nbest_size`` 0 or 1: no sampling, the best segmentation (sentencepiece's convention).

sentencepiece's ``alpha`` is ``1 / temperature``. ``top_n=n`` returns ``n`` independent
draws (repeats are possible) in the order drawn. Results are reproducible: two encoders
built with the same ``seed`` return the same draws for the same sequence of calls.

>>> from ubpe.vocabulary import Vocabulary
>>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)   # token 2 = [0 1]
>>> word = [np.array([0, 1, 0, 1], np.int32)]
>>> a = SampleEncoder(vocab, seed=7).encode_paths(word, top_n=3)
>>> a == SampleEncoder(vocab, seed=7).encode_paths(word, top_n=3)          # reproducible
True
>>> SampleEncoder(vocab, nbest_size=1).encode_paths(word, top_n=2)         # no sampling
[([2, 2], 0.8109302162163288), ([2, 2], 0.8109302162163288)]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ..vocabulary import Vocabulary
from ._base import EncoderInfo
from .ambiguity import DocumentLattice, Weights, check_temperature, weighted_paths
from .paths import _PathEncoder

FULL_LATTICE = -1


class SampleEncoder(_PathEncoder):
    """Segmentations drawn ``∝ exp(score / temperature)`` (see the module docstring).

    ``encode`` reports each draw with ubpe's tf-idf score, ``encode_paths`` with its additive
    score (the sum of its tokens' weights, not divided by the temperature).
    """

    name = "sample"
    supports_nbest = True
    deterministic = False

    def __init__(self, vocabulary: Vocabulary, *, weights: Weights = None, temperature: float = 1.0,
                 nbest_size: int = FULL_LATTICE, seed: int | None = 0):
        super().__init__(vocabulary)
        self.temperature = check_temperature(temperature)
        if isinstance(nbest_size, bool) or not isinstance(nbest_size, (int, np.integer)):
            raise InvalidParameterError(f"`nbest_size` must be an int, not {type(nbest_size).__name__}")
        self.nbest_size = int(nbest_size)
        self.seed = seed
        try:
            self._rng = np.random.default_rng(seed)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(f"`seed` must be a non-negative int or None: {exc}") from None
        self._additive = weighted_paths(vocabulary, weights)
        self.weights = self._additive.weights

    def __repr__(self) -> str:
        return (f"SampleEncoder({self.vocabulary!r}, temperature={self.temperature}, "
                f"nbest_size={self.nbest_size}, seed={self.seed!r})")

    def _paths(self, symbols: np.ndarray, bounds: np.ndarray, top_n: int) -> list[tuple[np.ndarray, Any]]:
        if 0 <= self.nbest_size <= 1:
            best = self._additive._paths(symbols, bounds, 1)
            return best * top_n
        if self.nbest_size > 1:
            return self._from_nbest(symbols, bounds, top_n)
        parts = [symbols[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        lattice = DocumentLattice(self.vocabulary, parts, temperature=self.temperature,
                                  additive=self._additive)
        return [(tokens, float(self.weights[tokens].sum())) for tokens in lattice.sample(top_n, self._rng)]

    def _from_nbest(self, symbols: np.ndarray, bounds: np.ndarray, top_n: int) -> list[tuple[np.ndarray, Any]]:
        candidates = self._additive._paths(symbols, bounds, self.nbest_size)
        scaled = np.array([score for _, score in candidates]) / self.temperature
        if not np.isfinite(scaled).all():
            raise InvalidParameterError(f"weights / temperature overflow at temperature {self.temperature}")
        probabilities = np.exp(scaled - scaled.max())
        probabilities /= probabilities.sum()
        return [candidates[i] for i in self._rng.choice(len(candidates), size=top_n, p=probabilities)]


#: this module's entries of the encoder registry (:func:`ubpe.encoders.available_encoders`)
ENCODERS = (
    EncoderInfo(
        "sample", SampleEncoder, True,
        "draws segmentations with probability ∝ exp(sum of token weights / temperature); seeded",
        "subword regularization, Kudo 2018 (sentencepiece nbest_size / alpha), on any vocabulary",
    ),
)
