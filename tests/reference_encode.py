"""Short, slow, readable transcriptions of ubpe 0.3.0's encoders, kept as test oracles.

They copy tails and recount scores from scratch exactly as the reference does (same
``Counter`` orders, same ``heapq`` operations, same ``sum``), on plain lists. A vocabulary is
given as plain dicts, built from a :class:`~ubpe.vocabulary.Vocabulary` by the ``*_tables``
helpers the way the reference builds its own from its JSON mapper.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from itertools import pairwise
from math import log


def compensated_sum(terms):
    """``sum(terms)`` as Python >= 3.12 computes it for floats (the reference needs 3.12):
    Neumaier's compensated summation, written out so that the oracle does not depend on the
    Python running the tests (3.11's ``sum`` adds plainly)."""
    high = low = 0.0
    for x in terms:
        t = high + x
        if abs(high) >= abs(x):
            low += (high - t) + x
        else:
            low += (x - t) + high
        high = t
    return high + low if low and math.isfinite(low) else high


def score_of(counter, weights):
    """``sum((1 + ln(count)) * weight)`` over the Counter's keys, in the Counter's order."""
    return compensated_sum(
        (1 + log(frequency)) * weights.get(token, 0.0) for token, frequency in counter.items()
    )


# -- universal ------------------------------------------------------------------------------


def universal_tables(vocab):
    """``(lookup, weights)``: piece -> token (base ids map to themselves; a piece shared by
    two tokens maps to the later one, as the reference's ``forward`` dict does) and token ->
    weight."""
    lookup = {(b,): b for b in range(vocab.n_base)}
    for token, piece in vocab.pieces().items():
        lookup[piece] = token
    return lookup, vocab.weight_of()


def prefix_matches(lookup, word, start):
    """``(length, token)`` of every key ``word[start:]`` starts with, shortest first."""
    longest = max(len(key) for key in lookup)
    return [
        (length, lookup[tuple(word[start : start + length])])
        for length in range(1, min(longest, len(word) - start) + 1)
        if tuple(word[start : start + length]) in lookup
    ]


class Candidate:
    """The reference's ``EncodingCandidate``: ordered by weight, then shorter first."""

    def __init__(self, weight, sequence, counter):
        self.weight, self.sequence, self.counter = weight, sequence, counter

    def __lt__(self, other):
        if self.weight == other.weight:
            return len(self.sequence) > len(other.sequence)
        return self.weight < other.weight

    def __gt__(self, other):
        if self.weight == other.weight:
            return len(self.sequence) < len(other.sequence)
        return self.weight > other.weight


def push_top(heap, top_n, candidate):
    """The reference's ``TopElements.push`` (for ``top_n == 1`` its explicit ``best`` update
    does the same: replace when the new candidate ranks strictly above)."""
    if len(heap) < top_n:
        heapq.heappush(heap, candidate)
    elif candidate > heap[0]:
        heapq.heapreplace(heap, candidate)


def encode_word(lookup, weights, word, top_n=1):
    """The reference's ``UBPE._encode_word``: ``[(tokens, score)]``, best first."""
    n = len(word)
    tails = {n: [Candidate(0.0, [], Counter())]}
    for start in range(n - 1, -1, -1):
        heap = []
        for length, token in prefix_matches(lookup, word, start):
            for tail in tails[start + length]:  # in heap order, as the reference iterates
                counter = tail.counter.copy()
                counter.update([token])
                push_top(heap, top_n, Candidate(score_of(counter, weights), [token] + tail.sequence, counter))
        tails[start] = heap
    return [(c.sequence, c.weight) for c in sorted(tails[0], reverse=True)]


def combine_parts(encodings, parts, top_n):
    """The reference's ``UBPE.encode`` after splitting: ``encodings(part)`` is a part's
    ``encode_word`` list; one-symbol parts pass through with weight 0."""
    if len(parts) == 1:
        return encodings(parts[0])
    if top_n == 1:
        doc, weight = [], 0.0
        for part in parts:
            if len(part) == 1:
                doc.append(part[0])
            else:
                tokens, score = encodings(part)[0]
                doc.extend(tokens)
                weight += score
        return [(doc, weight)]
    tails = [([], 0.0)]
    for part in parts[::-1]:
        if len(part) == 1:
            tails = [(list(part) + tail, weight) for tail, weight in tails]
            continue
        candidates = encodings(part)
        ti = ci = 0
        new_tails = []
        while ci < len(candidates) and ti < len(tails) and len(new_tails) < top_n:
            new_tails.append((candidates[ci][0] + tails[ti][0], candidates[ci][1] + tails[ti][1]))
            if len(new_tails) == top_n:
                break
            if ci == len(candidates) - 1 and ti == len(tails) - 1:
                break
            if ci == len(candidates) - 1 and ti < len(tails) - 1:
                ti += 1
            elif ti == len(tails) - 1 and ci < len(candidates) - 1:
                ci += 1
            elif (
                tails[ti + 1][1] + candidates[ci][1],
                -len(tails[ti + 1][0]) - len(candidates[ci][0]),
            ) > (
                tails[ti][1] + candidates[ci + 1][1],
                -len(tails[ti][0]) - len(candidates[ci + 1][0]),
            ):
                ti += 1
            else:
                ci += 1
        tails = new_tails
    return tails


# -- classic --------------------------------------------------------------------------------


def classic_tables(vocab):
    """``(pairs, pair_token, weights)``: pairs in priority (id) order; a pair that two tokens
    share keeps its first place and maps to the later token, as the reference's dict does."""
    pair_token = {}
    for token, pair in vocab.pairs().items():
        pair_token[pair] = token
    return list(pair_token), pair_token, vocab.weight_of()


def replace_pairs(word, batch):
    """Left-to-right, non-overlapping replacement of every pair in ``batch`` (pair -> id)."""
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) in batch:
            out.append(batch[(word[i], word[i + 1])])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def classic_encode_word(pairs, pair_token, weights, word):
    """The reference's ``UBPEClassic._encode_word``: ``[(tokens, score)]``."""
    word = list(word)
    while True:
        present = set(pairwise(word))
        first = next((i for i, pair in enumerate(pairs) if pair in present), None)
        if first is None:
            break
        taken, used = [pairs[first]], set(pairs[first])
        for pair in pairs[first + 1 :]:
            if used.intersection(pair):  # stops at a pair sharing a token, present or not
                break
            if pair in present:
                taken.append(pair)
                used.update(pair)
        word = replace_pairs(word, {pair: pair_token[pair] for pair in taken})
    return [(word, score_of(Counter(word), weights))]


