"""ubpe's universal encoder: the top-n segmentations of each part by tf-idf score.

A document arrives as its parts (runs of base ids that tokens never cross, see
:mod:`ubpe.splitting`). Each part is encoded by the lattice kernel
(:mod:`ubpe_native._lattice`); the parts' results are then combined the way ubpe 0.3.0
combines them:

* one part: that part's candidates;
* ``top_n == 1``: the parts' best encodings, concatenated, scores added left to right;
* ``top_n > 1``: the reference's walk over the parts' candidate lists, from the last part
  backwards, which at each step advances in whichever list looks better next
  (``ubpe_native._combine.walk``; :func:`walk_candidates` is its readable Python twin, kept
  for tests). It is a heuristic: ``exact=True`` instead returns the true ``top_n`` by the
  sum of part scores (a k-best merge of the sorted lists).

Scores are :func:`ubpe_native._score.score_tokens`'s, per part; the reference adds the parts'
scores left to right for ``top_n == 1`` and, in its walk, as ``candidate + tail`` from the
right (so a document's scores at ``top_n > 1`` may differ from ``top_n == 1`` in the last bit).

>>> from ubpe.vocabulary import Vocabulary
>>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)   # token 2 = [0 1]
>>> TfidfEncoder(vocab).encode([np.array([0, 1, 0], np.int32)], top_n=2)
[([2, 0], 0.4054651081081644), ([0, 1, 0], 0.0)]
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from ubpe_native._numpy import np, numpy_types

from ubpe_native._combine import walk
from ubpe_native._lattice_cache import DEFAULT_EXACT_MAX_LENGTH, Lattice
from ubpe_native._radix import RadixTree

from ..errors import InvalidParameterError
from ..vocabulary import Vocabulary
from ._base import (NBEST_BYTES_PER_CELL, Encoder, EncoderInfo, Encoding, add_left_to_right, all_weights,
                    check_nbest_memory, check_top_n, concatenate_best, flatten_parts, nbest_memory_budget)
from .encoding import EncodedBatch

TYPE_CHECKING = False  # (typing's, without importing typing: see ubpe.files)
if TYPE_CHECKING:
    from typing import Any

    from ..splitting import SplitBatch


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


class TfidfEncoder(Encoder):
    """ubpe 0.3.0's ``UBPE`` encoder: top-n paths through each part's lattice of pieces.

    ``exact=True`` combines the parts of a document by an exact k-best over the sum of part
    scores instead of the reference's heuristic walk (they agree for ``top_n == 1``).
    ``exact_max_length``: parts up to this many symbols are *ranked* by scores bit-identical
    to the reference even when a token repeats (longer parts: within ~1e-15 relative; the
    scores reported are exact either way).
    """

    name = "tfidf"
    supports_nbest = True
    deterministic = True
    splits_batches = True
    encodes_texts = True

    def __init__(self, vocabulary: Vocabulary, *, exact: bool = False,
                 exact_max_length: int = DEFAULT_EXACT_MAX_LENGTH):
        if not isinstance(exact, (bool, *numpy_types("bool_"))):
            raise InvalidParameterError(f"exact must be True or False, got {exact!r}")
        if (isinstance(exact_max_length, bool) or not isinstance(exact_max_length, (int, *numpy_types("integer")))
                or exact_max_length < 0):
            raise InvalidParameterError(f"exact_max_length must be an int >= 0, got {exact_max_length!r}")
        self.vocabulary = vocabulary
        self.exact = bool(exact)
        self.exact_max_length = int(exact_max_length)
        self._tree = RadixTree(vocabulary.n_base, vocabulary._piece_offsets, vocabulary._piece_symbols)
        self._weights = all_weights(vocabulary)
        # the kernel, with its cache of the parts seen so far (frequent words cost a copy)
        self._lattice = Lattice(self._tree, self._weights, self.exact_max_length)

    def __repr__(self) -> str:
        return f"TfidfEncoder({self.vocabulary!r}, exact={self.exact!r})"

    def part_candidates(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[list[Encoding]]:
        """Each part's candidates, best first (the reference's ``_encode_word``)."""
        tokens, token_offsets, candidate_offsets, scores = self._run(parts, check_top_n(self, top_n))
        bounds, flat, score_list = token_offsets.tolist(), tokens.tolist(), scores.tolist()
        return [
            [(flat[bounds[j] : bounds[j + 1]], score_list[j]) for j in range(first, last)]
            for first, last in zip(candidate_offsets[:-1].tolist(), candidate_offsets[1:].tolist())
        ]

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        """A document's ``top_n`` encodings ``[(tokens, score)]``, best first."""
        top_n = check_top_n(self, top_n)
        if len(parts) != 1 and top_n == 1:
            tokens, token_offsets, _, scores = self._run(parts, 1)
            return concatenate_best(tokens, token_offsets, scores)
        if len(parts) > 1 and not self.exact:
            tokens, token_offsets, candidate_offsets, scores = self._run(parts, top_n)
            spelled, totals = walk(candidate_offsets, token_offsets, tokens, scores, top_n)
            return list(zip(spelled, totals))
        candidates = self.part_candidates(parts, top_n)
        if len(parts) == 1:
            return candidates[0]
        return best_sums(candidates, top_n)

    def encode_split(self, batch: SplitBatch, top_n: int = 1) -> list[list[Encoding]]:
        """:meth:`encode` of every document of a split batch, in one kernel call (lattice,
        combination and the lists; ``exact=True`` top-n: document by document)."""
        return self._split(batch, top_n, False)

    def encode_split_arrays(self, batch: SplitBatch, top_n: int = 1) -> EncodedBatch:
        """:meth:`encode_split` as an :class:`~ubpe.encoders.encoding.EncodedBatch` (no list built)."""
        return self._split(batch, top_n, True)

    def _split(self, batch: SplitBatch, top_n: int, arrays: bool) -> Any:
        top_n = check_top_n(self, top_n)
        if top_n != 1 and self.exact:
            encodings = [self.encode(batch.parts(d), top_n) for d in range(batch.n_docs)]
            return EncodedBatch.from_lists(encodings) if arrays else encodings
        if top_n > 1:  # one part's lattice at a time; top-1 needs no n-best room
            check_nbest_memory(int(np.diff(batch.part_offsets).max(initial=0)), top_n)
        out = self._lattice.encode_documents(batch.tokens, batch.part_offsets, batch.doc_part_offsets, top_n, arrays)
        return EncodedBatch.from_arrays(out) if arrays else out

    def encode_texts(self, splitter: Any, docs: Sequence[str], top_n: int = 1) -> list[list[Encoding]] | None:
        """:meth:`encode` of str documents split by a native ``splitter``
        (:meth:`ubpe.splitting.SplitPipeline.text_splitter`) in one kernel call; None where
        the general path must run instead (a document it cannot split, ``exact=True`` top-n,
        an n-best search over the memory budget: that path raises the error)."""
        if type(top_n) is int and top_n == 1:  # the common call, checked at once
            return self._lattice.encode_texts(splitter, docs, 1)
        return self._texts(splitter, docs, top_n, False)

    def encode_texts_arrays(self, splitter: Any, docs: Sequence[str], top_n: int = 1) -> EncodedBatch | None:
        """:meth:`encode_texts` as an :class:`~ubpe.encoders.encoding.EncodedBatch` (no list built)."""
        out = self._texts(splitter, docs, top_n, True)
        return None if out is None else EncodedBatch.from_arrays(out)

    def _texts(self, splitter: Any, docs: Sequence[str], top_n: int, arrays: bool) -> Any:
        top_n = check_top_n(self, top_n)
        if top_n == 1:
            return self._lattice.encode_texts(splitter, docs, 1, arrays=arrays)
        if self.exact:
            return None
        return self._lattice.encode_texts(splitter, docs, top_n, nbest_memory_budget() // NBEST_BYTES_PER_CELL,
                                          arrays=arrays)

    def _run(self, parts: Sequence[np.ndarray], top_n: int):
        symbols, bounds = flatten_parts(parts, self.vocabulary.n_base)
        if top_n > 1:  # one part's lattice at a time; top-1 needs no n-best room
            check_nbest_memory(int(np.diff(bounds).max(initial=0)), top_n)
        return self._lattice.encode_parts(symbols, bounds, top_n)


#: this module's entries of the encoder registry (:func:`ubpe.encoders.available_encoders`)
ENCODERS = (
    EncoderInfo(
        "tfidf", TfidfEncoder, True,
        "the highest tf-idf score of the token sequence, per part (beam of top_n tails)",
        "UBPE (Kuznetsov, UBPE tokenizers, 2024): the universal encoder",
    ),
)
