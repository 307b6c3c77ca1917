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
    with pytest.raises(ModelFormatError, match=f"token {v.n_base + t} merges"):  # pairs: a load's path, in C
        rebuild(v, merges=merges.tolist())


@pytest.mark.parametrize("bad", [10**12, 2**31, -5])
def test_out_of_range_ids_are_format_errors(bad):
    v = fitted()
    merges = v.merges.astype(np.int64).copy()
    merges[0, 0] = bad
    for given in (merges, merges.tolist()):  # numpy's path and the pairs' (a load's, without numpy)
        with pytest.raises(ModelFormatError):
            rebuild(v, merges=given)
        with pytest.raises(ModelFormatError):
            Vocabulary.from_pairs(v.n_base, given, v.weights)


def test_pairs_and_arrays_build_the_same_vocabulary():
    """Merges as a list of pairs (what a model file's load passes: no numpy) and as an array
    give the same vocabulary, unknown ranks -1 for every token (not for every id of the pairs)."""
    v = fitted()
    bounds, flat = v.piece_offsets.tolist(), v.piece_symbols.tolist()
    pieces = [flat[bounds[t] : bounds[t + 1]] for t in range(v.n_merged)]
    from_lists = Vocabulary.from_pieces(v.n_base, pieces, v.weights.tolist(), merges=v.merges.tolist())
    from_arrays = Vocabulary.from_pieces(v.n_base, pieces, v.weights, merges=v.merges)
    assert from_lists == from_arrays and from_lists.ranks.tolist() == [-1] * v.n_merged
    assert Vocabulary.from_pieces(v.n_base, pieces, v.weights.tolist()).merges.tolist() == [[-1, -1]] * v.n_merged
    assert Vocabulary.from_pairs(v.n_base, [[0, 1], [2, 1]], [0.5, 0.25]) == Vocabulary.from_pairs(
        v.n_base, np.array([[0, 1], [2, 1]]), [0.5, 0.25])


def test_a_vocabulary_is_immutable_and_replace_copies():
    v = fitted()
    for name in Vocabulary.FIELDS:
        with pytest.raises(AttributeError, match="immutable"):
            setattr(v, name, getattr(v, name))
    changed = v.replace(weights=np.zeros(v.n_merged))
    assert changed.weights.tolist() == [0.0] * v.n_merged and v.weights.tolist() != changed.weights.tolist()
    assert changed.replace(weights=v.weights) == v
    with pytest.raises(TypeError, match="no field 'size'"):
        v.replace(size=3)


def test_piece_with_huge_id_is_a_format_error():
    v = fitted()
    with pytest.raises(ModelFormatError):
        Vocabulary.from_pieces(v.n_base, [[0, 10**12]], [0.0])
