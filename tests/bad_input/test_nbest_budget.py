"""The n-best searches check a memory budget up front (issue 13, item 7): once
``top_n=4096`` on 10^4 symbols took 29.5 s and 1.9 GB. Memory is ~52 bytes x symbols x top_n
(tfidf: per part; fewest / additive: the whole document), time ~ symbols x top_n x
log(top_n) x the longest token; past ``UBPE_NBEST_MEMORY`` (default 1 GiB) the call is
refused with the numbers, before anything is allocated."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ubpe
from ubpe.encoders._base import DEFAULT_NBEST_MEMORY, NBEST_MEMORY_ENV
from ubpe.errors import InvalidParameterError

OPTIONS = {"additive": {"score": float}}


@pytest.fixture(scope="module")
def ints():
    rng = np.random.default_rng(0)
    tok = ubpe.UBPE(alphabet=10, n_tokens=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok.fit([rng.integers(0, 10, 200).tolist() for _ in range(50)], quiet=True)
    return tok, rng.integers(0, 10, 10_000).tolist()


@pytest.mark.parametrize("encoder", ["tfidf", "fewest", "additive"])
def test_the_issues_case_is_refused_up_front(ints, encoder):
    tok, doc = ints
    assert DEFAULT_NBEST_MEMORY == 2**30
    with pytest.raises(InvalidParameterError, match=r"top_n=4096 over 10000 symbols needs about 2031 MiB .* "
                                                    r"budget of 1024 MiB: .*UBPE_NBEST_MEMORY"):
        tok.encode(doc, encoder=encoder, top_n=4096, **OPTIONS.get(encoder, {}))


@pytest.mark.parametrize("encoder", ["tfidf", "fewest"])
def test_the_budget_can_be_lowered_and_raised(ints, encoder, monkeypatch):
    tok, doc = ints
    monkeypatch.setenv(NBEST_MEMORY_ENV, str(2**20))  # 1 MiB
    with pytest.raises(InvalidParameterError, match="budget of 1 MiB"):
        tok.encode(doc[:1000], encoder=encoder, top_n=64)
    monkeypatch.setenv(NBEST_MEMORY_ENV, str(2**23))
    assert len(tok.encode(doc[:1000], encoder=encoder, top_n=64)) == 64


def test_the_budget_checks_per_part_for_tfidf(ints):
    """tfidf keeps one part's lattice at a time: many short parts are fine."""
    tok, doc = ints
    encoder = tok.encoder("tfidf")
    parts = [np.asarray(doc[i : i + 100], np.int32) for i in range(0, 10_000, 100)]
    assert len(encoder.encode(parts, top_n=1024)) == 1024


@pytest.mark.parametrize("value", ["lots", "0", "-5"])
def test_a_bad_budget_is_named(ints, value, monkeypatch):
    tok, doc = ints
    monkeypatch.setenv(NBEST_MEMORY_ENV, value)
    with pytest.raises(InvalidParameterError, match=f"{NBEST_MEMORY_ENV} must be a positive number of bytes"):
        tok.encode(doc[:50], top_n=2)
