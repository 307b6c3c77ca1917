"""``encode_batch_to_numpy``: the encodings of ``encode_batch`` as four flat arrays.

The oracle is ``encode_batch`` itself (whose lists the golden fixtures and the reference tie
to ubpe 0.3.0): for every encoder, top-n, split mode and thread count, and for str and
integer documents, ``encode_batch_to_numpy(docs).tolist() == encode_batch(docs)``; each
document read alone and each best encoding agree with it too. The kernels that fill the
arrays (``_combine``, ``Lattice``) are checked against their list builders directly.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ubpe.models import split_batch
from ubpe import UBPE, UBPEClassic
from ubpe.encoders.encoding import EncodedBatch
from ubpe.errors import InvalidParameterError, SymbolTypeError, UnknownSymbolError
from ubpe.splitting import WORDS, SplitMode
from ubpe_native._combine import top1_documents
from ubpe_native._lattice_cache import Lattice
from ubpe_native._radix import RadixTree

CHARS = "ab cd_\t\n'sé\u0928\u094d\U0001f600Z9!"
CORPUS = ["ab cd_ab 'sé ab\n\n", "cd ab\u0928\u094d abé \U0001f600 Z9!!", "abab cd 9 'sZ\t_ab"] * 3
DOCUMENTS = st.lists(st.text(alphabet=st.sampled_from(CHARS), max_size=40), max_size=8)
INT_DOCUMENTS = st.lists(st.lists(st.integers(0, 4), max_size=30), max_size=8)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# (encoder, options, top_n values): every encoder kind - kernel arrays (tfidf, classic,
# ranked) and lists copied (the lattice paths, exact tf-idf)
ENCODERS = [
    (None, {}, (1, 3)),
    ("tfidf", {"exact": True}, (1, 2)),
    ("classic", {}, (1,)),
    ("ranked", {}, (1,)),
    ("fewest", {}, (1, 2)),
    ("longest_prefix", {}, (1,)),
]


@pytest.fixture(scope="module")
def text_tok() -> UBPE:
    tok = UBPE(alphabet=sorted(set(CHARS)), n_tokens=33, regex_str=WORDS)
    tok.fit(CORPUS, quiet=True)
    return tok


@pytest.fixture(scope="module")
def classic_tok() -> UBPEClassic:
    tok = UBPEClassic(alphabet=sorted(set(CHARS)), n_tokens=33, regex_str=WORDS)
    tok.fit(CORPUS, quiet=True)
    return tok


@pytest.fixture(scope="module")
def int_tok() -> UBPE:
    tok = UBPE(alphabet=list(range(5)), n_tokens=12, break_tokens=[4])
    tok.fit([[0, 1, 2, 0, 1, 4, 3, 0, 1], [2, 0, 1, 2, 4, 0, 1, 0, 1, 3]] * 3, quiet=True)
    return tok


def assert_same(tok, docs, monkeypatch, **options) -> None:
    """The arrays hold ``encode_batch``'s encodings: whole, document by document, best ones."""
    want = tok.encode_batch(docs, **options)
    for threads in (1, 3):
        with monkeypatch.context() as patch:
            patch.setattr(split_batch, "BATCH_CHUNK_SYMBOLS", 7)  # many chunks on the threads
            batch = tok.encode_batch_to_numpy(docs, threads=threads, **options)
        assert batch.tolist() == want
        assert len(batch) == len(docs) and [batch[d] for d in range(len(batch))] == want
        ids, offsets = batch.best()
        assert [ids[offsets[d] : offsets[d + 1]].tolist() for d in range(len(docs))] == [e[0][0] for e in want]
        assert batch.n_encodings.tolist() == [len(e) for e in want]


def assert_same_with_every_encoder(tok, docs, monkeypatch) -> None:
    for encoder, options, tops in ENCODERS:
        for top_n in tops:
            assert_same(tok, docs, monkeypatch, encoder=encoder, top_n=top_n, **options)


@SETTINGS
@given(docs=DOCUMENTS)
def test_text_documents_every_encoder(text_tok, docs, monkeypatch):
    assert_same_with_every_encoder(text_tok, docs, monkeypatch)


@SETTINGS
@given(docs=DOCUMENTS, mode=st.sampled_from(list(SplitMode)))
def test_every_split_mode_and_the_classic_tokenizer(text_tok, classic_tok, docs, mode, monkeypatch):
    assert_same(text_tok, docs, monkeypatch, split_mode=mode, top_n=2)
    assert_same(classic_tok, docs, monkeypatch, split_mode=mode)


