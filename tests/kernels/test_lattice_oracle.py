"""The tf-idf lattice against brute force: every segmentation of a short sequence, enumerated.

The lattice keeps ``top_n`` tails per position (ubpe 0.3.0's beam), so it is exact only when
``top_n`` is at least the number of segmentations: then its candidates must be *all* of
them, best first. With a smaller beam every candidate must still be a distinct segmentation
scored exactly, best first, ``top_n`` of them. Scores are compared bit for bit with
:func:`ubpe_native._score.score_tokens`, the one scorer every encoder uses. Equality with
the reference's own algorithm, ties included, is ``test_lattice.py``'s (its transcription)
and the golden tests' (its outputs).
"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe_native._lattice_cache import encode_parts
from ubpe_native._radix import RadixTree
from ubpe_native._score import score_tokens

MAX_BASE = 3
MAX_LENGTH = 9
# more than the segmentations of any sequence here (at most 2**(MAX_LENGTH - 1) = 256)
EVERY_SEGMENTATION = 300


@st.composite
def vocabularies(draw):
    """``(n_base, pieces, weights)``: random pieces of 2-4 base ids (no repeats); weights
    from a few values, so that scores tie, plus zeros (weightless merged tokens)."""
    n_base = draw(st.integers(1, MAX_BASE))
    piece = st.lists(st.integers(0, n_base - 1), min_size=2, max_size=4).map(tuple)
    pieces = draw(st.lists(piece, max_size=8, unique=True))
    weights = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 2.0]), min_size=len(pieces),
                            max_size=len(pieces)))
    return n_base, pieces, np.concatenate([np.zeros(n_base), weights])


def segmentations(sequence, lookup):
    """Every way to spell ``sequence`` with the vocabulary's pieces (``lookup``: piece -> id):
    each of the ``2 ** (n - 1)`` ways to cut it, kept when every piece is in the vocabulary."""
    out = []
    for cuts in itertools.product((False, True), repeat=max(len(sequence) - 1, 0)):
        bounds = [0] + [k + 1 for k, cut in enumerate(cuts) if cut] + [len(sequence)]
        tokens = [lookup.get(tuple(sequence[a:b])) for a, b in zip(bounds[:-1], bounds[1:])]
        if None not in tokens:
            out.append(tokens)
    return out


def score(weights, tokens):
    return score_tokens(weights, np.array(tokens, np.int32), np.array([0, len(tokens)]))


def lattice(n_base, pieces, weights, sequence, top_n, exact_max_length):
    offsets = np.cumsum([0] + [len(p) for p in pieces])
    symbols = np.array([s for p in pieces for s in p], np.int32)
    tree = RadixTree(n_base, offsets, symbols)
    tokens, token_offsets, _, scores = encode_parts(
        tree, weights, np.array(sequence, np.int32), np.array([0, len(sequence)]), top_n, exact_max_length)
    return [(tokens[a:b].tolist(), float(s)) for a, b, s in zip(token_offsets[:-1], token_offsets[1:], scores)]


@settings(max_examples=300, deadline=None)
@given(vocabularies(), st.data(), st.sampled_from([256, 0]))
def test_candidates_against_every_segmentation(vocabulary, data, exact_max_length):
    n_base, pieces, weights = vocabulary
    sequence = data.draw(st.lists(st.integers(0, n_base - 1), min_size=1, max_size=MAX_LENGTH))
    lookup = {(b,): b for b in range(n_base)} | {p: n_base + k for k, p in enumerate(pieces)}
    every = {tuple(s): score(weights, s) for s in segmentations(sequence, lookup)}
    best_possible = max((s, -len(t)) for t, s in every.items())
    for top_n in (1, 2, 5, EVERY_SEGMENTATION):
        got = lattice(n_base, pieces, weights, sequence, top_n, exact_max_length)
        assert len(got) == min(top_n, len(every))
        assert len({tuple(t) for t, _ in got}) == len(got)  # distinct
        for tokens, claimed in got:
            assert tuple(tokens) in every  # a segmentation of the sequence
            assert claimed == every[tuple(tokens)]  # scored exactly, bit for bit
        ranks = [(-s, len(t)) for t, s in got]
        assert ranks == sorted(ranks)  # best first: higher score, then fewer tokens
        assert (got[0][1], -len(got[0][0])) <= best_possible
        if top_n >= len(every):  # the beam holds everything: exact
            assert {tuple(t) for t, _ in got} == set(every)
            assert (got[0][1], -len(got[0][0])) == best_possible


def test_a_beam_of_one_can_miss_the_best_segmentation():
    """Why the oracle asks top-1 for a valid, exactly scored segmentation and not for the
    optimum: a repeat adds less than a new token (1 + ln 2 against 2 for two weights of 1),
    so the best tail of a position is not always the best continuation. Found by a search
    over random cases: the beam of one keeps [4 1] for the last "0 0 1" and then repeats
    token 4 (score 1 + ln 2); spelling that "0 0 1" as [2 0 1] elsewhere scores 2."""
    n_base, pieces = 2, [(1, 0), (0, 0, 1), (0, 0)]  # tokens 2, 3, 4
    weights = np.array([0.0, 0.0, 1.0, 0.5, 1.0])
    sequence = [0, 0, 1, 1, 0, 0, 1]
    lookup = {(0,): 0, (1,): 1} | {p: n_base + k for k, p in enumerate(pieces)}
    every = {tuple(s): score(weights, s) for s in segmentations(sequence, lookup)}
    top1 = lattice(n_base, pieces, weights, sequence, 1, 256)[0]
    full = lattice(n_base, pieces, weights, sequence, EVERY_SEGMENTATION, 256)
    assert top1[1] == every[tuple(top1[0])] < full[0][1] == max(every.values())
