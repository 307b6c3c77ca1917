"""Inference as a path through the lattice: fewest tokens, an additive score, longest matches.

The lattice of a part has an edge for every token whose piece occurs at a position (base ids
always do, so a path always exists); a segmentation is a path from the start to the end.
These encoders differ only in which path they pick, so they run on any fitted vocabulary:

==================  =========================================================  ============
name                picks                                                      ``top_n``
==================  =========================================================  ============
``fewest``          the fewest tokens: the shortest path (PathPiece)           exact k-best
``additive``        the highest sum of per-token scores (your weights)         exact k-best
``longest_prefix``  greedily, the longest token at the left end (WordPiece)    1
``longest_suffix``  greedily, the longest token at the right end               1
``longest_token``   the longest token anywhere, then both sides alike (FLOTA)  1
==================  =========================================================  ============

The k-best lists are exact: the paths of a whole document (all its parts) ranked by the sum
of their tokens' costs, best first, with no duplicates.

**Ties** among paths of equal cost or score: the path whose *first* token is longer comes
first, then the one whose second token is longer, and so on - the longest-first
lexicographic order of token lengths, read from the left. Among the shortest segmentations
``fewest`` thus picks the one starting with the longest token (cf. PathPiece's longest-token
tie-break); ``longest_token`` takes the leftmost of equally long tokens. Scores are compared
as floating-point sums, so mathematically equal sums that round differently are not ties.

**Shared pieces**: where several tokens spell the same run of base ids, ``additive`` emits
the one of highest score; on equal scores, and for every other encoder, the one of highest
id (the one ubpe 0.3.0's lookup keeps).

``encode`` reports each encoding with ubpe's tf-idf score (see
:class:`~ubpe.encoders.TfidfScorer`), so that all encoders compare; ``encode_paths`` reports
instead what the encoder optimises (the number of tokens; for ``additive``, the score).

>>> from ubpe.vocabulary import Vocabulary
>>> vocab = Vocabulary.from_merges(2, [0, 1, 2], [1, 0, 0], documents=[1, 1, 1], n_docs=2)
>>> [vocab.piece(t).tolist() for t in (2, 3, 4)]              # tokens 2, 3, 4
[[0, 1], [1, 0], [0, 1, 0]]
>>> word = [np.array([0, 1, 0, 1], np.int32)]
>>> FewestTokensEncoder(vocab).encode_paths(word, top_n=3)    # [0 1 0][1] first: longer start
[([4, 1], 2), ([2, 2], 2), ([2, 0, 1], 3)]
>>> LongestSuffixEncoder(vocab).encode_paths(word)
[([2, 2], 2)]
>>> scores = np.array([-1.0, -1.0, -0.5, -0.5, -2.0])          # e.g. log-probabilities
>>> AdditiveEncoder(vocab, weights=scores).encode_paths(word, top_n=2)
[([2, 2], -1.0), ([2, 0, 1], -2.5)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ubpe_native._paths import kbest_paths, longest_prefix, longest_token
from ubpe_native._radix import RadixTree

from ..errors import InvalidParameterError, SymbolTypeError
from ..vocabulary import ID_DTYPE, Vocabulary
from ._base import Encoder, EncoderInfo, Encoding, TfidfScorer, check_nbest_memory, check_top_n, flatten_parts
# Fewest tokens is the cheapest path when every token costs this much.
UNIT_COST = 1.0


def _pieces_in_order(vocabulary: Vocabulary, order: np.ndarray, *, reverse: bool = False):
    """The CSR arrays of the pieces of merged tokens ``order`` (indices from 0), in that order,
    each piece reversed if ``reverse``; and the tokens they belong to."""
    lengths = np.diff(vocabulary.piece_offsets)[order]
    offsets = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # symbol j of the output belongs to piece `owner[j]` at distance `step[j]` from its start
    owner = np.repeat(np.arange(len(order)), lengths)
    step = np.arange(offsets[-1]) - offsets[owner]
    starts = vocabulary.piece_offsets[order][owner]
    if reverse:
        source = starts + lengths[owner] - 1 - step
    else:
        source = starts + step
    symbols = np.ascontiguousarray(vocabulary.piece_symbols[source], dtype=ID_DTYPE)
    tokens = (vocabulary.n_base + np.asarray(order, dtype=np.int64)).astype(ID_DTYPE)
    return offsets, symbols, tokens


def _lookup(
    vocabulary: Vocabulary, preference: np.ndarray | None = None, *, reverse: bool = False
) -> RadixTree:
    """A radix tree over the pieces (reversed if ``reverse``).

    A piece inserted again replaces its token, so tokens are inserted from the least to the
    most preferred: ascending ``preference`` (a score per merged token), then ascending id.
    """
    ids = np.arange(vocabulary.n_merged)
    order = ids if preference is None else np.lexsort((ids, preference))
    offsets, symbols, tokens = _pieces_in_order(vocabulary, order, reverse=reverse)
    return RadixTree(vocabulary.n_base, offsets, symbols, tokens)


class _PathEncoder(Encoder):
    """What the path encoders share: checking the parts, reporting tf-idf scores."""

    name = "path"
    supports_nbest = False
    deterministic = True

    def __init__(self, vocabulary: Vocabulary):
        self.vocabulary = vocabulary
        self._scorer = TfidfScorer(vocabulary)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.vocabulary!r})"

    def _paths(self, symbols: np.ndarray, bounds: np.ndarray, top_n: int) -> list[tuple[np.ndarray, float]]:
        """``[(tokens, objective)]`` of the document, best first."""
        raise NotImplementedError

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        """``[(tokens, tf-idf score)]`` of the document's parts, best first."""
        top_n = check_top_n(self, top_n)
        symbols, bounds = flatten_parts(parts, self.vocabulary.n_base)
        check_nbest_memory(len(symbols), top_n)  # the whole document's lattice
        return [
            (tokens.tolist(), self._scorer.score(tokens, bounds))
            for tokens, _ in self._paths(symbols, bounds, top_n)
        ]

    def encode_paths(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[tuple[list[int], Any]]:
        """``[(tokens, objective)]``, best first: the objective is what the encoder optimises
        (the number of tokens, unless the encoder says otherwise)."""
        top_n = check_top_n(self, top_n)
        symbols, bounds = flatten_parts(parts, self.vocabulary.n_base)
        check_nbest_memory(len(symbols), top_n)
        return [(tokens.tolist(), objective) for tokens, objective in self._paths(symbols, bounds, top_n)]


class _CheapestPathEncoder(_PathEncoder):
    """The ``top_n`` cheapest paths for additive token costs (lower is better)."""

    supports_nbest = True

    def __init__(self, vocabulary: Vocabulary, costs: np.ndarray):
        super().__init__(vocabulary)
        self._costs = costs
        # the cheapest of the tokens sharing a piece stands for it
        self._tree = _lookup(vocabulary, -costs[vocabulary.n_base :])

    def _kbest(self, symbols: np.ndarray, bounds: np.ndarray, top_n: int):
        tokens, offsets, costs = kbest_paths(self._tree, self._costs, symbols, bounds, top_n)
        return [(tokens[a:b], cost) for a, b, cost in zip(offsets[:-1], offsets[1:], costs.tolist())]


class FewestTokensEncoder(_CheapestPathEncoder):
    """The segmentations with the fewest tokens (shortest paths), exact k-best."""

    name = "fewest"

    def __init__(self, vocabulary: Vocabulary):
        super().__init__(vocabulary, np.full(len(vocabulary), UNIT_COST))

    def _paths(self, symbols, bounds, top_n):
        return [(tokens, len(tokens)) for tokens, _ in self._kbest(symbols, bounds, top_n)]


class AdditiveEncoder(_CheapestPathEncoder):
    """The segmentations with the highest sum of per-token scores, exact k-best.

    Give exactly one of ``weights`` - a score for every id ``0..len(vocabulary) - 1`` (base
    ids included), higher is better, e.g. log unigram probabilities - or ``score``, a callable
    ``token -> float`` (called once per id when the encoder is built). Scores must be finite.
    ``encode_paths`` reports each path's total score.
    """

    name = "additive"

    def __init__(
        self,
        vocabulary: Vocabulary,
        *,
        weights: Sequence[float] | np.ndarray | None = None,
        score: Callable[[int], float] | None = None,
    ):
        if (weights is None) == (score is None):
            raise InvalidParameterError("give exactly one of `weights` (an array) and `score` (a callable)")
        if score is not None:
            if not callable(score):
                raise SymbolTypeError(f"`score` must be callable, not {type(score).__name__}")
            values = np.fromiter((score(t) for t in range(len(vocabulary))), dtype=np.float64,
                                 count=len(vocabulary))
        else:
            try:
                values = np.asarray(weights, dtype=np.float64)
            except (TypeError, ValueError):
                raise SymbolTypeError("`weights` must be an array of numbers") from None
        if values.shape != (len(vocabulary),):
            raise InvalidParameterError(
                f"one score per id is needed: shape ({len(vocabulary)},), got {values.shape}"
            )
        if not np.isfinite(values).all():
            raise InvalidParameterError("token scores must be finite")
        self.weights = values
        super().__init__(vocabulary, -values)

    def _paths(self, symbols, bounds, top_n):
        # costs are negated scores; negation is exact, so this is the score summed the same way
        return [(tokens, -cost) for tokens, cost in self._kbest(symbols, bounds, top_n)]


class _GreedyEncoder(_PathEncoder):
    """Top-1 by a greedy kernel of :mod:`ubpe_native._paths` over the pieces' radix tree."""

    _kernel: Callable = staticmethod(longest_prefix)

    def __init__(self, vocabulary: Vocabulary):
        super().__init__(vocabulary)
        self._tree = _lookup(vocabulary)

    def _paths(self, symbols, bounds, top_n):
        tokens = self._kernel(self._tree, symbols, bounds)
        return [(tokens, len(tokens))]


class LongestPrefixEncoder(_GreedyEncoder):
    """Greedy longest match from the left (WordPiece's rule), top-1."""

    name = "longest_prefix"
    _kernel = staticmethod(longest_prefix)


class LongestSuffixEncoder(_PathEncoder):
    """Greedy longest match from the right, top-1: the longest prefix rule run on the
    reversed document with reversed pieces, its tokens read backwards."""

    name = "longest_suffix"

    def __init__(self, vocabulary: Vocabulary):
        super().__init__(vocabulary)
        self._reversed_tree = _lookup(vocabulary, reverse=True)

    def _paths(self, symbols, bounds, top_n):
        reversed_bounds = bounds[-1] - bounds[::-1]
        tokens = longest_prefix(self._reversed_tree, symbols[::-1], reversed_bounds)[::-1].copy()
        return [(tokens, len(tokens))]


class LongestTokenEncoder(_GreedyEncoder):
    """FLOTA (Hofmann et al. 2022), lossless: the longest token anywhere in the span, the
    leftmost of equally long ones, then the same left and right of it; top-1."""

    name = "longest_token"
    _kernel = staticmethod(longest_token)


#: this module's entries of the encoder registry (:func:`ubpe.encoders.available_encoders`)
ENCODERS = (
    EncoderInfo(
        "fewest", FewestTokensEncoder, True,
        "the fewest tokens (shortest path through the lattice); ties: longest tokens first",
        "PathPiece, Schmidt et al. 2024 (least tokens); Uzan et al. 2024",
    ),
    EncoderInfo(
        "additive", AdditiveEncoder, True,
        "the highest sum of user-given per-token scores (weights= or score=); exact n-best",
        "Viterbi segmentation as in unigram LM (Kudo 2018), with any additive score",
    ),
    EncoderInfo(
        "longest_prefix", LongestPrefixEncoder, False,
        "greedy longest token from the left",
        "WordPiece inference (Wu et al. 2016); Uzan et al. 2024",
    ),
    EncoderInfo(
        "longest_suffix", LongestSuffixEncoder, False,
        "greedy longest token from the right",
        "Uzan et al. 2024 (longest suffix)",
    ),
    EncoderInfo(
        "longest_token", LongestTokenEncoder, False,
        "the longest token anywhere, then recursively left and right of it (leftmost on ties)",
        "FLOTA, Hofmann et al. 2022; Uzan et al. 2024",
    ),
)