# -- random vocabularies for the tests --------------------------------------------------------


def fitted_vocabulary(documents, n_base, n_extra, n_candidates=3, rearrange=None):
    """A vocabulary fitted (by our fit kernel) on ``documents`` (lists of parts, lists of base
    ids), with up to about ``n_extra`` merged tokens, optionally rearranged like the reference
    (``rearrange`` = ``"classic"`` or ``"universal"``)."""
    import numpy as np

    from ubpe.vocabulary import Vocabulary
    from ubpe_native._fit import PairMerger

    parts = [(d, part) for d, doc in enumerate(documents) for part in doc if len(part) >= 2]
    tokens = np.array([s for _, part in parts for s in part], dtype=np.int32)
    offsets = np.cumsum([0] + [len(part) for _, part in parts]).astype(np.int64)
    doc_of_part = np.array([d for d, _ in parts], dtype=np.int32)
    merger = PairMerger(tokens, offsets, doc_of_part, len(documents), n_base)
    while merger.next_token < n_base + n_extra and merger.step(n_candidates):
        pass
    left, right, docs, _ = merger.merges()
    vocab = Vocabulary.from_merges(n_base, left, right, documents=docs, n_docs=len(documents))
    if rearrange is not None and vocab.n_merged:
        vocab = vocab.rearranged(n_base + max(1, vocab.n_merged - 2), classic=rearrange == "classic")
    return vocab


def random_corpora(rearrangement: str, max_top: int, max_alphabet: int = 4):
    """Hypothesis strategy: ``(n_base, documents of parts, rearrangement or None, k)`` over
    few symbols, so that tokens repeat and weights coincide - the cases where ties decide."""
    from hypothesis import strategies as st

    return st.integers(2, max_alphabet).flatmap(
        lambda a: st.tuples(
            st.just(a),
            st.lists(
                st.lists(st.lists(st.integers(0, a - 1), max_size=16), min_size=1, max_size=3),
                min_size=1,
                max_size=6,
            ),
            st.sampled_from([None, rearrangement]),
            st.integers(1, max_top),
        )
    )
