"""Encoding split documents with a fitted :class:`~ubpe.vocabulary.Vocabulary`.

A document arrives as its parts (runs of base ids that tokens never cross, see
:mod:`ubpe.splitting`). Each part is encoded by a Cython kernel; the parts' results are then
combined the way ubpe 0.3.0 combines them:

* one part: that part's candidates;
* ``top_n == 1``: the parts' best encodings, concatenated, scores added left to right;
* ``top_n > 1``: the reference's walk over the parts' candidate lists, from the last part
  backwards, which at each step advances in whichever list looks better next
  (``ubpe_native._combine.walk``; :func:`walk_candidates` is its readable Python twin, kept
  for tests). It is a heuristic: ``exact=True`` instead returns the true ``top_n`` by the
  sum of part scores (a k-best merge of the sorted lists).

>>> from ubpe.vocabulary import Vocabulary
>>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)   # token 2 = [0 1]
>>> UniversalEncoder(vocab).encode_parts([np.array([0, 1, 0], np.int32)], top_n=2)
[([2, 0], 0.4054651081081644), ([0, 1, 0], 0.0)]
>>> ClassicEncoder(vocab).encode_parts([np.array([0, 1]), np.array([1]), np.array([0, 1])])
[([2, 1, 2], 0.8109302162163288)]
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from ubpe_native._classic import PairTable, encode_words
from ubpe_native._combine import walk
from ubpe_native._lattice import DEFAULT_EXACT_MAX_LENGTH, encode_parts
from ubpe_native._radix import RadixTree

from ..errors import InvalidParameterError
from ..vocabulary import ID_DTYPE, Vocabulary

Encoding = tuple[list[int], float]


def _check_top_n(top_n: object) -> int:
    if isinstance(top_n, bool) or not isinstance(top_n, (int, np.integer)):
        raise InvalidParameterError(f"`top_n` must be an int, not {type(top_n).__name__}")
    if top_n < 1:
        raise InvalidParameterError(f"`top_n` must be at least 1, got {top_n}")
    return int(top_n)


def _flatten(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((len(p) for p in parts), dtype=np.int64, count=len(parts))
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    tokens = np.concatenate([np.asarray(p, dtype=ID_DTYPE) for p in parts]) if parts else np.zeros(0, ID_DTYPE)
    return tokens.astype(ID_DTYPE, copy=False), offsets


def _all_weights(vocab: Vocabulary) -> np.ndarray:
    """Weight of every id: 0 for base ids (alphabet symbols and known words)."""
    return np.concatenate([np.zeros(vocab.n_base), vocab.weights]).astype(np.float64)


def _concatenate_best(tokens: np.ndarray, token_offsets: np.ndarray, scores: np.ndarray) -> list[Encoding]:
    """Top-1 over several parts: one candidate per part, back to back. A one-symbol part
    encodes to itself with score 0, exactly what the reference appends for it."""
    weight = 0.0
    for score in scores.tolist():  # left to right, as the reference adds them
        weight += score
    return [(tokens[token_offsets[0] : token_offsets[-1]].tolist(), weight)]


class _Tail:
    """A candidate encoding of the parts from some part to the end, as a chain: this part's
    tokens, then the tail of the next part. Sharing tails instead of copying them keeps the
    combination linear in the document's length (copying made it quadratic in parts)."""

    __slots__ = ("tokens", "rest", "score", "length")

    def __init__(self, tokens: list[int], rest: _Tail | None, score: float):
        self.tokens = tokens
        self.rest = rest
        self.score = score
        self.length = len(tokens) + (rest.length if rest is not None else 0)

    def materialize(self) -> Encoding:
        out: list[int] = []
        node: _Tail | None = self
        while node is not None:
            out.extend(node.tokens)
            node = node.rest
        return out, self.score


def _join(candidate: Encoding, tail: _Tail | None) -> _Tail:
    # the reference's sum, candidate first: candidates[ci][1] + tails[ti][1]
    return _Tail(candidate[0], tail, candidate[1] + (tail.score if tail is not None else 0.0))


def walk_candidates(part_candidates: Sequence[list[Encoding]], top_n: int) -> list[Encoding]:
    """The reference's combination for ``top_n > 1``: tails grow from the last part back;
    each step pairs the current candidate and tail and then advances in the list whose next
    element gives the better ``(score, -length)``, preferring a new candidate on ties."""
    # A one-symbol part has the single candidate ([symbol], 0.0): the walk then prepends it
    # to every tail, which is what the reference does for such parts without walking.
    tails: list[_Tail | None] = [None]

    def score(t: _Tail | None) -> float:
        return t.score if t is not None else 0.0

    def length(t: _Tail | None) -> int:
        return t.length if t is not None else 0

    for candidates in reversed(part_candidates):
        ti = ci = 0
        new_tails: list[_Tail | None] = []
        while ci < len(candidates) and ti < len(tails) and len(new_tails) < top_n:
            new_tails.append(_join(candidates[ci], tails[ti]))
            if len(new_tails) == top_n or (ci == len(candidates) - 1 and ti == len(tails) - 1):
                break
            if ci == len(candidates) - 1:
                ti += 1
            elif ti == len(tails) - 1:
                ci += 1
            elif (
                score(tails[ti + 1]) + candidates[ci][1],
                -length(tails[ti + 1]) - len(candidates[ci][0]),
            ) > (
                score(tails[ti]) + candidates[ci + 1][1],
                -length(tails[ti]) - len(candidates[ci + 1][0]),
            ):
                ti += 1
            else:
                ci += 1
        tails = new_tails
    return [t.materialize() if t is not None else ([], 0.0) for t in tails]


