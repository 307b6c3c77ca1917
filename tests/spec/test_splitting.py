"""Splitting documents: the reference's semantics, without its silent data loss."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_impl as ref
from ubpe import UBPE, Alphabet, SplitMode, SplitPipeline
from ubpe.known_words import normalize_known_words

ALPHABET = "abc .,\n"
KNOWN = ["ab", "abc", "c c"]
COVERING_REGEXES = [r"[a-c]+|[^a-c]", r"\w+|\s+|[^\w\s]+", r"(?s)."]
NON_COVERING_REGEXES = [r"[ab]+", r"\w+", r"a*"]


def pipeline(**kwargs) -> SplitPipeline:
    alphabet = Alphabet.from_spec(ALPHABET)
    words = normalize_known_words(kwargs.pop("known_words", None), alphabet)
    return SplitPipeline(alphabet, known_words=words, **kwargs)


def symbols_of_parts(pipe: SplitPipeline, batch, doc_index: int = 0) -> list[list]:
    """Parts as lists of symbols (a known word as the word's symbols)."""
    inverse = {i: w for w, i in (pipe.known_words or {}).items()}
    out = []
    for part in batch.parts(doc_index):
        symbols = []
        for t in part.tolist():
            symbols.extend(inverse[t] if t in inverse else [pipe.alphabet.symbols[t]])
        out.append(symbols)
    return out


configs = st.fixed_dictionaries(
    {},
    optional={
        "known_words": st.just(KNOWN),
        "break_tokens": st.sampled_from([" ", " \n"]),
        "stop_tokens": st.sampled_from([".", ".,"]),
        "regex_str": st.sampled_from(COVERING_REGEXES + NON_COVERING_REGEXES),
    },
)
docs = st.text(alphabet=ALPHABET, max_size=40)


@settings(max_examples=500, deadline=None)
@given(docs, configs)
def test_split_is_lossless(doc, config):
    pipe = pipeline(**config)
    batch = pipe.split(doc)
    assert "".join("".join(p) for p in symbols_of_parts(pipe, batch)) == doc


@settings(max_examples=500, deadline=None)
@given(docs, configs)
def test_fit_parts_equal_reference_parts(doc, config):
    """Fitting sees exactly the reference's parts (leave_separators=False), any regex."""
    pipe = pipeline(**config)
    tokens, offsets, _ = pipe.split_batch([doc]).fit_parts()
    ours = [tokens[s:e].tolist() for s, e in zip(offsets[:-1], offsets[1:])]
    regex = re.compile(config["regex_str"]) if "regex_str" in config else None
    words = normalize_known_words(config.get("known_words"), pipe.alphabet)
    theirs = ref.split_reference(
        doc, known_words=words, break_tokens=config.get("break_tokens"), regex=regex,
        stop_tokens=config.get("stop_tokens"), leave_separators=False,
    )
    ids = pipe.alphabet.as_dict()
    assert ours == [[ids[s] for s in part] for part in theirs if len(part) >= 2]


@settings(max_examples=500, deadline=None)
@given(docs, configs.filter(lambda c: c.get("regex_str") not in NON_COVERING_REGEXES))
def test_encode_parts_equal_reference_parts_when_regex_covers(doc, config):
    pipe = pipeline(**config)
    regex = re.compile(config["regex_str"]) if "regex_str" in config else None
    words = normalize_known_words(config.get("known_words"), pipe.alphabet)
    theirs = ref.split_reference(
        doc, known_words=words, break_tokens=config.get("break_tokens"), regex=regex,
        stop_tokens=config.get("stop_tokens"),
    )
    ids = pipe.alphabet.as_dict()
    expected = [[s if isinstance(s, int) else ids[s] for s in part] for part in theirs]
    assert [p.tolist() for p in pipe.split(doc).parts(0)] == [p for p in expected if p]


def test_regex_gaps_are_kept_as_one_symbol_parts():
    pipe = pipeline(regex_str=r"[ab]+")
    parts = symbols_of_parts(pipe, pipe.split("ab, ba"))
    assert parts == [["a", "b"], [","], [" "], ["b", "a"]]


def test_known_words_longest_match_and_collapse():
    pipe = pipeline(known_words=KNOWN)
    batch = pipe.split("abcab c c")
    abc, ab, cc = (pipe.known_words[w] for w in ("abc", "ab", "c c"))
    assert [p.tolist() for p in batch.parts(0)] == [[abc], [ab], [3], [cc]]
    assert batch.part_is_separator.tolist() == [True, True, False, True]


def test_known_words_on_integer_sequences():
    alphabet = Alphabet.from_spec(5)
    words = normalize_known_words([(1, 2), (1, 2, 3)], alphabet)
    pipe = SplitPipeline(alphabet, known_words=words)
    parts = [p.tolist() for p in pipe.split([0, 1, 2, 3, 1, 2, 4]).parts(0)]
    assert parts == [[0], [6], [5], [4]]


def test_known_words_may_use_symbols_outside_alphabet():
    tok = UBPE(alphabet="ab", n_tokens=10, known_words=["<eos>"])
    tok.fit(["abab<eos>ab"], quiet=True)
    assert tok.n_base == 3 and tok.known_words == {"<eos>": 2}
    assert tok.decode([0, 1, 2, 1]) == "ab<eos>b"
    assert all(2 not in tok.vocabulary.piece(t) for t in range(3, len(tok.vocabulary)))


def test_split_mode_none_keeps_one_part():
    pipe = pipeline(break_tokens=" ", regex_str=r"\w+")
    assert len(pipe.split("ab ab", mode=SplitMode.NONE).parts(0)) == 1


def test_batch_offsets_and_empty_documents():
    pipe = pipeline(break_tokens=" ")
    batch = pipe.split_batch(["ab c", "", "cc"])
    assert batch.n_docs == 3
    assert [[p.tolist() for p in batch.parts(d)] for d in range(3)] == [[[0, 1], [3], [2]], [], [[2, 2]]]


def test_regex_only_on_text_documents():
    pipe = pipeline(regex_str=r"a")
    batch = pipe.split_batch([list("abc"), "abc"])
    assert [p.tolist() for p in batch.parts(0)] == [[0, 1, 2]]
    assert [p.tolist() for p in batch.parts(1)] == [[0], [1], [2]]


@pytest.mark.parametrize("doc", [np.array([0, 1, 2]), (0, 1, 2), [0, 1, 2], range(3)])
def test_integer_documents_of_any_container(doc):
    pipe = SplitPipeline(Alphabet.from_spec(3))
    assert pipe.split(doc).tokens.tolist() == [0, 1, 2]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-2, 7), max_size=12), st.sampled_from(["list", "tuple", "array", "bytes"]),
       st.sampled_from([None, [3]]), st.sampled_from(list(SplitMode)))
def test_one_unsplit_sequence_splits_as_the_general_path(symbols, kind, breaks, mode):
    """A single document that is not text takes a shortcut when no step can cut it (one part,
    one alphabet lookup): the batch it gives is the general path's, and so are the errors."""
    pipeline = SplitPipeline(Alphabet(list(range(6))), break_tokens=breaks)
    doc = {"list": list, "tuple": tuple, "array": np.array, "bytes": lambda s: bytes(v % 256 for v in s)}[kind](symbols)

    def general():  # the batch path: no shortcut
        return pipeline.split_batch([doc], mode=mode)

    try:
        expected = general()
    except Exception as error:  # noqa: BLE001  (whatever it raises, the shortcut raises too)
        with pytest.raises(type(error), match=re.escape(str(error).replace("document 0", "the document"))):
            pipeline.split(doc, mode=mode)
        return
    got = pipeline.split(doc, mode=mode)
    for field in ("tokens", "part_offsets", "part_is_separator", "doc_part_offsets"):
        assert getattr(got, field).tolist() == getattr(expected, field).tolist()
        assert getattr(got, field).dtype == getattr(expected, field).dtype
