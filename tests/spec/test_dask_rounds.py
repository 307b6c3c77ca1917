"""A fit round by round on a two-process Dask cluster (``ubpe.distributed.rounds``): the corpus stays
on the workers, and the vocabulary is the in-memory one bit for bit - for unsplit DNA and
integer signals, for random corpora full of ties, with a worker killed mid-fit; bad input gives
the in-memory errors."""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

distributed = pytest.importorskip("distributed")
import dask.bag as db  # noqa: E402

import ubpe.distributed.dask  # noqa: E402
from scale_cases import CASES, corpus  # noqa: E402
from test_dask import client, error_of  # noqa: E402, F401 - the two-worker cluster, errors
from ubpe import UBPE, UBPEClassic  # noqa: E402
from ubpe.distributed.rounds import WorkerParts  # noqa: E402
from ubpe.errors import EmptyCorpusError, SymbolTypeError, UnknownSymbolError  # noqa: E402


@pytest.fixture
def rounds(monkeypatch):
    """Counts the fits that ran round by round, and fails any that gathered the parts."""
    calls = []
    original = WorkerParts.fit

    def fit(self, **options):
        calls.append(len(self.counts))
        return original(self, **options)

    def gather(self):
        raise AssertionError("an unsplit corpus must stay on the workers")

    monkeypatch.setattr(WorkerParts, "fit", fit)
    monkeypatch.setattr(WorkerParts, "gather", gather)
    return calls


def bag(docs, npartitions):
    return db.from_sequence(docs, npartitions=max(1, min(npartitions, len(docs))))


def fit_json(cls, alphabet, corpus, n_tokens, **options):
    tok = cls(alphabet=alphabet, n_tokens=n_tokens)
    tok.fit(corpus, quiet=True, **options)
    return tok.to_json()


@pytest.mark.long
@pytest.mark.parametrize("case", ["dna-unsplit", "ints-unsplit"])
@pytest.mark.parametrize("cls", [UBPE, UBPEClassic])
def test_unsplit_fit_on_workers_equals_in_memory(client, rounds, case, cls):
    name, size, _ = CASES[case]
    alphabet, docs = corpus(name, size)
    for n_candidates in (1, 20):
        expected = fit_json(cls, alphabet, docs, 150, n_candidates=n_candidates)
        assert fit_json(cls, alphabet, bag(docs, 5), 150, n_candidates=n_candidates) == expected
    assert rounds == [5, 5]


@pytest.mark.long
@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 3), max_size=30), min_size=1, max_size=12),
    st.integers(1, 4),
    st.integers(1, 4),
    st.sampled_from([UBPE, UBPEClassic]),
)
def test_random_unsplit_corpora(client, docs, npartitions, n_candidates, cls):
    """Few symbols, short documents: occurrence ties everywhere, so documents and pair order
    decide; empty documents and empty partitions included."""
    expected = fit_json(cls, [0, 1, 2, 3], docs, 14, n_candidates=n_candidates)
    assert fit_json(cls, [0, 1, 2, 3], bag(docs, npartitions), 14, n_candidates=n_candidates) == expected


@settings(max_examples=10, deadline=None)
@given(st.lists(st.text("abc .", max_size=25), min_size=1, max_size=10), st.integers(1, 4))
def test_split_text_on_workers_too(client, docs, npartitions):
    """Round by round works for split corpora as well (FIT_ON_WORKERS="always")."""

    def fit(corpus):
        tok = UBPE(alphabet="abc .", n_tokens=12, break_tokens=" ")
        tok.fit(corpus, n_candidates=2, quiet=True)
        return tok.to_json()

    expected = fit(docs)
    ubpe.distributed.dask.FIT_ON_WORKERS = "always"
    try:
        assert fit(bag(docs, npartitions)) == expected
    finally:
        ubpe.distributed.dask.FIT_ON_WORKERS = "auto"


def _die_on(address):
    """Kill the worker process at ``address`` (a no-op anywhere else)."""
    if distributed.get_worker().address == address:
        os._exit(1)


def test_killed_worker_mid_fit(client, rounds, monkeypatch):
    """A worker dies after the third round: its partitions' counts and mergers are lost, Dask
    recomputes the counts, the mergers are rebuilt and replayed - same vocabulary."""
    name, size, _ = CASES["ints-unsplit"]
    alphabet, docs = corpus(name, size)
    expected = fit_json(UBPE, alphabet, docs, 150, n_candidates=5)
    original, seen = WorkerParts._batch, []

    def batch(self, *args):
        seen.append(None)
        if len(seen) == 3:
            victim = sorted(client.scheduler_info()["workers"])[0]
            distributed.fire_and_forget(client.submit(_die_on, victim, workers=[victim], pure=False))
            while victim in client.scheduler_info()["workers"]:
                time.sleep(0.05)
        return original(self, *args)

    monkeypatch.setattr(WorkerParts, "_batch", batch)
    assert fit_json(UBPE, alphabet, bag(docs, 4), 150, n_candidates=5) == expected
    assert len(seen) > 3
    client.wait_for_workers(2)


@pytest.mark.parametrize(
    "docs",
    [
        [[0, 1], [1, 0], [0, 1], [1, 1], "ab", [0, 1]],  # a str among sequences of ints
        [[0, 1], [1, 0], [0, 1], [1, 1], [0, 2], [0, 1]],  # a symbol outside the alphabet
        [[0, 1], [1, 0], [0, 1], [1, 1], 5, [0, 1]],  # a number, not a document
    ],
)
def test_bad_input_gives_in_memory_errors(client, docs):
    def fit(corpus):
        UBPE(alphabet=[0, 1], n_tokens=5).fit(corpus, quiet=True)

    expected = error_of(fit, docs)
    assert expected[0] in (SymbolTypeError, UnknownSymbolError)
    assert error_of(fit, bag(docs, 3)) == expected


def test_empty_bag(client):
    def fit(corpus):
        UBPE(alphabet=[0, 1], n_tokens=5).fit(corpus, quiet=True)

    assert error_of(fit, db.from_sequence([], npartitions=1)) == error_of(fit, [])
    assert error_of(fit, [])[0] is EmptyCorpusError


def test_mergers_are_forgotten(client):
    from ubpe.distributed import rounds as dask_rounds

    fit_json(UBPE, [0, 1], bag([[0, 1, 0, 1], [1, 0, 1]], 2), 6)
    assert client.run(lambda: len(dask_rounds._STATES)) == {w: 0 for w in client.scheduler_info()["workers"]}


def test_bytelevel_single_word_documents_gather(client, monkeypatch):
    """Byte-level fits reuse pieces, which a round on the workers does not: an unsplit
    byte-level corpus is gathered instead - still the in-memory vocabulary."""
    from ubpe import ByteLevelBPE

    docs = ["hello", "yellow", "hello", "mellow", "low", "hell"] * 3

    def fit(corpus):
        return ByteLevelBPE().fit(corpus, n_tokens=270, quiet=True).to_json()

    gathered, original = [], WorkerParts.gather
    monkeypatch.setattr(WorkerParts, "gather", lambda self: gathered.append(1) or original(self))
    assert fit(bag(docs, 3)) == fit(docs)
    assert gathered == [1]