@SETTINGS
@given(docs=INT_DOCUMENTS)
def test_integer_documents(int_tok, docs, monkeypatch):
    """Not str: the general path (split arrays, then the encoder's ``encode_split_arrays``)."""
    assert_same_with_every_encoder(int_tok, docs, monkeypatch)
    assert_same(int_tok, [np.array(doc, dtype=np.int64) for doc in docs], monkeypatch, top_n=2)


def test_dropout_draws_the_same_stream(text_tok):
    """A sampling encoder runs on one thread: the arrays hold the lists of the same seed."""
    docs = ["ab cd_ab 'sé ab", "cd abé Z9!", "abab cd"] * 20
    fresh = [UBPE.loads(text_tok.dumps()) for _ in range(2)]
    want = fresh[0].encode_batch(docs, encoder="dropout", seed=3)
    assert fresh[1].encode_batch_to_numpy(docs, encoder="dropout", seed=3, threads=4).tolist() == want


def test_real_text_on_threads(text_tok):
    docs = [doc[i:] for doc in CORPUS for i in range(12)] * 40
    for top_n in (1, 4):
        want = text_tok.encode_batch(docs, top_n=top_n, threads=1)
        assert text_tok.encode_batch_to_numpy(docs, top_n=top_n, threads=2).tolist() == want


def test_errors_are_encode_batchs(text_tok):
    with pytest.raises(InvalidParameterError, match="not one document"):
        text_tok.encode_batch_to_numpy("ab")
    with pytest.raises(SymbolTypeError):
        text_tok.encode_batch_to_numpy(5)
    with pytest.raises(SymbolTypeError):
        text_tok.encode_batch_to_numpy(["ab", 3])
    with pytest.raises(UnknownSymbolError, match="document 1"):
        text_tok.encode_batch_to_numpy(["ab", "a#"], threads=2)
    with pytest.raises(InvalidParameterError):
        text_tok.encode_batch_to_numpy(["ab"], top_n=0)
    with pytest.raises(InvalidParameterError):
        text_tok.encode_batch_to_numpy(["ab"], threads=0)
    assert text_tok.encode_batch_to_numpy([]).tolist() == [] == text_tok.encode_batch([])


# -- EncodedBatch ----------------------------------------------------------------------------------


def example() -> EncodedBatch:
    return EncodedBatch.from_lists([[([2, 0], 0.5), ([0, 1, 0], 0.0)], [([], 0.0)], [([1], 0.25)]])


def test_reading_a_batch():
    batch = example()
    assert len(batch) == 3 and batch[-1] == [([1], 0.25)] and batch[np.int64(1)] == [([], 0.0)]
    assert list(batch) == batch.tolist()
    ids, offsets = batch.best()
    assert ids.tolist() == [2, 0, 1] and offsets.tolist() == [0, 2, 2, 3]
    assert repr(batch) == "EncodedBatch(3 documents, 4 encodings, 6 tokens)"
    with pytest.raises(IndexError):
        batch[3]
    with pytest.raises(IndexError):
        batch[-4]
    with pytest.raises(InvalidParameterError):
        batch[True]
    with pytest.raises(InvalidParameterError, match="step 1"):
        batch[::2]
    with pytest.raises(InvalidParameterError, match="document number or a slice"):
        batch[1.0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.lists(st.integers(0, 9), max_size=4), st.floats(-2, 2)), max_size=3),
                max_size=6), st.integers(-8, 8), st.integers(-8, 8))
def test_slices_are_batches_of_their_documents(encodings, start, stop):
    batch = EncodedBatch.from_lists(encodings)
    assert batch[start:stop].tolist() == [list(e) for e in encodings[start:stop]]


def test_batches_concatenate_compare_and_pickle():
    batch = example()
    twice = EncodedBatch.concatenate([batch, EncodedBatch.from_lists([]), batch])
    assert twice.tolist() == batch.tolist() * 2
    assert EncodedBatch.concatenate([]) == EncodedBatch.from_lists([]) and len(EncodedBatch.from_lists([])) == 0
    assert pickle.loads(pickle.dumps(batch)) == batch
    assert batch != EncodedBatch.concatenate([batch, batch]) and batch.__eq__(1) is NotImplemented
    with pytest.raises(TypeError):
        hash(batch)


def test_top1_best_is_the_batch_itself():
    batch = EncodedBatch.from_lists([[([1, 2], 0.5)], [([3], 0.0)]])
    ids, offsets = batch.best()
    assert ids is batch.ids and offsets is batch.token_offsets


