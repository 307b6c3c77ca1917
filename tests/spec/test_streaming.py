"""Streaming fits: any iterable of documents gives the vocabulary of the same list.

The corpus is split chunk by chunk and only its distinct parts are counted
(``ubpe.fit.PartCounts``); the merge loop must not tell the difference, bit for bit.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe.fit
from scale_cases import CASES, corpus
from ubpe import UBPE, ByteLevelBPE, UBPEClassic
from ubpe.alphabet import Alphabet
from ubpe.errors import EmptyCorpusError, SymbolTypeError, UnknownSymbolError
from ubpe.fit import PartCounts, corpus_parts, fit_vocabulary
from ubpe.splitting import SplitPipeline

documents = st.lists(st.text("abc .", max_size=30), min_size=1, max_size=12)


def fit_json(cls, docs, chunk_docs=None, **options):
    tok = cls(alphabet="abc .", n_tokens=14, break_tokens=" ", stop_tokens=".")
    with mock.patch.object(ubpe.fit, "CHUNK_DOCS", chunk_docs or ubpe.fit.CHUNK_DOCS):
        tok.fit(docs, quiet=True, **options)
    return tok.to_json()


@settings(max_examples=150, deadline=None)
@given(documents, st.integers(1, 5), st.sampled_from([UBPE, UBPEClassic]), st.integers(1, 4))
def test_generator_fit_equals_list_fit(docs, chunk_docs, cls, n_candidates):
    expected = fit_json(cls, docs, n_candidates=n_candidates)
    assert fit_json(cls, iter(docs), chunk_docs, n_candidates=n_candidates) == expected


@settings(max_examples=150, deadline=None)
@given(documents, st.lists(st.integers(0, 12), max_size=4))
def test_merged_chunk_counts_equal_counts_of_the_whole(docs, cuts):
    """Counts of consecutive chunks, merged, are the counts of the corpus (same order)."""
    split = SplitPipeline(Alphabet.from_spec("abc ."), break_tokens=" ").split_batch
    bounds = [0, *sorted(min(c, len(docs)) for c in cuts), len(docs)]
    pieces = [docs[s:e] for s, e in zip(bounds[:-1], bounds[1:])]
    merged = PartCounts.merge(
        PartCounts.of_batch(split(p, first_doc=s)) for p, s in zip(pieces, bounds) if p
    )
    whole = PartCounts.of_batch(split(docs))
    for field in ("tokens", "offsets", "weights", "doc_offsets", "docs"):
        assert np.array_equal(getattr(merged, field), getattr(whole, field)), field
    assert merged.n_docs == whole.n_docs == len(docs)
    fit = lambda parts: fit_vocabulary(parts, n_base=5, n_tokens=12, n_candidates=3, quiet=True)
    assert fit(merged) == fit(split(docs))


@pytest.mark.parametrize("case", sorted(CASES))
def test_streamed_real_corpus(case):
    name, size, fit = CASES[case]
    alphabet, docs = corpus(name, size)
    with mock.patch.object(ubpe.fit, "CHUNK_DOCS", 3):
        streamed = fit(alphabet, (doc for doc in docs))
    assert streamed == fit(alphabet, docs)


def test_chunks_end_at_the_symbol_budget():
    docs = ["ab" * 50, "ba" * 50, "ab", "abba"]
    split = SplitPipeline(Alphabet.from_spec("ab")).split_batch
    counts = corpus_parts(iter(docs), split, chunk_docs=10, chunk_symbols=60)
    assert counts.n_docs == 4 and counts.n_parts == 4
    assert fit_vocabulary(counts, n_base=2, n_tokens=8, quiet=True) == fit_vocabulary(
        split(docs), n_base=2, n_tokens=8, quiet=True
    )


def test_streaming_errors_match_the_list_fit():
    bad = ["ab", "ba", "abc", "ab"]  # "c" is outside the alphabet, in document 2
    messages = []
    for corpus_form in (bad, iter(bad)):
        with mock.patch.object(ubpe.fit, "CHUNK_DOCS", 2), pytest.raises(UnknownSymbolError) as error:
            UBPE(alphabet="ab", n_tokens=5).fit(corpus_form, quiet=True)
        messages.append(str(error.value))
    assert messages[0] == messages[1] and "document 2" in messages[0]
    with pytest.raises(SymbolTypeError, match="document 3 must be a str"):
        with mock.patch.object(ubpe.fit, "CHUNK_DOCS", 2):
            UBPE(alphabet="ab", n_tokens=5).fit(iter(["ab", "ab", "ab", 7]), quiet=True)
    with pytest.raises(EmptyCorpusError, match="empty"):
        UBPE(alphabet="ab", n_tokens=5).fit(iter([]), quiet=True)
    with pytest.raises(EmptyCorpusError, match="at least one text"):
        ByteLevelBPE().fit(iter([]), n_tokens=300, quiet=True)
    with pytest.raises(SymbolTypeError, match="every text must be a str"):
        ByteLevelBPE().fit(iter(["ab", b"ab"]), n_tokens=300, quiet=True)
    with pytest.raises(SymbolTypeError, match="list of documents"):
        UBPE(alphabet="ab", n_tokens=5).fit(5, quiet=True)


def test_streamed_counts_grow_with_distinct_parts_not_with_the_corpus():
    """A corpus repeated 50 times streams into the distinct parts of one copy; only the
    (part, document) pairs grow, one per new document holding a part."""
    alphabet, docs = corpus("kjv", 20_000)
    split = UBPE(alphabet=alphabet, n_tokens=200, regex_str=r" ?\w+| ?[^\w\s]+|\s+").split_pipeline.split_batch
    once = corpus_parts(iter(docs), split, chunk_docs=4)
    many = corpus_parts((doc for _ in range(50) for doc in docs), split, chunk_docs=4)
    assert np.array_equal(many.tokens, once.tokens) and np.array_equal(many.offsets, once.offsets)
    assert np.array_equal(many.weights, 50 * once.weights)
    assert len(many.docs) == 50 * len(once.docs) and many.n_docs == 50 * len(docs)
    assert len(once.tokens) < sum(map(len, docs)) / 3  # words repeat within one copy too


def test_importing_ubpe_does_not_import_dask():
    import subprocess
    import sys

    code = "import sys, ubpe, ubpe.fit; sys.exit('dask' in sys.modules or 'distributed' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
