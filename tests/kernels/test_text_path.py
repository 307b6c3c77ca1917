"""The text path (one native call splits and encodes str documents) gives exactly what the
general path (split to arrays, then the encoder) gives, and falls back to it for errors."""

from __future__ import annotations

import pickle
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe import UBPE, UBPEClassic
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


# Break and stop symbols (with and without the words regex) in the native splitter: the same
# parts as the pipeline's numpy steps, in every split mode, for ASCII and multi-byte text.
SYMBOL_CONFIGS = [
    {"break_tokens": " "},
    {"break_tokens": [" ", "é"], "stop_tokens": ["_"]},
    {"stop_tokens": [" ", "\U0001f600"]},
    {"break_tokens": [" ", "\n"], "regex_str": WORDS, "stop_tokens": ["a", "\u0928"]},
    {"break_tokens": ["_"], "regex_str": WORDS},
    {},
]


@pytest.fixture(scope="module")
def symbol_toks() -> list[UBPE]:
    """A fitted UBPE and UBPEClassic per configuration (both have a text path: the lattice's
    ``encode_texts`` and the classic rules' ``_classic.encode_texts``)."""
    toks = []
    for config in SYMBOL_CONFIGS:
        for cls in (UBPE, UBPEClassic):
            tok = cls(alphabet=sorted(set(CHARS)), n_tokens=40, **config)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a small fit may end below n_tokens (VocabularySizeWarning)
                tok.fit(CORPUS, quiet=True)
            assert tok._text_path()
            toks.append(tok)
    return toks


def _split_by_numpy_steps(pipeline, docs: list[str], mode: SplitMode):
    """The pipeline's split with its native splitter turned off: the numpy steps."""
    import copy

    general = copy.copy(pipeline)
    general._native_steps = lambda mode: None
    return general.split_batch(docs, mode=mode)


@settings(max_examples=120, deadline=None)
@given(docs=documents, which=st.integers(0, 2 * len(SYMBOL_CONFIGS) - 1), mode=st.sampled_from(list(SplitMode)),
       top_n=st.integers(1, 3))
def test_native_splitter_with_break_and_stop_symbols_equals_the_numpy_steps(
        symbol_toks: list[UBPE], docs: list[str], which: int, mode: SplitMode, top_n: int) -> None:
    tok = symbol_toks[which]
    pipeline = tok.split_pipeline
    assert pipeline.text_splitter(mode) is not None
    native = pipeline.split_batch(docs, mode=mode)
    general = _split_by_numpy_steps(pipeline, docs, mode)
    for field in ("tokens", "part_offsets", "part_is_separator", "doc_part_offsets"):
        assert getattr(native, field).tolist() == getattr(general, field).tolist(), field
    from ubpe.encoders._base import encode_documents

    if isinstance(tok, UBPEClassic):
        top_n = 1  # (the classic rules give one encoding)
    want = encode_documents(tok.encoder(), general, top_n)
    assert [tok.encode(doc, top_n=top_n, split_mode=mode) for doc in docs] == want
    assert tok.encode_batch(docs, top_n=top_n, split_mode=mode) == want
    assert tok.encode_batch(docs, top_n=top_n, split_mode=mode, threads=1) == want


def test_text_splitter_checks_its_symbol_kinds() -> None:
    import numpy as np

    from ubpe_native._textsplit import BREAK_SYMBOL, NO_PATTERN, TextSplitter

    table = np.array([-1] * 97 + [0, 1, -1], dtype=np.int32)  # "a" -> 0, "b" -> 1
    with pytest.raises(ValueError, match="one entry per alphabet id"):
        TextSplitter(table, np.zeros(0, np.uint16), NO_PATTERN, np.zeros(1, np.uint8))
    with pytest.raises(ValueError, match="not a sum of BREAK_SYMBOL and STOP_SYMBOL"):
        TextSplitter(table, np.zeros(0, np.uint16), NO_PATTERN, np.array([0, 4], np.uint8))
    with pytest.raises(ValueError, match="classes must hold one entry per code point"):
        TextSplitter(table, np.zeros(0, np.uint16), 99)
    splitter = TextSplitter(table, np.zeros(0, np.uint16), NO_PATTERN, np.array([0, BREAK_SYMBOL], np.uint8))
    ids, part_offsets, separator, doc_part_offsets = splitter.split(["abba", "", "b"])
    assert ids.tolist() == [0, 1, 1, 0, 1]
    assert part_offsets.tolist() == [0, 1, 2, 3, 4, 5]
    assert separator.tolist() == [False, True, True, False, True]
    assert doc_part_offsets.tolist() == [0, 4, 4, 5]
