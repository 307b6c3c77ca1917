"""PairMerger's methods for a partition of a cluster fit: merges applied from outside leave the
merger exactly where its own rounds leave it, and report the statistics the client sums."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe_native._fit import PairMerger


def merger(docs, n_base=4):
    tokens = np.array([s for d in docs for s in d], dtype=np.int32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return PairMerger(tokens, offsets, np.arange(len(docs), dtype=np.int32), len(docs), n_base)


def pair_table(m):
    left, right, occurrences = m.pair_counts()
    return dict(zip(zip(left.tolist(), right.tolist()), occurrences.tolist()))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=20), min_size=1, max_size=8), st.integers(1, 4))
def test_applied_merges_follow_the_rounds(docs, n_candidates):
    stepping, applying = merger(docs), merger(docs)
    done = 0
    while stepping.step(n_candidates):
        left, right, documents, occurrences = (a[done:] for a in stepping.merges())
        before = pair_table(applying)
        assert applying.documents_of(left, right).tolist() == documents.tolist()
        got = applying.apply_merges(left, right)
        assert got[0].tolist() == documents.tolist() and got[1].tolist() == occurrences.tolist()
        after = pair_table(applying)
        changes = {k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)}
        assert {k: v for k, v in changes.items() if v} == dict(zip(zip(got[2].tolist(), got[3].tolist()), got[4].tolist()))
        assert after == pair_table(stepping)
        done = len(stepping.merges()[0])
    for a, b in zip(stepping.current_tokens(), applying.current_tokens()):
        assert a.tolist() == b.tolist()
    assert applying.step(n_candidates) == 0  # the heap stayed valid


def test_apply_merges_validates():
    m = merger([[0, 1, 0, 1]])
    ids = lambda *v: np.array(v, dtype=np.int32)  # noqa: E731
    with pytest.raises(ValueError, match="same length"):
        m.apply_merges(ids(0, 1), ids(1))
    with pytest.raises(ValueError, match="does not exist"):
        m.apply_merges(ids(0, 5), ids(1, 4))  # id 5 would be the second new token
    with pytest.raises(ValueError, match="same length"):
        m.documents_of(ids(0), ids())
    assert m.documents_of(ids(3), ids(3)).tolist() == [0]  # a pair that does not occur
    assert m.apply_merges(ids(0, 4), ids(1, 4))[0].tolist() == [1, 1]  # 4 = (0, 1) just made
    unique = PairMerger(ids(0, 1), np.array([0, 2]), ids(0), 1, 2, True)
    with pytest.raises(ValueError, match="unique_pieces"):
        unique.apply_merges(ids(0), ids(1))
