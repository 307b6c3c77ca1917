"""The beam study (ubpe.lab.beam) on tiny cases, against brute-force enumeration."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ubpe.lab.beam import TOLERANCE, summarize, sweep
from ubpe import UBPE
from ubpe.encoders import make_encoder
from ubpe.encoders.exact_tfidf import ExactTfidf, tfidf_score

TRAIN = ["abababcab", "abcabcabc", "aabbaabbcc", "cababcabca", "bcbcbcaaab"] * 2
DOCS = ["abcabab", "ababcab", "aabbcab", "cabcabcab", "bbcaab", "abcc"]


def brute_force(vocab, part: np.ndarray) -> float:
    """The best tf-idf score of a part over every segmentation into vocabulary pieces (a
    piece shared by several ids stands for the highest, as the encoders look it up)."""
    lookup: dict[tuple[int, ...], int] = {(i,): i for i in range(vocab.n_base)}
    for t in range(vocab.n_base, vocab.n_base + len(vocab.weights)):
        key = tuple(vocab.piece(t).tolist())
        lookup[key] = max(lookup.get(key, -1), t)
    weights = np.concatenate([np.zeros(vocab.n_base), vocab.weights])
    symbols = part.tolist()
    best = -math.inf

    def walk(start: int, path: list[int]) -> None:
        nonlocal best
        if start == len(symbols):
            best = max(best, tfidf_score(path, weights))
            return
        for end in range(start + 1, len(symbols) + 1):
            token = lookup.get(tuple(symbols[start:end]))
            if token is not None:
                walk(end, [*path, token])

    walk(0, [])
    return best


@pytest.fixture(scope="module")
def tok():
    tok = UBPE(alphabet=list("abc"), n_tokens=14)
    tok.fit(TRAIN, quiet=True)
    return tok


def test_sweep_against_brute_force(tok):
    vocab = tok.vocabulary
    encoder = make_encoder("tfidf", vocab)
    exact = ExactTfidf(vocab, max_length=32, max_nodes=100_000, milp=False)
    for doc in DOCS:
        parts = [p for p in tok.split_pipeline.split(doc).parts(0) if len(p)]
        result = sweep(encoder, exact, parts, (1, 2, 5, 64))
        optimum = sum(brute_force(vocab, p) for p in parts)
        assert result["exact"] == pytest.approx(optimum, rel=1e-12)
        for width in (1, 2, 5, 64):
            score, n_tokens = result[width]
            assert score <= optimum * (1 + TOLERANCE) + TOLERANCE
            assert 1 <= n_tokens <= len(doc)
        # the beam keeps every tail here (few segmentations): the widest width is optimal
        assert result[64][0] == pytest.approx(optimum, rel=1e-9)


def test_sweep_leaves_long_parts_unresolved(tok):
    vocab = tok.vocabulary
    exact = ExactTfidf(vocab, max_length=4, max_nodes=100_000, milp=False)
    parts = [p for p in tok.split_pipeline.split("abcabcab").parts(0) if len(p)]
    assert math.isnan(sweep(make_encoder("tfidf", vocab), exact, parts, (1,))["exact"])


def test_summarize_shares():
    rows = pd.DataFrame({
        "dataset": "d", "kind": "dna", "input": "document", "doc": [0, 0, 1, 1, 2, 2],
        "n_symbols": 10, "n_parts": 1, "width": [1, 5] * 3,
        "score": [1.0, 2.0, 3.0, 2.5, 4.0, 4.0], "tokens": [5, 4, 6, 6, 3, 3],
        "score_width1": [1.0, 1.0, 3.0, 3.0, 4.0, 4.0], "tokens_width1": [5, 5, 6, 6, 3, 3],
        "exact_score": [2.0, 2.0, 3.0, 3.0, math.nan, math.nan]})
    s = summarize(rows).set_index("width")
    assert s.loc[5, "improved"] == pytest.approx(1 / 3) and s.loc[5, "worse"] == pytest.approx(1 / 3)
    assert s.loc[1, "resolved"] == 2 and s.loc[1, "optimal"] == pytest.approx(0.5)
    assert s.loc[5, "optimal"] == pytest.approx(0.5)  # doc 0 reaches 2.0, doc 1 falls to 2.5
    assert s.loc[1, "mean_gap"] == pytest.approx(0.25)
    assert s.loc[5, "mean_token_change"] == pytest.approx((-1 / 5 + 0 + 0) / 3)
