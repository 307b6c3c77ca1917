"""Vocabulary construction rejects models whose parts disagree, with a ModelFormatError."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe import UBPE
from ubpe.errors import ModelFormatError
from ubpe.vocabulary import Vocabulary


def fitted():
    corpus = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"] * 5
    tok = UBPE(alphabet=sorted(set("".join(corpus))), n_tokens=60)
    tok.fit(corpus, quiet=True)
    return tok.vocabulary


def rebuild(v: Vocabulary, merges=None, pieces=None) -> Vocabulary:
    bounds = v.piece_offsets.tolist()
    flat = v.piece_symbols.tolist()
    pieces = pieces or [flat[bounds[t] : bounds[t + 1]] for t in range(v.n_merged)]
    return Vocabulary.from_pieces(
        v.n_base, pieces, v.weights, merges=v.merges if merges is None else merges, ranks=v.ranks
    )


def test_consistent_model_rebuilds_equal():
    v = fitted()
    assert rebuild(v) == v


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_swapped_merge_is_refused(data):
    v = fitted()
    t = data.draw(st.integers(0, v.n_merged - 1))
    merges = v.merges.copy()
    left, right = merges[t]
    if (v.piece(left).tolist() + v.piece(right).tolist()) == (v.piece(right).tolist() + v.piece(left).tolist()):
        merges[t] = [right, right] if left != right else [left, v.n_base + v.n_merged - 1]
    else:
        merges[t] = [right, left]
    if v.piece(merges[t][0]).tolist() + v.piece(merges[t][1]).tolist() == v.piece(v.n_base + t).tolist():
        return  # the change happens to spell the same piece: still a valid model
    with pytest.raises(ModelFormatError, match=f"token {v.n_base + t} merges"):
        rebuild(v, merges=merges)


@pytest.mark.parametrize("bad", [10**12, 2**31, -5])
def test_out_of_range_ids_are_format_errors(bad):
    v = fitted()
    merges = v.merges.astype(np.int64).copy()
    merges[0, 0] = bad
    with pytest.raises(ModelFormatError):
        rebuild(v, merges=merges)
    with pytest.raises(ModelFormatError):
        Vocabulary.from_pairs(v.n_base, merges, v.weights)


def test_piece_with_huge_id_is_a_format_error():
    v = fitted()
    with pytest.raises(ModelFormatError):
        Vocabulary.from_pieces(v.n_base, [[0, 10**12]], [0.0])