def best_sums(part_candidates: Sequence[list[Encoding]], top_n: int) -> list[Encoding]:
    """The ``top_n`` best concatenations by ``(sum of scores, -length)``, exactly.

    Parts are folded from the last one back; each fold is a k-best merge of two lists sorted
    best first (a heap over index pairs, as in "k smallest pair sums"), so it costs
    ``O(top_n log top_n)`` per part. Sums are formed like the reference's,
    ``candidate + tail``.
    """
    tails: list[_Tail | None] = [None]
    for candidates in reversed(part_candidates):

        def key(ci: int, ti: int) -> tuple[float, int]:
            tail = tails[ti]
            return (
                -(candidates[ci][1] + (tail.score if tail is not None else 0.0)),
                len(candidates[ci][0]) + (tail.length if tail is not None else 0),
            )

        heap = [(key(0, 0), 0, 0)]
        seen = {(0, 0)}
        new_tails: list[_Tail | None] = []
        while heap and len(new_tails) < top_n:
            _, ci, ti = heapq.heappop(heap)
            new_tails.append(_join(candidates[ci], tails[ti]))
            for nci, nti in ((ci + 1, ti), (ci, ti + 1)):
                if nci < len(candidates) and nti < len(tails) and (nci, nti) not in seen:
                    seen.add((nci, nti))
                    heapq.heappush(heap, (key(nci, nti), nci, nti))
        tails = new_tails
    return [t.materialize() if t is not None else ([], 0.0) for t in tails]


class UniversalEncoder:
    """ubpe 0.3.0's ``UBPE`` encoder: top-n paths through each part's lattice of pieces.

    ``exact_max_length``: parts up to this many symbols get scores bit-identical to the
    reference even when a token repeats (longer parts: within ~1e-15 relative).
    """

    supports_nbest = True

    def __init__(self, vocab: Vocabulary, *, exact_max_length: int = DEFAULT_EXACT_MAX_LENGTH):
        self.vocab = vocab
        self.exact_max_length = exact_max_length
        self._tree = RadixTree(vocab.n_base, vocab.piece_offsets, vocab.piece_symbols)
        self._weights = _all_weights(vocab)

    def part_candidates(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[list[Encoding]]:
        """Each part's candidates, best first (the reference's ``_encode_word``)."""
        top_n = _check_top_n(top_n)
        tokens, token_offsets, candidate_offsets, scores = self._run(parts, top_n)
        bounds, flat, score_list = token_offsets.tolist(), tokens.tolist(), scores.tolist()
        return [
            [(flat[bounds[j] : bounds[j + 1]], score_list[j]) for j in range(first, last)]
            for first, last in zip(candidate_offsets[:-1].tolist(), candidate_offsets[1:].tolist())
        ]

    def encode_parts(self, parts: Sequence[np.ndarray], top_n: int = 1, *, exact: bool = False) -> list[Encoding]:
        """A document's ``top_n`` encodings ``[(tokens, score)]``, best first."""
        top_n = _check_top_n(top_n)
        if len(parts) != 1 and top_n == 1:
            tokens, token_offsets, _, scores = self._run(parts, 1)
            return _concatenate_best(tokens, token_offsets, scores)
        if len(parts) > 1 and not exact:
            tokens, token_offsets, candidate_offsets, scores = self._run(parts, top_n)
            spelled, totals = walk(candidate_offsets, token_offsets, tokens, scores, top_n)
            return list(zip(spelled, totals))
        candidates = self.part_candidates(parts, top_n)
        if len(parts) == 1:
            return candidates[0]
        return best_sums(candidates, top_n)

    def _run(self, parts: Sequence[np.ndarray], top_n: int):
        tokens, offsets = _flatten(parts)
        return encode_parts(self._tree, self._weights, tokens, offsets, top_n, self.exact_max_length)


class ClassicEncoder:
    """ubpe 0.3.0's ``UBPEClassic`` encoder: batched pair merges in token id order (top-1).

    On a vocabulary where some tokens have no pair (a universal vocabulary trimmed by
    weight, or one loaded from pieces only) those tokens are simply never produced.
    """

    supports_nbest = False

    def __init__(self, vocab: Vocabulary):
        self.vocab = vocab
        tokens = np.arange(vocab.n_base, vocab.n_base + vocab.n_merged, dtype=ID_DTYPE)
        has_pair = (vocab.merges >= 0).all(axis=1)
        self._table = PairTable(vocab.merges[has_pair, 0].copy(), vocab.merges[has_pair, 1].copy(), tokens[has_pair])
        self._weights = _all_weights(vocab)

    def part_candidates(self, parts: Sequence[np.ndarray]) -> list[list[Encoding]]:
        """Each part's encoding, as a one-element list (the reference's ``_encode_word``)."""
        out, offsets, scores = self._run(parts)
        bounds, flat = offsets.tolist(), out.tolist()
        return [[(flat[bounds[k] : bounds[k + 1]], score)] for k, score in enumerate(scores.tolist())]

    def encode_parts(self, parts: Sequence[np.ndarray]) -> list[Encoding]:
        """A document's encoding ``[(tokens, score)]``."""
        out, offsets, scores = self._run(parts)
        if len(parts) == 1:
            return [(out.tolist(), float(scores[0]))]
        return _concatenate_best(out, offsets, scores)

    def _run(self, parts: Sequence[np.ndarray]):
        tokens, offsets = _flatten(parts)
        return encode_words(self._table, self._weights, tokens, offsets)
