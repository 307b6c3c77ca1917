"""The Cython walk over parts' candidate lists equals its readable Python twin."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.encoders.tfidf import walk_candidates
from ubpe_native._combine import walk

# scores from a small set, so that ties (which decide the walk's direction) are common
candidate = st.tuples(st.lists(st.integers(0, 9), min_size=1, max_size=4), st.sampled_from([0.0, 0.5, 1.0, 1.5]))
part = st.lists(candidate, min_size=1, max_size=5).map(
    lambda cs: sorted(cs, key=lambda c: (-c[1], len(c[0])))  # best first, as encoders give them
)


@settings(max_examples=500, deadline=None)
@given(st.lists(part, max_size=6), st.integers(1, 6))
def test_walk_equals_python_walk(parts, top_n):
    candidate_offsets = np.cumsum([0] + [len(p) for p in parts]).astype(np.int64)
    flat = [c for p in parts for c in p]
    token_offsets = np.cumsum([0] + [len(t) for t, _ in flat]).astype(np.int64)
    tokens = np.array([s for t, _ in flat for s in t], dtype=np.int32)
    scores = np.array([s for _, s in flat], dtype=np.float64)
    spelled, totals = walk(candidate_offsets, token_offsets, tokens, scores, top_n)
    assert list(zip(spelled, totals)) == walk_candidates(parts, top_n)
