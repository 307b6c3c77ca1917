"""The text path (one native call splits and encodes str documents) gives exactly what the
general path (split to arrays, then the encoder) gives, and falls back to it for errors."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe import UBPE
from ubpe.errors import InvalidParameterError, SymbolTypeError, UnknownSymbolError
from ubpe.splitting import WORDS, SplitMode

# ASCII, 2-, 3- and 4-byte UTF-8 characters, the `words` gap (_), whitespace runs
CHARS = "ab cd_\t\n'sé\u0928\u094d\U0001f600Z9!"
CORPUS = ["ab cd_ab 'sé ab\n\n", "cd ab\u0928\u094d abé \U0001f600 Z9!!", "abab cd 9 'sZ\t_ab"] * 3
documents = st.lists(st.text(alphabet=st.sampled_from(CHARS), max_size=40), max_size=6)


@pytest.fixture(scope="module")
def tok() -> UBPE:
    tok = UBPE(alphabet=sorted(set(CHARS)), n_tokens=33, regex_str=WORDS)
    tok.fit(CORPUS, quiet=True)
    assert tok._text_path(), "the words regex over a str alphabet has a text path"
    return tok


@settings(max_examples=150, deadline=None)
@given(docs=documents, top_n=st.integers(1, 4))
def test_text_path_equals_the_general_path(tok: UBPE, docs: list[str], top_n: int) -> None:
    general = [tok.encode(doc, top_n=top_n, encoder="tfidf") for doc in docs]  # a named encoder: general path
    assert [tok.encode(doc, top_n=top_n) for doc in docs] == general
    assert tok.encode_batch(docs, top_n=top_n) == general
    assert tok.encode_batch(docs, top_n=top_n, threads=1) == general
    assert tok.encode_batch(docs, top_n=top_n, encoder="tfidf") == general


def test_text_path_keeps_every_split_mode(tok: UBPE) -> None:
    doc = "ab cd_ab 'sé"
    for mode in SplitMode:
        assert tok.encode(doc, split_mode=mode) == tok.encode(doc, split_mode=mode, encoder="tfidf")


def test_text_path_errors_are_the_general_paths(tok: UBPE) -> None:
    with pytest.raises(UnknownSymbolError, match="symbol '#' at position 2 of the document"):
        tok.encode("ab#")
    with pytest.raises(UnknownSymbolError, match="document 1"):
        tok.encode_batch(["ab", "a#"])
    with pytest.raises(SymbolTypeError):
        tok.encode("ab", split_mode="full")
    with pytest.raises(InvalidParameterError):
        tok.encode("ab", top_n=0)
    with pytest.raises(InvalidParameterError):
        tok.encode("ab", top_n=True)
    with pytest.raises(SymbolTypeError):
        tok.encode_batch(["ab", 3])


def test_tokenizer_pickles_after_using_the_text_path(tok: UBPE) -> None:
    tok.encode("ab cd")
    copy = pickle.loads(pickle.dumps(tok))
    assert copy.encode("ab cd") == tok.encode("ab cd")


def test_lone_surrogates_take_the_general_path() -> None:
    tok = UBPE(alphabet=["a", "b", " ", "\ud800"], n_tokens=7, regex_str=WORDS)
    tok.fit(["ab ab a\ud800b"], quiet=True)
    assert tok.encode("ab a\ud800") == tok.encode("ab a\ud800", encoder="tfidf")
    assert tok.decode(tok.encode("ab a\ud800")[0][0]) == "ab a\ud800"


def test_kernel_text_call_checks_its_arguments_and_agrees_with_the_split(tok: UBPE) -> None:
    import numpy as np

    from ubpe_native._lattice_cache import Lattice
    from ubpe_native._radix import RadixTree
    from ubpe_native._textsplit import TextSplitter

    lattice = tok.encoder()._lattice
    splitter = tok.split_pipeline.text_splitter()
    docs = ["ab cd_ab", "", "'sé \U0001f600"]
    ids, part_offsets, _, doc_part_offsets = splitter.split(docs)
    assert lattice.encode_texts(splitter, docs) == lattice.encode_documents(ids, part_offsets, doc_part_offsets)
    assert lattice.encode_texts(splitter, ["ab", 3]) is None  # no str: the general path raises
    assert lattice.encode_texts(splitter, ["a#"]) is None  # unknown symbol: likewise
    assert lattice.encode_texts(splitter, ["ab cd"], 4, max_cells=1) is None  # over the n-best budget
    with pytest.raises(ValueError, match="top_n"):
        lattice.encode_texts(splitter, ["ab"], 0)
    small = Lattice(RadixTree(2, np.array([0]), np.zeros(0, np.int32)), np.zeros(2))
    with pytest.raises(ValueError, match="base ids"):  # the splitter's ids are beyond this lattice's
        small.encode_texts(splitter, ["ab"])
    with pytest.raises(ValueError, match="empty"):
        TextSplitter(np.zeros(0, np.int32), tok.split_pipeline._classes, splitter.pattern)