@pytest.mark.parametrize("arrays, match", [
    ((np.array([1], np.int64), np.array([0, 1]), np.array([0.0]), np.array([0, 1])), "ids must be a 1-D int32"),
    ((np.array([[1]], np.int32), np.array([0, 1]), np.array([0.0]), np.array([0, 1])), "ids must be a 1-D int32"),
    (([1], np.array([0, 1]), np.array([0.0]), np.array([0, 1])), "ids must be a 1-D int32"),
    ((np.array([1], np.int32), np.array([0, 2]), np.array([0.0]), np.array([0, 1])), "token_offsets must rise"),
    ((np.array([1, 2], np.int32), np.array([0, 2, 1, 2]), np.zeros(3), np.array([0, 3])), "token_offsets must rise"),
    ((np.array([1], np.int32), np.array([], np.int64), np.zeros(0), np.array([0])), "token_offsets must rise"),
    ((np.array([1], np.int32), np.array([0, 1]), np.array([0.0]), np.array([0, 2])), "doc_offsets must rise"),
    ((np.array([1], np.int32), np.array([0, 1]), np.array([0.0]), np.array([1, 1])), "doc_offsets must rise"),
    ((np.array([1], np.int32), np.array([0, 0, 1]), np.array([0.0]), np.array([0, 1])), "one entry per score"),
    ((np.array([1], np.int32), np.array([0, 1]), np.array([0], np.float32), np.array([0, 1])), "scores must be"),
])
def test_bad_arrays_are_refused(arrays, match):
    with pytest.raises(InvalidParameterError, match=match):
        EncodedBatch(*arrays)


def test_the_batch_keeps_copies_of_the_callers_arrays():
    """Issue 28, point 8: an edit to the arrays handed to the constructor after it checked
    them does not reach the batch (it would bypass the checks)."""
    ids, token_offsets = np.array([1, 2], np.int32), np.array([0, 2])
    batch = EncodedBatch(ids, token_offsets, np.array([0.5]), np.array([0, 1]))
    ids[0], token_offsets[1] = -7, 99
    assert batch.tolist() == [[([1, 2], 0.5)]]


@pytest.mark.parametrize("lists", [
    [[([1, 2**40], 0.0)]], [[([1], "x")]], [[(["a"], 0.0)]], [[([1], 0.0, 3)]], [5], [[5]],
])
def test_bad_lists_are_a_clear_error(lists):
    with pytest.raises(InvalidParameterError, match=r"from_lists takes \[\[\(tokens, score\)"):
        EncodedBatch.from_lists(lists)


# -- the kernels' arrays against their lists --------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.lists(st.integers(0, 70_000), max_size=4), max_size=4), max_size=6))
def test_top1_arrays_are_the_lists(docs):
    """Random parts (one candidate each) per document: the arrays equal the lists."""
    parts = [part for doc in docs for part in doc]
    tokens = np.array([t for part in parts for t in part], dtype=np.int32)
    token_offsets = np.cumsum([0] + [len(p) for p in parts]).astype(np.int64)
    scores = np.arange(len(parts), dtype=np.float64) / 7
    doc_part_offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    lists = top1_documents(tokens, token_offsets, scores, doc_part_offsets)
    arrays = EncodedBatch.from_arrays(top1_documents(tokens, token_offsets, scores, doc_part_offsets, arrays=True))
    assert arrays.tolist() == lists
    candidates = np.arange(len(parts) + 1, dtype=np.int64)  # the same, through candidate_offsets
    assert top1_documents(tokens, token_offsets, scores, doc_part_offsets, candidates) == lists
    again = top1_documents(tokens, token_offsets, scores, doc_part_offsets, candidates, arrays=True)
    assert EncodedBatch.from_arrays(again) == arrays


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2), max_size=12), max_size=6), st.integers(1, 5))
def test_lattice_arrays_are_the_lists(parts, top_n):
    tree = RadixTree(3, np.array([0, 2, 4, 7]), np.array([0, 1, 1, 2, 0, 1, 2], np.int32))
    lattice = Lattice(tree, np.array([0.0, 0.0, 0.0, 0.5, 0.25, 1.5]))
    tokens = np.array([s for part in parts for s in part], dtype=np.int32)
    part_offsets = np.cumsum([0] + [len(p) for p in parts]).astype(np.int64)
    doc_part_offsets = np.array([0, len(parts) // 2, len(parts)], dtype=np.int64)
    lists = lattice.encode_documents(tokens, part_offsets, doc_part_offsets, top_n)
    arrays = lattice.encode_documents(tokens, part_offsets, doc_part_offsets, top_n, arrays=True)
    assert EncodedBatch.from_arrays(arrays).tolist() == lists
